#!/usr/bin/env bash
# strads trace diff: a trace and its copy are identical (exit 0), and so are two recordings of
# the deterministic schedule engine; two chaos recordings of the lock engine differ (exit 1) at
# the first event the report names (checked against `strads trace dump`); two recordings of a
# run whose input file changed one byte (same length) differ at the input event; traces of two
# programs are not comparable (exit 2).
#   trace_diff.sh STRADS WORKDIR SGDMF MLR
set -u
strads=$1 work=$2 sgdmf=$3 mlr=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
locks=(--ratings 40000 --users 2000 --items 600 --epochs 2 --async-engine locks --nodes 2 --threads 2)
record() {  # DIR CHAOS COMMAND...
  local dir=$1 chaos=$2
  shift 2
  "$strads" record ${chaos:+--chaos "$chaos"} -o "$dir" -- "$@" > /dev/null 2> "$dir.err" ||
    fail "recording $dir: $(cat "$dir.err")"
}
diff_traces() {  # A B: output in diff.out, returns the exit status
  "$strads" trace diff "$1" "$2" > diff.out 2>&1
}

record a 1 "$sgdmf" "${locks[@]}"
cp -r a a_copy
diff_traces a a_copy || fail "a trace and its copy: exit $? $(cat diff.out)"
grep -q '^identical: ' diff.out || fail "a trace and its copy: $(cat diff.out)"

record b 2 "$sgdmf" "${locks[@]}"
diff_traces a b
status=$?
[ "$status" = 1 ] || fail "two chaos recordings: exit $status, expected 1: $(cat diff.out)"
# "node K, thread T: first difference at its event P (#I in A, #J in B of node-K.log), ..."
first=$(grep -m1 'first difference' diff.out)
node=$(sed -E 's/^node ([0-9]+),.*/\1/' <<< "$first")
index=$(sed -E 's/.*\(#([0-9]+) in A.*/\1/' <<< "$first")
described=$(grep -m1 '^  A: ' diff.out | sed 's/^  A: //')
[ -n "$node" ] && [ -n "$index" ] || fail "no first difference: $(cat diff.out)"
"$strads" trace dump a --node "$node" | grep -q -F "node $node #$index thread " ||
  fail "event #$index of node $node not in the dump"
"$strads" trace dump a --node "$node" | grep -F "node $node #$index thread " | grep -q -F "$described" ||
  fail "the dump's event #$index is not '$described'"

schedule=(--ratings 40000 --users 2000 --items 600 --epochs 2 --nodes 2 --threads 2)
record s1 "" "$sgdmf" "${schedule[@]}"
record s2 "" "$sgdmf" "${schedule[@]}"
diff_traces s1 s2 || fail "two recordings of the schedule engine: exit $? $(cat diff.out)"

# A LIBSVM file, then the same file with one digit changed: same length, other bytes.
awk 'BEGIN { for (i = 0; i < 400; i++) printf "%d %d:0.%d %d:0.5\n", i % 3, 1 + i % 50, i % 9, 51 + i % 40 }' > data.txt
record i1 "" "$mlr" --data data.txt --features 100 --classes 3 --epochs 1 --nodes 2 --threads 1
sed -i '7s/:0\.5/:0.6/' data.txt
record i2 "" "$mlr" --data data.txt --features 100 --classes 3 --epochs 1 --nodes 2 --threads 1
diff_traces i1 i2
status=$?
[ "$status" = 1 ] || fail "a changed input: exit $status, expected 1: $(cat diff.out)"
grep -A1 'first difference' diff.out | grep -q '  A: input of ' || fail "a changed input: $(cat diff.out)"

diff_traces a i1
status=$?
[ "$status" = 2 ] || fail "two programs: exit $status, expected 2: $(cat diff.out)"
grep -q 'not comparable: different programs: sgdmf and mlr' diff.out || fail "$(cat diff.out)"
echo "ok: identical copies and schedule-engine recordings, chaos recordings and a changed input differ at the right event, two programs not comparable"
