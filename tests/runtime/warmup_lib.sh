# Shared by the warm-up tests (sourced after runtime_lib.sh): a
# trainmover-gpt job under trainmover-launch --standby in the background,
# waits on its event log, kills by slot, and the hash of a run without
# faults to compare with.
launch=$TM_BUILD/launcher/trainmover-launch
gpt=$TM_BUILD/examples/gpt/trainmover-gpt

# start NAME NPROCS STANDBYS PP LAUNCH-ARGS -- GPT-ARGS: the job in the
# background (its pid in $job), events in $work/NAME.events.
start() {
  name=$1 nprocs=$2 standbys=$3 pp=$4
  shift 4
  events=$work/$name.events
  launch_args=
  while [ "$1" != "--" ]; do launch_args="$launch_args $1"; shift; done
  shift
  # shellcheck disable=SC2086
  timeout 300 "$launch" --nprocs "$nprocs" --standby "$standbys" --pp "$pp" --quiet \
    --events "$events" $launch_args -- "$gpt" --pp "$pp" --print-hash "$@" \
    >"$work/$name.out" 2>"$work/$name.err" &
  job=$!
}

# wait_for PATTERN [COUNT]: until the event log has COUNT (default 1) lines
# matching PATTERN (120 s at most).
count() { grep -c "$1" "$events" 2>/dev/null || true; }
wait_for() {
  for _ in $(seq 1 12000); do
    [ "$(count "$1")" -ge "${2:-1}" ] 2>/dev/null && return 0
    kill -0 "$job" 2>/dev/null || break
    sleep 0.01
  done
  [ "$(count "$1")" -ge "${2:-1}" ] 2>/dev/null && return 0
  echo "FAIL: fewer than ${2:-1} events matching $1" >&2
  cat "$work/$name.err" >&2
  exit 1
}

# kill_slot SLOT: SIGKILL to the process that registered for SLOT.
kill_slot() {
  pid=$(grep "\"event\":\"slot_registered\"" "$events" | grep "\"slot\":$1[,}]" | tail -n 1 |
    sed 's/.*"pid":\([0-9]*\).*/\1/')
  [ -n "$pid" ] || { echo "FAIL: no pid for slot $1" >&2; exit 1; }
  kill -9 "$pid"
}

# finish: waits for the job (so not in a subshell); it must exit 0; its
# hash in $hash.
finish() {
  status=0
  wait "$job" || status=$?
  if [ "$status" -ne 0 ]; then
    cat "$work/$name.err" >&2
    echo "FAIL: job $name exited with status $status" >&2
    exit 1
  fi
  hash=$(sed -n 's/^param-hash //p' "$work/$name.out")
}

# clean_hash NPROCS PP GPT-ARGS: the hash of the same job without standbys
# or faults.
clean_hash() {
  n=$1 p=$2
  shift 2
  timeout 300 "$launch" --nprocs "$n" -- "$gpt" --pp "$p" --print-hash "$@" \
    >"$work/clean.out" 2>"$work/clean.err" || { cat "$work/clean.err" >&2; exit 1; }
  sed -n 's/^param-hash //p' "$work/clean.out"
}
