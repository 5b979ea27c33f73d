#!/bin/sh
# kill -9 of a rank of a DP 1 x PP 2 job (no replica of any stage): every
# rank rolls back to the last checkpoint in place, the standby loads it too,
# and the final parameter hash equals a run's without the failure.
. "$(dirname "$0")/runtime_lib.sh"
demo --dp 1 --pp 2 --steps 30 --slot 1 --at 17 --ckpt-every 5
expect_eq "path" "$(field recovery_done path)" rollback
resume_step=$(field recovery_done resume_step)
failed_step=$(field slot_failed step)
# The checkpoints are of steps 5, 10, 15...: the last one before the failure.
[ $((resume_step % 5)) -eq 0 ] && [ "$resume_step" -ge $((failed_step / 5 * 5)) ] ||
  { echo "FAIL: resumed at $resume_step, not the checkpoint before step $failed_step" >&2; exit 1; }
echo "PASS: rolled back to step $resume_step, hash equal"
