#!/usr/bin/env bash
# The size of each example's port (Table 6 of the STRADS-AP paper). What it counts:
#
#   lines    code lines: a line that is neither blank nor only a // comment.
#   serial   the serial twin's .cc (examples/NAME_serial.cc), strads the strads program's .cc
#            (examples/NAME.cc). The training routine itself is in these files.
#   removed  the lines of the twin's .cc the port removes or changes: the `<` lines of a diff of
#            the two .cc files (code lines only); added: the `>` lines.
#   touched  removed as a percentage of the twin's .cc (the strictest measure).
#   shared   the code lines of the examples/common/ headers the twin includes (directly or
#            through each other): loaders, generators, flags, the scheduler. Both programs
#            include the same headers unchanged, so the port touches none of their lines.
#   program  removed as a percentage of the whole serial program, serial + shared: the user's
#            program before the port, as the paper's Table 6 counts it.
#
#   scripts/twin_diff.sh [EXAMPLES_DIR]
set -euo pipefail
dir=${1:-$(dirname "$0")/../examples}
code() { grep -v -E '^[[:space:]]*(//.*)?$' "$@"; }

# The examples/common headers FILE includes, directly or through each other, one per line.
shared_headers() {
  local -A seen=()
  local queue=("$1") file inc
  while ((${#queue[@]})); do
    file=${queue[0]} queue=("${queue[@]:1}")
    for inc in $(sed -n 's/^#include "\(common\/[^"]*\)"/\1/p' "$file"); do
      [ -n "${seen[$inc]:-}" ] && continue
      seen[$inc]=1 queue+=("$dir/$inc")
      echo "$dir/$inc"
    done
  done
}

printf '%-10s %7s %7s %8s %6s %8s %7s %8s\n' program serial strads removed added touched \
  shared program
for name in sgdmf lda word2vec lasso; do
  serial=$dir/${name}_serial.cc strads=$dir/$name.cc
  [ -f "$serial" ] && [ -f "$strads" ] || continue
  s=$(code "$serial" | wc -l) p=$(code "$strads" | wc -l)
  mapfile -t headers < <(shared_headers "$serial")
  h=0
  ((${#headers[@]})) && h=$(code "${headers[@]}" | wc -l)
  d=$(diff <(code "$serial") <(code "$strads") || true)
  removed=$(grep -c '^<' <<< "$d" || true) added=$(grep -c '^>' <<< "$d" || true)
  printf '%-10s %7d %7d %8d %6d %7.1f%% %7d %7.1f%%\n' "$name" "$s" "$p" "$removed" "$added" \
    "$(echo "100 * $removed / $s" | bc -l)" "$h" "$(echo "100 * $removed / ($s + $h)" | bc -l)"
done
