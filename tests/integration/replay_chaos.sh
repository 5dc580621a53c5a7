#!/usr/bin/env bash
# Record under chaos, replay on the cluster and in one process: the objective lines and the
# checksum must equal the recorded run's, ITERATIONS times in a row (a new chaos seed each).
# With NO_CHAOS=1 the recordings run without chaos (chaos calls the policy's Acquire for every
# lock; without it the lock engine runs the ordered protocol inline).
#   replay_chaos.sh STRADS MPIEXEC NODES ITERATIONS WORKDIR PROGRAM ARGS...
set -u
strads=$1 mpiexec=$2 nodes=$3 iterations=$4 work=$5
shift 5
rm -rf "$work"
mkdir -p "$work"
results() { grep -E '^(epoch|checksum)' "$1"; }
for i in $(seq "$iterations"); do
  trace=$work/run-$i.strace
  chaos=(--chaos "$i")
  [ "${NO_CHAOS:-0}" = 1 ] && chaos=()
  "$strads" record "${chaos[@]}" -o "$trace" -- "$mpiexec" -n "$nodes" "$@" > "$work/record.out" \
    2> "$work/record.err" || { echo "iteration $i: recording failed"; cat "$work/record.err"; exit 1; }
  timeout 300 "$strads" replay "$trace" -- "$mpiexec" -n "$nodes" "$@" > "$work/cluster.out" \
    2> "$work/cluster.err" || { echo "iteration $i: cluster replay failed"; cat "$work/cluster.err"; exit 1; }
  timeout 300 "$strads" replay --single-process "$trace" -- "$@" > "$work/single.out" \
    2> "$work/single.err" || { echo "iteration $i: single-process replay failed"; cat "$work/single.err"; exit 1; }
  for mode in cluster single; do
    if ! diff <(results "$work/record.out") <(results "$work/$mode.out") > "$work/diff"; then
      echo "iteration $i: $mode replay differs from the recorded run:"; cat "$work/diff"; exit 1
    fi
  done
  results "$work/record.out" | tail -1 >> "$work/checksums"
  rm -rf "$trace"
done
echo "ok: $iterations recorded runs replayed identically on the cluster and in one process;" \
  "$(sort -u "$work/checksums" | wc -l) distinct recorded checksums"
