#!/usr/bin/env bash
# PMIx under a real Slurm 22.05 (3 nodes started here, srun --mpi=pmix):
# the client learns its rank and the job size, every rank's endpoint crosses
# through put/commit/fence/get, and the failure listener starts although
# Slurm's PMIx server refuses job events (it then hears only the lost
# connection to its own server). Skips (77) without root, Slurm or PMIx.
set -u
here=$(cd "$(dirname "$0")" && pwd)
client=$PWD/pmix/pmix_event_client
[ -x "$client" ] || { echo "SKIP: $client not built (no PMIx)"; exit 77; }
source "$here/../slurm/start_cluster.sh"
tm_start_cluster pmix 3
srun --mpi=list 2>&1 | grep -q pmix || { echo "SKIP: Slurm has no pmix MPI plugin"; exit 77; }
out=$(timeout 60 srun --mpi=pmix -N3 -n3 "$client" 0 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: srun exited $rc"; exit 1; }
for r in 0 1 2; do
  grep -qx "ready rank=$r size=3 peers=ok events=lost-only" <<<"$out" ||
    { echo "FAIL: rank $r did not wire up through PMIx as expected"; exit 1; }
done
echo "PMIx under srun: 3 ranks wired up"
