#!/usr/bin/env bash
# The long version of the suite's 20x chaos record/replay tests: ITERATIONS (default 200) chaos
# recordings each of sgdmf (lock engine, 2 ranks x 2 threads) and mlr (SSP(2), 2 ranks), each
# replayed on the cluster and in one process; stops at the first difference.
#   bench/replay_soak.sh [BUILD_DIR] [ITERATIONS]
set -euo pipefail
build=${1:-build}
n=${2:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check=tests/integration/replay_chaos.sh
bash "$check" "$build/tool/strads" mpiexec 2 "$n" "$work/sgdmf" "$build/examples/sgdmf" \
  --ratings 40000 --users 2000 --items 600 --epochs 3 --async-engine locks --threads 2
bash "$check" "$build/tool/strads" mpiexec 2 "$n" "$work/mlr" "$build/examples/mlr" \
  --samples 20000 --epochs 3 --sync ssp --staleness 2 --threads 1
