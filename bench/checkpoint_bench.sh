#!/usr/bin/env bash
# What checkpoints cost: for sgdmf (AsyncFor, schedule engine) and mlr (SyncFor BSP) on 2 MPI
# ranks, the time per epoch without checkpoints (the baseline, same script) and with one
# checkpoint every epoch, the mean time and bytes (all ranks' files) of one checkpoint as node 0
# reports them (STRADS_CHECKPOINT_STATS), and the wall time of a restart from the last
# checkpoint against the whole run.
#   bench/checkpoint_bench.sh [BUILD_DIR]      (EPOCHS=10, RANKS=2; default data of each example)
set -euo pipefail
build=${1:-build}
epochs=${EPOCHS:-10}
ranks=${RANKS:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

seconds() {  # wall seconds of "$@", its stdout and stderr to $work/out, $work/err
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$work/out" 2>"$work/err"
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

printf '%-6s %12s %12s %8s %10s %14s %12s %12s %10s %10s %10s\n' prog "ms/epoch" "ckpt ms/ep" \
  ratio "ms/ckpt" "bytes/ckpt" "first bytes" "later bytes" "ckpt/ep" "run s" "restart s"
for prog in sgdmf mlr; do
  # Operators per epoch: sgdmf --quiet runs 1 AsyncFor, mlr 1 SyncFor.
  args=(--epochs "$epochs" --threads 1 --time)
  [[ $prog == sgdmf ]] && args+=(--quiet)
  cmd=(mpiexec -n "$ranks" "$build/examples/$prog" "${args[@]}")
  seconds "${cmd[@]}" >/dev/null
  base=$(awk '/time per epoch/ {print $4}' "$work/out")
  run_s=$(STRADS_CHECKPOINT_STATS=1 seconds "${cmd[@]}" --checkpoint "$work/$prog" \
    --checkpoint-every 1)
  with=$(awk '/time per epoch/ {print $4}' "$work/out")
  # "... X ms and Y bytes each (the first F bytes, the others L; ...)": F and L are absent in
  # builds before incremental checkpoints (every checkpoint writes everything).
  read -r ckpt_ms ckpt_bytes first_bytes later_bytes < <(awk '/checkpoints:/ {
    f = $8; l = $8; if ($12 == "first") { f = $13; l = $17; sub(";", "", l) } print $5, $8, f, l }' "$work/err")
  restart_s=$(seconds "${cmd[@]}" --restart "$work/$prog")
  awk -v p="$prog" -v b="$base" -v w="$with" -v c="$ckpt_ms" -v y="$ckpt_bytes" -v r="$run_s" \
    -v s="$restart_s" -v f="$first_bytes" -v l="$later_bytes" 'BEGIN {
      printf "%-6s %12.1f %12.1f %7.3fx %10.1f %14d %12d %12d %9.3fx %10.2f %10.2f\n",
      p, b, w, w / b, c, y, f, l, c / b, r, s }'
done

# Replay from a checkpoint against a full replay of the same recording: sgdmf with the lock
# engine (2 threads a rank, --quiet: 1 operator an epoch), recorded with one checkpoint after
# epoch EPOCHS - 1 (all segments kept); both replays run on the cluster.
strads=$build/tool/strads
rargs=(--epochs "$epochs" --threads 2 --quiet --async-engine locks --checkpoint "$work/rc"
  --checkpoint-every "$((epochs > 1 ? epochs - 1 : 1))" --checkpoint-keep 100)
rcmd=(mpiexec -n "$ranks" "$build/examples/sgdmf" "${rargs[@]}")
record_s=$(seconds "$strads" record -o "$work/rt" -- "${rcmd[@]}")
full_s=$(seconds "$strads" replay "$work/rt" -- "${rcmd[@]}")
from_s=$(seconds "$strads" replay --from-checkpoint "$work/rt" -- "${rcmd[@]}")
printf '\n%-30s %10s %14s %16s %8s\n' "sgdmf locks, $epochs epochs" "record s" "full replay s" \
  "from ckpt-$((epochs > 1 ? epochs - 1 : 1)) s" ratio
awk -v a="$record_s" -v f="$full_s" -v c="$from_s" \
  'BEGIN { printf "%-30s %10.2f %14.2f %16.2f %7.3fx\n", "", a, f, c, c / f }'
