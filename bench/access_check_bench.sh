#!/usr/bin/env bash
# What AsyncFor's access checking costs on SGD-MF: time per epoch with --access-check off,
# sample (the default) and all, on 1 and 2 threads, as ratios to off measured in the same script
# (median of REPS runs). sgdmf's `time per epoch` is the mean of epochs 3 on; epoch 2, where
# `sample` checks the plan's second execution whole, is its own column (the first epoch,
# reconnaissance, planning and the first execution, is not shown).
#   bench/access_check_bench.sh [BUILD_DIR] [extra sgdmf flags...]    (default data: 1.9 M ratings)
set -euo pipefail
build=${1:-build}
shift || true
reps=${REPS:-3}
args=(--epochs "${EPOCHS:-10}" --quiet --time "$@")
sgdmf=$build/examples/sgdmf

median() {  # the median of the numbers on stdin
  sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

printf '%-10s %-8s %12s %14s %16s %14s\n' threads check "ms/epoch" "vs off" "epoch 2 ms" "vs off"
for t in 1 2; do
  declare -A ms=() second=()
  for mode in off sample all; do
    out=()
    for _ in $(seq "$reps"); do
      out+=("$("$sgdmf" --threads "$t" --access-check "$mode" "${args[@]}")")
    done
    ms[$mode]=$(printf '%s\n' "${out[@]}" | awk '/^time per epoch/ {print $4}' | median)
    second[$mode]=$(printf '%s\n' "${out[@]}" | awk '/^time of epoch 2/ {print $(NF - 1)}' | median)
  done
  for mode in off sample all; do
    awk -v t="$t" -v m="$mode" -v v="${ms[$mode]}" -v o="${ms[off]}" -v s="${second[$mode]}" \
      -v so="${second[off]}" \
      'BEGIN { printf "%-10s %-8s %12.1f %13.3fx %16.1f %13.3fx\n", t, m, v, v / o, s, s / so }'
  done
done
