#!/usr/bin/env bash
# Random fault campaign against the job runtime.
#
#   scripts/kill-campaign.sh [--trials N] [--migrations M] [--seed S]
#                            [--build DIR] [--dp D --pp P] [--per-job K]
#
# Runs small trainmover-gpt jobs under trainmover-launch, each with K
# standbys and K faults (default 3), until N kill trials (default 200) and M
# planned migrations (default 0) are done. A kill trial is `kill -9` of a
# random active slot at a random step, a random 0-19 ms after that step's
# log line; a migration trial is `trainmover-ctl migrate` of a random slot
# the same way. The shapes are DP 2 x PP 2, DP 2 x PP 1 and DP 1 x PP 2 (no
# replica: the rollback path, checkpoints every 4 steps) in turn, or only
# --dp D --pp P. Each fault counts once it was recovered and checked: the job
# finished, the recovery took the expected path, at most the step in flight
# was redone (the event log's redone_steps; a rollback goes back to the last
# checkpoint), a migration saw no failed step and no failure event, and the
# final parameter hash is bitwise equal to the run without faults of that
# shape (one reference run per shape). Prints one row per trial and a
# summary; a failing trial prints its job's events and output. The seed
# (default: from the clock) is printed; the same seed draws the same slots,
# steps and delays. Exit status: 0 all trials passed, 1 one failed, 2 bad
# arguments.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TM_BUILD:-$top/build}
trials=200 migrations=0 seed=$(($(date +%s) % 32768)) dp= pp= per_job=3

usage_error() {
  echo "kill-campaign.sh: $1 (see --help)" >&2
  exit 2
}
# need_uint NAME VALUE: VALUE must be a non-negative integer.
need_uint() {
  [[ $2 =~ ^[0-9]+$ ]] || usage_error "$1 needs a non-negative integer, not '$2'"
}
while [ $# -gt 0 ]; do
  case $1 in
    --trials | --migrations | --seed | --build | --dp | --pp | --per-job)
      [ $# -ge 2 ] || usage_error "$1 needs a value" ;;
  esac
  case $1 in
    --trials) need_uint "$1" "$2"; trials=$2; shift 2 ;;
    --migrations) need_uint "$1" "$2"; migrations=$2; shift 2 ;;
    --seed) need_uint "$1" "$2"; seed=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --dp) need_uint "$1" "$2"; dp=$2; shift 2 ;;
    --pp) need_uint "$1" "$2"; pp=$2; shift 2 ;;
    --per-job) need_uint "$1" "$2"; per_job=$2; shift 2 ;;
    -h | --help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
done
if [ -n "$dp$pp" ] && { [ -z "$dp" ] || [ -z "$pp" ]; }; then usage_error "--dp and --pp go together"; fi
if [ -n "$dp" ] && { [ "$dp" -lt 1 ] || [ "$pp" -lt 1 ] || [ $((dp * pp)) -lt 2 ]; }; then
  usage_error "--dp and --pp must be >= 1 with at least 2 slots"
fi
[ "$per_job" -ge 1 ] && [ "$per_job" -le 8 ] || usage_error "--per-job is 1..8"
[ $((trials + migrations)) -ge 1 ] || usage_error "nothing to do: --trials and --migrations are 0"
launch=$build/launcher/trainmover-launch
gpt=$build/examples/gpt/trainmover-gpt
ctl=$build/tools/ctl/trainmover-ctl
for f in "$launch" "$gpt" "$ctl"; do
  [ -x "$f" ] || { echo "kill-campaign.sh: $f is not built (make -C $build)" >&2; exit 1; }
done
if [ -n "$dp" ]; then shapes=("$dp $pp"); else shapes=("2 2" "2 1" "1 2"); fi
RANDOM=$seed
work=$(mktemp -d "${TMPDIR:-/tmp}/tm-campaign.XXXXXX")
trap '[ -n "${TM_CAMPAIGN_KEEP:-}" ] || rm -rf "$work"' EXIT

# trainmover-gpt's small default model: a step of ~20 ms here, long enough
# for a kill to land inside one; a job of ~40 steps takes a second or two.
model=()
ckpt_every=4
gap=10  # steps between two faults of one job
# The last 9 steps take no fault: the step in the log lags the ranks by a
# few steps on a loaded machine, and a fault in a job's final steps (the
# final hash, a stage past its goodbye) is outside what is tested here.
tail_steps=9
steps=$((14 + per_job * gap))
# Bounds on every wait; generous, for ASan builds on a loaded machine.
job_limit=300 wait_polls=6000  # polls of 10 ms

# job_args DP PP DIR: trainmover-gpt's arguments for one job of that shape.
job_args() {
  local args=(--dp "$1" --pp "$2" --steps "$steps" --log-every 1 --print-hash "${model[@]}")
  if [ "$1" -eq 1 ]; then args+=(--checkpoint-dir "$3/ckpt" --checkpoint-every "$ckpt_every"); fi
  echo "${args[@]}"
}

# start_job DP PP DIR STANDBYS: the job in the background; its pid in $job_pid.
start_job() {
  mkdir -p "$3/ckpt"
  # Kills are detected by the closed connection and the exit report; a 5 s
  # heartbeat timeout (not 1 s) keeps a loaded machine or ASan from making a
  # rank give up on a coordinator whose heartbeat was only late (seen once:
  # 1.05 s on a loaded machine), which would be a fault of its own.
  # shellcheck disable=SC2046
  "$launch" --nprocs $(($1 * $2)) --standby "$4" --pp "$2" --quiet --timeout "$job_limit" \
    --heartbeat-timeout 5 \
    --events "$3/events" --job-file "$3/job" -- "$gpt" $(job_args "$1" "$2" "$3") \
    >"$3/out" 2>"$3/err" &
  job_pid=$!
}

# The reference hash of a shape: the same job without faults.
reference_hash() {
  local dir=$work/ref-$1x$2
  mkdir -p "$dir"
  start_job "$1" "$2" "$dir" 1
  wait "$job_pid" || { cat "$dir/err" >&2; echo "kill-campaign.sh: the reference run failed" >&2; exit 1; }
  sed -n 's/^param-hash //p' "$dir/out"
}

# The last step the reporting rank logged as done (0 before the first).
logged_step() {
  sed -n 's|^trainmover-gpt: step \([0-9]*\)/.*|\1|p' "$1/err" 2>/dev/null | tail -n 1 | grep . || echo 0
}

# count EVENT DIR: how many EVENT lines the job's event log holds.
count() { grep -c "\"event\":\"$1\"" "$2/events" 2>/dev/null || true; }

# nth_done DIR I: the job's I-th recovery_done event (empty if none).
nth_done() { grep '"event":"recovery_done"' "$1/events" 2>/dev/null | sed -n "${2}p" || true; }

# field KEY: KEY's value in the JSON line on stdin.
field() { sed -n "s/.*\"$1\":\"\{0,1\}\([^,\"}]*\).*/\1/p"; }

# pid_of SLOT DIR: the process serving SLOT now (a promoted standby after a switch).
pid_of() {
  awk -v slot="$1" '
    function get(key) {
      if (!match($0, "\"" key "\":[0-9]+")) return ""
      return substr($0, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
    }
    /"event":"standby_registered"/ { pid[get("standby")] = get("pid") }
    /"event":"slot_registered"/ && get("slot") == slot { cur = get("pid") }
    /"event":"switchover"/ && get("slot") == slot { cur = pid[get("standby")] }
    END { print cur }' "$2/events"
}

# wait_until DIR COMMAND...: polls COMMAND every 10 ms while the job runs.
wait_until() {
  local dir=$1 _
  shift
  for _ in $(seq 1 "$wait_polls"); do
    "$@" && return 0
    kill -0 "$job_pid" 2>/dev/null || return 1
    sleep 0.01
  done
  return 1
}
step_reached() { [ "$(logged_step "$1")" -ge "$2" ]; }
recoveries_done() { [ "$(count recovery_done "$1")" -ge "$2" ]; }

# inject KIND SLOT DIR: the fault itself.
inject() {
  if [ "$1" = kill ]; then
    local victim
    victim=$(pid_of "$2" "$3")
    [ -n "$victim" ] && kill -9 "$victim"
  else
    "$ctl" --job "$3/job" migrate "$2" >/dev/null
  fi
}

declare -A ref
rows=()        # one line per trial, for the table
downtimes=()   # of the passed trials, ms
failures=0 done_kills=0 done_migrations=0 job=0

# check_trial DIR KIND INDEX SHAPE_DP STEP: the checks of one recovered
# fault (the INDEX-th recovery of the job); prints why it failed, if it did.
check_trial() {
  local line path redone resume
  line=$(nth_done "$1" "$3")
  path=$(field path <<<"$line") redone=$(field redone_steps <<<"$line")
  resume=$(field resume_step <<<"$line")
  local want=replica
  if [ "$2" = migrate ]; then want=leaver; elif [ "$4" -eq 1 ]; then want=rollback; fi
  [ "$path" = "$want" ] || { echo "path $path, expected $want"; return; }
  [ "$(field first_step_seen <<<"$line")" = true ] || { echo "the joiner's first step was not seen"; return; }
  if [ "$want" = rollback ]; then
    [ $((resume % ckpt_every)) -eq 0 ] && [ "$resume" -ge $((($5 - 1) / ckpt_every * ckpt_every)) ] ||
      echo "rolled back to step $resume, not to the last checkpoint before step $5"
    return
  fi
  # Logged step N: the reporter is at boundary N, every rank past boundary N-1.
  [ "$resume" -ge $(($5 - 1)) ] || { echo "resumed at $resume, but step $(($5 - 1)) was done everywhere"; return; }
  [ "$redone" -le 1 ] || { echo "$redone steps redone, more than the step in flight"; return; }
  if [ "$2" = migrate ] && [ "$redone" -ne 0 ]; then echo "a migration redid $redone step(s)"; fi
}

# ms KEY LINE: KEY (seconds) of the event LINE in ms, 3 decimals.
ms() { awk -v s="$(field "$1" <<<"$2")" 'BEGIN { printf "%.3f", s * 1000 }'; }

# run_job KIND FAULTS: one job with FAULTS faults of KIND; appends its trials.
run_job() {
  local kind=$1 faults=$2 shape=${shapes[$((job % ${#shapes[@]}))]}
  local d=${shape% *} p=${shape#* } dir=$work/job-$job
  job=$((job + 1))
  mkdir -p "$dir"
  [ -n "${ref[$shape]:-}" ] || ref[$shape]=$(reference_hash "$d" "$p")
  start_job "$d" "$p" "$dir" "$faults"
  local i slots=() at=() point=() logged=() target=4 n=$((d * p))
  for ((i = 1; i <= faults; i++)); do
    target=$((target + 1 + RANDOM % (gap - 4)))
    local slot=$((RANDOM % n)) delay=$((RANDOM % 20))
    [ "$target" -le $((steps - tail_steps)) ] || break
    wait_until "$dir" step_reached "$dir" "$target" || break
    sleep "$(printf '0.%03d' "$delay")"
    local now
    now=$(logged_step "$dir")
    # A finished job also refuses a migration.
    [ "$now" -le $((steps - tail_steps)) ] || break
    # The log lags the ranks on a loaded machine: a slot may have finished.
    [ "$(count slot_finished "$dir")" -eq 0 ] || break
    inject "$kind" "$slot" "$dir" || break
    slots+=("$slot") at+=("$now") point+=("$delay")
    wait_until "$dir" recoveries_done "$dir" "$i" || break
    target=$(($(logged_step "$dir") + 1))
  done
  local status=0
  wait "$job_pid" || status=$?
  local hash
  hash=$(sed -n 's/^param-hash //p' "$dir/out")
  local job_error=
  [ "$status" -eq 0 ] || job_error="the job exited with status $status"
  [ -n "$job_error" ] || [ "$hash" = "${ref[$shape]}" ] ||
    job_error="final hash '$hash', without faults '${ref[$shape]}'"
  if [ -z "$job_error" ] && [ "$kind" = migrate ]; then
    grep -q "step failed" "$dir/err" && job_error="a rank saw a failed step during the migration"
    grep -Eq '"event":"(slot_failed|joiner_failed|donor_failed|order_timeout)"' "$dir/events" &&
      job_error="a failure event during the migration"
  fi
  if [ "$(count migration_cancelled "$dir")" -gt 0 ] && [ ${#slots[@]} -gt 0 ]; then
    # The job finished before the last migration could hold the ranks: the
    # coordinator cancelled it; no trial.
    echo "== job $job: the last migration was cancelled (the job finished first); not counted"
    unset 'slots[-1]' 'at[-1]' 'point[-1]'
  fi
  if [ -z "$job_error" ] && [ "$(count slot_finished "$dir")" -gt 0 ] && [ ${#slots[@]} -gt 0 ] &&
    [ -z "$(nth_done "$dir" ${#slots[@]})" ]; then
    # The job finished well, but the last kill came after its slot had
    # finished training (no failure: tm_worker_finish) or had exited: no
    # recovery to check; no trial.
    echo "== job $job: the last kill came after its slot finished training; not counted"
    unset 'slots[-1]' 'at[-1]' 'point[-1]'
  fi
  local failed_here=0
  for ((i = 1; i <= ${#slots[@]}; i++)); do
    local why=$job_error line
    [ -n "$why" ] || why=$(check_trial "$dir" "$kind" "$i" "$d" "${at[$((i - 1))]}")
    line=$(nth_done "$dir" "$i")
    if [ -z "$line" ]; then
      why=${why:-"not recovered"}
      line='{}'
    fi
    local trial=$((done_kills + done_migrations + 1))
    rows+=("$(printf '%5d %4d %-5s %-7s %4d %4d %5d %9s %9s %9s %9s %6s %6s %s' "$trial" "$job" \
      "${d}x${p}" "$kind" "${slots[$((i - 1))]}" "${at[$((i - 1))]}" "${point[$((i - 1))]}" \
      "$(ms detection_s "$line")" "$(ms switch_s "$line")" "$(ms state_transfer_s "$line")" \
      "$(ms downtime_s "$line")" "$(field resume_step <<<"$line")" \
      "$(field redone_steps <<<"$line")" "${why:-ok}")")
    echo "${rows[-1]}"
    if [ "$kind" = kill ]; then done_kills=$((done_kills + 1)); else done_migrations=$((done_migrations + 1)); fi
    if [ -n "$why" ]; then
      failures=$((failures + 1)) failed_here=1
    else
      downtimes+=("$(ms downtime_s "$line")")
    fi
  done
  if [ "$failed_here" -eq 1 ] || { [ -n "$job_error" ] && [ ${#slots[@]} -eq 0 ]; }; then
    echo "== job $job failed (${job_error:-a trial failed}); its events:"
    grep -v '"event":"standby_warmup"' "$dir/events" || true
    echo "== its output:"
    tail -n 60 "$dir/err"
    [ ${#slots[@]} -gt 0 ] || failures=$((failures + 1))
  fi
  [ ${#slots[@]} -gt 0 ] || [ -n "$job_error" ] || {
    echo "== job $job ran out of steps before its first fault"
  }
}

echo "kill-campaign: seed $seed; $trials kill trial(s), $migrations migration(s), $per_job fault(s) a job, $steps steps a job"
printf '%5s %4s %-5s %-7s %4s %4s %5s %9s %9s %9s %9s %6s %6s %s\n' trial job shape fault slot \
  step +ms detect_ms switch_ms xfer_ms down_ms resume redone result
start=$(date +%s)
while [ "$done_kills" -lt "$trials" ] || [ "$done_migrations" -lt "$migrations" ]; do
  if [ "$done_kills" -lt "$trials" ]; then
    kind=kill left=$((trials - done_kills))
  else
    kind=migrate left=$((migrations - done_migrations))
  fi
  [ "$job" -lt $(((trials + migrations) * 2 + 6)) ] || { echo "kill-campaign.sh: too many jobs without their faults" >&2; failures=$((failures + 1)); break; }
  run_job "$kind" $((left < per_job ? left : per_job))
done
summary=$(printf '%s\n' "${downtimes[@]}" | grep . | sort -n | awk '
  { v[NR] = $1 }
  END { if (NR == 0) { print "-/-/-"; exit }
        p = int(0.95 * NR + 0.999999); if (p < 1) p = 1
        printf "%.1f/%.1f/%.1f", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[p], v[NR] }')
echo "kill-campaign: $((done_kills + done_migrations)) trials ($done_kills kills, $done_migrations migrations)," \
  "$failures failure(s), downtime median/p95/max $summary ms, $(($(date +%s) - start)) s, seed $seed"
[ "$failures" -eq 0 ]
