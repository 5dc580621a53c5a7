#!/usr/bin/env bash
# The whole test suite: unit tests (doctest) and integration tests (mpiexec -n 2 / -n 4) in build/,
# then the same suite under ASan+UBSan in build-asan/ (scripts/sanitize.sh; any sanitizer report
# fails it; docs/threat_model.md, "Sanitizers", has its time). STRADS_SANITIZE=0 skips the second.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(cd build && ctest --output-on-failure -j2 --timeout 600)
if [ "${STRADS_SANITIZE:-1}" != 0 ]; then
  bash scripts/sanitize.sh asan
fi
