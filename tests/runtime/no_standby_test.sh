#!/bin/sh
# A rank dies while no standby is left: slot 1 is killed, the standby takes
# it; then the joiner is killed too. The coordinator waits --standby-wait
# (1 s) for another standby, then stops the job with a clear message: the
# launcher exits 3, the event log says job_stopped, and no rank was told to
# write anything (the last checkpoint stays as it was).
. "$(dirname "$0")/runtime_lib.sh"
launch=$TM_BUILD/launcher/trainmover-launch
gpt=$TM_BUILD/examples/gpt/trainmover-gpt
timeout 120 "$launch" --nprocs 4 --standby 1 --pp 2 --standby-wait 1 --quiet \
  --events "$events" -- "$gpt" --dp 2 --pp 2 --steps 100000 --log-every 1 \
  >"$work/out" 2>"$work/err" &
job=$!
# wait_for PATTERN: until the event log has a line matching it (60 s at most).
wait_for() {
  for _ in $(seq 1 6000); do
    grep -q "$1" "$events" 2>/dev/null && return 0
    sleep 0.01
  done
  echo "FAIL: no event matching $1" >&2
  cat "$work/err" >&2
  exit 1
}
pid_in() { grep "$1" "$events" | head -n 1 | sed 's/.*"pid":\([0-9]*\).*/\1/'; }
wait_for '"event":"standby_warmup".*"state":"ready"'
wait_for '"event":"slot_registered".*"slot":1[,}]'
kill -9 "$(pid_in '"event":"slot_registered".*"slot":1[,}]')"
wait_for '"event":"recovery_done"'
kill -9 "$(pid_in '"event":"standby_registered"')"
status=0
wait "$job" || status=$?
expect_eq "launcher exit status" "$status" 3
wait_for '"event":"no_standby"'
wait_for '"event":"job_stopped"'
grep -q "job stopped: no standby became ready for slot 1" "$work/err" ||
  { echo "FAIL: no clear message" >&2; cat "$work/err" >&2; exit 1; }
echo "PASS: the second failure found no standby; the job stopped with status 3"
