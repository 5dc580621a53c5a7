#!/usr/bin/env bash
# A recording killed with SIGKILL leaves a trace that `strads trace info` reads, as incomplete.
#   record_sigkill.sh STRADS SGDMF DIR
set -u
strads=$1 sgdmf=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir"
# Long enough to be killed mid-run; the lock engine logs an event per lock grant.
STRADS_RECORD=$dir "$sgdmf" --ratings 200000 --users 5000 --items 1000 --epochs 100000 \
  --async-engine locks --threads 2 --quiet > /dev/null &
pid=$!
for _ in $(seq 1200); do  # wait (at most 120 s: sanitizer builds under load) for some chunks
  size=$(stat -c %s "$dir/node-0.log" 2>/dev/null || echo 0)
  [ "$size" -gt 20000 ] && break
  sleep 0.1
done
[ "$size" -gt 20000 ] || { echo "fewer than 20000 bytes on disk after 120 s"; kill -9 "$pid"; exit 1; }
kill -9 "$pid"
wait "$pid" 2>/dev/null
info=$("$strads" trace info "$dir") || { echo "trace info failed on a killed trace"; exit 1; }
echo "$info"
echo "$info" | grep -qi "incomplete" || { echo "a killed trace must be reported incomplete"; exit 1; }
echo "$info" | grep -Eq "lock_grant [1-9]" || { echo "no events survived the kill"; exit 1; }
"$strads" trace dump "$dir" > /dev/null || { echo "trace dump failed on a killed trace"; exit 1; }
echo "ok: killed trace readable and incomplete"
