#!/usr/bin/env bash
# `strads gdb --node 1 --event N TRACE -- PROG ARGS` stops with node 1 about to take exactly
# event N of its node-1.log (as `strads trace dump` prints it), `strads when` and `strads status`
# say so, and continuing ends with the recorded checksum.
#   gdb_replay.sh STRADS MPIEXEC WORKDIR THREADS PROG ARGS...
set -u
strads=$1 mpiexec=$2 work=$3 threads=$4 prog=$5
shift 5
args=("$@")
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $1"; echo "--- $2"; cat "$2"; exit 1; }
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$prog" "${args[@]}" --threads "$threads" \
  > "$work/record.out" 2>&1 || fail "recording failed" "$work/record.out"
recorded=$(grep '^checksum:' "$work/record.out")
"$strads" trace dump "$work/trace" --node 1 > "$work/dump.txt" || fail "dump" "$work/dump.txt"
# The event in the middle of node 1's log: "node 1 #N thread T DESCRIPTION".
count=$(grep -c '^node 1 #' "$work/dump.txt")
n=$((count / 2))
description=$(sed -n "s/^node 1 #$n thread [0-9]* //p" "$work/dump.txt")
[ -n "$description" ] || fail "no event $n in the dump" "$work/dump.txt"
printf 'strads when\nstrads status\ncontinue\n' |
  timeout 300 "$strads" gdb --node 1 --event "$n" "$work/trace" -- "$prog" "${args[@]}" \
  > "$work/gdb.out" 2>&1
out=$work/gdb.out
grep -qxF "strads: node 1 is about to take event $n: $description" "$out" ||
  fail "expected the stop before event $n: $description" "$out"
grep -qxF "node 1: next event $n" "$out" || fail "strads when" "$out"
grep -qxF "  next event $n: $description" "$out" || fail "strads status" "$out"
grep -q '^(strads) ' "$out" || fail "no (strads) prompt" "$out"
grep -qxF "$recorded" "$out" || fail "the replay under gdb did not end with $recorded" "$out"
grep -q 'Traceback' "$out" && fail "a Python traceback" "$out"
echo "ok: stopped before node 1's event $n ($description); $recorded as recorded"
