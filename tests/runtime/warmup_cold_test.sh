#!/bin/sh
# A standby whose trace is corrupt or missing serves that role cold (the
# defined outcome, docs/runtime.md): it reports ready for every role, warm
# only for the others, with the reason; promoted to the cold role it builds
# it then, and the job's hash is still bitwise equal.
#  1. corrupt: the last stage's trace is garbage placed in --trace-dir
#     before the job starts: first warm, last cold ("not a trace").
#  2. missing: the ranks record more steps than the job runs, so no trace
#     is ever written; with --warmup-wait 0.3 both roles are cold.
# Then slot 3 (last) resp. 1 (first) is killed and replaced cold.
. "$(dirname "$0")/runtime_lib.sh"
. "$(dirname "$0")/warmup_lib.sh"
args="--dp 2 --steps 150 --log-every 0"

# replaced_cold SLOT WHAT: kills SLOT, waits for the job to end and checks
# that the standby which took it over was cold; the job's hash in $hash.
replaced_cold() {
  kill_slot "$1"
  wait_for '"event":"recovery_done"'
  finish
  grep -q '"event":"recovery_done".*"joiner_warm":false' "$events" ||
    { echo "FAIL: the joiner $2 was not cold" >&2; exit 1; }
}

mkdir "$work/traces"
head -c 4096 /dev/urandom >"$work/traces/stage=last,comm=world.tmtrace"
# shellcheck disable=SC2086
start corrupt 4 1 2 --trace-dir "$work/traces" -- $args
wait_for '"event":"standby_warmup".*"state":"ready".*"warm_roles":\["first"\]'
grep '"event":"standby_warmup".*"state":"ready"' "$events" | grep -q '"error":"last: cold (.*not a trace' ||
  { echo "FAIL: the corrupt trace's reason is not in the ready report" >&2; cat "$events" >&2; exit 1; }
replaced_cold 3 "of the corrupt role"
corrupt=$hash

export TRAINMOVER_RECORD_ITERATIONS=1000
# shellcheck disable=SC2086
start missing 4 1 2 -- $args --warmup-wait 0.3
unset TRAINMOVER_RECORD_ITERATIONS
wait_for '"event":"standby_warmup".*"state":"ready".*"warm_roles":\[\]'
grep '"event":"standby_warmup".*"state":"ready"' "$events" |
  grep -q '"error":"first: cold (.*no trace.*; last: cold' ||
  { echo "FAIL: the missing traces' reason is not in the ready report" >&2; cat "$events" >&2; exit 1; }
replaced_cold 1 "without traces"
missing=$hash

# shellcheck disable=SC2086
clean=$(clean_hash 4 2 $args)
[ -n "$clean" ] || { echo "FAIL: no hash" >&2; exit 1; }
expect_eq "hash (corrupt trace)" "$corrupt" "$clean"
expect_eq "hash (missing traces)" "$missing" "$clean"
echo "PASS: corrupt and missing traces leave the role cold; replaced cold; hash $clean"
