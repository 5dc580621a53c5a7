#!/usr/bin/env bash
# A cleanly closed trace whose node log lost bytes (64 deleted mid-file) is corrupt, exit 2,
# not "INCOMPLETE ... the writer did not finish it" with exit 0: a writer that dies leaves a
# manifest without clean_close.
#   corrupt_clean_trace.sh STRADS SGDMF WORK
set -uo pipefail
strads=$1 sgdmf=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
"$strads" record -o "$work/trace" -- "$sgdmf" --ratings 20000 --users 1000 --items 300 \
  --epochs 2 --async-engine locks --threads 2 --quiet > /dev/null ||
  { echo "FAIL: could not record"; exit 1; }
"$strads" trace info "$work/trace" > /dev/null || { echo "FAIL: the intact trace is unreadable"; exit 1; }
log=$work/trace/node-0.log
size=$(stat -c %s "$log")
half=$((size / 2))
{ head -c "$half" "$log"; tail -c +"$((half + 65))" "$log"; } > "$work/cut"
mv "$work/cut" "$log"
err=$(timeout -k 5 60 "$strads" trace info "$work/trace" 2>&1 >/dev/null)
rc=$?
echo "$err"
[[ $rc -eq 2 ]] || { echo "FAIL: expected exit 2, got $rc"; exit 1; }
[[ $err == *"node-0.log: offset "*"corrupt: the manifest says the run closed cleanly"* ]] ||
  { echo "FAIL: not reported as corrupt"; exit 1; }
echo "ok: a cut log under a clean close is corrupt"
