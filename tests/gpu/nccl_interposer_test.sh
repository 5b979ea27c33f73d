#!/bin/sh
# GPU test of libtrainmover-nccl.so with a single-rank NCCL program
# (tests/gpu/nccl_app): record a few iterations with the real NCCL, replay
# them with no network and compare every output byte; then the past-the-end
# wait, a mismatching call and rejected traces. Exits 77 (skipped) without a
# GPU. Run from the tests build directory (make check does).
set -u

top=${TOP_BUILDDIR:-..}
app=./gpu/nccl_app
shim=$top/lib/record/nccl/.libs/libtrainmover-nccl.so
iters=3

"$app" --probe || exit $?
[ -f "$shim" ] || { echo "FAIL: $shim is missing"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/tm-nccl-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
failures=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

# In a sanitizer build the sanitizer runtimes (which the program links)
# must be loaded before the preloaded library, and CUDA needs ASan to leave
# the address range it maps alone.
sanitizers=$(ldd "$app" | awk '/libasan|libubsan/ {print $3}' | tr '\n' ' ')
preload="$sanitizers$shim"
if [ -n "$sanitizers" ]; then
  ASAN_OPTIONS=${ASAN_OPTIONS:-}:protect_shadow_gap=0:detect_leaks=0
  export ASAN_OPTIONS
fi

# with MODE CMD...: runs CMD (the app, or env/unshare wrapping it) through
# the interposer in MODE. No "--" before CMD: env would take it for the
# command (found on the first GPU run).
with() {
  mode=$1
  shift
  env TRAINMOVER_NCCL_MODE="$mode" TRAINMOVER_NCCL_TRACE_DIR="$work/traces" \
    TRAINMOVER_NCCL_ROLE=rank=0 TRAINMOVER_NCCL_JOB=7 TRAINMOVER_NCCL_REPLAY_WAIT=60 \
    LD_PRELOAD="$preload" "$@"
}

# Replay must not need NCCL's network: NCCL's bootstrap is pointed at an
# interface that does not exist, and in a private network namespace when
# unshare allows it. The plain program must fail that way (else the check
# proves nothing).
no_net="env NCCL_SOCKET_IFNAME==tm_no_such_if0 NCCL_IB_DISABLE=1"
if unshare -rn "$app" --probe 2>/dev/null; then no_net="unshare -rn $no_net"; fi

"$app" --iterations $iters --out "$work/plain.bin" || { echo "FAIL: the plain program"; exit 1; }

if with record "$app" --iterations $iters --out "$work/record.bin" 2>"$work/record.err" &&
  cmp -s "$work/plain.bin" "$work/record.bin"; then
  pass "record: outputs identical to the plain run"
else
  fail "record: $(tail -3 "$work/record.err")"
fi
trace="$work/traces/stage=none,rank=0.tmtrace"
[ -s "$trace" ] && pass "record: trace written" || fail "record: no trace at $trace"

if $no_net "$app" --iterations 1 --out "$work/nonet.bin" >/dev/null 2>&1; then
  echo "NOTE: NCCL still works without its network here; the no-network check is weaker"
fi
if with replay $no_net "$app" --iterations $iters --out "$work/replay.bin" 2>"$work/replay.err" &&
  cmp -s "$work/plain.bin" "$work/replay.bin"; then
  pass "replay without network: outputs bitwise identical"
else
  fail "replay: $(tail -3 "$work/replay.err")"
fi

# One iteration more than recorded: the call past the end waits, says why,
# and fails after TRAINMOVER_NCCL_REPLAY_WAIT.
if with replay env TRAINMOVER_NCCL_REPLAY_WAIT=1 "$app" --iterations $((iters + 1)) \
  --out "$work/past.bin" 2>"$work/past.err"; then
  fail "past the end: the program did not fail"
elif grep -q "replay trace exhausted" "$work/past.err" &&
  grep -q "waiting up to 1 s" "$work/past.err" && grep -q "no switch to the live job" "$work/past.err"; then
  pass "past the end: waited with a message, then failed"
else
  fail "past the end: $(cat "$work/past.err")"
fi

expect_error() {  # NAME TEXT CMD...: the replay must fail, printing TEXT
  name=$1 text=$2
  shift 2
  if "$@" --iterations $iters --out "$work/x.bin" 2>"$work/x.err"; then
    fail "$name: the program did not fail"
  elif grep -q -- "$text" "$work/x.err"; then
    pass "$name: rejected ($text)"
  else
    fail "$name: $(cat "$work/x.err")"
  fi
}
expect_error "other count" "but the trace recorded" with replay "$app" --count 1000
expect_error "other job" "wrong job" with replay env TRAINMOVER_NCCL_JOB=8 "$app"
expect_error "no trace for the role" "rank=1" with replay env TRAINMOVER_NCCL_ROLE=rank=1 "$app"
cp "$trace" "$work/traces/stage=none,rank=2.tmtrace"
expect_error "other role" "wrong role" with replay env TRAINMOVER_NCCL_ROLE=rank=2 "$app"
head -c 1000 "$trace" >"$work/cut" && cp "$work/cut" "$trace"
expect_error "truncated trace" "truncated" with replay "$app"

# The record window: only the first 4 calls per communicator.
rm -rf "$work/traces"
with record env TRAINMOVER_NCCL_RECORD_CALLS=4 "$app" --iterations $iters --out "$work/w.bin" \
  2>"$work/w.err" || fail "window: record failed: $(tail -3 "$work/w.err")"
expect_error "window of 4 calls" "had 4 recorded calls" \
  with replay env TRAINMOVER_NCCL_REPLAY_WAIT=0.2 "$app"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all NCCL interposer GPU checks passed"
