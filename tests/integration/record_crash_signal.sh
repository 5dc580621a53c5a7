#!/usr/bin/env bash
# A recorded program that dies of a signal mid-loop leaves a readable trace that holds every
# operator that ended before the crash and says which one was running.
#   record_crash_signal.sh STRADS CRASHING_PROGRAM DIR SEGV|ABRT|TERM
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
count() { echo "$info" | sed -n "s/.*[ (]$1 \([0-9]*\).*/\1/p" | head -1; }
# The first AsyncFor ended: its logged grants (100 of them forced by crash_while_recording.cc)
# were handed to the writer but not yet written, so only the crash path writes them (without it
# the trace holds no event). The second began and did not end; its worker buffers are not
# written (docs/recording.md, "What the crash handler can lose").
begins=$(count operator_begin) ends=$(count operator_end) grants=$(count lock_grant)
[ "${begins:-0}" -eq 2 ] && [ "${ends:-0}" -eq 1 ] ||
  { echo "expected 2 operator begins and 1 end on disk, got ${begins:-0} and ${ends:-0}"; exit 1; }
[ "${grants:-0}" -ge 100 ] ||
  { echo "expected at least the first call's 100 forced lock grants, got ${grants:-0}"; exit 1; }
# The last event is the begin of the operator the run died in: the trace says where it ends.
last=$("$strads" trace dump "$dir" | tail -1)
echo "last event: $last"
echo "$last" | grep -q "operator_begin AsyncFor" || { echo "the trace must end at that begin"; exit 1; }
echo "ok: the SIG$sig path wrote the ended operator ($grants lock grants) and the begin of the crashed one"
