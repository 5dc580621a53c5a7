#!/usr/bin/env bash
# Every reader of an untrusted path refuses a FIFO with a clear error and exit 2, without
# blocking on it (opening a FIFO for reading waits for a writer): data files (sgdmf, mlr), dual
# files (--dual-in), a trace's manifest and node log (trace info, replay). Each command runs
# under `timeout`, so a hang fails the test instead of hanging it.
#   fifo_inputs.sh STRADS SGDMF MLR WORK
set -uo pipefail
strads=$1 sgdmf=$2 mlr=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
mkfifo "$work/fifo"
small=(--ratings 2000 --users 100 --items 50 --epochs 1 --quiet)
failed=0

expect_refusal() {  # NAME COMMAND...: exit 2 within 20 s, stderr says it is a FIFO
  local err rc
  err=$(timeout -k 5 20 "${@:2}" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    echo "FAIL $1: hung, killed after 20 s"
    failed=1
  elif [[ $rc -ne 2 || $err != *"not a regular file (a FIFO)"* ]]; then
    echo "FAIL $1: exit $rc, stderr: $err"
    failed=1
  else
    echo "ok $1: $err"
  fi
}

expect_refusal "sgdmf --data" "$sgdmf" --nodes 2 --data "$work/fifo" --quiet
expect_refusal "mlr --data" "$mlr" --data "$work/fifo"
expect_refusal "sgdmf --dual-in" "$sgdmf" --dual-in "$work/fifo" "${small[@]}"

"$strads" record -o "$work/trace" -- "$sgdmf" --nodes 2 --threads 1 "${small[@]}" > /dev/null ||
  { echo "FAIL: could not record"; exit 1; }
cp -r "$work/trace" "$work/fifo-manifest"
rm "$work/fifo-manifest/manifest"
mkfifo "$work/fifo-manifest/manifest"
expect_refusal "trace info, manifest a FIFO" "$strads" trace info "$work/fifo-manifest"
cp -r "$work/trace" "$work/fifo-log"
rm "$work/fifo-log/node-1.log"
mkfifo "$work/fifo-log/node-1.log"
expect_refusal "trace info, node log a FIFO" "$strads" trace info "$work/fifo-log"
expect_refusal "trace dump, node log a FIFO" "$strads" trace dump "$work/fifo-log"
expect_refusal "replay --single-process, node log a FIFO" \
  "$strads" replay --single-process "$work/fifo-log" -- "$sgdmf" --nodes 2 --threads 1 "${small[@]}"
exit $failed
