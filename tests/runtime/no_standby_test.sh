#!/bin/sh
# A rank dies while no standby is left: slot 1 is killed, the standby takes
# it; then the joiner is killed too. The coordinator waits --standby-wait
# (1 s) for another standby, then stops the job with a clear message: the
# launcher exits 3, the event log says job_stopped, and no rank was told to
# write anything: the last checkpoint stays as it was, and a job restarted
# from it with --resume ends with the hash of a run that never stopped.
. "$(dirname "$0")/runtime_lib.sh"
steps=100000 gpt_args="--checkpoint-dir $work/ckpt --checkpoint-every 5"
start_job --standby-wait 1
wait_for '"event":"standby_warmup".*"state":"ready"'
wait_for '"event":"slot_registered".*"slot":1[,}]'
wait_step 12
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
last=$(ls "$work/ckpt" | sed -n 's/^stage1-step0*\([0-9]*\)\.ckpt$/\1/p' | tail -n 1)
[ -n "$last" ] || { echo "FAIL: no checkpoint of the last stage" >&2; exit 1; }
steps=$((last + 5)) gpt_args="--checkpoint-dir $work/ckpt --resume"
run_job >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; echo "FAIL: the restart failed" >&2; exit 1; }
# The stages may be one checkpoint apart: --resume takes the latest both have.
resumed=$(sed -n 's/^trainmover-gpt: resumed at step \([0-9]*\) .*/\1/p' "$work/err" | head -n 1)
[ -n "$resumed" ] || { echo "FAIL: the restart did not resume from a checkpoint" >&2; exit 1; }
clean_args= expect_clean_hash
echo "PASS: the second failure found no standby; the job stopped with status 3;" \
  "the restart from step $resumed ends with the same hash"
