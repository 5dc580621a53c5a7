#!/usr/bin/env bash
# The examples' `checksum:` lines in every deterministic mode, one line per run, so that a
# refactoring can show it changed no result: run it on the build before and after and diff.
#   scripts/checksums.sh [BUILD_DIR]
# Nondeterministic modes (the lock engine on several threads or nodes, SSP, Hybrid) differ from
# run to run by design; they are covered by recording with one build and replaying with the other
# (REPLAY_FROM=TRACE_DIR_PREFIX: see the end of this script).
set -euo pipefail
build=${1:-build}
ex=$build/examples
sg=(--epochs 3 --quiet)
ml=(--epochs 3)

run() {  # NAME COMMAND...: prints NAME and the checksum line
  local sum
  sum=$("${@:2}" 2>/dev/null | awk '/^checksum:/ {print $2}')
  printf '%-44s %s\n' "$1" "${sum:-NONE}"
}

run "sgdmf_serial" "$ex/sgdmf_serial" "${sg[@]}"
run "sgdmf_omp --threads 1" "$ex/sgdmf_omp" --threads 1 "${sg[@]}"
for t in 1 2; do run "sgdmf --threads $t" "$ex/sgdmf" --threads "$t" "${sg[@]}"; done
for n in 2 4; do run "sgdmf --nodes $n --threads 1" "$ex/sgdmf" --nodes "$n" --threads 1 "${sg[@]}"; done
run "sgdmf --nodes 2 --threads 2" "$ex/sgdmf" --nodes 2 --threads 2 "${sg[@]}"
run "sgdmf mpiexec -n 2" mpiexec -n 2 "$ex/sgdmf" --threads 1 "${sg[@]}"
run "sgdmf --blocks 4 --threads 2" "$ex/sgdmf" --blocks 4 --threads 2 "${sg[@]}"
run "sgdmf --async-engine locks --threads 1" "$ex/sgdmf" --async-engine locks --threads 1 "${sg[@]}"
run "sgdmf --test-mode --async-engine locks -t 2" "$ex/sgdmf" --test-mode --async-engine locks --threads 2 "${sg[@]}"
for t in 1 2; do run "mlr --threads $t" "$ex/mlr" --threads "$t" "${ml[@]}"; done
run "mlr --threads 2 --re" "$ex/mlr" --threads 2 --re "${ml[@]}"
run "mlr --nodes 2 --threads 2" "$ex/mlr" --nodes 2 --threads 2 "${ml[@]}"
run "mlr --nodes 2 --threads 1 --re" "$ex/mlr" --nodes 2 --threads 1 --re "${ml[@]}"
run "mlr mpiexec -n 2" mpiexec -n 2 "$ex/mlr" --threads 1 "${ml[@]}"
run "mlr --threads 1 --sync-workers 2x2 --test-mode" "$ex/mlr" --threads 1 --sync-workers 2x2 --test-mode "${ml[@]}"
run "mlr --nodes 2 --threads 2 --test-mode --sync ssp" "$ex/mlr" --nodes 2 --threads 2 --test-mode --sync ssp "${ml[@]}"
run "mlr --threads 1 --sync ssp" "$ex/mlr" --threads 1 --sync ssp "${ml[@]}"
run "mlr --threads 1 --sync hybrid" "$ex/mlr" --threads 1 --sync hybrid "${ml[@]}"
