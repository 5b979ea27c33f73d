#!/usr/bin/env bash
# The PMIx store under a real Slurm 22.05 (3 nodes started here,
# srun --mpi=pmix): the first wire-up of a communicator goes through
# PMIx put/commit/fence/get with rank and size from PMIx, and its links bind
# the interface TRAINMOVER_SOCKET_IFNAME names (getsockname in every rank:
# sockets on it when it is named, none when lo is); the PmixStore refuses what it cannot do after the fence; a
# bad interface name stops each rank with an error naming the variable.
# Skips (77) without root, Slurm or PMIx.
set -u
here=$(cd "$(dirname "$0")" && pwd)
client=$PWD/pmix/pmix_store_client
[ -x "$client" ] || { echo "SKIP: $client not built (no PMIx)"; exit 77; }
source "$here/../slurm/start_cluster.sh"
tm_start_cluster pmixstore 3
srun --mpi=list 2>&1 | grep -q pmix || { echo "SKIP: Slurm has no pmix MPI plugin"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

out=$(timeout 60 srun --mpi=pmix -N3 -n3 "$client" store 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "srun (store) exited $rc"
for r in 0 1 2; do
  grep -qx "store rank=$r size=3 peers=ok later=refused" <<<"$out" ||
    fail "rank $r: the PMIx store round or its refusal after the fence"
done

# The interface to bind: the first one up with an IPv4 address besides lo
# (eth0, 192.0.2.2 on the project's machines), else lo itself.
read -r ifname address < <(ip -o -4 addr show up 2>/dev/null |
  awk '$2 != "lo" { sub("/.*", "", $4); print $2, $4; exit }')
[ -n "${ifname:-}" ] || { ifname=lo; address=127.0.0.1; }
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
export TRAINMOVER_STORE=pmix TRAINMOVER_JOB_SECRET=$secret TRAINMOVER_CONNECT_TIMEOUT=30
# Slurm's PMIx plugin gives each task TCP sockets of its own (on 127.0.0.1
# and 0.0.0.0), so the ranks' socket lists are compared between two runs:
# bound to $ifname, every rank has sockets on $address; bound to lo, none.
# (multiprocess_interface_test checks the exact set without PMIx.)
run_comm() {
  out=$(TRAINMOVER_SOCKET_IFNAME="$1" timeout 90 srun --mpi=pmix -N3 -n3 "$client" comm 2>&1)
  rc=$?
  echo "$out"
  [ $rc -eq 0 ] || fail "srun (comm, $1) exited $rc"
}
run_comm "=$ifname"
for r in 0 1 2; do
  grep -Eqx "comm slot=$r nslots=3 sum=ok hosts=(.*,)?$address(,.*)?" <<<"$out" ||
    fail "rank $r: no allreduce over links bound to $address ($ifname)"
done
if [ "$address" != 127.0.0.1 ]; then
  run_comm "=lo"
  for r in 0 1 2; do
    grep -qx "comm slot=$r nslots=3 sum=ok hosts=.*" <<<"$out" || fail "rank $r (lo): no allreduce"
    grep -q "comm slot=$r .*$address" <<<"$out" && fail "rank $r: a socket on $address though bound to lo"
  done
fi

out=$(TRAINMOVER_SOCKET_IFNAME="=no-such-if9" timeout 60 srun --mpi=pmix -N3 -n3 "$client" comm 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "a bad TRAINMOVER_SOCKET_IFNAME was accepted"
[ "$(grep -c '^error .*TRAINMOVER_SOCKET_IFNAME.*no-such-if9' <<<"$out")" -eq 3 ] ||
  fail "not every rank named the bad TRAINMOVER_SOCKET_IFNAME"
echo "PMIx store under srun: 3 ranks wired up over $address ($ifname)"
