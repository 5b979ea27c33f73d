#!/bin/sh
# The joiner dies: DP 2 x PP 2 with two standbys, slot 1 killed at step 15,
# then the promoted standby killed as soon as the event log shows its
# promotion. A whole recovery takes 40-90 ms here, less than this script
# needs to see the event, so the joiner usually dies just after its switch:
# then its death is a failure of slot 1 like any other; when it dies before
# the switch completes, the recovery starts over in a new epoch
# (joiner_failed). Either way the other standby ends up serving slot 1, the
# job finishes, and the final parameter hash equals a run's without the
# failures. (The switch window itself is hit deterministically only by
# tests/control/coordinator_test, with fake ranks.)
. "$(dirname "$0")/runtime_lib.sh"
standbys=2
start_job --standby-wait 1
wait_step 15
kill -9 "$(slot_pid 1)"
wait_for '"event":"standby_promoted"'
joiner=$(sed -n 's/.*"event":"standby_promoted".*"standby":\([0-9]*\).*/\1/p' "$events" | head -n 1)
kill -9 "$(standby_pid "$joiner")"
finish_job 0
if grep -q '"event":"joiner_failed"' "$events"; then
  echo "the joiner died before the switch completed (state $(field joiner_failed state))"
else
  echo "the joiner died after its switch: recovered as a second failure"
fi
served=$(grep '"event":"recovery_done"' "$events" | tail -n 1 | sed -n 's/.*"standby":\([0-9]*\).*/\1/p')
[ "$served" != "$joiner" ] || { echo "FAIL: the dead joiner is the last recovery's standby" >&2; exit 1; }
figures
expect_clean_hash
echo "PASS: the joiner (standby $joiner) died, standby $served took slot 1, hash equal"
