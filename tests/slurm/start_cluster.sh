# Sourced by the Slurm tests: tm_start_cluster NAME NNODES [PLUGSTACK]
# starts a cluster of NNODES in a fresh folder $dir under $PWD (never under
# /tmp: each node mounts its own /tmp), exports SLURM_CONF, and stops it and
# removes $dir when the test exits. $tm_on_exit, if set, runs at any exit
# after the call, a skip included.
# It exits the test with cluster.sh's status when the cluster cannot start
# (77: skipped, without root or the Slurm packages).
tm_cluster_sh=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cluster.sh
tm_start_cluster() {
  # The caller's cleanup runs on every exit, the skips included (distcheck
  # finds any file the test leaves behind).
  trap 'eval "${tm_on_exit:-}"' EXIT
  # Every node mounts a /tmp of its own: a build under /tmp is out of the
  # nodes' sight (its programs, the plugin, the cluster folder).
  case $PWD in
    /tmp | /tmp/*)
      echo "SKIP: the build is under /tmp, which the Slurm nodes cannot see; build elsewhere" >&2
      exit 77
      ;;
  esac
  # One cluster at a time per build (make check -j runs tests side by
  # side): on 2 CPUs two clusters and their jobs starved each other's
  # slurmd ("only 2 of 3 nodes idle after 30 s"). The lock is held on fd 9
  # until the test exits.
  exec 9>"$PWD/.slurm-cluster.lock"
  if ! flock -w 600 9; then
    echo "FAIL: another Slurm test held the cluster lock for 600 s" >&2
    exit 1
  fi
  dir=$(mktemp -d "$PWD/slurm-$1.XXXXXX")
  trap 'eval "${tm_on_exit:-}"; "$tm_cluster_sh" stop "$dir"; rm -rf "$dir"' EXIT
  local rc=0
  # Not to the daemons (munged outlives the test): they would hold the lock.
  "$tm_cluster_sh" start "$dir" "$2" ${3:+"$3"} 9>&- || rc=$?
  [ $rc -eq 0 ] || exit $rc
  export SLURM_CONF=$dir/slurm.conf
}
