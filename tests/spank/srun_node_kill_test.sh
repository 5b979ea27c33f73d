#!/usr/bin/env bash
# srun --trainmover on a real Slurm cluster (3 nodes: 2 active, 1 standby):
# node n2 dies whole — its slurmd, its slurmstepd and its tasks SIGKILLed at
# once, so no task_exit runs and Slurm notices only after SlurmdTimeout
# (10 s here). The coordinator sees the broken links and the standby holds
# slot 1 within 2 s of the kill; the job finishes, srun exits 0, and the
# hash is that of a failure-free run. Skips (77) without root or Slurm.
nodes=3 tm_name=nodekill
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
gpt_args=(--dp 2 --steps 200)
reference "${gpt_args[@]}"

start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 20/" "the job never reached step 20"
grep -q '"slot":1,.*"host":"n2"\|"host":"n2".*"slot":1[,}]' "$events" || fail "slot 1 is not on n2"
# Every process of node n2: those in its slurmd's mount namespace.
# A test builtin (-ef: the same namespace inode), not a readlink per
# process: the scan must end while the job still runs.
ns=/proc/$(cat "$dir/slurmd.n2.pid")/ns/mnt
victims=()
for p in /proc/[0-9]*; do
  [[ $p/ns/mnt -ef $ns ]] && victims+=("${p#/proc/}")
done
[ ${#victims[@]} -ge 3 ] || fail "n2 has only ${#victims[@]} processes (slurmd, stepd, task expected)"
killed_at=$(date +%s.%N)
kill -KILL "${victims[@]}" 2>/dev/null
status=0
wait "$srun_pid" || status=$?
ended_at=$(date +%s.%N)
[ "$status" -eq 0 ] || fail "srun exit status $status"
grep -q '"event":"recovery_done"' "$events" || fail "no recovery"
promoted=$(field standby_promoted time)
swap=$(awk -v a="$killed_at" -v b="$promoted" 'BEGIN { printf "%.3f", b - a }')
awk -v s="$swap" 'BEGIN { exit !(s < 2.0) }' || fail "the standby took slot 1 only $swap s after the kill"
[ "$(hash_of)" = "$ref_hash" ] || fail "hash $(hash_of), failure-free $ref_hash"
echo "node kill: ${#victims[@]} processes of n2 killed; standby promoted $swap s after the kill" \
  "(detected by $(field slot_failed source)), recovery downtime $(field recovery_done downtime_s) s;" \
  "hash $ref_hash as without failure; srun exited 0," \
  "$(awk -v a="$killed_at" -v b="$ended_at" 'BEGIN { printf "%.1f", b - a }') s after the kill" \
  "(it waits for Slurm to write off n2's task: SlurmdTimeout=10 s)"
