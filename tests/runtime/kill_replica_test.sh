#!/bin/sh
# kill -9 of an active rank of a DP 2 x PP 2 job with one standby: the job
# finishes, the state comes from the live DP replica of the same stage, at
# most the step in flight is redone, and the final parameter hash equals a
# run's without the failure.
. "$(dirname "$0")/runtime_lib.sh"
demo --dp 2 --pp 2 --steps 40 --slot 1 --at 15
expect_eq "path" "$(field recovery_done path)" replica
expect_eq "donor" "$(field recovery_done donor)" 0
# The kill came after the last stage logged its 15th step done; the first
# stage may still have been in that step (boundary 14). Resuming earlier
# would redo more than the step in flight.
resume_step=$(field recovery_done resume_step)
if [ "$resume_step" -lt 14 ]; then
  echo "FAIL: resumed at step $resume_step, but step 14 was done everywhere before the kill" >&2
  exit 1
fi
grep -q "sent [0-9]* bytes of state" "$work/out" || { echo "FAIL: no donor line" >&2; exit 1; }
# The CPU on the recovery's critical path: positive, with its parts
# (docs/benchmarks.md; a phase's part is listed when its acks used CPU).
critical=$(field recovery_done critical_cpu_s)
awk "BEGIN { exit !($critical > 0) }" || { echo "FAIL: critical_cpu_s '$critical'" >&2; exit 1; }
for part in first_step coordinator; do
  grep '"event":"recovery_done"' "$events" | grep -q "\"critical_cpu_parts\":{[^}]*\"$part\":" ||
    { echo "FAIL: critical_cpu_parts lacks $part" >&2; exit 1; }
done
echo "PASS: path replica, resumed at step $resume_step, hash equal"
