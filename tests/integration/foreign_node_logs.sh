#!/usr/bin/env bash
# Node logs under another node's name (swapped) or from another recording (foreign) are refused
# when the trace is opened, naming the file, exit 2: they were read as "complete", and replay
# then waited 120 s for a message from the node itself.
#   foreign_node_logs.sh STRADS SGDMF WORK
set -uo pipefail
strads=$1 sgdmf=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
args=(--ratings 20000 --users 1000 --items 300 --epochs 2 --async-engine locks --nodes 2
  --threads 2 --quiet)
for t in a b; do
  "$strads" record -o "$work/$t" -- "$sgdmf" "${args[@]}" > /dev/null ||
    { echo "FAIL: could not record"; exit 1; }
done
"$strads" trace info "$work/a" > /dev/null || { echo "FAIL: the intact trace is unreadable"; exit 1; }

expect_refused() {  # NAME PATTERN COMMAND...
  local name=$1 pattern=$2
  shift 2
  local err rc
  err=$(timeout -k 5 60 "$@" 2>&1 >/dev/null)
  rc=$?
  echo "--- $name: exit $rc"
  echo "$err" | head -3
  [[ $rc -eq 2 ]] || { echo "FAIL: $name: expected exit 2, got $rc"; exit 1; }
  [[ $err == *$pattern* ]] || { echo "FAIL: $name: no '$pattern' in the report"; exit 1; }
}

cp -r "$work/a" "$work/swapped"
mv "$work/swapped/node-0.log" "$work/swapped/tmp"
mv "$work/swapped/node-1.log" "$work/swapped/node-0.log"
mv "$work/swapped/tmp" "$work/swapped/node-1.log"
expect_refused swapped_info "node-0.log: offset 0: chunk 0 "*"this is node 1's log, read as node 0's" \
  "$strads" trace info "$work/swapped"
expect_refused swapped_replay "this is node 1's log, read as node 0's" \
  "$strads" replay --single-process "$work/swapped" -- "$sgdmf" "${args[@]}"

cp -r "$work/a" "$work/foreign"
cp "$work/b/node-1.log" "$work/foreign/node-1.log"
expect_refused foreign_info "node-1.log: offset 0: recorded by another run" \
  "$strads" trace info "$work/foreign"
expect_refused foreign_replay "node-1.log: offset 0: recorded by another run" \
  "$strads" replay --single-process "$work/foreign" -- "$sgdmf" "${args[@]}"
echo "ok: swapped and foreign node logs are refused"
