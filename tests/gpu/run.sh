#!/bin/sh
# Builds TrainMover (or reuses BUILD_DIR) and runs the GPU tests of the NCCL
# interposer on this machine's first GPU, then measures what record mode
# costs the training stream. Under 5 minutes on one GPU. Exits 77 (skipped)
# when there is no GPU, 1 when a check fails.
#
#   tests/gpu/run.sh                 # builds in build-gpu/
#   BUILD_DIR=build tests/gpu/run.sh # reuses an existing build
set -eu

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$src/build-gpu}
case $build in /*) ;; *) build=$src/$build ;; esac
jobs=${JOBS:-6}

if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  echo "run.sh: no GPU (nvidia-smi lists none): GPU tests skipped"
  exit 77
fi

if [ ! -f "$build/Makefile" ]; then
  [ -x "$src/configure" ] || (cd "$src" && autoreconf -fi)
  mkdir -p "$build"
  (cd "$build" && "$src/configure" --disable-fuzzers >"$build/configure.log") ||
    { echo "run.sh: configure failed, see $build/configure.log"; exit 1; }
fi
grep -q 'define HAVE_CUDA_NCCL 1' "$build/config.h" ||
  { echo "run.sh: configure found no CUDA + NCCL (see --with-cuda)"; exit 1; }
echo "run.sh: building in $build"
make -C "$build" -j"$jobs" >"$build/make.log" 2>&1 || { tail -20 "$build/make.log"; exit 1; }
make -C "$build/tests" -j"$jobs" gpu/nccl_app >>"$build/make.log" 2>&1 ||
  { tail -20 "$build/make.log"; exit 1; }

cd "$build/tests"
status=0
TOP_BUILDDIR=.. timeout 240 sh "$src/tests/gpu/nccl_interposer_test.sh" || status=$?
if [ "$status" -ne 0 ]; then
  echo "run.sh: NCCL interposer GPU test: FAILED (status $status)"
  exit 1
fi

# Record mode's cost: stream time of one iteration (about 84 MiB of
# outputs) with and without recording, next to a plain D2H copy of them.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tm-nccl-timing.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
plain=$(timeout 60 ./gpu/nccl_app --iterations 2 --count 4194304 --timing --out "$tmp/a.bin")
recorded=$(TRAINMOVER_NCCL_MODE=record TRAINMOVER_NCCL_TRACE_DIR="$tmp/traces" \
  TRAINMOVER_NCCL_ROLE=rank=0 LD_PRELOAD="../lib/record/nccl/.libs/libtrainmover-nccl.so" \
  timeout 60 ./gpu/nccl_app --iterations 2 --count 4194304 --timing --out "$tmp/b.bin")
echo "run.sh: plain:  ${plain#timing: }"
echo "run.sh: record: ${recorded#timing: }"
echo "run.sh: record adds (iteration_stream_us record - plain); it should stay within d2h_copy_us"
echo "run.sh: all GPU tests passed"
