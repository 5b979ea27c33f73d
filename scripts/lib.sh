# Shared by the scripts in this folder: Debian packages, and the build.
# Sourced, not run.

# Everything the build, the tests and the peers measured against need.
TM_PACKAGES="build-essential autoconf automake autoconf-archive libtool pkg-config
  libssl-dev libgtest-dev libgmock-dev clang libclang-rt-14-dev
  libgloo-dev openmpi-bin libopenmpi-dev
  libslurm-dev slurmctld slurmd slurm-client munge libpmix-dev libibverbs-dev libboost-program-options-dev libzstd-dev
  nlohmann-json3-dev"

tm_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# Installs missing packages as root; otherwise prints what to install and fails.
tm_install_packages() {
  local missing=()
  for p in $TM_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "Missing Debian packages. As root, run:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    return 1
  fi
  echo "Installing: ${missing[*]}"
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# Builds in $1 (a folder under the source tree) with configure flags $2...
tm_build() {
  local dir=$1
  shift
  (cd "$tm_top" && [ -x configure ] || autoreconf -fi) || return 1
  mkdir -p "$tm_top/$dir"
  (cd "$tm_top/$dir" && { [ -f Makefile ] || "$tm_top/configure" "$@"; } && make -j"$(nproc)")
}
