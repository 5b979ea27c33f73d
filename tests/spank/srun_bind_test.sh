#!/usr/bin/env bash
# srun --trainmover binds its store and coordinator on the address the
# interface rule chooses (no bind= in plugstack.conf, no
# TRAINMOVER_SOCKET_IFNAME: the first interface up that is not lo, docker or
# virbr), not 127.0.0.1, and the trainers' links bind the interface that
# routes to it: every TCP socket of a trainer is on that address (--mpi=none:
# no socket of Slurm's PMIx plugin in the task). Skips (77) without root,
# Slurm, ss, or such an interface.
nodes=2 tm_name=bind
source "$(cd "$(dirname "$0")" && pwd)/trainmover_lib.sh"
command -v ss >/dev/null || { echo "SKIP: no ss"; exit 77; }
expect=$(ip -4 -o addr show up 2>/dev/null |
  awk '$2 != "lo" && $2 !~ /^(docker|virbr)/ { sub("/.*", "", $4); print $4; exit }')
[ -n "$expect" ] || { echo "SKIP: no IPv4 interface other than lo"; exit 77; }
unset TRAINMOVER_SOCKET_IFNAME TRAINMOVER_LISTEN_ADDR

# descendant PID NAME: the first process named NAME below PID.
descendant() {
  local p
  for p in $(pgrep -P "$1"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && { echo "$p"; return 0; }
    descendant "$p" "$2" && return 0
  done
  return 1
}
env_of() { tr '\0' '\n' <"/proc/$1/environ" | sed -n "s/^$2=//p"; }

# Long enough that the trainer still runs while its environment and sockets
# are read (with 40 steps it had once exited by then, in CI).
start_step -N2 -n2 --mpi=none -- --dp 2 --steps 1000
step_pid=$srun_pid
wait_line "$err" "trainmover-gpt: step 5/" "the job never reached step 5"
srun_pid=$(descendant "$step_pid" srun) || fail "no srun below pid $step_pid"
trainer=$(pid_of_slot 0)
[ -n "$trainer" ] || fail "no pid for slot 0"
control=$(env_of "$trainer" TRAINMOVER_CONTROL)
store=$(env_of "$trainer" TRAINMOVER_STORE)
for a in "$control" "$store"; do
  case $a in "$expect":[0-9]*) ;; *) fail "a task got '$a', not an address on $expect" ;; esac
  ss -Htlnp "src $a" | grep -q "pid=$srun_pid," || fail "srun (pid $srun_pid) does not listen on $a"
done
sockets=$(ss -Htnp state established | grep "pid=$trainer," | awk '{ print $3 }')
[ -n "$sockets" ] || fail "slot 0's trainer (pid $trainer) has no TCP socket"
off=$(grep -v "^$expect:" <<<"$sockets" || true)
[ -z "$off" ] || fail "slot 0's trainer has sockets off $expect: $off"
status=0
wait "$step_pid" || status=$?
[ "$status" -eq 0 ] || fail "srun exit status $status"
[ -n "$(hash_of)" ] || fail "no parameter hash"
echo "srun's store $store and coordinator $control on $expect;" \
  "slot 0's $(wc -l <<<"$sockets") TCP sockets all on $expect"
