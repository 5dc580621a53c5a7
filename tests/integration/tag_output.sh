#!/usr/bin/env bash
# `strads replay --tag-output` starts every line the program prints with "[node K event N]", the
# same in a cluster replay (mpiexec) and a single-process one, and `strads gdb --node K --event
# N` (which sets `strads break-event --node K N`) stops before event N: after the line tagged N
# was printed and before the next line, tagged with a later event, is.
#   tag_output.sh STRADS MPIEXEC WORKDIR THREADS PROG ARGS...
set -u
strads=$1 mpiexec=$2 work=$3 threads=$4 prog=$5
shift 5
args=("$@" --threads "$threads")
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $1"; echo "--- $2"; cat "$2"; exit 1; }
source "$(dirname "$0")/gdb_event.sh"
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$prog" "${args[@]}" \
  > "$work/record.out" 2>&1 || fail "recording failed" "$work/record.out"
recorded=$(grep '^checksum:' "$work/record.out")

# Lines whose text is the same in every run (not the timing).
stable() { grep -v 'time per epoch' "$1"; }

"$strads" replay --tag-output "$work/trace" -- "$mpiexec" -n 2 "$prog" "${args[@]}" \
  > "$work/cluster.out" 2> "$work/cluster.err" || fail "cluster replay failed" "$work/cluster.err"
out=$work/cluster.out
grep -qxE "\[node 0 (event [0-9]+|end)\] $recorded" "$out" || fail "no tagged $recorded" "$out"
grep -vqE '^\[node [01] (event [0-9]+|end)\] ' "$out" && fail "an untagged line" "$out"
# Without the tags, the lines the recording printed.
sed -E 's/^\[node [01] (event [0-9]+|end)\] //' "$out" | stable /dev/stdin > "$work/untagged.txt"
grep -v '^strads' "$work/record.out" | stable /dev/stdin | diff - "$work/untagged.txt" \
  > "$work/untagged.diff" || fail "the lines differ from the recording's" "$work/untagged.diff"

"$strads" replay --tag-output --single-process "$work/trace" -- "$prog" "${args[@]}" \
  > "$work/single.out" 2> "$work/single.err" || fail "single-process replay failed" "$work/single.err"
stable "$work/cluster.out" | sort > "$work/cluster.sorted"
stable "$work/single.out" | sort | diff "$work/cluster.sorted" - > "$work/single.diff" ||
  fail "--single-process tags differently" "$work/single.diff"

# Without --tag-output nothing is tagged.
"$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$prog" "${args[@]}" > "$work/plain.out" 2>&1 ||
  fail "plain replay failed" "$work/plain.out"
grep -q '^\[node' "$work/plain.out" && fail "tags without --tag-output" "$work/plain.out"

# The middle tagged line with an event and the first later line with a later event.
grep -E '^\[node 0 event [0-9]+\] ' "$work/cluster.out" | stable /dev/stdin > "$work/events.txt"
count=$(wc -l < "$work/events.txt")
[ "$count" -ge 2 ] || fail "fewer than two lines tagged with events" "$work/cluster.out"
chosen=$(sed -n "$(((count + 1) / 2))p" "$work/events.txt")
n=$(sed -E 's/^\[node 0 event ([0-9]+)\] .*/\1/' <<< "$chosen")
text=${chosen#*] }
later=$(awk -v n="$n" '{e = $4; sub(/\]/, "", e)} e + 0 > n + 0 {sub(/^[^]]*\] /, ""); print; exit}' \
  "$work/events.txt")
[ -n "$later" ] || fail "no line after event $n" "$work/events.txt"
"$strads" trace dump "$work/trace" --node 0 > "$work/dump.txt" || fail "dump" "$work/dump.txt"

# At the stop the program's buffered output is flushed, then gdb prints a marker (gdb's prompt
# may precede a line).
printf 'call (int)fflush(0)\necho STOPPED-HERE\\n\ncontinue\n' | gdb_at_event 0 "$n" "$work/gdb.out"
out=$work/gdb.out
sed '/STOPPED-HERE$/q' "$out" > "$work/before.txt"
grep -q "STOPPED-HERE$" "$work/before.txt" || fail "no marker" "$out"
grep -qE "(^|\) )$text\$" "$work/before.txt" ||
  fail "'$text' (tagged $n) not printed before the stop" "$out"
grep -qE "(^|\) )$later\$" "$work/before.txt" && fail "'$later' printed before the stop at $n" "$out"
grep -qxF "$recorded" "$out" || fail "the replay under gdb did not end with $recorded" "$out"
echo "ok: '[node 0 event $n] $text'; gdb stopped before event $n after it and before '$later'"
