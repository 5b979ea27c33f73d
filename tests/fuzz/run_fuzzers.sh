#!/bin/sh
# Runs each libFuzzer target in $FUZZERS from the seeds gen_fuzz_seeds writes,
# for at most $FUZZ_RUNS inputs or $FUZZ_SECONDS seconds. A crash, a sanitizer
# report or a failed invariant (__builtin_trap) fails the test; the input that
# did it is left in $FUZZ_WORK. Run from the build directory of tests/fuzz.
set -u
runs=${FUZZ_RUNS:-50000}
seconds=${FUZZ_SECONDS:-6}
work=${FUZZ_WORK:-fuzz-work}
rm -rf "$work" && mkdir -p "$work/seeds" || exit 99
./gen_fuzz_seeds "$work/seeds" || exit 99
status=0
for target in ${FUZZERS:?}; do
  mkdir -p "$work/corpus/$target"
  if "./$target" -runs="$runs" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$work/$target-" \
      "$work/corpus/$target" "$work/seeds/$target" >"$work/$target.log" 2>&1; then
    done_line=$(grep -E '^Done [0-9]+ runs' "$work/$target.log" | tail -n 1)
    echo "PASS: $target: $done_line"
  else
    echo "FAIL: $target (log: $work/$target.log)"
    tail -n 40 "$work/$target.log"
    status=1
  fi
done
exit $status
