#!/bin/sh
# A rank killed after it finished training (its goodbye handled, the job's
# last collective behind it) is no failure: tm_worker_finish says its exit
# is none, however it ends. DP 2 x PP 2 with a standby; every rank lingers
# 2 s after its goodbye (the test-only TRAINMOVER_TEST_EXIT_DELAY), slot 0
# is killed with SIGKILL in that window: `exit_after_finish`, no failure, no
# recovery, the launcher exits 0, the final hash equals a run's without it.
# Before, the coordinator started a recovery no finished rank would answer
# and stopped the job with status 3 after 10 s.
. "$(dirname "$0")/runtime_lib.sh"
steps=20
TRAINMOVER_TEST_EXIT_DELAY=2
export TRAINMOVER_TEST_EXIT_DELAY
start_job
unset TRAINMOVER_TEST_EXIT_DELAY
wait_for '"event":"slot_finished".*"slot":0[,}]'
victim=$(slot_pid 0)
kill -9 "$victim"
finish_job 0
expect_eq "exit_after_finish events" "$(count exit_after_finish)" 1
grep '"event":"exit_after_finish"' "$events" | grep -q "\"pid\":$victim[,}].*\"slot\":0[,}]\|\"slot\":0[,}].*\"pid\":$victim[,}]" ||
  { echo "FAIL: exit_after_finish does not name slot 0, pid $victim" >&2; grep exit_after_finish "$events" >&2; exit 1; }
expect_eq "failed slots" "$(count slot_failed)" 0
expect_eq "recoveries started" "$(count recovery_started)" 0
expect_clean_hash
echo "PASS: slot 0 killed after its goodbye: no failure, no recovery, exit 0, hash equal"
