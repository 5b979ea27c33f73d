#!/usr/bin/env bash
# A real Slurm 22.05 cluster on this machine, for the tests: munge, one
# slurmctld and NNODES slurmd, each slurmd in its own mount namespace with a
# private /tmp (PMIx needs that when several "nodes" share a host).
#
#   cluster.sh start DIR NNODES [PLUGSTACK_CONF]   start; prints nothing on success
#   cluster.sh stop DIR                            stop every daemon started in DIR
#   cluster.sh env DIR                             print "export SLURM_CONF=..."
#
# TM_SLURM_CRED_EXPIRE=SEC sets AuthInfo=cred_expire (default 120 s): a
# requeued batch job waits that long plus 1 s before it may start again.
#
# Exit status: 0 started/stopped, 77 cannot run here (not root, Slurm or
# munge missing, no unshare): the caller skips, 1 failed (logs named).
# Ports are picked at random below the ephemeral range (free_base_port) so
# that several clusters (plain and distcheck runs) can run at once;
# ClusterName is unique per DIR.
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
SlurmdSpoolDir=/tmp/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.%n.log
PlugStackConfig=$dir/plugstack.conf
${TM_SLURM_CRED_EXPIRE:+AuthInfo=cred_expire=$TM_SLURM_CRED_EXPIRE}
NodeName=n[1-$nnodes] NodeHostname=localhost Port=[$((base + 1))-$last] CPUs=2 RealMemory=2000 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
CONF
}

# Waits up to 30 s (by the clock: each sinfo may wait MessageTimeout when
# slurmctld is gone) for NNODES idle nodes; fails at once, with the
# controller's last log line, when slurmctld has exited.
wait_nodes_idle() {
  local dir=$1 nnodes=$2 idle=0 deadline=$((SECONDS + 30)) pid
  while [ $SECONDS -lt $deadline ]; do
    pid=$(cat "$dir/slurmctld.pid" 2>/dev/null || true)
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
      die "slurmctld exited: $(tail -n 1 "$dir/slurmctld.log" 2>/dev/null)"
    fi
    idle=$(SLURM_CONF=$dir/slurm.conf timeout 5 sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle' || true)
    [ "$idle" -ge "$nnodes" ] && return 0
    sleep 0.2
  done
  die "only $idle of $nnodes nodes idle after 30 s; see $dir/*.log"
}

# A base port whose NNODES+1 ports nothing listens on, below the kernel's
# ephemeral range (a port in it may be any connection's local end: a
# slurmctld once failed "Address already in use" on one). Several clusters
# (plain and distcheck runs) may run at once, hence random.
free_base_port() {
  local nnodes=$1 low try base p busy
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range
  [ "$low" -gt 20100 ] || low=32768
  for try in $(seq 50); do
    base=$((20000 + RANDOM % ((low - 20000 - 100) / 100) * 100))
    busy=no
    for p in $(seq "$base" $((base + nnodes))); do
      ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && busy=yes
    done
    [ $busy = no ] && { echo "$base"; return 0; }
  done
  die "no free port range below $low after 50 tries"
}

start() {
  local dir=$1 nnodes=$2 plugstack=${3:-}
  [[ $nnodes =~ ^[1-9][0-9]?$ ]] || die "NNODES must be 1..99, got '$nnodes'"
  case $(cd "$dir" && pwd -P)/ in
    /tmp/*) die "DIR must not be under /tmp: every node mounts a /tmp of its own over it" ;;
  esac
  [ -z "${TM_SLURM_CRED_EXPIRE:-}" ] || [[ $TM_SLURM_CRED_EXPIRE =~ ^[1-9][0-9]{0,4}$ ]] ||
    die "TM_SLURM_CRED_EXPIRE must be a number of seconds (1..99999), got '$TM_SLURM_CRED_EXPIRE'"
  need_tools
  start_munge
  mkdir -p "$dir/state"
  chmod 0750 "$dir"
  local base
  base=$(free_base_port "$nnodes") || exit 1
  write_conf "$dir" "$nnodes" "$base"
  if [ -n "$plugstack" ]; then cp "$plugstack" "$dir/plugstack.conf"; else : >"$dir/plugstack.conf"; fi
  slurmctld -c -f "$dir/slurm.conf" || die "slurmctld did not start; see $dir/slurmctld.log"
  local n
  for n in $(seq "$nnodes"); do
    # The spool lies in the node's own /tmp: Slurm's PMIx plugin binds Unix
    # sockets there (stepd.slurm.pmix.JOB.STEP), and under a deep build
    # folder (distcheck's) $dir/spool/nN made their path longer than the
    # 108 bytes of sun_path: every task's launch failed.
    mkdir -p "$dir/tmp/n$n/spool"
    chmod 1777 "$dir/tmp/n$n"
    unshare --mount --propagation private sh -c \
      "mount --bind '$dir/tmp/n$n' /tmp && exec slurmd -N n$n -f '$dir/slurm.conf'" ||
      die "slurmd n$n did not start; see $dir/slurmd.n$n.log"
  done
  wait_nodes_idle "$dir" "$nnodes"
}

stop() {
  local dir=$1 f pid p node_procs=()
  # Every process of each node (its mount namespace): a slurmstepd outlives
  # its slurmd otherwise, and would hold on after the cluster is gone.
  for f in "$dir"/slurmd.*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f" 2>/dev/null || true)
    [ -n "$pid" ] && [ -e "/proc/$pid/ns/mnt" ] || continue
    for p in /proc/[0-9]*; do
      [[ $p/ns/mnt -ef /proc/$pid/ns/mnt ]] && [ "${p#/proc/}" != "$pid" ] && node_procs+=("${p#/proc/}")
    done
  done
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
  [ ${#node_procs[@]} -eq 0 ] || kill -9 "${node_procs[@]}" 2>/dev/null || true
  return 0
}

case ${1:-} in
  start) [ $# -ge 3 ] || die "usage: cluster.sh start DIR NNODES [PLUGSTACK]"; start "$2" "$3" "${4:-}" ;;
  stop) [ $# -eq 2 ] || die "usage: cluster.sh stop DIR"; stop "$2" ;;
  env) [ $# -eq 2 ] || die "usage: cluster.sh env DIR"; echo "export SLURM_CONF=$2/slurm.conf" ;;
  *) die "usage: cluster.sh start DIR NNODES [PLUGSTACK] | stop DIR | env DIR" ;;
esac
