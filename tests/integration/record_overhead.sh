#!/usr/bin/env bash
# STRADS_RECORD_OVERHEAD: a run alternates live and recorded invocations of each operator, prints
# one overhead line per site, and computes what a plain run computes (the schedule engine is
# deterministic, so recording every other epoch must not change the checksum). It refuses to run
# together with STRADS_RECORD.
#   record_overhead.sh SGDMF DIR
set -u
sgdmf=$1 dir=$2
args=(--ratings 20000 --users 1000 --items 300 --epochs 5 --quiet --threads 2)
rm -rf "$dir"
mkdir -p "$dir"
plain=$("$sgdmf" "${args[@]}" | grep checksum) || { echo "plain run failed"; exit 1; }
out=$(STRADS_RECORD_OVERHEAD=$dir/trace "$sgdmf" "${args[@]}" 2> "$dir/stderr") ||
  { echo "metered run failed"; cat "$dir/stderr"; exit 1; }
cat "$dir/stderr"
metered=$(echo "$out" | grep checksum)
[ "$plain" = "$metered" ] || { echo "checksums differ: '$plain' vs '$metered'"; exit 1; }
grep -q 'record overhead at sgdmf.cc:[0-9]* (AsyncFor): live [0-9.]* ms, recorded [0-9.]* ms (medians of 2 and 2 invocations): [0-9.]*x; CPU time live [0-9.]* ms, recorded [0-9.]* ms: [0-9.]*x' "$dir/stderr" ||
  { echo "no overhead line for the AsyncFor site"; exit 1; }
# The recorded invocations (1 and 3) left events in the trace.
[ -s "$dir/trace/node-0.log" ] || { echo "no trace written"; exit 1; }
STRADS_RECORD=$dir/other STRADS_RECORD_OVERHEAD=$dir/trace2 "$sgdmf" "${args[@]}" > /dev/null 2> "$dir/err2"
rc=$?
[ "$rc" -eq 2 ] || { echo "expected exit 2 with STRADS_RECORD set too, got $rc"; exit 1; }
grep -q "STRADS_RECORD_OVERHEAD compares recorded and live" "$dir/err2" ||
  { echo "no clear refusal:"; cat "$dir/err2"; exit 1; }
echo "ok: $plain both ways"
