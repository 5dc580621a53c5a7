#!/usr/bin/env bash
# How long the page of `strads trace view` takes to show its first frame (the whole trace) in
# headless Chromium, from navigation start (parsing the data, decoding the coarsest tiles,
# drawing), and until the parser has read the whole page (every block a zoom decodes), on
# synthetic traces (bench/synthetic_trace.cc: 2 nodes x 4 threads, lock-engine
# shaped) of 100 k events, the baseline, and EVENTS events; with the page's size and the tool's
# time and peak RSS. No assertion: the figures are printed.
#   bench/view_bench.sh [BUILD_DIR]      (EVENTS=10000000 for the issue's 10 M events)
set -euo pipefail
build=${1:-build}
events=${EVENTS:-1000000}
strads=$build/tool/strads
gen=$build/trace/synthetic_trace
browser=$(command -v chromium || command -v chromium-browser)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%-10s %12s %10s %12s %14s %12s %s\n' events "page bytes" "view s" "view RSS" "first frame" "all parsed" "first frame vs baseline"
base_ms=
for n in 100000 "$events"; do
  "$gen" "$tmp/t$n" "$n" > /dev/null
  start=$(date +%s.%N)
  view_kb=$(/usr/bin/time -f '%M' "$strads" trace view "$tmp/t$n" -o "$tmp/t$n.html" 2>&1 | tail -1)
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  timeout 300 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
    --disable-dev-shm-usage --user-data-dir="$tmp/profile" --window-size=1400,900 \
    --dump-dom "file://$tmp/t$n.html" 2> /dev/null > "$tmp/dom.html"
  read -r ms parsed < <(python3 -c '
import html, json, re, sys
m = re.search(r"<pre id=\"drawn\">(.*?)</pre>", open(sys.argv[1]).read(), re.S)
d = json.loads(html.unescape(m.group(1))) if m and m.group(1) else {}
print(d.get("first_frame_ms", "none"), d.get("all_parsed_ms", "none"))' "$tmp/dom.html")
  base_ms=${base_ms:-$ms}
  awk -v n="$n" -v b="$(wc -c < "$tmp/t$n.html")" -v s="$secs" -v r="$view_kb" -v ms="$ms" -v p="$parsed" -v base="$base_ms" \
    'BEGIN { printf "%-10d %12d %9.1fs %9.1f MB %11s ms %9s ms %8.2fx\n", n, b, s, r / 1024, ms, p, (base > 0 ? ms / base : 0) }'
  rm -rf "$tmp/t$n" "$tmp/t$n.html"
done
