#!/usr/bin/env bash
# The random-access shape of issue 19 (tests/integration/random_rows.cc: 30 000 bodies, each
# writing 3 random rows of a 2 000-row table and 1 row of a 50-row table): time per epoch on 2
# threads with the block count the runtime chooses, and with --blocks 16 (the old default), as
# ratios to 1 thread (the serial order on one worker) measured in the same script; median of
# REPS runs, the first epoch (reconnaissance and planning) not timed. Then the per-round cost
# that kRoundCostBodies (core/src/schedule_report.h) stands for: with the automatic blocks (29
# rounds), the time of 2 threads less the bodies' share of it (the 1-thread time / (2 x the
# report's balance)), per round, in bodies of the 1-thread run. (--blocks 16 is estimated slower
# than serial and runs on one worker: its time shows that fallback, not the rounds.)
#   bench/random_access_bench.sh [BUILD_DIR] [extra random_rows flags...]
set -euo pipefail
build=${1:-build}
shift || true
reps=${REPS:-5}
prog=$build/tests/random_rows
epochs=${EPOCHS:-6}
args=("$@")

median_ms() {  # runs "$@" REPS times, prints the median of the `time per epoch` values
  for _ in $(seq "$reps"); do
    "$@" --epochs "$epochs" | awk '/time per epoch/ {print $4}'
  done | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}
report() {  # the --schedule-report line of "$@", shortened
  "$@" --epochs 1 --schedule-report 2>&1 >/dev/null | sed -n 's/^schedule: AsyncFor at [^:]*:[0-9]* //p'
}

serial=$(median_ms "$prog" --threads 1 "${args[@]}")
auto2=$(median_ms "$prog" --threads 2 "${args[@]}")
b16_1=$(median_ms "$prog" --threads 1 --blocks 16 "${args[@]}")
b16_2=$(median_ms "$prog" --threads 2 --blocks 16 "${args[@]}")
echo "1 thread (automatic blocks):   $(report "$prog" --threads 1 "${args[@]}")"
echo "2 threads (automatic blocks):  $(report "$prog" --threads 2 "${args[@]}")"
echo "2 threads, --blocks 16:        $(report "$prog" --threads 2 --blocks 16 "${args[@]}")"
printf '%-32s %12s %16s\n' run "ms/epoch" "speed-up"
row() { awk -v n="$1" -v v="$2" -v s="$serial" 'BEGIN { printf "%-32s %12.2f %15.2fx\n", n, v, s / v }'; }
row "1 thread (baseline)" "$serial"
row "2 threads, automatic blocks" "$auto2"
row "1 thread, --blocks 16" "$b16_1"
row "2 threads, --blocks 16" "$b16_2"
line=$(report "$prog" --threads 2 "${args[@]}")
rounds=$(sed -n 's/.* bodies, \([0-9]*\) rounds.*/\1/p' <<< "$line")
bodies=$(sed -n 's/^[^:]*: \([0-9]*\) bodies.*/\1/p' <<< "$line")
balance=$(sed -n 's/.* balance \([0-9.]*\),.*/\1/p' <<< "$line")
awk -v one="$serial" -v two="$auto2" -v r="$rounds" -v b="$bodies" -v bal="$balance" 'BEGIN {
  work = one / (2 * bal)
  printf "round cost, automatic blocks: (%.2f - %.2f) ms over %d rounds = %.1f us = %.0f bodies\n",
    two, work, r, 1e3 * (two - work) / r, (two - work) / r / (one / b) }'
