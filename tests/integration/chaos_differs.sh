#!/usr/bin/env bash
# Without replay, chaos runs of the same program on the same input give different results:
# at least 2 distinct checksums in RUNS runs (so the replay tests can fail).
#   chaos_differs.sh MPIEXEC NODES RUNS PROGRAM ARGS...
set -u
mpiexec=$1 nodes=$2 runs=$3
shift 3
sums=$(for i in $(seq "$runs"); do
  "$mpiexec" -n "$nodes" "$@" --chaos "$i" | grep '^checksum' || echo "run $i failed"
done)
if echo "$sums" | grep -q failed; then echo "$sums"; exit 1; fi
distinct=$(echo "$sums" | sort -u | wc -l)
echo "$distinct distinct checksums in $runs chaos runs without replay"
[ "$distinct" -ge 2 ] || { echo "expected at least 2"; exit 1; }
