#!/usr/bin/env bash
# The SPANK plugin in a real Slurm 22.05 cluster started here (3 nodes):
# its options appear in `srun --help`, good values run the step, bad values
# and bad plugstack.conf arguments make srun refuse it with a message that
# names what was wrong. Skips (77) without root or Slurm.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${TOP_BUILDDIR:-../..}" && pwd)
plugin=$build/spank/.libs/trainmover.so
srun_lib=$build/launcher/.libs/libtrainmover-srun.so
[ -f "$plugin" ] || { echo "SKIP: $plugin not built (no slurm/spank.h)"; exit 77; }

source "$here/../slurm/start_cluster.sh"
plugstack=$(mktemp "$PWD/plugstack.XXXXXX")
tm_on_exit='rm -f "$plugstack"'
echo "required $plugin heartbeat=2s launcher=$build/launcher/trainmover-launch srun_lib=$srun_lib" \
  >"$plugstack"
tm_start_cluster options 3 "$plugstack"

failed=0
check() { # NAME EXPECTED_RC GREP_PATTERN -- COMMAND...
  local name=$1 want=$2 pattern=$3
  shift 4
  local out rc
  out=$(timeout 60 "$@" 2>&1)
  rc=$?
  if { [ "$want" = 0 ] && [ $rc -ne 0 ]; } || { [ "$want" != 0 ] && [ $rc -eq 0 ]; } ||
    ! grep -q -- "$pattern" <<<"$out"; then
    echo "FAIL: $name (exit $rc, want $want, pattern '$pattern'):"
    sed 's/^/  | /' <<<"$out"
    failed=$((failed + 1))
  else
    echo "ok: $name"
  fi
}

check "srun --help lists the options" 0 "trainmover-standby=N" -- srun --help
check "--help shows the heartbeat option" 0 "trainmover-heartbeat=SEC" -- srun --help
# srun cannot dlopen an ASan-instrumented srun library: in a sanitizer
# build only the refusals are checked.
if ! nm -D "$srun_lib" 2>/dev/null | grep -q __asan_init; then
  check "a good step runs" 0 "^hello$" -- \
    srun -N3 -n3 --no-kill --kill-on-bad-exit=0 --trainmover --trainmover-standby=1 \
    --trainmover-heartbeat=250ms sh -c 'echo hello'
  # -k bundled with another letter, -K with its value glued on.
  check "bundled -Xk and -K0" 0 "^hello$" -- \
    srun -N2 -n2 -Xk -K0 --trainmover sh -c 'echo hello'
fi
check "no --no-kill" 1 "run srun with --no-kill" -- srun -N2 -n2 --trainmover true
# The program's arguments are not srun's (SPANK's S_JOB_ARGV marks them).
check "the program's --no-kill" 1 "run srun with --no-kill" -- \
  srun -N2 -n2 --trainmover echo --no-kill -k
check "--kill-on-bad-exit" 1 "run srun with --kill-on-bad-exit=0" -- \
  srun -N2 -n2 --no-kill --kill-on-bad-exit=1 --trainmover true
check "uneven tasks per node" 1 "every node must run the same number of tasks" -- \
  srun -N2 -n3 --trainmover true
check "standby not a number" 1 "trainmover: --trainmover-standby: 'two' is not a whole number" -- \
  srun -N3 --trainmover-standby=two true
check "heartbeat out of range" 1 "trainmover: --trainmover-heartbeat: 0 is out of range" -- \
  srun -N3 --trainmover-heartbeat=0 true
check "record steps out of range" 1 "--trainmover-record-steps: -3 is out of range" -- \
  srun -N3 --trainmover-record-steps=-3 true
check "standbys leave no active node" 1 "leaves no active node in a step of 2 nodes" -- \
  srun -N2 --trainmover-standby=2 true

echo "required $plugin standbys=1" >"$dir/plugstack.conf"
check "unknown plugstack.conf key" 1 "plugstack.conf key 'standbys' is unknown" -- \
  srun -N1 true

echo "required $plugin srun_lib=/nonexistent/libtrainmover-srun.so" >"$dir/plugstack.conf"
check "srun library missing" 1 "cannot load /nonexistent/libtrainmover-srun.so" -- \
  srun -N1 --no-kill --trainmover true
echo "required $plugin poll=0" >"$dir/plugstack.conf"
check "poll interval out of range" 1 "plugstack.conf poll: 0 is out of range" -- \
  srun -N1 true

[ $failed -eq 0 ] && echo "srun options: all passed" || echo "srun options: $failed failed"
exit $((failed > 0))
