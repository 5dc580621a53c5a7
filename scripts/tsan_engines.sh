#!/usr/bin/env bash
# Every engine under ThreadSanitizer, in one process (--nodes 2 --threads 2): the schedule and
# lock engines of AsyncFor (sgdmf), SyncFor BSP and SSP (mlr), each live, with chaos, recorded
# and replayed in one process, and a recording that crashes while its workers append (the crash
# path). Run by `bash scripts/sanitize.sh tsan-engines`, which builds BUILD (build-tsan/) first.
#   scripts/tsan_engines.sh BUILD
# Any TSan report fails it (reports: BUILD/tsan-engines/reports/).
set -u
build=$(cd "$1" && pwd)
work=$build/tsan-engines
reports=$work/reports
rm -rf "$work" && mkdir -p "$reports"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan"
strads=$build/tool/strads
sgdmf=("$build/examples/sgdmf" --ratings 20000 --users 1000 --items 300 --epochs 2)
mlr=("$build/examples/mlr" --samples 3000 --features 200 --classes 4 --epochs 2)
failed=0
# check NAME COMMAND...: the command must succeed.
check() {
  local name=$1
  shift
  if "$@" > "$work/$name.out" 2>&1; then
    echo "ok   $name"
  else
    echo "FAIL $name (exit $?): $(tail -3 "$work/$name.out")"
    failed=1
  fi
}
# matrix NAME PROGRAM ARGS...: live, with chaos, recorded with chaos, and replayed in one
# process (--single-process: every recorded node a logical node, exit 0 unless it diverged).
matrix() {
  local name=$1
  shift
  check "$name" "$@"
  check "${name}_chaos" "$@" --chaos 3
  check "${name}_record" "$strads" record --chaos 5 -o "$work/$name.strace" -- "$@"
  check "${name}_replay_single_process" "$strads" replay --single-process "$work/$name.strace" -- "$@"
}
shape=(--nodes 2 --threads 2)
matrix sgdmf_schedule "${sgdmf[@]}" --async-engine schedule "${shape[@]}"
matrix sgdmf_locks "${sgdmf[@]}" --async-engine locks "${shape[@]}"
matrix mlr_bsp "${mlr[@]}" --sync bsp "${shape[@]}"
matrix mlr_ssp "${mlr[@]}" --sync ssp --staleness 2 "${shape[@]}"
for sig in SEGV ABRT TERM; do
  check "crash_path_$sig" bash "$(dirname "$0")/../tests/integration/record_crash_signal.sh" \
    "$strads" "$build/tests/crash_while_recording" "$work/crash_$sig" "$sig"
done
if [ -n "$(ls -A "$reports")" ]; then
  echo "tsan_engines.sh: ThreadSanitizer reports in $reports:"
  head -60 "$reports"/*
  failed=1
fi
[ "$failed" = 0 ] && echo "tsan_engines.sh: every engine clean under TSan"
exit "$failed"
