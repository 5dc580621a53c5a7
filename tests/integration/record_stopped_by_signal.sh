#!/usr/bin/env bash
# A recording stopped by a signal: the recorded program writes its buffered events and dies of
# the signal, and strads record reports the trace and the status.
#   TERM: SIGTERM to strads record alone, which must pass it on (status 143).
#   INT:  SIGINT to the whole process group, as Ctrl-C does: strads record must not die of it
#         before the program (status 130).
# (That the program writes its buffer on such signals is record_flushes_on_sigterm's test.)
#   record_stopped_by_signal.sh STRADS SGDMF DIR TERM|INT
set -u
strads=$1 sgdmf=$2 dir=$3 sig=$4
number=$(kill -l "$sig" 2> /dev/null) || { echo "unknown signal $sig"; exit 2; }
expected=$((128 + number))  # a shell's status for death by that signal
# Job control: the background job gets a process group of its own, and SIGINT is not ignored
# in it (a non-interactive shell ignores SIGINT in background jobs otherwise).
set -m
rm -rf "$dir"
err=$(mktemp)
pid=
# Whatever happens, no recorded program outlives the test: with job control, strads record and
# the program are the process group $pid (only this test's: the two signal tests run in
# parallel, and a kill by command line would hit the other one's program too).
trap 'rm -f "$err"; [ -n "$pid" ] && kill -9 -- "-$pid" 2> /dev/null' EXIT
"$strads" record -o "$dir" -- "$sgdmf" --epochs 100000 --async-engine locks --threads 2 \
  --quiet > /dev/null 2> "$err" &
pid=$!
# Wait until the program has written events (node-0.log stays empty until then), at most 120 s:
# 30 s was too short for a TSan build beside another build.
for _ in $(seq 1200); do
  [ -s "$dir/node-0.log" ] && break
  sleep 0.1
done
[ -s "$dir/node-0.log" ] || { echo "the program wrote no events in 120 s"; cat "$err"; exit 1; }
if [ "$sig" = TERM ]; then kill -TERM "$pid"; else kill -INT -- "-$pid"; fi
for _ in $(seq 300); do  # strads record must end once the program has (at most 30 s)
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.1
done
if kill -0 "$pid" 2> /dev/null; then
  echo "strads record still runs 30 s after SIG$sig"
  kill -9 "$pid"
  exit 1
fi
wait "$pid"
rc=$?
cat "$err"
[ "$rc" -eq "$expected" ] || { echo "expected status $expected, got $rc"; exit 1; }
grep -q "trace in $dir (the program exited with status $expected)" "$err" ||
  { echo "strads record did not report the trace and the status"; exit 1; }
info=$("$strads" trace info "$dir") || { echo "trace info failed"; exit 1; }
echo "$info" | grep -qi "incomplete" || { echo "a stopped trace must be incomplete"; exit 1; }
echo "$info" | grep -Eq "operator_begin [1-9]" || { echo "no events were written"; exit 1; }
echo "ok: stopped by SIG$sig, trace written, status reported"
