#!/usr/bin/env bash
# Replay speed: time per epoch of
#   - a cluster replay / the recorded run it replays (same mpiexec -n P),
#   - a single-process replay (all P nodes in one process, one thread at a time) / the serial
#     program (sgdmf_serial; for mlr, mlr on one node and one thread),
#   - a single-process replay of two threads contending for locks / the recorded run (the
#     baton changes hands at every logged grant),
# medians of REPS runs each, in this script. Also the wall-clock ratios (start-up included).
#   bench/replay_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
reps=${REPS:-3}
ex=$build/examples
strads=$build/tool/strads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# One run of "$@": "<ms per epoch> <wall seconds>".
run() {
  local start end ms
  start=$(date +%s.%N)
  ms=$("$@" 2> /dev/null | awk '/time per epoch/ {print $4}')
  end=$(date +%s.%N)
  echo "$ms $(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')"
}
# NAME BASE_MS BASE_WALL CMD...: median of REPS runs of CMD against the baseline.
compare() {
  local name=$1 base_ms=$2 base_wall=$3
  shift 3
  local out ms wall
  out=$(for _ in $(seq "$reps"); do run "$@"; done)
  ms=$(echo "$out" | awk '{print $1}' | median)
  wall=$(echo "$out" | awk '{print $2}' | median)
  awk -v n="$name" -v m="$ms" -v w="$wall" -v bm="$base_ms" -v bw="$base_wall" \
    'BEGIN { printf "%-44s %8.1f ms %6.2fx   wall %6.2f s %6.2fx\n", n, m, m / bm, w, w / bw }'
}
baseline() {  # NAME CMD...: prints the baseline line, sets base_ms / base_wall
  local name=$1
  shift
  local out
  out=$(for _ in $(seq "$reps"); do run "$@"; done)
  base_ms=$(echo "$out" | awk '{print $1}' | median)
  base_wall=$(echo "$out" | awk '{print $2}' | median)
  printf '%-44s %8.1f ms %7s   wall %6.2f s\n' "$name" "$base_ms" "" "$base_wall"
}

sg=(--async-engine locks --epochs "${EPOCHS:-5}" --quiet --time)
echo "== sgdmf, lock engine, default data, mpiexec -n 4"
"$strads" record -o "$tmp/sgdmf" -- mpiexec -n 4 "$ex/sgdmf" "${sg[@]}" > /dev/null 2>&1
baseline "recorded run (strads record, mpiexec -n 4)" \
  env STRADS_RECORD="$tmp/rec-sgdmf" mpiexec -n 4 "$ex/sgdmf" "${sg[@]}"
compare "cluster replay / recorded run" "$base_ms" "$base_wall" \
  "$strads" replay "$tmp/sgdmf" -- mpiexec -n 4 "$ex/sgdmf" "${sg[@]}"
baseline "serial program (sgdmf_serial)" "$ex/sgdmf_serial" --epochs "${EPOCHS:-5}" --time
compare "single-process replay / serial program" "$base_ms" "$base_wall" \
  "$strads" replay --single-process "$tmp/sgdmf" -- "$ex/sgdmf" "${sg[@]}"

echo "== sgdmf, lock engine, default data, one node, 2 threads contending for locks"
"$strads" record -o "$tmp/sgdmf2t" -- "$ex/sgdmf" --threads 2 "${sg[@]}" > /dev/null 2>&1
baseline "recorded run (strads record, --threads 2)" \
  env STRADS_RECORD="$tmp/rec-sgdmf2t" "$ex/sgdmf" --threads 2 "${sg[@]}"
compare "single-process replay / recorded run" "$base_ms" "$base_wall" \
  "$strads" replay --single-process "$tmp/sgdmf2t" -- "$ex/sgdmf" "${sg[@]}"

ml=(--sync ssp --staleness 2 --epochs "${EPOCHS:-5}" --time)
echo "== mlr, SSP(2), default data, mpiexec -n 2"
"$strads" record -o "$tmp/mlr" -- mpiexec -n 2 "$ex/mlr" "${ml[@]}" > /dev/null 2>&1
baseline "recorded run (strads record, mpiexec -n 2)" \
  env STRADS_RECORD="$tmp/rec-mlr" mpiexec -n 2 "$ex/mlr" "${ml[@]}"
compare "cluster replay / recorded run" "$base_ms" "$base_wall" \
  "$strads" replay "$tmp/mlr" -- mpiexec -n 2 "$ex/mlr" "${ml[@]}"
baseline "serial program (mlr --nodes 1 --threads 1)" "$ex/mlr" --nodes 1 --threads 1 "${ml[@]}"
compare "single-process replay / serial program" "$base_ms" "$base_wall" \
  "$strads" replay --single-process "$tmp/mlr" -- "$ex/mlr" "${ml[@]}"
