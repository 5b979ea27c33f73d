#!/bin/sh
# Two ranks of different pipeline stages die together: DP 2 x PP 2 with two
# standbys, slot 0 (stage 0) and slot 3 (stage 1) killed with one kill -9 at
# step 15 of 150 or later, once both standbys are warm. Both slots are replaced in one recovery and one epoch (the
# second failure is folded into the recovery of the first), each from its
# stage's live DP replica, and the final parameter hash equals a run's
# without the failure.
. "$(dirname "$0")/runtime_lib.sh"
standbys=2 steps=150  # still running once the standbys are warm
start_job --standby-wait 1
# Both standbys ready first: the case is the double failure, not the warm-up
# (under load a standby was not ready within the 1 s wait and the job stopped).
wait_standbys_ready
wait_step 15
kill -9 "$(slot_pid 0)" "$(slot_pid 3)"
finish_job 0
expect_eq "recoveries done" "$(count recovery_done)" 2
expect_eq "switchovers to one epoch" "$(grep '"event":"switchover"' "$events" | sed 's/.*"epoch":\([0-9]*\).*/\1/' | sort -u | wc -l | tr -d ' ')" 1
for slot in 0 3; do
  line=$(grep '"event":"recovery_done"' "$events" | grep "\"slot\":$slot[,}]") ||
    { echo "FAIL: slot $slot was not recovered" >&2; exit 1; }
  case $line in *'"path":"replica"'*) ;; *) echo "FAIL: slot $slot: $line" >&2; exit 1 ;; esac
  echo "slot $slot: $(echo "$line" | sed 's/.*\("donor":[0-9]*\).*\("downtime_s":[0-9.e-]*\).*/\1 \2/')"
done
expect_clean_hash
echo "PASS: slots 0 and 3 recovered from their replicas, hash equal"
