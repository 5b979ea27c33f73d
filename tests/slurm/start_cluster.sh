# Sourced by the Slurm tests: tm_start_cluster NAME NNODES [PLUGSTACK]
# starts a cluster of NNODES in a fresh folder $dir under $PWD (never under
# /tmp: each node mounts its own /tmp), exports SLURM_CONF, and stops it and
# removes $dir when the test exits (after running $tm_on_exit, if set).
# It exits the test with cluster.sh's status when the cluster cannot start
# (77: skipped, without root or the Slurm packages).
tm_cluster_sh=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/cluster.sh
tm_start_cluster() {
  # Every node mounts a /tmp of its own: a build under /tmp is out of the
  # nodes' sight (its programs, the plugin, the cluster folder).
  case $PWD in
    /tmp | /tmp/*)
      echo "SKIP: the build is under /tmp, which the Slurm nodes cannot see; build elsewhere" >&2
      exit 77
      ;;
  esac
  dir=$(mktemp -d "$PWD/slurm-$1.XXXXXX")
  trap 'eval "${tm_on_exit:-}"; "$tm_cluster_sh" stop "$dir"; rm -rf "$dir"' EXIT
  local rc=0
  "$tm_cluster_sh" start "$dir" "$2" ${3:+"$3"} || rc=$?
  [ $rc -eq 0 ] || exit $rc
  export SLURM_CONF=$dir/slurm.conf
}
