#!/usr/bin/env bash
# The cost of a real-valued reduction in AsyncFor bodies: a body that updates its own parameter
# and adds its loss term to an accumulator<double> (exact sum), to an accumulator<int64_t>
# (fixed point), or to nothing (the baseline), 1 thread. Instructions per body from callgrind
# (the difference between EPOCHS and 2 epochs, so set-up and planning cancel out), then wall
# time per epoch (median of REPS runs, the modes interleaved), as ratios to the baseline.
#   bench/accumulator_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
prog=$build/tests/accumulator_bench
reps=${REPS:-5}
epochs=${EPOCHS:-6}
bodies=${BODIES:-200000}

instructions() {  # EPOCHS MODE: total instructions of one run under callgrind
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$prog" --threads 1 --bodies "$bodies" \
    --epochs "$1" --sum "$2" > /dev/null 2>&1
  callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -f "$out"
}
declare -A per_body
for mode in none integer double; do
  a=$(instructions 2 "$mode")
  b=$(instructions "$epochs" "$mode")
  per_body[$mode]=$(awk -v a="$a" -v b="$b" -v e="$epochs" -v n="$bodies" \
    'BEGIN { printf "%.1f", (b - a) / ((e - 2) * n) }')
done
printf '%-10s %20s %10s\n' sum "instructions/body" ratio
for mode in none integer double; do
  awk -v m="$mode" -v v="${per_body[$mode]}" -v base="${per_body[none]}" \
    'BEGIN { printf "%-10s %20.1f %9.2fx\n", m, v, v / base }'
done
declare -A times
for _ in $(seq "$reps"); do
  for mode in none integer double; do
    t=$("$prog" --threads 1 --bodies "$bodies" --epochs "$epochs" --sum "$mode" |
      awk '/time per epoch/ {print $4}')
    times[$mode]="${times[$mode]:-} $t"
  done
done
median() { tr ' ' '\n' <<< "$1" | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
printf '%-10s %20s %10s   (all runs)\n' sum "ms/epoch (median)" ratio
base=$(median "${times[none]}")
for mode in none integer double; do
  m=$(median "${times[$mode]}")
  awk -v n="$mode" -v v="$m" -v b="$base" -v all="${times[$mode]}" \
    'BEGIN { printf "%-10s %20.2f %9.2fx  %s\n", n, v, v / b, all }'
done
