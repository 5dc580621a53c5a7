#!/usr/bin/env bash
# A recorded program that dies of a signal mid-loop leaves its buffered events on disk.
#   record_crash_signal.sh STRADS CRASHING_PROGRAM DIR SEGV|TERM
set -u
strads=$1 prog=$2 dir=$3 sig=$4
number=$(kill -l "$sig" 2> /dev/null) || { echo "unknown signal $sig"; exit 2; }
expected=$((128 + number))  # a shell's status for death by that signal
rm -rf "$dir"
mkdir -p "$dir"
CRASH_SIGNAL=$sig STRADS_RECORD=$dir "$prog" --threads 2 --async-engine locks > /dev/null 2>&1
rc=$?
[ "$rc" -eq "$expected" ] || { echo "expected death by SIG$sig ($expected), got $rc"; exit 1; }
info=$("$strads" trace info "$dir") || { echo "trace info failed"; exit 1; }
echo "$info"
echo "$info" | grep -qi "incomplete" || { echo "a crashed trace must be incomplete"; exit 1; }
# Thread 1's bodies 501..600 each took a lock from thread 0 before the crash (see
# crash_while_recording.cc): exactly 100 logged grants must have been flushed.
grants=$(echo "$info" | sed -n 's/.*lock_grant \([0-9]*\).*/\1/p' | head -1)
[ "${grants:-0}" -eq 100 ] || { echo "expected 100 lock grants on disk, got ${grants:-0}"; exit 1; }
echo "ok: $grants lock grants flushed by the SIG$sig handler"
