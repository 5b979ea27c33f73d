#!/bin/sh
# libtrainmover-nccl.so without a GPU: it exports NCCL's functions only,
# forwards to the real NCCL when off, and in replay mode fails with messages
# that name the problem (settings, missing trace, unsupported call).
set -u
top=${TOP_BUILDDIR:-..}
shim=$top/lib/record/nccl/.libs/libtrainmover-nccl.so
probe=./record/nccl_shim_probe
failures=0
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
pass() { echo "PASS: $1"; }

# In a sanitizer build the sanitizer runtimes (which the test program links)
# must be loaded before the preloaded library.
preload="$(ldd "$probe" | awk '/libasan|libubsan/ {print $3}' | tr '\n' ' ')$shim"

others=$(nm -D --defined-only "$shim" | awk '{print $3}' | grep -v '^nccl' | head -3)
[ -z "$others" ] && pass "exports nccl* only" || fail "also exports: $others"

out=$(LD_PRELOAD="$preload" "$probe" version 2>&1)
echo "$out" | grep -q "^ncclGetVersion: 0 " && pass "off: forwarded ($out)" ||
  fail "off: $out"

dir=$(mktemp -d "${TMPDIR:-/tmp}/tm-nccl-shim.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
replay() {
  env TRAINMOVER_NCCL_MODE=replay TRAINMOVER_NCCL_TRACE_DIR="$dir" TRAINMOVER_NCCL_ROLE=rank=0 \
    LD_PRELOAD="$preload" "$@" 2>&1
}

check() {  # NAME TEXT OUTPUT: the probe failed and printed TEXT
  if echo "$3" | grep -q "^ncclCommInitRank: 0\|^ncclRedOpDestroy: 0"; then
    fail "$1: succeeded"
  elif echo "$3" | grep -q -- "$2"; then
    pass "$1"
  else
    fail "$1: $3"
  fi
}
check "replay without a trace names it" "stage=none,rank=0.tmtrace" "$(replay "$probe" init)"
check "the failure is ncclInvalidUsage" "ncclCommInitRank: 5 " "$(replay "$probe" init)"
check "bad mode names the variable" "TRAINMOVER_NCCL_MODE" \
  "$(replay env TRAINMOVER_NCCL_MODE=fast "$probe" init)"
check "unsupported call in replay" "ncclRedOpDestroy is not supported in replay mode" \
  "$(replay "$probe" redop)"

# Record mode writes nothing for a process that created no communicator.
env TRAINMOVER_NCCL_MODE=record TRAINMOVER_NCCL_TRACE_DIR="$dir/rec" RANK=0 \
  LD_PRELOAD="$preload" "$probe" version >/dev/null 2>&1
[ ! -e "$dir/rec" ] && pass "record: no communicator, no trace" || fail "record: wrote $(ls "$dir/rec")"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
