# Sourced by the srun --trainmover tests: a cluster of $nodes nodes (from
# start_cluster.sh) whose plugstack.conf loads the plugin with this build's
# launcher and srun library, and helpers to run trainmover-gpt under
# srun --trainmover and check its result. Skips (77) without the plugin,
# root or Slurm, and in a sanitizer build (srun cannot load an ASan
# library).
set -u
tm_build=$(cd "${TOP_BUILDDIR:-../..}" && pwd)
plugin=$tm_build/spank/.libs/trainmover.so
srun_lib=$tm_build/launcher/.libs/libtrainmover-srun.so
gpt=$tm_build/examples/gpt/trainmover-gpt
[ -f "$plugin" ] && [ -f "$srun_lib" ] || { echo "SKIP: the plugin is not built (no slurm/spank.h)"; exit 77; }
if nm -D "$srun_lib" 2>/dev/null | grep -q __asan_init; then
  echo "SKIP: a sanitizer build: srun cannot dlopen an ASan-instrumented library"
  exit 77
fi
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../slurm/start_cluster.sh"
plugstack=$(mktemp "$PWD/plugstack.XXXXXX")
tm_on_exit='rm -f "$plugstack"'
echo "required $plugin launcher=$tm_build/launcher/trainmover-launch srun_lib=$srun_lib heartbeat=0.5s ${tm_plugin_args:-}" >"$plugstack"
tm_start_cluster "${tm_name:-tmrun}" "${nodes:-3}" "$plugstack"
out=$dir/out err=$dir/err events=$dir/events

fail() {
  echo "FAIL: $*"
  [ -f "$err" ] && sed 's/^/  | /' "$err" | grep -v 'trainmover-gpt: step' | tail -40
  [ -f "$events" ] && sed 's/^/  events| /' "$events" | tail -30
  exit 1
}

# step SRUN-ARGS... -- GPT-ARGS...: srun --trainmover of trainmover-gpt,
# bounded, with the job's events in $events, stdout in $out, stderr in $err
# (each removed first, so that a step in the background is waited on by
# its own lines).
step() {
  rm -f "$events" "$out" "$err"
  local srun_args=()
  while [ "$1" != -- ]; do srun_args+=("$1"); shift; done
  shift
  timeout 150 srun --no-kill --kill-on-bad-exit=0 --trainmover --trainmover-events="$events" \
    "${srun_args[@]}" "$gpt" --log-every 1 --print-hash "$@" >"$out" 2>"$err"
}

# start_step SRUN-ARGS -- GPT-ARGS: step in the background, its pid in
# $srun_pid. The previous step's files go first, here: removed in the
# background job they could still be read by the test's next wait (a step
# of an earlier run's output, then "no pid for slot 1", seen in CI).
start_step() {
  rm -f "$events" "$out" "$err"
  step "$@" &
  srun_pid=$!
}

# The final parameter hash of the run (every slot prints the same).
hash_of() { sed -n 's/^param-hash //p' "$out" | sort -u; }

# wait_line FILE PATTERN WHAT: until FILE has a line matching PATTERN (60 s).
wait_line() {
  for _ in $(seq 1 6000); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.01
  done
  fail "$3"
}

# pid_of_slot S: the pid of slot S's first process (slot_registered event).
pid_of_slot() {
  grep "\"event\":\"slot_registered\"" "$events" | grep "\"slot\":$1[,}]" | head -n 1 |
    sed 's/.*"pid":\([0-9]*\).*/\1/'
}

# field EVENT KEY: KEY's value in the first EVENT line of the event log.
field() {
  grep "\"event\":\"$1\"" "$events" | head -n 1 | sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p"
}

# The failure-free reference: $ref_hash of a run with GPT-ARGS.
reference() {
  step -N"$nodes" -n"$nodes" --trainmover-standby=1 -- "$@" || fail "the failure-free run failed"
  ref_hash=$(hash_of)
  rm -f "$events" "$out" "$err"
  [ -n "$ref_hash" ] && [ "$(wc -w <<<"$ref_hash")" = 1 ] || fail "reference hashes: '$ref_hash'"
}
