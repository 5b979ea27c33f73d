#!/usr/bin/env bash
# What standby warm-up buys: the joiner's first step after promotion, warm
# (trainmover-launch --warmup replay) against cold (--warmup none).
#
#   scripts/bench-warmup.sh [--build DIR] [--rounds R] [--dp D] [--pp P]
#                           [--slot S] [--gpt-args "ARGS"]
#
# Each round runs the same trainmover-gpt job twice, warm then cold, with
# one standby; 1 s after the standby reported itself ready, slot S
# (default 1) is killed with SIGKILL. The figures come from the
# coordinator's recovery_done event: the joiner's own wall time, CPU time
# (the whole process) and minor page faults of its first step, and the
# coordinator's first_step_s (from the switch). Prints one line per run and
# the median of each over the R rounds (default 5). Exit status: 0, 1 when
# a run failed, 2 for a bad argument.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$top/build rounds=5 dp=2 pp=2 slot=1 gpt_args=
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --dp) dp=$2; shift 2 ;;
    --pp) pp=$2; shift 2 ;;
    --slot) slot=$2; shift 2 ;;
    --gpt-args) gpt_args=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "bench-warmup.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $rounds in ''|*[!0-9]*|0) echo "bench-warmup.sh: --rounds must be a positive integer" >&2; exit 2 ;; esac
launch=$build/launcher/trainmover-launch
gpt=$build/examples/gpt/trainmover-gpt
for f in "$launch" "$gpt"; do
  [ -x "$f" ] || { echo "bench-warmup.sh: $f is not built (make -C $build)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/trainmover-bench-warmup.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=$((dp * pp))

# run MODE ROUND: one job, one kill; appends "MODE wall cpu minflt first_step" to $work/figures.
run() {
  local mode=$1 round=$2 events=$work/$1.$2.events
  # shellcheck disable=SC2086
  timeout 600 "$launch" --nprocs "$n" --standby 1 --pp "$pp" --warmup "$mode" --quiet \
    --events "$events" -- "$gpt" --dp "$dp" --pp "$pp" --steps 100000 --log-every 0 $gpt_args \
    >"$work/out" 2>"$work/err" &
  local job=$! pid=
  for _ in $(seq 1 60000); do
    grep -q '"event":"standby_warmup".*"state":"ready"' "$events" 2>/dev/null && break
    kill -0 "$job" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
    sleep 0.01
  done
  sleep 1  # the job well past its recorded steps, in its steady state
  pid=$(grep '"event":"slot_registered"' "$events" | grep "\"slot\":$slot[,}]" | head -n 1 |
    sed 's/.*"pid":\([0-9]*\).*/\1/')
  kill -9 "$pid"
  for _ in $(seq 1 60000); do
    grep -q '"event":"recovery_done"' "$events" && break
    kill -0 "$job" 2>/dev/null || { cat "$work/err" >&2; exit 1; }
    sleep 0.01
  done
  kill -TERM "$job" 2>/dev/null || true
  wait "$job" 2>/dev/null || true
  local line
  line=$(grep '"event":"recovery_done"' "$events" | head -n 1)
  get() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" <<<"$line"; }
  printf '%s %s %s %s %s %s\n' "$mode" "$(get joiner_step_wall_s)" "$(get joiner_step_cpu_s)" \
    "$(get joiner_step_minflt)" "$(get first_step_s)" "$(get joiner_warm)" >>"$work/figures"
  printf 'round %d %-6s joiner step %.2f ms wall, %.2f ms CPU, %s minor faults; first_step_s %.2f ms (warm: %s)\n' \
    "$round" "$mode" "$(awk "BEGIN{print $(get joiner_step_wall_s)*1e3}")" \
    "$(awk "BEGIN{print $(get joiner_step_cpu_s)*1e3}")" "$(get joiner_step_minflt)" \
    "$(awk "BEGIN{print $(get first_step_s)*1e3}")" "$(get joiner_warm)"
}

echo "== dp $dp x pp $pp, slot $slot killed, $rounds rounds; gpt args: ${gpt_args:-(defaults)}"
for r in $(seq 1 "$rounds"); do
  run replay "$r"
  run none "$r"
done
median() {  # median of column $2 for mode $1
  awk -v m="$1" -v c="$2" '$1 == m { print $c }' "$work/figures" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for mode in replay none; do
  printf 'median %-6s joiner step %.2f ms wall, %.2f ms CPU, %s minor faults; first_step_s %.2f ms\n' \
    "$mode" "$(awk "BEGIN{print $(median $mode 2)*1e3}")" "$(awk "BEGIN{print $(median $mode 3)*1e3}")" \
    "$(median $mode 4)" "$(awk "BEGIN{print $(median $mode 5)*1e3}")"
done
