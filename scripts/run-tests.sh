#!/usr/bin/env bash
# The tests: installs what is missing, builds, and runs `make check`.
#   --full  also builds with ASan+UBSan and runs `make check` there, and runs
#           `make distcheck` (what CI does).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
full=no
for arg in "$@"; do
  case $arg in
    --full) full=yes ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "run-tests.sh: unknown argument '$arg' (use --full or --help)" >&2; exit 2 ;;
  esac
done
tm_install_packages
tm_build build
make -C "$tm_top/build" -j"$(nproc)" check VERBOSE=1
if [ $full = yes ]; then
  tm_build build-sanitizers --enable-sanitizers --disable-fuzzers
  make -C "$tm_top/build-sanitizers" -j"$(nproc)" check VERBOSE=1
  make -C "$tm_top/build" -j"$(nproc)" distcheck
fi
