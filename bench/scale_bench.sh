#!/usr/bin/env bash
# SGD-MF at scale: memory and first-call cost of strads against the serial program, as ratios
# measured in this script.
#   bench/scale_bench.sh [BUILD_DIR]
# Environment:
#   SIZES="1900000 19000000"  ratings per data set; users and items grow with the ratings from
#                             the default shape (20 k users x 5 k items at 1.9 M ratings)
#   SHAPES="100000000:480000:18000"  extra RATINGS:USERS:ITEMS data sets (Netflix's shape);
#                             default none: 100 M ratings need 1.3 GB for the serial program and,
#                             at 40 bytes per rating while planning (docs/async_for.md), about
#                             5.3 GB for strads
#   NODES="8 16 64"           logical nodes (--nodes) for the simulated-cluster figures
#   CLUSTER_RATINGS=1900000   ratings of the simulated-cluster runs
#   EPOCHS=3                  epochs of the timed runs (the first includes reconnaissance)
# Peak RSS is /usr/bin/time's maximum resident set size. Times are each program's own --time
# figures (data generation excluded), so run it on an otherwise idle machine.
set -euo pipefail
build=${1:-build}
ex=$build/examples
epochs=${EPOCHS:-3}
sizes=${SIZES:-1900000 19000000}
shapes=${SHAPES:-}
nodes_list=${NODES:-8 16 64}
cluster_ratings=${CLUSTER_RATINGS:-1900000}

peak_kb() {  # peak RSS in kB of "$@" (output discarded)
  local f
  f=$(mktemp)
  /usr/bin/time -f '%M' -o "$f" "$@" > /dev/null 2>&1
  cat "$f"
  rm -f "$f"
}
field() {  # the number after PATTERN in the output of "$@"
  local pattern=$1
  shift
  "$@" 2>/dev/null | awk -v p="$pattern" 'index($0, p) == 1 {print $(NF - 1)}'
}

data_sets=()
for s in $sizes; do
  data_sets+=("$s:$((20000 * s / 1900000)):$((5000 * s / 1900000))")
done
for s in $shapes; do data_sets+=("$s"); done

printf '%-30s %10s %10s %7s %12s %9s %9s %9s %9s %9s %9s\n' "data (ratings/users/items)" \
  "strads MB" "serial MB" "ratio" "first/epoch" "serial ms" "1 thr ms" "2 thr ms" "mpi2 ms" \
  "1thr/ser" "2thr x"
for set in "${data_sets[@]}"; do
  IFS=: read -r ratings users items <<< "$set"
  data=(--ratings "$ratings" --users "$users" --items "$items" --quiet)
  strads_kb=$(peak_kb "$ex/sgdmf" --threads 2 --epochs 2 "${data[@]}")
  serial_kb=$(peak_kb "$ex/sgdmf_serial" --epochs 2 "${data[@]}")
  out=$("$ex/sgdmf" --threads 2 --epochs "$epochs" --time "${data[@]}")
  first=$(awk '/^time of epoch 1/ {print $(NF - 1)}' <<< "$out")
  epoch2=$(awk '/^time per epoch/ {print $(NF - 1)}' <<< "$out")
  serial=$(field "time per epoch" "$ex/sgdmf_serial" --epochs "$epochs" --time "${data[@]}")
  one=$(field "time per epoch" "$ex/sgdmf" --threads 1 --epochs "$epochs" --time "${data[@]}")
  mpi2=$(field "time per epoch" mpiexec -n 2 "$ex/sgdmf" --threads 1 --epochs "$epochs" --time \
    "${data[@]}")
  awk -v d="$ratings/$users/$items" -v a="$strads_kb" -v b="$serial_kb" -v f="$first" \
    -v e="$epoch2" -v s="$serial" -v o="$one" -v m="$mpi2" 'BEGIN {
      printf "%-30s %10.0f %10.0f %6.2fx %11.1fx %9.1f %9.1f %9.1f %9.1f %8.2fx %8.2fx\n",
        d, a / 1024, b / 1024, a / b, (f - e) / e, s, o, e, m, o / s, s / e }'
done
echo "(first/epoch: reconnaissance and planning of the first call, the first epoch's time less one"
echo " epoch, over one epoch; 1thr/ser: the framework cost, strads 1 thread ms / serial ms;"
echo " 2thr x: serial ms / 2 threads ms)"

echo
users=$((20000 * cluster_ratings / 1900000))
items=$((5000 * cluster_ratings / 1900000))
data=(--ratings "$cluster_ratings" --users "$users" --items "$items" --quiet --epochs 2 --blocks 128)
base_kb=$(peak_kb "$ex/sgdmf" --nodes 1 --threads 1 "${data[@]}")
printf '%-12s %10s %14s %24s\n' "--nodes" "peak MB" "over --nodes 1" "largest node's bytes MB"
for p in 1 $nodes_list; do
  kb=$(peak_kb "$ex/sgdmf" --nodes "$p" --threads 1 "${data[@]}")
  largest=$("$ex/sgdmf" --nodes "$p" --threads 1 "${data[@]}" --memory-report 2>&1 >/dev/null |
    awk '/^memory: node [0-9]+ total:/ {if ($5 > m) m = $5} END {print m + 0}')
  awk -v p="$p" -v k="$kb" -v b="$base_kb" -v l="$largest" \
    'BEGIN { printf "%-12s %10.0f %13.2fx %24.1f\n", p, k / 1024, k / b, l / 1048576 }'
done
