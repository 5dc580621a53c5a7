#!/usr/bin/env bash
# Time per epoch of the examples ported in issue 17 against their serial twins, measured in the
# same run: the serial program, strads on 1 and 2 threads and on 2 MPI ranks of 1 thread, as
# speed-ups over the serial program. Each program times its own sweeps (--time: data loading,
# reconnaissance and planning, the objective excluded): lda's figure is the mean of epochs 3 on,
# after each plan's two executions whose bodies the default --access-check checks whole
# (examples/common/epoch_times.h; `lda --time` prints epochs 1 and 2 on lines of their own);
# lasso plans every call and word2vec has no AsyncFor: epochs 2 on.
#
# The runs are interleaved: each of REPS rounds runs the twin and then every strads variant, and
# a variant's speed-up is the median over the rounds of (the round's twin time / its time), so
# that a host whose speed drifts during the bench (a shared or throttled machine: the same
# program has varied by 50 % within an hour here) moves both sides of a ratio alike. The
# median times are printed beside them, and the load average before and after, to tell an idle
# run from a loaded one.
#
# Each round also runs two copies of the serial twin at once, one per core: "2 serial copies"
# is 2 x (the round's twin time / the copies' mean time): what 2 threads doing the twin's work
# at the twin's cost per item would reach, given what the cores share (caches, memory
# bandwidth, and on a VM whatever the host shares between its vCPUs). A 2-thread speed-up is
# read against it (an order with better locality than the twin's can pass it): on the 2-vCPU
# VM of issue 17 two copies of lda's twin ran 15 % slower each (1.73x).
#   bench/examples_bench.sh [BUILD_DIR]      (default data of each program; NAMES="word2vec": some)
set -euo pipefail
build=${1:-build}
reps=${REPS:-3}
epochs=${EPOCHS:-5}
ex=$build/examples

epoch_ms() {  # runs "$@" once, prints its `time per epoch` value
  "$@" | awk '/time per epoch/ {print $4}'
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
pair_out=$(mktemp)
trap 'rm -f "$pair_out"' EXIT

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-30s %12s %18s\n' program run "ms/epoch" "speed-up vs serial"
runs=("strads, 1 thread" "strads, 2 threads" "strads, mpiexec -n 2, 1 thread")
for name in ${NAMES:-lda word2vec lasso}; do
  args=(--epochs "$epochs" --time)
  declare -A times=() ratios=()
  ceilings=""
  for _ in $(seq "$reps"); do
    serial=$(epoch_ms "$ex/${name}_serial" "${args[@]}")
    times[serial]+="$serial "
    epoch_ms "$ex/${name}_serial" "${args[@]}" >"$pair_out" &
    second=$(epoch_ms "$ex/${name}_serial" "${args[@]}")
    wait
    ceilings+="$(awk -v s="$serial" -v a="$(cat "$pair_out")" -v b="$second" \
      'BEGIN { print 2 * s / ((a + b) / 2) }') "
    for i in "${!runs[@]}"; do
      case $i in
        0) cmd=("$ex/$name" --threads 1) ;;
        1) cmd=("$ex/$name" --threads 2) ;;
        2) cmd=(mpiexec -n 2 "$ex/$name" --threads 1) ;;
      esac
      t=$(epoch_ms "${cmd[@]}" "${args[@]}")
      times[$i]+="$t "
      ratios[$i]+="$(awk -v s="$serial" -v t="$t" 'BEGIN { print s / t }') "
    done
  done
  printf '%-8s %-30s %12.1f %17.2fx\n' "$name" "serial twin" \
    "$(tr ' ' '\n' <<<"${times[serial]}" | grep . | median)" 1
  printf '%-8s %-30s %12s %17.2fx\n' "$name" "2 serial copies at once" "" \
    "$(tr ' ' '\n' <<<"$ceilings" | grep . | median)"
  for i in "${!runs[@]}"; do
    printf '%-8s %-30s %12.1f %17.2fx\n' "$name" "${runs[$i]}" \
      "$(tr ' ' '\n' <<<"${times[$i]}" | grep . | median)" \
      "$(tr ' ' '\n' <<<"${ratios[$i]}" | grep . | median)"
  done
  unset times ratios
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
