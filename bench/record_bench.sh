#!/usr/bin/env bash
# Record overhead: time per epoch recorded / not recorded, in the same script, median of REPS
# runs each, for sgdmf (schedule and lock engines) and mlr (BSP, SSP); and the trace's bytes
# per ordering decision after compression (from `strads trace info --json`): every lock grant
# counts, logged or implied (format 3 logs only grants that earlier ones do not order), and every
# other event.
#   bench/record_bench.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
reps=${REPS:-5}
ex=$build/examples
strads=$build/viewer/strads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median_ms() {  # median of the `time per epoch` values of REPS runs of "$@"
  for _ in $(seq "$reps"); do
    "$@" | awk '/time per epoch/ {print $4}'
  done | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

bench() {  # NAME COMMAND...: plain and recorded medians, ratio, bytes per event
  local name=$1
  shift
  local plain rec trace=$tmp/$name
  plain=$(median_ms "$@")
  rec=$(median_ms env STRADS_RECORD="$trace" "$@")
  rm -rf "$trace"
  STRADS_RECORD="$trace" "$@" > /dev/null
  local bpe
  bpe=$("$strads" trace info "$trace" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
ev = sum(n["events"] for n in t["nodes"])
logged = sum(n["events_per_kind"]["lock_grant"] for n in t["nodes"])
grants = sum(n["lock_acquires"] for n in t["nodes"])
decisions = ev - logged + grants
by = sum(n["file_bytes"] for n in t["nodes"])
print(f"{by / decisions:.3f} ({decisions} decisions: {grants} lock grants, {logged} logged;"
      f" {by / ev:.2f} per logged event)" if ev else "n/a (no events)")')
  awk -v n="$name" -v p="$plain" -v r="$rec" -v b="$bpe" \
    'BEGIN { printf "%-36s %9.1f %9.1f %8.3fx   %s\n", n, p, r, r / p, b }'
}

printf '%-36s %9s %9s %9s   %s\n' run "plain ms" "rec. ms" ratio "bytes/decision"
sg=(--epochs "${EPOCHS:-6}" --quiet --time)
bench "sgdmf schedule, 2 threads" "$ex/sgdmf" --threads 2 "${sg[@]}"
bench "sgdmf locks, 2 threads" "$ex/sgdmf" --threads 2 --async-engine locks "${sg[@]}"
bench "sgdmf locks, mpiexec -n 2" mpiexec -n 2 "$ex/sgdmf" --threads 1 --async-engine locks "${sg[@]}"
bench "mlr BSP, 2 threads" "$ex/mlr" --threads 2 --epochs 6 --time
bench "mlr SSP(2), mpiexec -n 2" mpiexec -n 2 "$ex/mlr" --threads 1 --sync ssp --staleness 2 --epochs 6 --time
