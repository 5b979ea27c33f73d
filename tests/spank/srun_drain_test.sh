#!/usr/bin/env bash
# srun --trainmover on a real Slurm cluster (3 nodes: 2 active, 1 standby),
# srun polling node states every 0.2 s (plugstack.conf poll=0.2s):
#  1. `scontrol update nodename=n2 state=drain` mid-run: slot 1 (on n2) is
#     migrated, planned, to the standby; no slot fails; the job finishes,
#     srun exits 0, hash as failure-free;
#  2. a maintenance reservation on n2 five minutes ahead (ignore_jobs: the
#     node runs the step): the same
#     migration, before the window.
# Skips (77) without root or Slurm.
nodes=3 tm_name=drain tm_plugin_args=poll=0.2s
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
gpt_args=(--dp 2 --steps 100)
reference "${gpt_args[@]}"

# migrated WHAT: the run in the background ended well by a planned migration.
migrated() {
  local status=0
  wait "$srun_pid" || status=$?
  [ "$status" -eq 0 ] || fail "$1: srun exit status $status"
  grep -q '"event":"migration_requested"' "$events" || fail "$1: no migration"
  grep -q '"event":"recovery_done"' "$events" || fail "$1: the migration did not finish"
  grep -q '"event":"slot_failed"' "$events" && fail "$1: a slot failed"
  [ "$(hash_of)" = "$ref_hash" ] || fail "$1: hash $(hash_of), failure-free $ref_hash"
  echo "$1: slot 1 migrated ($(field recovery_done path)), downtime $(field recovery_done downtime_s) s;" \
    "hash as failure-free"
}

start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 15/" "the job never reached step 15"
scontrol update nodename=n2 state=drain reason=tm-test || fail "scontrol drain"
migrated "drain"
grep -q "trainmover: node n2 drained (tm-test)" "$err" || fail "srun did not name the drain"
scontrol update nodename=n2 state=resume || fail "scontrol resume"

start_step -N3 -n3 --trainmover-standby=1 -- "${gpt_args[@]}"
wait_line "$err" "trainmover-gpt: step 15/" "the job never reached step 15"
scontrol create reservation reservationname=tm_maint flags=maint,ignore_jobs nodes=n2 \
  starttime=now+5minutes duration=10 users=root >/dev/null || fail "scontrol create reservation"
migrated "maintenance"
grep -q "trainmover: node n2 maintenance reservation tm_maint starts in" "$err" ||
  fail "srun did not name the reservation"
