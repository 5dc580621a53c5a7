#!/usr/bin/env bash
# SIGTERM sent to `strads record` alone reaches the recorded program, which writes its buffered
# events and dies of it; strads record then reports the trace and the status (143). (That the
# program writes its buffer on SIGTERM is record_flushes_on_sigterm's test.)
#   record_forwards_sigterm.sh STRADS SGDMF DIR
set -u
strads=$1 sgdmf=$2 dir=$3
rm -rf "$dir"
err=$(mktemp)
# Whatever happens, no recorded program outlives the test.
trap 'rm -f "$err"; pkill -9 -f -- "$sgdmf --epochs 100000" 2> /dev/null' EXIT
"$strads" record -o "$dir" -- "$sgdmf" --epochs 100000 --async-engine locks --threads 2 \
  --quiet > /dev/null 2> "$err" &
pid=$!
for _ in $(seq 300); do  # wait (at most 30 s) until the program has written events
  [ -s "$dir/node-0.log" ] && break
  sleep 0.1
done
kill -TERM "$pid"
for _ in $(seq 300); do  # strads record must end once the program has (at most 30 s)
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2> /dev/null; then
  echo "strads record still runs 30 s after SIGTERM"
  kill -9 "$pid"
  exit 1
fi
wait "$pid"
rc=$?
cat "$err"
[ "$rc" -eq 143 ] || { echo "expected status 143, got $rc"; exit 1; }
grep -q "trace in $dir (the program exited with status 143)" "$err" ||
  { echo "strads record did not report the trace and the status"; exit 1; }
info=$("$strads" trace info "$dir") || { echo "trace info failed"; exit 1; }
echo "$info" | grep -qi "incomplete" || { echo "a terminated trace must be incomplete"; exit 1; }
echo "$info" | grep -Eq "operator_begin [1-9]" || { echo "no events were written"; exit 1; }
echo "ok: SIGTERM forwarded, trace written, status reported"
