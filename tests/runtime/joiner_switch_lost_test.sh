#!/bin/sh
# The joiner dies inside the switch window: the stayers have switched to
# the new epoch, with the joiner in it, and the joiner has not.
# TRAINMOVER_TEST_JOINER_SWITCH_DELAY (test-only, trainmover(7)) holds every
# joiner 2 s before it carries out its switch order; the joiner is killed
# as soon as it says it waits. No round can start over from the old epoch
# (the switched stayers would refuse its prepare, which stopped the job
# before): the switch completes without the joiner (joiner_lost_in_switch),
# and its slot fails in the new epoch and is recovered next by the other
# standby. DP 2 x PP 2, two standbys, slot 1 killed at step 15; the job
# finishes and its final parameter hash equals a run's without the faults.
. "$(dirname "$0")/runtime_lib.sh"
standbys=2 steps=150  # still running once both standbys are warm
export TRAINMOVER_TEST_JOINER_SWITCH_DELAY=2
start_job --standby-wait 5
wait_step 15
wait_standbys_ready
kill -9 "$(slot_pid 1)"
wait_line "$work/err" "waits 2.0 s before it switches" "no joiner reached its switch"
joiner=$(sed -n 's/.*"event":"standby_promoted".*"standby":\([0-9]*\).*/\1/p' "$events" | tail -n 1)
kill -9 "$(standby_pid "$joiner")"
finish_job 0
expect_eq "joiners lost in the switch" "$(count joiner_lost_in_switch)" 1
expect_eq "abandoned recoveries" "$(count recovery_abandoned)" 0
served=$(grep '"event":"recovery_done"' "$events" | tail -n 1 | sed -n 's/.*"standby":\([0-9]*\).*/\1/p')
[ "$served" != "$joiner" ] || { echo "FAIL: the dead joiner is the last recovery's standby" >&2; exit 1; }
expect_eq "epoch of the last recovery" "$(grep '"event":"recovery_done"' "$events" | tail -n 1 | sed -n 's/.*"epoch":\([0-9]*\).*/\1/p')" 2
figures
expect_clean_hash
echo "PASS: the joiner (standby $joiner) died in the switch window, standby $served took slot 1 in epoch 2, hash equal"
