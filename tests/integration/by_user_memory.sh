#!/usr/bin/env bash
# On a real cluster (mpiexec, one node per rank) a rank holds the pages of the ratings its
# bodies read: generated ratings are scattered over users, so every rank reads nearly all of
# them; ordered by user (--by-user) a loop's cells read contiguous runs, and each rank holds
# little more than its share (--memory-report, docs/async_for.md).
#   by_user_memory.sh SGDMF MPIEXEC
set -euo pipefail
sgdmf=$1
mpiexec=$2
args=(--ratings 400000 --users 4000 --items 1000 --epochs 2 --quiet --threads 1 --memory-report)
# Prints "resident owned" of the ratings for each rank.
ratings_bytes() {
  "$mpiexec" -n 4 "$sgdmf" "${args[@]}" "$@" 2>&1 >/dev/null |
    awk "/^memory: node [0-9]+ dds 0 'ratings':/ {print \$7, \$10}"
}
scattered=$(ratings_bytes)
by_user=$(ratings_bytes --by-user)
echo "scattered (resident owned):"; echo "$scattered"
echo "by user (resident owned):"; echo "$by_user"
[[ $(wc -l <<< "$scattered") -eq 4 && $(wc -l <<< "$by_user") -eq 4 ]] || {
  echo "expected a ratings line from each of 4 ranks"
  exit 1
}
# Scattered: each rank holds at least 3 of the 4 shares; by user: at most 2.
awk '$1 < 3 * $2 {bad = 1} END {exit bad}' <<< "$scattered" || {
  echo "scattered ratings: a rank held under 3 shares (the test would be vacuous)"
  exit 1
}
awk '$1 > 2 * $2 {bad = 1} END {exit bad}' <<< "$by_user" || {
  echo "--by-user: a rank held more than twice its share of the ratings"
  exit 1
}
echo "ok"
