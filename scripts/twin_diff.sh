#!/usr/bin/env bash
# The size of each example's port (Table 6 of the STRADS-AP paper): lines of code of its serial
# twin and of its strads program (blank and comment-only lines not counted), and how many lines
# of the twin the port removes or changes (the `-` lines of a diff of the two, without blank
# and comment-only lines) and adds (the `+` lines), the removed ones also as a percentage of
# the twin's lines.
#   scripts/twin_diff.sh [EXAMPLES_DIR]
set -euo pipefail
dir=${1:-$(dirname "$0")/../examples}
code() { grep -v -E '^[[:space:]]*(//.*)?$' "$1"; }
printf '%-10s %12s %12s %9s %7s %9s\n' program serial strads removed added touched
for name in sgdmf lda word2vec lasso; do
  serial=$dir/${name}_serial.cc strads=$dir/$name.cc
  [ -f "$serial" ] && [ -f "$strads" ] || continue
  s=$(code "$serial" | wc -l) p=$(code "$strads" | wc -l)
  d=$(diff <(code "$serial") <(code "$strads") || true)
  removed=$(grep -c '^<' <<< "$d" || true) added=$(grep -c '^>' <<< "$d" || true)
  printf '%-10s %12d %12d %9d %7d %8.1f%%\n' "$name" "$s" "$p" "$removed" "$added" \
    "$(echo "100 * $removed / $s" | bc -l)"
done
