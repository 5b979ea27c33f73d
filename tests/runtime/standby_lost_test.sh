#!/bin/sh
# A standby dies while it warms up: DP 2 x PP 2 with two standbys, standby 0
# killed with kill -9 once it reported that it is replaying a role's trace
# (standby_warmup, state warming) and standby 1 has registered. The pool
# shrinks to one (standby_lost, pool 1), the job goes on, and a rank
# killed later is recovered by the standby left; the final parameter hash
# equals a run's without the failures.
. "$(dirname "$0")/runtime_lib.sh"
standbys=2
start_job
wait_for '"event":"standby_registered".*"standby":1[,}]'
wait_for '"event":"standby_warmup".*"standby":0[,}].*"state":"warming"'
kill -9 "$(standby_pid 0)"
wait_for '"event":"standby_lost".*"standby":0[,}]'
lost=$(grep '"event":"standby_lost"' "$events")
case $lost in *'"pool":1'*) ;; *) echo "FAIL: the pool is not down to 1: $lost" >&2; exit 1 ;; esac
wait_step 15
kill -9 "$(slot_pid 1)"
finish_job 0
expect_eq "recoveries done" "$(count recovery_done)" 1
expect_eq "the joiner" "$(field recovery_done standby)" 1
figures
expect_clean_hash
echo "PASS: standby 0 lost (pool 1), slot 1 recovered by standby 1, hash equal"
