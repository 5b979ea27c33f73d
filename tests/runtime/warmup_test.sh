#!/bin/sh
# Standby warm-up by trace replay, end to end: a DP 2 x PP 3 job with three
# standbys. Each standby replays the recorded traces of the first, middle
# and last stage and reports itself warm for all three (standby_warmup
# events). Then a rank of each role is killed in turn (slots 0, 3, 4); each
# is replaced by a warmed standby (recovery_done says joiner_warm true, with
# the joiner's own figures of its first step), and the final parameter hash
# equals a run's without faults.
. "$(dirname "$0")/runtime_lib.sh"
. "$(dirname "$0")/warmup_lib.sh"
args="--dp 2 --layers 3 --steps 400 --log-every 0"
# shellcheck disable=SC2086
start warm 6 3 3 -- $args
wait_for '"event":"standby_warmup".*"state":"ready".*"warm_roles":\["first","middle","last"\]' 3
if grep '"event":"standby_warmup".*"state":"ready"' "$events" | grep -q '"error"'; then
  echo "FAIL: a standby reported a cold role" >&2
  grep '"event":"standby_warmup"' "$events" >&2
  exit 1
fi
for role in first middle last; do
  wait_for "\"event\":\"standby_warmup\".*\"state\":\"warming\".*\"warming\":\"$role\"" 3
done
n=0
for slot in 0 3 4; do
  kill_slot $slot
  n=$((n + 1))
  wait_for '"event":"recovery_done"' $n
done
finish
faulty=$hash
warm=$(grep -c '"event":"recovery_done".*"joiner_warm":true' "$events" || true)
[ "$warm" = 3 ] || grep '"event":"recovery_done"\|"event":"standby_warmup"' "$events" >&2
expect_eq "recoveries by a warmed joiner" "$warm" 3
for key in joiner_step_wall_s joiner_step_cpu_s joiner_step_minflt; do
  grep '"event":"recovery_done"' "$events" | grep -q "\"$key\":" ||
    { echo "FAIL: recovery_done lacks $key" >&2; exit 1; }
done
# shellcheck disable=SC2086
clean=$(clean_hash 6 3 $args)
expect_eq "hash" "$faulty" "$clean"
[ -n "$clean" ] || { echo "FAIL: no hash" >&2; exit 1; }
echo "PASS: 3 standbys warm for first, middle, last; slots 0, 3, 4 replaced warm; hash $clean"
