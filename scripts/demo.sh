#!/usr/bin/env bash
# The main job: SGD matrix factorization on the embedded synthetic data set (1.9 M ratings,
# 20 000 users x 5 000 items) with the element-lock engine, whose lock grants and message
# deliveries differ from run to run. Recorded on 4 MPI ranks, replayed on the cluster, replayed
# in a single process: the three checksums agree.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
strads=build/tool/strads
sgdmf=build/examples/sgdmf
args=(--async-engine locks --epochs 5)
trace=build/demo/sgdmf.strace
rm -rf "$trace"
mkdir -p build/demo

checksum() { grep '^checksum:' "$1" | awk '{print $2}'; }

echo "== strads record -o $trace -- mpiexec -n 4 $sgdmf ${args[*]}"
"$strads" record -o "$trace" -- mpiexec -n 4 "$sgdmf" "${args[@]}" | tee build/demo/record.out
"$strads" trace info "$trace" | grep -E '^trace|lock grants|events:' | head -4
echo "== strads replay $trace -- mpiexec -n 4 $sgdmf ${args[*]}"
"$strads" replay "$trace" -- mpiexec -n 4 "$sgdmf" "${args[@]}" | tee build/demo/cluster.out
echo "== strads replay --single-process $trace -- $sgdmf ${args[*]}"
"$strads" replay --single-process "$trace" -- "$sgdmf" "${args[@]}" | tee build/demo/single.out

recorded=$(checksum build/demo/record.out)
cluster=$(checksum build/demo/cluster.out)
single=$(checksum build/demo/single.out)
echo "== checksums: recorded $recorded, cluster replay $cluster, single-process replay $single"
if [ "$recorded" = "$cluster" ] && [ "$recorded" = "$single" ]; then
  echo "== the three agree"
else
  echo "== MISMATCH" >&2
  exit 1
fi
