#!/bin/sh
# Planned migration: trainmover-ctl migrate 1 in the middle of a DP 2 x PP 2
# job. The state comes from the leaver itself (path "leaver"), the standby
# takes slot 1, the leaver retires, and the final parameter hash equals a run's
# without the migration.
. "$(dirname "$0")/runtime_lib.sh"
launch=$TM_BUILD/launcher/trainmover-launch
gpt=$TM_BUILD/examples/gpt/trainmover-gpt
ctl=$TM_BUILD/tools/ctl/trainmover-ctl
run() {
  timeout 200 "$launch" --nprocs 4 --standby 1 --pp 2 --quiet "$@" -- "$gpt" --dp 2 --pp 2 \
    --steps 60 --log-every 1 --print-hash
}
run --events "$events" --job-file "$work/job" >"$work/out" 2>"$work/err" &
job=$!
for _ in $(seq 1 6000); do
  grep -q "trainmover-gpt: step 20/" "$work/err" 2>/dev/null && break
  sleep 0.01
done
"$ctl" --job "$work/job" migrate 1 || { echo "FAIL: migrate refused" >&2; exit 1; }
status=0
wait "$job" || status=$?
expect_eq "launcher exit status" "$status" 0
expect_eq "path" "$(field recovery_done path)" leaver
expect_eq "cause" "$(field recovery_done cause)" migration
moved=$(sed -n 's/^param-hash //p' "$work/out")
clean=$(run 2>/dev/null | sed -n 's/^param-hash //p')
expect_eq "final parameter hash" "$moved" "$clean"
failed=$(grep -c "step failed" "$work/err" || true)
echo "PASS: slot 1 migrated from step $(field recovery_done resume_step), hash equal ($failed failed step(s))"
