#!/usr/bin/env bash
# What AsyncFor's access checking costs on SGD-MF: time per epoch with --access-check off,
# sample (the default) and all, on 1 and 2 threads, as ratios to off measured in the same script.
# sgdmf's `time per epoch` is the mean of epochs 3 on; epoch 2, where `sample` checks the plan's
# second execution whole, is its own column (the first epoch, reconnaissance, planning and the
# first execution, is not shown).
#
# The runs are interleaved: each of REPS rounds runs off, sample and all in turn (starting at
# another mode each round), and a mode's ratio is the median over the rounds of (its time / the
# round's off time), so that a host whose speed drifts during the bench moves both sides of a
# ratio alike (this one's epochs varied by 5-20 % within minutes). The median times are printed beside them. A cost of a few percent is
# below this noise: count instructions for it (docs/async_for.md, "The spot check").
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
column() {  # the whitespace-separated numbers of "$1", one per line
  tr ' ' '\n' <<<"$1" | grep .
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %-8s %12s %14s %16s %14s\n' threads check "ms/epoch" "vs off" "epoch 2 ms" "vs off"
for t in 1 2; do
  declare -A ms=() second=() ratio=() second_ratio=()
  modes=(off sample all)
  for rep in $(seq "$reps"); do
    # Each round starts at another mode: a run's place in the round does not favour one mode.
    declare -A m=() s=()
    for k in 0 1 2; do
      mode=${modes[$(((rep + k) % 3))]}
      out=$("$sgdmf" --threads "$t" --access-check "$mode" "${args[@]}")
      m[$mode]=$(awk '/^time per epoch/ {print $4}' <<<"$out")
      s[$mode]=$(awk '/^time of epoch 2/ {print $(NF - 1)}' <<<"$out")
    done
    for mode in "${modes[@]}"; do
      ms[$mode]+="${m[$mode]} "
      second[$mode]+="${s[$mode]} "
      ratio[$mode]+="$(awk -v a="${m[$mode]}" -v b="${m[off]}" 'BEGIN { print a / b }') "
      second_ratio[$mode]+="$(awk -v a="${s[$mode]}" -v b="${s[off]}" 'BEGIN { print a / b }') "
    done
    unset m s
  done
  for mode in off sample all; do
    printf '%-10s %-8s %12.1f %13.3fx %16.1f %13.3fx\n' "$t" "$mode" \
      "$(column "${ms[$mode]}" | median)" "$(column "${ratio[$mode]}" | median)" \
      "$(column "${second[$mode]}" | median)" "$(column "${second_ratio[$mode]}" | median)"
  done
  unset ms second ratio second_ratio
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
