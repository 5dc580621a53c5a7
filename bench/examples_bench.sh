#!/usr/bin/env bash
# Time per epoch of the examples ported in issue 17 against their serial twins, measured in the
# same run: the serial program, strads on 1 and 2 threads and on 2 MPI ranks of 1 thread, as
# speed-ups over the serial program. Each program times its own sweeps (--time: data loading,
# reconnaissance and planning, the objective excluded); the median of REPS runs is reported.
#   bench/examples_bench.sh [BUILD_DIR]      (default data of each program; NAMES="word2vec": some)
set -euo pipefail
build=${1:-build}
reps=${REPS:-3}
epochs=${EPOCHS:-5}
ex=$build/examples

median_ms() {  # runs "$@" REPS times, prints the median of the `time per epoch` values
  for _ in $(seq "$reps"); do
    "$@" | awk '/time per epoch/ {print $4}'
  done | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

printf '%-8s %-30s %12s %18s\n' program run "ms/epoch" "speed-up vs serial"
for name in ${NAMES:-lda word2vec lasso}; do
  args=(--epochs "$epochs" --time)
  serial=$(median_ms "$ex/${name}_serial" "${args[@]}")
  printf '%-8s %-30s %12.1f %17.2fx\n' "$name" "serial twin" "$serial" 1
  for run in "strads, 1 thread" "strads, 2 threads" "strads, mpiexec -n 2, 1 thread"; do
    case $run in
      *"1 thread") [[ $run == *mpiexec* ]] && cmd=(mpiexec -n 2 "$ex/$name" --threads 1) \
                     || cmd=("$ex/$name" --threads 1) ;;
      *"2 threads") cmd=("$ex/$name" --threads 2) ;;
    esac
    t=$(median_ms "${cmd[@]}" "${args[@]}")
    awk -v p="$name" -v n="$run" -v t="$t" -v s="$serial" \
      'BEGIN { printf "%-8s %-30s %12.1f %17.2fx\n", p, n, t, s / t }'
  done
done
