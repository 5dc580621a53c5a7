#!/usr/bin/env bash
# `strads gdb --node 1 --event N TRACE -- PROG ARGS` stops with node 1 about to take exactly
# event N of its node-1.log (as `strads trace dump` prints it), `strads when` and `strads status`
# say so, and continuing ends with the recorded checksum; --event of a wait stops at the next event.
#   gdb_replay.sh STRADS MPIEXEC WORKDIR THREADS PROG ARGS...
set -u
strads=$1 mpiexec=$2 work=$3 threads=$4 prog=$5
shift 5
args=("$@")
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $1"; echo "--- $2"; cat "$2"; exit 1; }
source "$(dirname "$0")/gdb_event.sh"
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$prog" "${args[@]}" --threads "$threads" \
  > "$work/record.out" 2>&1 || fail "recording failed" "$work/record.out"
recorded=$(grep '^checksum:' "$work/record.out")
"$strads" trace dump "$work/trace" --node 1 > "$work/dump.txt" || fail "dump" "$work/dump.txt"
# The middle one of node 1's lock grants ("node 1 #N thread T DESCRIPTION"), taken by a worker
# thread while the others take theirs; without lock grants the middle event of the log that is
# not a wait (how many waits a run logs depends on the machine's load; --event of a wait is
# tested below).
grep '^node 1 #[0-9]* thread [0-9]* lock_grant' "$work/dump.txt" > "$work/chosen.txt" ||
  grep '^node 1 #' "$work/dump.txt" | grep -v '^node 1 #[0-9]* thread [0-9]* wait ' \
    > "$work/chosen.txt"
count=$(wc -l < "$work/chosen.txt")
n=$(sed -n "$((count / 2 + 1))s/^node 1 #\([0-9]*\) .*/\1/p" "$work/chosen.txt")
description=$(sed -n "s/^node 1 #$n thread [0-9]* //p" "$work/dump.txt")
[ -n "$description" ] || fail "no event $n in the dump" "$work/dump.txt"
# Who takes it: a worker thread its lock grants, the driver every other kind.
taker=driver
[[ $description == lock_grant* ]] && taker="thread $(sed -n "s/^node 1 #$n thread \([0-9]*\) .*/\1/p" "$work/dump.txt")"
printf 'strads when\nstrads status\ncontinue\n' | gdb_at_event 1 "$n" "$work/gdb.out"
out=$work/gdb.out
grep -qE "^node 1: next events (.*, )?$n \($taker\)(,|$)" "$out" || fail "strads when" "$out"
grep -qxF "  next event $n ($taker): $description" "$out" || fail "strads status" "$out"
grep -q '^(strads) ' "$out" || fail "no (strads) prompt" "$out"
grep -qxF "$recorded" "$out" || fail "the replay under gdb did not end with $recorded" "$out"
grep -q 'Traceback' "$out" && fail "a Python traceback" "$out"

# --operator FILE:LINE:INVOCATION: the last operator invocation node 1 begins in its log.
begin=$(grep '^node 1 #[0-9]* thread [0-9]* operator_begin' "$work/dump.txt" | tail -1)
site=$(sed -n 's/.* at \([^ ]*\) (invocation \([0-9]*\))$/\1:\2/p' <<< "$begin")
kind=$(sed -n 's/.* operator_begin \([^ ]*\) at .*/\1/p' <<< "$begin")
[ -n "$site" ] || fail "no operator_begin of node 1" "$work/dump.txt"
printf 'strads status\ncontinue\n' |
  timeout 300 "$strads" gdb --node 1 --operator "$site" "$work/trace" -- "$prog" "${args[@]}" \
  > "$work/operator.out" 2>&1
out=$work/operator.out
invocation=${site##*:} file_line=${site%:*}
grep -qE "^strads: node 1 starts $kind at $file_line \(site [0-9]+, invocation $invocation\)$" "$out" ||
  fail "expected a stop where $kind at $site starts" "$out"
grep -qxF "  in $kind at $file_line (invocation $invocation)" "$out" ||
  fail "strads status does not name the operator" "$out"
grep -qxF "$recorded" "$out" || fail "the replay under gdb did not end with $recorded" "$out"

# --event W where W is a wait (times only: replay takes none): the stop comes before the next
# event of the log that is not a wait, instead of never.
waited="(no wait logged on node 1)"
wait_event=$(sed -n 's/^node 1 #\([0-9]*\) thread [0-9]* wait .*/\1/p' "$work/dump.txt" | head -1)
if [ -n "$wait_event" ]; then
  next=$(awk -v w="$wait_event" '/^node 1 #/ { n = substr($3, 2) + 0;
           if (n > w && $6 != "wait") { print n; exit } }' "$work/dump.txt")
  [ -n "$next" ] || fail "no event after the wait $wait_event" "$work/dump.txt"
  next_description=$(sed -n "s/^node 1 #$next thread [0-9]* //p" "$work/dump.txt")
  printf 'continue\n' |
    timeout 300 "$strads" gdb --node 1 --event "$wait_event" "$work/trace" -- "$prog" "${args[@]}" \
    > "$work/wait.out" 2>&1
  grep -qxF "strads: node 1 is about to take event $next: $next_description" "$work/wait.out" ||
    fail "expected --event $wait_event (a wait) to stop before event $next" "$work/wait.out"
  grep -qxF "$recorded" "$work/wait.out" || fail "no $recorded after the wait stop" "$work/wait.out"
  waited="--event $wait_event (a wait) stopped before event $next"
fi
echo "ok: stopped before node 1's event $n ($description) and where $kind at $site starts; $waited; $recorded as recorded"
