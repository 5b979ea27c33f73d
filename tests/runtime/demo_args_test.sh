#!/bin/sh
# scripts/run-demo.sh refuses bad arguments with status 2 and a message that
# names the option, before it starts anything.
. "$(dirname "$0")/runtime_lib.sh"
# refused ARGS... EXPECTED: the demo exits 2 and its message contains EXPECTED.
refused() {
  expected=$1
  shift
  status=0
  "$TM_SRCDIR/scripts/run-demo.sh" --build "$TM_BUILD" "$@" >"$work/out" 2>&1 || status=$?
  expect_eq "status of run-demo.sh $*" "$status" 2
  grep -q -- "$expected" "$work/out" ||
    { cat "$work/out"; echo "FAIL: run-demo.sh $*: no '$expected' in its message" >&2; exit 1; }
}
refused "--at 60 must be below --steps 60" --steps 60 --at 60
refused "--dp must be a whole number, not 'two'" --dp two
refused "--ckpt-every must be a whole number" --ckpt-every -1
refused "--fault is kill or none" --fault crash
refused "unknown argument '--nope'" --nope
echo "PASS: bad demo arguments refused with status 2"
