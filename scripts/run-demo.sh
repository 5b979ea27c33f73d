#!/usr/bin/env bash
# The local demo: a TrainMover job loses a rank and goes on.
#
#   scripts/run-demo.sh [--build DIR] [--dp D] [--pp P] [--steps N] [--slot S]
#                       [--at STEP] [--fault kill|none] [--ckpt-every K]
#                       [--gpt-args "ARGS"]
#
# Runs trainmover-gpt as a DP x PP job of trainmover-launch with one standby,
# kills slot S with SIGKILL when the job reaches step STEP (default: slot 1
# at step 20 of 60, D = P = 2), and prints the launcher's events as they
# happen. Then it runs the same job with no fault and checks that the final
# parameter hashes are bitwise equal. Exit status: 0 when the job survived
# and the hashes match; 1 otherwise; 2 for a bad argument.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TM_BUILD:-$top/build}
dp=2 pp=2 steps=60 slot=1 at=20 fault=kill every=0 gpt_args=
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=$2; shift 2 ;;
    --dp) dp=$2; shift 2 ;;
    --pp) pp=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --slot) slot=$2; shift 2 ;;
    --at) at=$2; shift 2 ;;
    --fault) fault=$2; shift 2 ;;
    --ckpt-every) every=$2; shift 2 ;;
    --gpt-args) gpt_args=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "run-demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $fault in kill|none) ;; *) echo "run-demo.sh: --fault is kill or none" >&2; exit 2 ;; esac
for v in dp pp steps slot at every; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "run-demo.sh: --${v/every/ckpt-every} must be a whole number, not '${!v}'" >&2; exit 2; }
done
if [ "$fault" = kill ] && [ "$at" -ge "$steps" ]; then
  echo "run-demo.sh: --at $at must be below --steps $steps: the kill comes once step $at is logged" >&2
  exit 2
fi
# On a fresh machine: the Debian packages and the build, as the other scripts do.
if [ "$build" = "$top/build" ]; then
  source "$top/scripts/lib.sh"
  tm_install_packages
  echo "run-demo.sh: building in $top/build ..." >&2
  tm_build build >"${TMPDIR:-/tmp}/trainmover-demo-build.log" 2>&1 ||
    { echo "run-demo.sh: the build failed; see ${TMPDIR:-/tmp}/trainmover-demo-build.log" >&2; exit 1; }
fi
launch=$build/launcher/trainmover-launch
gpt=$build/examples/gpt/trainmover-gpt
for f in "$launch" "$gpt"; do
  [ -x "$f" ] || { echo "run-demo.sh: $f is not built (make -C $build)" >&2; exit 1; }
done
n=$((dp * pp))
work=$(mktemp -d "${TMPDIR:-/tmp}/trainmover-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT
ckpt=()
if [ "$every" -gt 0 ]; then ckpt=(--checkpoint-dir "$work/ckpt" --checkpoint-every "$every"); fi

# run NAME EXTRA-LAUNCH-ARGS...: the job in the background; its pid in $job_pid.
run() {
  local name=$1; shift
  mkdir -p "$work/ckpt"
  # Created here, not by the background job's redirection: the tail below
  # must find the file even if it starts before the job does.
  : >"$work/$name.out"
  : >"$work/$name.err"
  "$launch" --nprocs "$n" --standby 1 --pp "$pp" --timeout 300 --events "$work/$name.events" \
    --job-file "$work/$name.job" "$@" -- "$gpt" --dp "$dp" --pp "$pp" --steps "$steps" \
    --log-every 1 --print-hash "${ckpt[@]}" $gpt_args >"$work/$name.out" 2>"$work/$name.err" &
  job_pid=$!
}

# The pid of the process that registered for slot $1 in events file $2.
pid_of_slot() {
  grep '"event":"slot_registered"' "$2" 2>/dev/null | grep "\"slot\":$1[,}]" | tail -n 1 |
    sed 's/.*"pid":\([0-9]*\).*/\1/'
}

echo "== job: $n ranks (dp $dp x pp $pp) and 1 standby, $steps steps; fault: $fault of slot $slot at step $at"
run faulty
tail -n +1 -f "$work/faulty.err" --pid "$job_pid" 2>/dev/null | grep --line-buffered -v '^trainmover-gpt: step ' &
tail_pid=$!
if [ "$fault" = kill ]; then
  for _ in $(seq 1 3000); do
    if grep -q "trainmover-gpt: step $at/" "$work/faulty.err" 2>/dev/null; then break; fi
    kill -0 "$job_pid" 2>/dev/null || break
    sleep 0.01
  done
  victim=$(pid_of_slot "$slot" "$work/faulty.events")
  if [ -z "$victim" ]; then echo "run-demo.sh: no pid for slot $slot" >&2; exit 1; fi
  echo "== kill -9 $victim (slot $slot)"
  if ! kill -9 "$victim" 2>/dev/null; then
    echo "run-demo.sh: slot $slot (pid $victim) had exited before the kill: the job ran past step $at first; give more --steps" >&2
    exit 1
  fi
fi
status=0
wait "$job_pid" || status=$?
wait "$tail_pid" 2>/dev/null || true
echo "== the job exited with status $status"
faulty=$(sed -n 's/^param-hash //p' "$work/faulty.out")
cp "$work/faulty.events" "${TM_DEMO_EVENTS:-/dev/null}" 2>/dev/null || true

echo "== the same job with no fault"
rm -rf "$work/ckpt"
run clean --quiet
clean_status=0
wait "$job_pid" || clean_status=$?
clean=$(sed -n 's/^param-hash //p' "$work/clean.out")
echo "== final parameter hash: with the fault ${faulty:-none}, without ${clean:-none}"
if [ "$status" -eq 0 ] && [ "$clean_status" -eq 0 ] && [ -n "$faulty" ] && [ "$faulty" = "$clean" ]; then
  echo "== bitwise equal: the job lost a rank and went on"
  exit 0
fi
echo "== FAILED: exit statuses $status and $clean_status, hashes '${faulty}' and '${clean}'"
exit 1
