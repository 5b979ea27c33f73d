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
