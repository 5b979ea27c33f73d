#!/usr/bin/env bash
# srun --mpi=pmix --trainmover. The launcher gives its trainer
# TRAINMOVER_STORE=pmix,tcp://<srun's store>: the first wire-up is one PMIx
# fence. With no standby task (2 nodes) the hash is that of a failure-free
# run over the TCP store. With a standby task (3 nodes: 2 active, 1
# standby) the standby takes part in the fence from tm_worker_init (before,
# the active ranks waited in it for the standby, which creates its
# communicators only once promoted); the trainer of slot 1 is SIGKILLed, the
# standby takes its slot, reading the first view from srun's store, and the
# hash is again that of the failure-free run. Skips (77) without root,
# Slurm, PMIx or Slurm's pmix plugin.
nodes=3 tm_name=pmixkill
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
srun --mpi=list 2>&1 | grep -qw pmix || { echo "SKIP: Slurm has no pmix MPI plugin"; exit 77; }
gpt_args=(--dp 2 --steps 60)
reference "${gpt_args[@]}"

env_of() { tr '\0' '\n' <"/proc/$1/environ" | sed -n "s/^$2=//p"; }

start_step -N2 -n2 --mpi=pmix -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 5/" "pmix, no standby: the job never reached step 5"
trainer=$(pid_of_slot 0)
[ -n "$trainer" ] || fail "no pid for slot 0"
pmix_store=$(env_of "$trainer" TRAINMOVER_STORE)
case $pmix_store in pmix,tcp://*:[0-9]*) ;; *) fail "slot 0's trainer got TRAINMOVER_STORE='$pmix_store'" ;; esac
[ -n "$(env_of "$trainer" PMIX_RANK)" ] || fail "slot 0's trainer is not a PMIx client (no PMIX_RANK)"
status=0
wait "$srun_pid" || status=$?
[ "$status" -eq 0 ] || fail "pmix, no standby: srun exit status $status"
[ "$(hash_of)" = "$ref_hash" ] || fail "pmix, no standby: hash $(hash_of), failure-free $ref_hash"

start_step -N3 -n3 --mpi=pmix --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 20/" "the job never reached step 20"
victim=$(pid_of_slot 1)
[ -n "$victim" ] || fail "no pid for slot 1"
store=$(env_of "$victim" TRAINMOVER_STORE)
case $store in pmix,tcp://*:[0-9]*) ;; *) fail "with a standby, slot 1's trainer got TRAINMOVER_STORE='$store'" ;; esac
# Every trainer listens for PMIx failure events and registered its task
# (Slurm 22.05 refuses the job events: the kill is seen otherwise).
[ "$(env_of "$victim" TRAINMOVER_PMIX_EVENTS)" = 1 ] || fail "slot 1's trainer has no TRAINMOVER_PMIX_EVENTS=1"
grep -q '"event":"slot_registered".*"task":1[,}]' "$events" || fail "slot 1 registered no PMIx task"
grep -q '"event":"standby_registered".*"task":2[,}]' "$events" || fail "the standby registered no PMIx task"
kill -KILL "$victim"
status=0
wait "$srun_pid" || status=$?
[ "$status" -eq 0 ] || fail "srun exit status $status"
grep -q '"event":"recovery_done"' "$events" || fail "no recovery"
[ "$(hash_of)" = "$ref_hash" ] || fail "hash $(hash_of), failure-free $ref_hash"
echo "pmix, no standby: first wire-up through PMIx ($pmix_store), hash $ref_hash;" \
  "pmix with a standby: first wire-up through PMIx, the standby in the fence ($store), slot 1 killed and recovered (downtime" \
  "$(field recovery_done downtime_s) s), hash $ref_hash as without failure"
