#!/usr/bin/env bash
# Builds the project under a sanitizer and runs the test suite there:
#   bash scripts/sanitize.sh asan [ctest args]   # ASan+UBSan (any report fails), build-asan/
#   bash scripts/sanitize.sh tsan [ctest args]   # TSan, build-tsan/
#   bash scripts/sanitize.sh tsan-engines        # TSan on every engine in one process, recorded,
#                                                # replayed, with chaos, and the crash path
#                                                # (scripts/tsan_engines.sh; builds 4 programs)
# Extra arguments go to ctest (e.g. -R trace). Both use the default compiler (gcc) at -O1 with
# frame pointers, so that reports have whole stacks (build type RelWithDebInfo, see below).
# TSan leaves out (see docs/threat_model.md, "How it is tested"):
#  - every test that runs mpiexec: MPICH's progress threads and shared-memory transport are
#    not instrumented, so TSan reports races inside libmpi that strads cannot fix or suppress
#    precisely; in-process runs (--nodes P) cover the same engines, recorder, replayer and chaos.
#  - the OpenMP baseline (sgdmf_omp): libgomp is not built with TSan, so its barriers are
#    invisible to it and every OpenMP program looks racy.
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-}
shift || true
case "$kind" in
  asan)
    flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
    # MPICH's own allocations live until exit by design: not strads's leaks.
    export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
    # Reports also go to files: a test that expects a failing exit status (a refusal test)
    # would otherwise pass on a sanitizer's exit 1 and its report would be lost.
    reports=$PWD/build-$kind/sanitizer-reports
    rm -rf "$reports" && mkdir -p "$reports"
    export ASAN_OPTIONS="abort_on_error=0:detect_stack_use_after_return=0:log_path=$reports/asan"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan"
    ;;
  tsan | tsan-engines)
    flags="-fsanitize=thread"
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
    # MPICH's UCX layer hooks madvise (libucm); glibc's thread exit calls madvise after TSan has
    # torn down the thread's state, and the hook's intercepted rwlock then crashes (SIGSEGV in
    # __tsan::MutexPreReadLock, every multi-threaded program). strads needs no UCX memory events.
    export UCX_MEM_EVENTS=no
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan|tsan-engines [ctest args]" >&2
    exit 2
    ;;
esac
build=build-${kind%-engines}
# RelWithDebInfo, not Release: CMakeLists.txt sets CMAKE_CXX_FLAGS_RELEASE itself, which hides a
# -DCMAKE_CXX_FLAGS_RELEASE given here (the code was compiled without instrumentation, only
# linked with the sanitizer's runtime). The flags below are the whole set (no -DNDEBUG).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -fno-omit-frame-pointer $flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" > /dev/null
# Only what the suite runs under this sanitizer: every target but the benchmarks' programs and
# the programs of the tests left out below (a sanitizer build costs about 3x a Release one).
not_run="accumulator_bench trace_bench"
# gdb_printers reads a core dump, which both sanitizers turn off (label no-sanitizer below).
[ "$kind" != tsan-engines ] && not_run="$not_run gdb_printers_program"
[ "$kind" = tsan ] && not_run="$not_run sgdmf_omp"
targets=$(cmake --build "$build" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p' |
  grep -vxE "all|clean|depend|edit_cache|rebuild_cache|test|install.*|list_install_components|.*\.(o|i|s)|${not_run// /|}")
[ "$kind" = tsan-engines ] && targets="strads sgdmf mlr crash_while_recording"
# A failed build must fail the script (not leave ctest to report missing executables).
# shellcheck disable=SC2086 # one target per word
if ! cmake --build "$build" -j"${JOBS:-2}" --target $targets > "$build/build.log" 2>&1; then
  grep -E "error" "$build/build.log" | head -20
  echo "sanitize.sh $kind: the build failed (whole log: $build/build.log)" >&2
  exit 1
fi
grep -E "warning" "$build/build.log" || true
[ "$kind" = tsan-engines ] && exec bash scripts/tsan_engines.sh "$build"
cd "$build"
# Tests labelled no-sanitizer where they are registered: gdb_printers reads a core dump, which
# both sanitizers turn off; the install test's consumer is built with the installed package's
# flags, without -fsanitize, and cannot link instrumented libraries; two --memory-limit tests set
# a limit between a program's DDSs and its records, which shadow memory moves. The other tests that run
# gdb stay: `strads gdb` turns LeakSanitizer off in the program it debugs.
exclude=(-LE no-sanitizer)
echo "sanitize.sh $kind: leaving out $(ctest -N -L no-sanitizer | sed -n 's/^Total Tests: //p') tests labelled no-sanitizer (core dump, install, memory limits)"
if [ "$kind" = tsan ]; then
  # And the tests whose command line runs mpiexec, plus the OpenMP baseline's: found from the
  # commands, so that a new MPI test is left out without anyone labelling it.
  skip=$(ctest --show-only=json-v1 | python3 -c '
import json, sys
names = [t["name"] for t in json.load(sys.stdin)["tests"]
         if any("mpiexec" in a or "sgdmf_omp" in a for a in t.get("command", []))]
print("|".join("^" + n.replace("+", "\\+").replace(".", "\\.") + "$" for n in names))')
  [ -n "$skip" ] && exclude+=(-E "$skip")
  echo "sanitize.sh tsan: leaving out $(echo "$skip" | tr '|' '\n' | grep -c . || true) tests (mpiexec, OpenMP)"
fi
status=0
ctest --output-on-failure -j2 --timeout 1200 "${exclude[@]}" "$@" || status=$?
if [ "$kind" = asan ] && [ -n "$(ls -A "$reports")" ]; then
  echo "sanitize.sh asan: sanitizer reports in $reports:"
  head -40 "$reports"/*
  status=1
fi
exit $status
