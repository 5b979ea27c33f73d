#!/bin/sh
# The coordinator dies: trainmover-launch (which embeds it) killed with
# kill -9 at step 22 of a DP 2 x PP 2 job with a checkpoint every 5 steps.
# The ranks and the standby are not tied to the launcher's life (no
# PR_SET_PDEATHSIG for a process with a control channel: under Slurm the
# coordinator is not its parent either): each notices the coordinator's loss
# itself (its control connection closes; a silent coordinator would be
# noticed by the heartbeat timeout, tests/control/coordinator_test), says
# so, and stops, well within the heartbeat timeout. Every checkpoint on disk
# is complete (written under a temporary name and renamed), and a job
# restarted with --resume from it finishes with the final parameter hash of
# a run that never stopped.
. "$(dirname "$0")/runtime_lib.sh"
gpt_args="--checkpoint-dir $work/ckpt --checkpoint-every 5"
start_job --job-file "$work/job"
wait_for '"event":"standby_warmup"'
wait_step 22
pids="$(slot_pid 0) $(slot_pid 1) $(slot_pid 2) $(slot_pid 3) $(standby_pid 0)"
launcher=$(sed 's/.*"pid":\([0-9]*\).*/\1/' "$work/job")
address=$(sed 's/.*"address":"\([^"]*\)".*/\1/' "$work/job")
start=$(date +%s%N)
kill -9 "$launcher"
# shellcheck disable=SC2086 # a list of pids
expect_gone $pids
echo "every process of the job gone $((($(date +%s%N) - start) / 1000000)) ms after the kill" \
  "(heartbeat timeout ${TRAINMOVER_HEARTBEAT_TIMEOUT:-1} s)"
wait "$job" || true
# Each of the four ranks and the standby said why it stopped.
said=$(grep -c "lost the coordinator at $address: .*; stopping, checkpoint at $work/ckpt intact" "$work/err" || true)
if [ "$said" -ne 5 ]; then
  cat "$work/err" >&2
  echo "FAIL: $said of 5 processes said they lost the coordinator at $address" >&2
  exit 1
fi
grep "lost the coordinator" "$work/err" | head -n 1
ls "$work/ckpt" | grep -q . || { echo "FAIL: no checkpoint was written" >&2; exit 1; }
echo "checkpoints left: $(ls "$work/ckpt" | tr '\n' ' ')"
gpt_args="--checkpoint-dir $work/ckpt --resume"
run_job >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; echo "FAIL: the restart failed" >&2; exit 1; }
grep "resum\|checkpoint" "$work/err" | head -n 4
clean_args= expect_clean_hash
echo "PASS: every process stopped on its own with the reason, the restart from the checkpoint ends with the same hash"
