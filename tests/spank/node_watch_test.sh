#!/usr/bin/env bash
# Node states through libslurm on a real Slurm cluster (3 nodes started
# here): an administrator's drain and a maintenance reservation reach
# tm_node_watch_poll within one poll, with the reason and the window's
# start. Skips (77) without root or Slurm.
set -u
here=$(cd "$(dirname "$0")" && pwd)
probe=$PWD/spank/node_watch_probe
[ -x "$probe" ] || { echo "SKIP: $probe not built (no slurm/slurm.h)"; exit 77; }
source "$here/../slurm/start_cluster.sh"
tm_on_exit='[ -n "${pid:-}" ] && kill $pid 2>/dev/null'
tm_start_cluster nodes 3

"$probe" 200 60 n1 n2 n3 >"$dir/probe.out" 2>&1 &
pid=$!
seen=0
wait_for() { # PATTERN: waits up to 10 s for a new line of the probe that matches
  local i n
  for i in $(seq 100); do
    n=$(tail -n +$((seen + 1)) "$dir/probe.out" | grep -n -m1 -- "$1" | cut -d: -f1)
    [ -n "$n" ] && { seen=$((seen + n)); return 0; }
    sleep 0.1
  done
  echo "FAIL: no '$1' from the probe in 10 s:"
  sed 's/^/  | /' "$dir/probe.out"
  exit 1
}
wait_for "^n2 drain=0 down=0 reason=- maint=- "
scontrol update nodename=n2 state=drain reason=bad_dimm || exit 1
wait_for "^n2 drain=1 down=0 reason=bad_dimm maint=-"
scontrol create reservation reservationname=tm_maint flags=maint nodes=n3 \
  starttime=now+10minutes duration=30 users=root >/dev/null || exit 1
wait_for "^n3 drain=0 down=0 reason=- maint=tm_maint maint_in=[56][0-9][0-9]$"
scontrol update nodename=n2 state=resume || exit 1
wait_for "^n2 drain=0 down=0 reason=- maint=-"
grep -q "^n1 drain=1\|^n1 .*maint=tm" "$dir/probe.out" && { echo "FAIL: n1 changed"; exit 1; }
cat "$dir/probe.out"
echo "node states: drain, maintenance and resume seen"
