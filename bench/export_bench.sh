#!/usr/bin/env bash
# Peak memory of `strads trace export` (Chrome Trace Event JSON, streamed) on synthetic traces of
# 1 M and 10 M events (bench/synthetic_trace.cc: 2 nodes x 4 threads, lock-engine shaped), and,
# as the baseline in the same run, of `strads trace info` on the same traces, which holds every
# event in memory. Bounded export memory: its peak RSS barely grows from 1 M to 10 M events.
#   bench/export_bench.sh [BUILD_DIR]      (EVENTS=10000000 for the large trace)
set -euo pipefail
build=${1:-build}
events=${EVENTS:-10000000}
strads=$build/tool/strads
gen=$build/trace/synthetic_trace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

peak_kb() {  # COMMAND...: peak RSS in KiB (GNU time's %M), output discarded
  /usr/bin/time -f '%M' "$@" 2>&1 > /dev/null | tail -1
}

printf '%-12s %12s %14s %14s %8s %s\n' events "trace bytes" "export RSS" "info RSS" ratio "JSON bytes, seconds"
for n in 1000000 "$events"; do
  "$gen" "$tmp/t$n" "$n"
  bytes=$(cat "$tmp/t$n"/node-*.log | wc -c)
  start=$(date +%s.%N)
  export_kb=$(/usr/bin/time -f '%M' "$strads" trace export "$tmp/t$n" -o "$tmp/t$n.json" 2>&1 | tail -1)
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  info_kb=$(peak_kb "$strads" trace info "$tmp/t$n")
  json_bytes=$(wc -c < "$tmp/t$n.json")
  awk -v n="$n" -v b="$bytes" -v e="$export_kb" -v i="$info_kb" -v j="$json_bytes" -v s="$secs" \
    'BEGIN { printf "%-12d %12d %11.1f MB %11.1f MB %7.3fx %.0f B, %.1f s\n", n, b, e / 1024, i / 1024, e / i, j, s }'
  rm -rf "$tmp/t$n" "$tmp/t$n.json"
done
