#!/usr/bin/env bash
# srun --trainmover on a real Slurm cluster (3 nodes: 2 active, 1 standby):
# the trainer of slot 1 is killed with SIGKILL mid-run; the standby takes
# its slot, the job finishes, srun exits 0, and the final parameter hash is
# that of a failure-free run. Skips (77) without root or Slurm.
nodes=3 tm_name=taskkill
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
gpt_args=(--dp 2 --steps 60)
reference "${gpt_args[@]}"

start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 20/" "the job never reached step 20"
victim=$(pid_of_slot 1)
[ -n "$victim" ] || fail "no pid for slot 1"
kill -KILL "$victim"
status=0
wait "$srun_pid" || status=$?
[ "$status" -eq 0 ] || fail "srun exit status $status"
grep -q '"event":"recovery_done"' "$events" || fail "no recovery"
# The task launcher's lifeline tells at the start of the trainer's exit;
# the closed control connection and the exit report at its end, so they
# are first only if the lifeline's thread waited longer for a CPU than the
# whole teardown took.
source=$(field slot_failed source)
case $source in lifeline | exit | connection) ;; *) fail "detected by '$source'" ;; esac
[ "$(hash_of)" = "$ref_hash" ] || fail "hash $(hash_of), failure-free $ref_hash"
echo "task kill: slot 1 recovered (by $source; detection $(field recovery_done detection_s) s," \
  "downtime $(field recovery_done downtime_s) s), hash $ref_hash as without failure"

# The launcher of slot 1 SIGKILLed (not its trainer): the trainer dies with
# it (PR_SET_PDEATHSIG), slurm_spank_task_exit reports it as well, the
# standby takes the slot and the job finishes with the same hash. srun's
# status is then that of the killed task (137): Slurm counts a task killed
# by a signal, whatever the job did about it (documented).
start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 20/" "the job never reached step 20"
trainer=$(pid_of_slot 1)
launcher=$(awk '{ print $4 }' "/proc/$trainer/stat")
grep -q -- "--slurm-task" "/proc/$launcher/cmdline" || fail "pid $launcher is not slot 1's launcher"
kill -KILL "$launcher"
status=0
wait "$srun_pid" || status=$?
[ "$status" -eq 137 ] || fail "launcher killed: srun exit status $status, expected 137"
grep -q '"event":"recovery_done"' "$events" || fail "launcher killed: no recovery"
# slurm_spank_task_exit's report ran and was taken (a refused command line
# once failed it on every task exit, unseen: the closed control connection
# told the coordinator as well).
grep -q "trainmover-launch: task launcher $launcher ended" "$err" ||
  fail "launcher killed: no exit report from slurm_spank_task_exit"
! grep -q "no PROGRAM given" "$err" || fail "launcher killed: the exit report was refused"
[ "$(hash_of)" = "$ref_hash" ] || fail "launcher killed: hash $(hash_of), failure-free $ref_hash"
echo "launcher kill: slot 1 recovered (downtime $(field recovery_done downtime_s) s), hash as" \
  "without failure; srun exit 137 (the killed task's status)"
