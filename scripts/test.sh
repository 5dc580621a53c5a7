#!/usr/bin/env bash
# The whole test suite: unit tests (doctest) and integration tests (mpiexec -n 2 / -n 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j2 --timeout 600
