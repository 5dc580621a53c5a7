#!/usr/bin/env bash
# The whole test suite: unit tests (doctest) and integration tests (mpiexec -n 2 / -n 4).
# With CI=true (.ci/run) also the suite under ASan+UBSan (scripts/sanitize.sh asan) and a short
# fuzz run of every harness (scripts/fuzz.sh, STRADS_FUZZ_SECONDS each, default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd build && ctest --output-on-failure -j2 --timeout 600)
if [ "${CI:-}" = true ]; then
  bash scripts/sanitize.sh asan
  bash scripts/fuzz.sh "${STRADS_FUZZ_SECONDS:-5}"
fi
