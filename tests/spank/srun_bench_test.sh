#!/usr/bin/env bash
# trainmover-bench slurm-recovery on a real Slurm cluster (3 nodes), once,
# small: a task kill, for trainmover, for slurm-restart (the step ended and
# run again from its checkpoint) and for slurm-requeue (a batch job that
# Slurm requeues; its wait in the queue shortened to 11 s by
# cred_expire=10, the default 121 s is what the benchmark measures). 300 steps of ~1.5 ms: the kill at
# step 12 must reach the trainer before the job ends (with 30 steps it
# once came after the end, in CI). Checks each JSON row's keys and that
# its figures are sane: each part of the downtime non-negative, the parts
# within the downtime, trainmover's srun exit 0 and the others' not (-1:
# Slurm requeued the job before srun returned), and that the requeued job
# waited at least cred_expire in the queue.
# No timing asserts (a loaded machine). Skips (77) without root or Slurm.
nodes=3 tm_name=bench
export TM_SLURM_CRED_EXPIRE=10
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
bench=$tm_build/tools/bench/trainmover-bench
rows=$dir/rows.json
timeout 400 "$bench" slurm-recovery --cluster "$dir" --event task-kill --steps 300 --kill-step 12 \
  --checkpoint-every 5 --timeout 120 --json >"$rows" 2>"$err" || fail "the bench failed"
cat "$rows" "$err"
# val ROW KEY: KEY's value in the JSON line ROW (numbers and plain strings).
val() { sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p" <<<"$1"; }
keys="impl event nodes downtime_s detection_s switch_s state_transfer_s first_step_s lost_steps wall_s normal_step_s resume_step srun_exit"
[ "$(wc -l <"$rows")" -eq 3 ] || fail "expected 3 rows: $(cat "$rows")"
impls=
while read -r row; do
  for k in $keys; do [ -n "$(val "$row" "$k")" ] || fail "no $k in $row"; done
  [ "$(grep -o '"[a-z_]*":' <<<"$row" | wc -l)" -eq "$(wc -w <<<"$keys")" ] || fail "extra keys: $row"
  [ "$(val "$row" event)" = task-kill ] && [ "$(val "$row" nodes)" = 2 ] || fail "row $row"
  for k in downtime_s detection_s switch_s state_transfer_s first_step_s lost_steps; do
    awk -v v="$(val "$row" "$k")" 'BEGIN { exit !(v >= 0) }' || fail "$k < 0: $row"
  done
  awk -v s="$(val "$row" normal_step_s)" -v w="$(val "$row" wall_s)" -v d="$(val "$row" detection_s)" \
    'BEGIN { exit !(s > 0 && w > 0 && w >= d) }' || fail "bad step, wall or detection: $row"
  # The kill comes at step >= 12, after the checkpoint of step 10 (every 5).
  r=$(val "$row" resume_step)
  [ "$r" -ge 10 ] && [ "$r" -lt 300 ] || fail "resume_step $r: $row"
  impl=$(val "$row" impl) impls="$impls $impl"
  case $impl:$(val "$row" srun_exit) in
    trainmover:0 | slurm-restart:[1-9]* | slurm-requeue:[1-9]* | slurm-requeue:-1) ;;
    *) fail "srun exit status: $row" ;;
  esac
done <"$rows"
[ "$impls" = " trainmover slurm-restart slurm-requeue" ] || fail "impls:$impls"
requeue=$(grep '"impl":"slurm-requeue"' "$rows")
awk -v s="$(val "$requeue" switch_s)" 'BEGIN { exit !(s >= 10) }' ||
  fail "the requeued job started again before cred_expire (10 s): $requeue"
for way in slurm-restart slurm-requeue; do
  grep -q "^# task-kill: $way / trainmover downtime = " "$err" || fail "no $way ratio line"
done
echo "slurm-recovery bench:"
grep '^# task-kill' "$err"
