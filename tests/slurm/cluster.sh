#!/usr/bin/env bash
# A real Slurm 22.05 cluster on this machine, for the tests: munge, one
# slurmctld and NNODES slurmd, each slurmd in its own mount namespace with a
# private /tmp (PMIx needs that when several "nodes" share a host).
#
#   cluster.sh start DIR NNODES [PLUGSTACK_CONF]   start; prints nothing on success
#   cluster.sh stop DIR                            stop every daemon started in DIR
#   cluster.sh env DIR                             print "export SLURM_CONF=..."
#
# Exit status: 0 started/stopped, 77 cannot run here (not root, Slurm or
# munge missing, no unshare): the caller skips, 1 failed (logs named).
# Ports are picked at random from 20000-59999 so that several clusters (plain
# and distcheck runs) can run at once; ClusterName is unique per DIR.
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }
skip() { echo "cluster.sh: SKIP: $*" >&2; exit 77; }

need_tools() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (slurmd and mount namespaces)"
  local t
  for t in slurmctld slurmd srun sinfo munged munge unshare mount; do
    command -v "$t" >/dev/null 2>&1 || skip "$t not installed (apt-get install slurmctld slurmd slurm-client munge)"
  done
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
  [ -f /etc/munge/munge.key ] || skip "no /etc/munge/munge.key"
  mkdir -p /run/munge
  chown munge:munge /run/munge 2>/dev/null || true
  munged --force >/dev/null 2>&1 || die "munged did not start"
  local i
  for i in $(seq 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "munge does not answer after 5 s"
}

write_conf() {
  local dir=$1 nnodes=$2 base=$3
  local last=$((base + nnodes))
  cat >"$dir/slurm.conf" <<CONF
ClusterName=tm$(basename "$dir" | tr -dc 'a-z0-9' | tail -c 20)
SlurmctldHost=localhost
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=10
MessageTimeout=10
MpiDefault=none
SchedulerType=sched/backfill
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
PlugStackConfig=$dir/plugstack.conf
NodeName=n[1-$nnodes] NodeHostname=localhost Port=[$((base + 1))-$last] CPUs=2 RealMemory=2000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
}

wait_nodes_idle() {
  local dir=$1 nnodes=$2 i idle
  for i in $(seq 150); do
    idle=$(SLURM_CONF=$dir/slurm.conf sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle' || true)
    [ "$idle" -ge "$nnodes" ] && return 0
    sleep 0.2
  done
  die "only $idle of $nnodes nodes idle after 30 s; see $dir/*.log"
}

start() {
  local dir=$1 nnodes=$2 plugstack=${3:-}
  [[ $nnodes =~ ^[1-9][0-9]?$ ]] || die "NNODES must be 1..99, got '$nnodes'"
  case $(cd "$dir" && pwd -P)/ in
    /tmp/*) die "DIR must not be under /tmp: every node mounts a /tmp of its own over it" ;;
  esac
  need_tools
  start_munge
  mkdir -p "$dir/state"
  chmod 0750 "$dir"
  local base=$((20000 + RANDOM % 40000 / 100 * 100))
  write_conf "$dir" "$nnodes" "$base"
  if [ -n "$plugstack" ]; then cp "$plugstack" "$dir/plugstack.conf"; else : >"$dir/plugstack.conf"; fi
  slurmctld -c -f "$dir/slurm.conf" || die "slurmctld did not start; see $dir/slurmctld.log"
  local n
  for n in $(seq "$nnodes"); do
    mkdir -p "$dir/spool/n$n" "$dir/tmp/n$n"
    chmod 1777 "$dir/tmp/n$n"
    unshare --mount --propagation private sh -c \
      "mount --bind '$dir/tmp/n$n' /tmp && exec slurmd -N n$n -f '$dir/slurm.conf'" ||
      die "slurmd n$n did not start; see $dir/slurmd.n$n.log"
  done
  wait_nodes_idle "$dir" "$nnodes"
}

stop() {
  local dir=$1 f pid
  for f in "$dir"/slurmd.*.pid "$dir"/slurmctld.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
  sleep 0.5
  for f in "$dir"/slurmd.*.pid "$dir"/slurmctld.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
  done
  return 0
}

case ${1:-} in
  start) [ $# -ge 3 ] || die "usage: cluster.sh start DIR NNODES [PLUGSTACK]"; start "$2" "$3" "${4:-}" ;;
  stop) [ $# -eq 2 ] || die "usage: cluster.sh stop DIR"; stop "$2" ;;
  env) [ $# -eq 2 ] || die "usage: cluster.sh env DIR"; echo "export SLURM_CONF=$2/slurm.conf" ;;
  *) die "usage: cluster.sh start DIR NNODES [PLUGSTACK] | stop DIR | env DIR" ;;
esac
