#!/usr/bin/env bash
# A replay of a changed input under `strads gdb` stops at the divergence, before the report's
# exception unwinds: the report is printed, the selected frame and `bt` show the program's line
# that read the input (sgdmf.cc), and the process is still there to look at.
#   gdb_divergence.sh STRADS MPIEXEC SGDMF WORKDIR
set -u
strads=$1 mpiexec=$2 sgdmf=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $1"; echo "--- $2"; cat "$2"; exit 1; }
awk 'BEGIN { for (k = 0; k < 20000; ++k) print (k * 7919) % 500, (k * 104729) % 300, 1 + k % 5 }' \
  > "$work/ratings.txt"
args=(--data "$work/ratings.txt" --async-engine locks --epochs 2)
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}" --threads 2 \
  > "$work/record.out" 2>&1 || fail "recording failed" "$work/record.out"
sed -i '5000s/.*/1 2 3/' "$work/ratings.txt"
# --end: the only stop is the divergence (on whichever node reads the changed part first).
printf 'bt\ninfo inferiors\n' |
  timeout 300 "$strads" gdb --end "$work/trace" -- "$sgdmf" "${args[@]}" > "$work/gdb.out" 2>&1
out=$work/gdb.out
grep -qxF 'strads: the replay diverged:' "$out" || fail "no stop at the divergence" "$out"
grep -qxF '  the input file changed since the recording' "$out" || fail "no report" "$out"
# The frame the plugin selected: the program's call of ReadFromFile.
grep -qE '^\(strads\) #[0-9]+ .* in operator\(\) .*' "$out" || fail "no user frame selected" "$out"
grep -qE '^ +at .*/examples/sgdmf\.cc:[0-9]+$' "$out" || fail "bt does not reach sgdmf.cc" "$out"
grep -qE '^#0 +strads_debugger_divergence' "$out" || fail "bt does not start at the hook" "$out"
grep -qE '^\* 1 +process [0-9]+' "$out" || fail "the process did not stay for inspection" "$out"
grep -q 'Traceback' "$out" && fail "a Python traceback" "$out"
echo "ok: stopped at the divergence in sgdmf.cc with the report"
