#!/bin/sh
# A leaver paused with SIGSTOP, detected by the heartbeat timeout, replaced,
# and then resumed with SIGCONT: it is fenced (its control connection is gone,
# its orders say stop), so it exits without acting on the job; the job
# finishes and the final parameter hash equals a run's without the pause.
. "$(dirname "$0")/runtime_lib.sh"
start_job
wait_step 15
leaver=$(slot_pid 1)
kill -STOP "$leaver"
wait_for '"event":"recovery_done"'
kill -CONT "$leaver"
expect_gone "$leaver"
finish_job 0
expect_eq "detected by" "$(field slot_failed source)" heartbeat
grep -q "stopped by the coordinator: slot 1 failed: no heartbeat" "$work/err" ||
  { echo "FAIL: the resumed leaver did not stop on the fence" >&2; cat "$work/err" >&2; exit 1; }
grep -q '"event":"exit_ignored".*"pid":'"$leaver" "$events" ||
  { echo "FAIL: the leaver's exit was not ignored as a fenced process's" >&2; exit 1; }
figures
expect_clean_hash
echo "PASS: the paused leaver was replaced, stopped when resumed, hash equal"
