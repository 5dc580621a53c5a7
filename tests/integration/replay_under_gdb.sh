#!/usr/bin/env bash
# A single-process replay under gdb: a breakpoint in the loop body stops with only one thread
# in user code (the others wait for the baton), and after stops and continues the program
# still prints the recorded checksum.
#   replay_under_gdb.sh STRADS MPIEXEC SGDMF WORKDIR
set -u
strads=$1 mpiexec=$2 sgdmf=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
args=(--ratings 20000 --users 1000 --items 300 --epochs 2 --async-engine locks)
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}" --threads 2 \
  > "$work/record.out" 2>&1 || { echo "recording failed"; cat "$work/record.out"; exit 1; }
cat > "$work/commands.gdb" << 'GDB'
set pagination off
set breakpoint pending on
break examples::SgdStep
run
info threads
ignore 1 300
continue
info threads
delete
continue
GDB
# LeakSanitizer cannot work under gdb (it ptraces the threads at exit): off in an ASan build, as
# `strads gdb` does; other builds ignore the variables.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
  LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}detect_leaks=0" \
  STRADS_REPLAY=$work/trace timeout 300 gdb -batch -x "$work/commands.gdb" \
  --args "$sgdmf" "${args[@]}" --nodes 2 --threads 2 --serialize > "$work/gdb.out" 2>&1
recorded=$(grep '^checksum:' "$work/record.out")
grep -q "exited normally" "$work/gdb.out" || { echo "the program did not finish"; cat "$work/gdb.out"; exit 1; }
stops=$(grep -c "hit Breakpoint 1" "$work/gdb.out")
[ "$stops" -eq 2 ] || { echo "expected 2 breakpoint stops, got $stops"; cat "$work/gdb.out"; exit 1; }
# At each stop exactly one thread is in the body (info threads' frame column).
in_body=$(grep -E '^[* ] +[0-9]+ +Thread .* in examples::SgdStep|^[* ] +[0-9]+ +Thread .*examples::SgdStep' "$work/gdb.out" | wc -l)
[ "$in_body" -eq 2 ] || { echo "expected one thread in the body at each of 2 stops, got $in_body"; cat "$work/gdb.out"; exit 1; }
grep -qx "$recorded" "$work/gdb.out" || { echo "checksum under gdb differs from the recording ($recorded)"; cat "$work/gdb.out"; exit 1; }
echo "ok: 2 stops with one thread in the body, $recorded as recorded"
