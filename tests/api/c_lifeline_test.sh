#!/bin/sh
# A rank SIGKILLed while its exit is slow (a 1 GiB heap for the kernel to
# tear down first) is failed by its lifeline, at the start of its exit: the
# coordinator's slot_failed names the source "lifeline", not the control
# connection or the exit report, which come only at its end; the exit
# report that follows names the slot and the signal.
set -u
top=${TOP_BUILDDIR:-../..}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
LIFELINE_TEST_READY="$work/ready"
export LIFELINE_TEST_READY
"$top/launcher/trainmover-launch" --quiet --nprocs 1 --standby 1 --standby-wait 0 --timeout 120 \
  --events "$work/events" -- ./api/c_lifeline_test > "$work/out" 2>&1 &
launcher=$!
i=0
while [ ! -s "$work/ready" ]; do
  i=$((i + 1))
  if [ $i -gt 1200 ] || ! kill -0 $launcher 2>/dev/null; then
    echo "FAIL: the rank never got ready" >&2
    cat "$work/out" >&2
    kill $launcher 2>/dev/null
    exit 1
  fi
  sleep 0.1
done
pid=$(cat "$work/ready")
kill -9 "$pid"
wait $launcher
status=$?
cat "$work/out"
# No standby is ready (this one never warms up): the job stops, status 3.
[ $status -eq 3 ] || { echo "FAIL: trainmover-launch ended with $status, expected 3" >&2; exit 1; }
failed=$(grep '"event":"slot_failed"' "$work/events")
echo "$failed"
echo "$failed" | grep -q '"source":"lifeline"' ||
  { echo "FAIL: slot 0 was not failed by its lifeline" >&2; cat "$work/events" >&2; exit 1; }
grep '"event":"exit_ignored"' "$work/events" | grep '"slot":0' | grep -q '"detail":"exit by signal 9"' ||
  { echo "FAIL: no exit report naming slot 0 and signal 9" >&2; cat "$work/events" >&2; exit 1; }
t_failed=$(echo "$failed" | sed 's/.*"time":\([0-9.]*\).*/\1/')
t_exit=$(grep '"event":"exit_ignored"' "$work/events" | grep '"slot":0' | sed 's/.*"time":\([0-9.]*\).*/\1/')
ahead=$(awk -v a="$t_failed" -v b="$t_exit" 'BEGIN { printf "%.1f", (b - a) * 1000 }')
echo "PASS: the lifeline told of the kill $ahead ms before the exit report"

