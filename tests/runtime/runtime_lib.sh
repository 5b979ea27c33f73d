# Shared by the runtime tests (sourced): runs scripts/run-demo.sh with a
# bound and pulls numbers out of the faulty run's event log.
set -eu
work=$(mktemp -d "${TMPDIR:-/tmp}/tm-runtime-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
events=$work/events

# demo ARGS...: the demo, bounded to 5 minutes; prints its output on failure.
demo() {
  if ! TM_DEMO_EVENTS=$events timeout 300 "$TM_SRCDIR/scripts/run-demo.sh" --build "$TM_BUILD" \
      "$@" >"$work/out" 2>&1; then
    cat "$work/out"
    echo "FAIL: the demo failed" >&2
    exit 1
  fi
  cat "$work/out"
}

# field EVENT KEY: KEY's value in the first EVENT line of the event log.
field() {
  grep "\"event\":\"$1\"" "$events" | head -n 1 | sed -n "s/.*\"$2\":\"\{0,1\}\([^,\"}]*\).*/\1/p"
}

expect_eq() {
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: '$2', expected '$3'" >&2
    exit 1
  fi
}

# ---- a job started by the test itself (the compound-fault tests) ----------
launch=$TM_BUILD/launcher/trainmover-launch
gpt=$TM_BUILD/examples/gpt/trainmover-gpt
dp=2 pp=2 steps=40 standbys=1 gpt_args=

# run_job [LAUNCH-ARGS...]: a job of $dp x $pp trainmover-gpt ranks with
# $standbys standbys, $steps steps and $gpt_args, in the foreground, bounded.
run_job() {
  # shellcheck disable=SC2086 # $gpt_args is a list of words
  timeout 120 "$launch" --nprocs $((dp * pp)) --standby "$standbys" --pp "$pp" --quiet "$@" -- \
    "$gpt" --dp "$dp" --pp "$pp" --steps "$steps" --log-every 1 --print-hash $gpt_args
}

# start_job [LAUNCH-ARGS...]: run_job in the background (pid in $job), its
# events in $events, its output in $work/out and $work/err.
start_job() {
  run_job --events "$events" "$@" >"$work/out" 2>"$work/err" &
  job=$!
}

# wait_line FILE PATTERN WHAT: until FILE has a line matching PATTERN (60 s
# at most); fails naming WHAT.
wait_line() {
  for _ in $(seq 1 6000); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.01
  done
  echo "FAIL: $3" >&2
  cat "$work/err" >&2
  exit 1
}
wait_for() { wait_line "$events" "$1" "no event matching $1"; }
wait_step() { wait_line "$work/err" "trainmover-gpt: step $1/" "the job never logged step $1"; }
# wait_standbys_ready: until each of the $standbys standbys reported ready
# (a case about something else than the warm-up kills after it: under load a
# standby can take longer than a job's --standby-wait).
wait_standbys_ready() {
  s=0
  while [ "$s" -lt "$standbys" ]; do
    wait_for "\"event\":\"standby_warmup\".*\"standby\":$s[,}].*\"state\":\"ready\""
    s=$((s + 1))
  done
}

# pid_in PATTERN: the pid of the first event matching PATTERN.
pid_in() { grep "$1" "$events" | head -n 1 | sed 's/.*"pid":\([0-9]*\).*/\1/'; }
slot_pid() { pid_in "\"event\":\"slot_registered\".*\"slot\":$1[,}]"; }
standby_pid() { pid_in "\"event\":\"standby_registered\".*\"standby\":$1[,}]"; }

# count EVENT: how many EVENT lines the event log has.
count() { grep -c "\"event\":\"$1\"" "$events" || true; }

# finish_job STATUS: waits for the job and checks its exit status.
finish_job() {
  status=0
  wait "$job" || status=$?
  if [ "$status" -ne "$1" ]; then
    cat "$work/err" >&2
    expect_eq "launcher exit status" "$status" "$1"
  fi
}

# expect_clean_hash: the job's final hash equals a run's of the same job
# without a fault (run here, with $clean_args instead of $gpt_args if set).
expect_clean_hash() {
  faulty=$(sed -n 's/^param-hash //p' "$work/out")
  clean=$(gpt_args=${clean_args-$gpt_args} run_job 2>/dev/null | sed -n 's/^param-hash //p')
  [ -n "$clean" ] || { echo "FAIL: the run without a fault printed no hash" >&2; exit 1; }
  expect_eq "final parameter hash" "$faulty" "$clean"
}

# expect_gone PID...: every PID has exited (10 s at most).
expect_gone() {
  for pid in "$@"; do
    for _ in $(seq 1 1000); do
      kill -0 "$pid" 2>/dev/null || continue 2
      sleep 0.01
    done
    echo "FAIL: process $pid is still alive" >&2
    exit 1
  done
}

# figures: the first recovery's downtime breakdown, for the test's log.
figures() {
  echo "recovery: downtime $(field recovery_done downtime_s) s, detection $(field recovery_done detection_s) s," \
    "switch $(field recovery_done switch_s) s, state $(field recovery_done state_transfer_s) s," \
    "first step $(field recovery_done first_step_s) s, path $(field recovery_done path)," \
    "critical-path CPU $(field recovery_done critical_cpu_s) s"
}
