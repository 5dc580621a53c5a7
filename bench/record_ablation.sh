#!/usr/bin/env bash
# The lock engine's recording cost taken apart (docs/recording.md, "What it costs"): builds this
# checkout with bench/record_ablation.patch applied (switches read from STRADS_REC_ABLATE; never
# part of a real build) in a scratch directory, then runs the overhead meter
# (STRADS_RECORD_OVERHEAD, core/src/record_overhead_meter.h) on
# `sgdmf --threads 2 --async-engine locks` once per variant per round, the variants interleaved,
# and prints per variant the medians and spreads of the recorded / live ratios (wall and CPU
# time) and of the fraction of grants logged, with the load average before and after.
#   bench/record_ablation.sh [ROUNDS]      (ROUNDS=5, EPOCHS=11: 5 live and 5 recorded calls)
# Variants (all recorded invocations run under the Record policy):
#   full      the recorded path as it is
#   plain     Live's lock operations (bit set, bit clear): what recording costs per operator only
#             (the boundary events, the outcome digest, the writer's drain); nothing per grant
#   xchg      the ordered protocol's lock operations and count (the exchange, a release storing
#             the thread's grant) with no check: nothing logged
#   nolog     the full path; an unordered grant is learned but not appended to the log (so its
#             "% logged" is 0)
#   nodigest  the full path without the outcome digest
# A machine loaded past its cores measures its scheduler (a worker descheduled while it holds a
# lock stalls the other): run it idle.
set -euo pipefail
rounds=${1:-5}
epochs=${EPOCHS:-11}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git -C "$here" archive HEAD | tar -x -C "$scratch/"
(cd "$scratch" && git apply bench/record_ablation.patch)
# ccache is optional (the README's set-up does not install it). Where it is found, the scratch
# copy is its base directory: the files the patch leaves alone hit the cache filled by the
# checkout's own build (the same relative paths).
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR=$scratch
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$scratch" -B "$scratch/build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" > /dev/null
cmake --build "$scratch/build" -j"$(nproc)" --target sgdmf strads > /dev/null
sgdmf=$scratch/build/examples/sgdmf
strads=$scratch/build/tool/strads
variants=(full plain xchg nolog nodigest)

echo "before: cores $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); $rounds rounds"
runs=$scratch/runs
for _ in $(seq "$rounds"); do
  for v in "${variants[@]}"; do
    rm -rf "$scratch/meter"
    line=$(STRADS_REC_ABLATE=$v STRADS_RECORD_OVERHEAD="$scratch/meter" "$sgdmf" --threads 2 \
             --async-engine locks --epochs "$epochs" --quiet 2>&1 > /dev/null |
           grep '^record overhead at' | head -1)
    ratios=$(sed 's/.*: \([0-9.]*\)x; CPU time .*: \([0-9.]*\)x.*/\1 \2/' <<< "$line")
    logged=$("$strads" trace info "$scratch/meter" --json | python3 -c '
import json, sys
t = json.load(sys.stdin)
a = sum(n["lock_acquires"] for n in t["nodes"])
print(100 * sum(n["events_per_kind"]["lock_grant"] for n in t["nodes"]) / a if a else 0)')
    echo "$v $ratios $logged" >> "$runs"
  done
done
printf '%-9s %22s %22s %22s\n' variant "wall ratio (min-max)" "CPU ratio (min-max)" \
  "% logged (min-max)"
for v in "${variants[@]}"; do
  awk -v v="$v" '
    function stat(c,   n, i, j, t, a) {
      n = 0
      for (i = 1; i <= k; i++) a[++n] = col[i, c]
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return sprintf("%.3f (%.3f-%.3f)", a[int((n + 1) / 2)], a[1], a[n])
    }
    $1 == v { k++; col[k, 1] = $2; col[k, 2] = $3; col[k, 3] = $4 }
    END { printf "%-9s %22s %22s %22s\n", v, stat(1), stat(2), stat(3) }' "$runs"
done
echo "after: load average $(cut -d' ' -f1-3 /proc/loadavg)"
