#!/usr/bin/env bash
# The main job on the embedded local default: installs what is missing,
# builds, and runs the allreduce benchmark on 4 local ranks, side by side
# with gloo and OpenMPI (TCP) in the same run. Extra arguments go to
# trainmover-bench, e.g. --json.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
tm_install_packages
tm_build build
exec "$tm_top/build/tools/bench/trainmover-bench" allreduce --nranks 4 --bytes 4K,64K,1M,16M,64M --iters 20 "$@"
