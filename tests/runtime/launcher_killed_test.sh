#!/bin/sh
# The coordinator dies: trainmover-launch (which embeds it) killed with
# kill -9 at step 22 of a DP 2 x PP 2 job with a checkpoint every 5 steps.
# No process of the job is left (the ranks and the standby die with the
# launcher: PR_SET_PDEATHSIG), every checkpoint on disk is complete (a
# checkpoint is written under a temporary name and renamed), and a job
# restarted with --resume from it finishes with the final parameter hash of a
# run that never stopped.
. "$(dirname "$0")/runtime_lib.sh"
gpt_args="--checkpoint-dir $work/ckpt --checkpoint-every 5"
start_job --job-file "$work/job"
wait_for '"event":"standby_warmup"'
wait_step 22
pids="$(slot_pid 0) $(slot_pid 1) $(slot_pid 2) $(slot_pid 3) $(standby_pid 0)"
launcher=$(sed 's/.*"pid":\([0-9]*\).*/\1/' "$work/job")
start=$(date +%s%N)
kill -9 "$launcher"
# shellcheck disable=SC2086 # a list of pids
expect_gone $pids
echo "every process of the job gone $((($(date +%s%N) - start) / 1000000)) ms after the kill"
wait "$job" || true
ls "$work/ckpt" | grep -q . || { echo "FAIL: no checkpoint was written" >&2; exit 1; }
echo "checkpoints left: $(ls "$work/ckpt" | tr '\n' ' ')"
gpt_args="--checkpoint-dir $work/ckpt --resume"
run_job >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; echo "FAIL: the restart failed" >&2; exit 1; }
grep "resum\|checkpoint" "$work/err" | head -n 4
clean_args= expect_clean_hash
echo "PASS: no process left, the restart from the checkpoint ends with the same hash"
