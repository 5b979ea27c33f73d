#!/usr/bin/env bash
# The tests: installs what is missing, builds, and runs `make check`.
#   --full  also runs `make distcheck` with ASan+UBSan: the tarball is built
#           and `make check` runs there under the sanitizers (what CI does).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
full=no
for arg in "$@"; do
  case $arg in
    --full) full=yes ;;
    -h|--help) sed -n '2,4p' "$0"; exit 0 ;;
    *) echo "run-tests.sh: unknown argument '$arg' (use --full or --help)" >&2; exit 2 ;;
  esac
done
tm_install_packages
tm_build build
make -C "$tm_top/build" -j"$(nproc)" check VERBOSE=1
if [ $full = yes ]; then
  # One sanitizer build, not two: distcheck's own build is the sanitizer
  # build, so the tarball's completeness and ASan/UBSan are checked by the
  # same `make check`.
  make -C "$tm_top/build" -j"$(nproc)" distcheck VERBOSE=1 \
    DISTCHECK_CONFIGURE_FLAGS="--enable-sanitizers --disable-fuzzers"
fi
