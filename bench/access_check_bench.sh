#!/usr/bin/env bash
# What AsyncFor's access checking costs on SGD-MF: time per epoch with --access-check off,
# sample (the default) and all, on 1 and 2 threads, as ratios to off measured in the same script
# (median of REPS runs; the first epoch, reconnaissance and planning, is not timed).
#   bench/access_check_bench.sh [BUILD_DIR] [extra sgdmf flags...]    (default data: 1.9 M ratings)
set -euo pipefail
build=${1:-build}
shift || true
reps=${REPS:-3}
args=(--epochs "${EPOCHS:-10}" --quiet --time "$@")
sgdmf=$build/examples/sgdmf

median_ms() {  # runs "$@" REPS times, prints the median of the `time per epoch` values
  for _ in $(seq "$reps"); do
    "$@" | awk '/time per epoch/ {print $4}'
  done | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

printf '%-10s %-8s %12s %14s\n' threads check "ms/epoch" "vs off"
for t in 1 2; do
  declare -A ms=()
  for mode in off sample all; do
    ms[$mode]=$(median_ms "$sgdmf" --threads "$t" --access-check "$mode" "${args[@]}")
  done
  for mode in off sample all; do
    awk -v t="$t" -v m="$mode" -v v="${ms[$mode]}" -v o="${ms[off]}" \
      'BEGIN { printf "%-10s %-8s %12.1f %13.3fx\n", t, m, v, v / o }'
  done
done
