#!/usr/bin/env bash
# The main job: SGD matrix factorization on the embedded synthetic data set (1.9 M ratings,
# 20 000 users x 5 000 items), on 4 MPI ranks, then the same on 4 in-process nodes: the two
# checksums agree.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== mpiexec -n 4 build/examples/sgdmf --threads 1"
mpiexec -n 4 build/examples/sgdmf --threads 1 --epochs 5
echo "== build/examples/sgdmf --nodes 4 --threads 1"
build/examples/sgdmf --nodes 4 --threads 1 --epochs 5 --quiet
