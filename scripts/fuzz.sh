#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang in build-fuzz/ and runs each for SECONDS
# (default 60) on a copy of its seed corpus (fuzz/corpus/NAME/; new inputs go to
# build-fuzz/corpus/NAME/, never into the repository). Prints, per harness, executions per second
# and libFuzzer's final coverage line. Exit 1 if any harness found a crash, a sanitizer report, a
# leak, a timeout (10 s per input) or an out-of-memory (2 GB); the input is saved as
# build-fuzz/artifacts/NAME-*, and `build-fuzz/fuzz/NAME FILE` replays it.
#   bash scripts/fuzz.sh [SECONDS] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(node_log_fuzzer node_log_fixed_fuzzer manifest_fuzzer dual_file_fuzzer
             ratings_fuzzer libsvm_fuzzer docword_fuzzer)
fi
# clang 16 (Debian 12's clang 14 cannot compile the core: no std::source_location with
# libstdc++ 12) and its libFuzzer runtime: installed here, not by setup.sh, which every user runs.
fuzz_packages=(clang-16 libclang-rt-16-dev libomp-16-dev)
if ! command -v clang++-16 > /dev/null; then
  echo "fuzz.sh: installing ${fuzz_packages[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${fuzz_packages[@]}" > /dev/null
fi
CC=clang-16 CXX=clang++-16 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release -DSTRADS_FUZZ=ON > /dev/null
cmake --build build-fuzz -j2 --target fuzzers 2>&1 | grep -E "error|warning" || true
mkdir -p build-fuzz/artifacts
failed=0
for name in "${harnesses[@]}"; do
  work=build-fuzz/corpus/$name
  mkdir -p "$work"
  log=build-fuzz/$name.log
  # -close_fd_mask=2: the loaders' error messages on stderr are expected; libFuzzer keeps its own.
  set +e
  "build-fuzz/fuzz/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$name-" \
      "$work" "fuzz/corpus/$name" > "$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo 0)
  rate=$(grep -oE 'exec/s: *[0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$' || echo 0)
  cov=$(grep -E '^#[0-9]+.*cov:' "$log" | tail -1 | sed -E 's/^#[0-9]+[[:space:]]+//' || true)
  if [ $rc -eq 0 ]; then
    printf '%-22s ok     %8s runs  %6s exec/s  %s\n' "$name" "$runs" "$rate" "$cov"
  else
    failed=1
    printf '%-22s FAILED (exit %d, see %s)  %s\n' "$name" $rc "$log" "$cov"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$log" | head -5 || true
  fi
done
exit $failed
