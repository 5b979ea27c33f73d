#!/usr/bin/env bash
# srun --trainmover on a real Slurm cluster (3 nodes: 2 active, 1 standby),
# the standby's two fates:
#  1. the standby's trainer is SIGKILLed before it is used: the pool is
#     empty, the job runs on to its end, srun exits 0, hash as failure-free;
#  2. the last standby is used (slot 1 killed), then slot 0 is killed: no
#     standby is left, the coordinator waits TRAINMOVER_STANDBY_WAIT (2 s
#     here; default 30 s) for one, then stops the job — every rank gets the
#     stop order, srun prints "job stopped" and exits 3 (the documented
#     outcome: the job must be restarted from its checkpoint).
# Skips (77) without root or Slurm.
nodes=3 tm_name=standby
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
gpt_args=(--dp 2 --steps 100)
reference "${gpt_args[@]}"

# 1. The standby lost before use.
start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 10/" "the job never reached step 10"
standby=$(grep '"event":"standby_registered"' "$events" | head -n 1 | sed 's/.*"pid":\([0-9]*\).*/\1/')
[ -n "$standby" ] || fail "no standby registered"
kill -KILL "$standby"
status=0
wait "$srun_pid" || status=$?
[ "$status" -eq 0 ] || fail "standby lost: srun exit status $status"
grep -q '"event":"standby_lost"' "$events" || fail "the standby's loss was not seen"
grep -q '"event":"slot_failed"' "$events" && fail "a slot failed"
[ "$(hash_of)" = "$ref_hash" ] || fail "standby lost: hash $(hash_of), failure-free $ref_hash"
echo "standby lost before use: seen ($(field standby_lost detail)); job finished, hash as failure-free"

# 2. The last standby used, then another rank killed.
export TRAINMOVER_STANDBY_WAIT=2
start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 10/" "the job never reached step 10"
kill -KILL "$(pid_of_slot 1)"
wait_line "$events" '"event":"recovery_done"' "slot 1 was not recovered"
kill -KILL "$(pid_of_slot 0)"
status=0
wait "$srun_pid" || status=$?
[ "$status" -eq 3 ] || fail "no standby left: srun exit status $status, expected 3"
grep -q '"event":"no_standby"' "$events" || fail "no no_standby event"
grep -q '"event":"job_stopped"' "$events" || fail "the job was not stopped"
grep -q "trainmover: job stopped" "$err" || fail "srun did not say the job stopped"
echo "last standby used, another rank killed: job stopped after the standby wait; srun exit 3"
