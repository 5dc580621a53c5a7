#!/usr/bin/env bash
# The gdb plugin's printers and xmethods, auto-loaded by the programs themselves (no -x): a test
# program's dvector, dmap, dmultimap, held SeamLock, trace event, corrupted dvector and dmatrix (printer and
# xmethods) on node 1 of 2, and sgdmf's W on 2 logical nodes. With auto-load off the same commands print raw members
# (so that this test fails without the plugin).
#   gdb_printers.sh PROGRAM SGDMF WORKDIR
set -u
program=$1 sgdmf=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $1"; echo "--- $2"; cat "$2"; exit 1; }
expect() {  # FILE TEXT: TEXT must be a line of FILE (fixed string)
  grep -qxF -- "$2" "$1" || fail "expected the line '$2'" "$1"
}

cat > "$work/program.gdb" << 'GDB'
set pagination off
set python print-stack full
set print elements 4
break Inspect
run
p squares
p squares[23]
p squares.size()
set print elements 200
p halves
p multiples
p lock
p event
p corrupt
p rt
p grid
p grid[7]
p grid.rows()
p grid.width()
p squares[40]
GDB
gdb_run() {  # OUTPUT [GDB OPTIONS...] -- PROGRAM ARGS
  local out=$1
  shift
  timeout 120 gdb -batch -iex "add-auto-load-safe-path $(dirname "$program")" \
    -iex "add-auto-load-safe-path $(dirname "$sgdmf")" "$@" > "$out" 2>&1
}
gdb_run "$work/program.out" -x "$work/program.gdb" --args "$program" --nodes 2 --threads 1
out=$work/program.out
expect "$out" '$1 = strads::dvector<long> "squares" size 40, node 1 of 2 owns [20, 40) = {400, 441, 484, 529...}'
expect "$out" '$2 = 529'
expect "$out" '$3 = 40'
# The maps' parts as the program prints them after Inspect.
halves=$(sed -n 's/^node 1 halves: //p' "$out") multiples=$(sed -n 's/^node 1 multiples: //p' "$out")
[ -n "$halves" ] && [ -n "$multiples" ] || fail "the program did not print its maps" "$out"
expect "$out" "\$4 = strads::dmap<long, double> \"halves\" size 6, node 1 holds $(wc -w <<< "$halves" | awk '{print $1/3}') = {${halves// \[/, [}}"
expect "$out" "\$5 = strads::dmultimap<long, long> \"multiples\" size 6, node 1 holds $(wc -w <<< "$multiples" | awk '{print $1/3}') = {${multiples// \[/, [}}"
expect "$out" '$6 = strads::SeamLock held, last release by thread 1 at its acquire 7'
expect "$out" '$7 = strads::Event lock_grant lock 5 task 9 (acquire 3 of thread 1, after thread 0 released it at count 2)'
grep -qE '^\$8 = <invalid strads::dvector: .*>$' "$out" || fail "a garbage dvector must print an error string" "$out"
# Errors are strings, not Python tracebacks (print-stack is full), up to p squares[40]'s.
sed -n '1,/^\$13 = /p' "$out" | grep -q 'Traceback' && fail "a Python traceback" "$out"
grep -qF 'index 40 is outside [0, 40) of dvector "squares"' "$out" || fail "p squares[40]" "$out"
expect "$out" '$9 = strads::Runtime node 1 of 2, 1 threads, mode live'
grep -qE '^\$10 = strads::dmatrix<long> "grid" rows 10 width 3, node 1 of 2 owns \[5, 10\) = \{\{50, 51, 52\}, \{60, 61, 62\}' "$out" ||
  fail "p grid: the owned rows of a dmatrix" "$out"
# The dmatrix xmethods: a row as an array of its width, rows(), width(), and a row out of range.
expect "$out" '$11 = {70, 71, 72}'
expect "$out" '$12 = 10'
expect "$out" '$13 = 3'

# The xmethods and printers on a core file (no process to run anything in).
gdb_run "$work/gcore.out" -ex "break Inspect" -ex run -ex "gcore $work/printers.core" \
  --args "$program" --nodes 2 --threads 1
gdb_run "$work/core.out" -ex "p squares[23]" -ex "p squares.size()" -ex "p lock" -ex "p grid[6]" \
  -ex "p grid.width()" -ex "p grid[10]" "$program" \
  "$work/printers.core"
rm -f "$work/printers.core"
expect "$work/core.out" '$1 = 529'
expect "$work/core.out" '$2 = 40'
expect "$work/core.out" '$3 = strads::SeamLock held, last release by thread 1 at its acquire 7'
expect "$work/core.out" '$4 = {60, 61, 62}'
expect "$work/core.out" '$5 = 3'
grep -qF 'row 10 is outside [0, 10) of dmatrix "grid"' "$work/core.out" || fail "p grid[10]" "$work/core.out"

# The plugin disabled: raw members, and no xmethod.
gdb_run "$work/raw.out" -iex "set auto-load python-scripts off" -x "$work/program.gdb" \
  --args "$program" --nodes 2 --threads 1
grep -q 'hook_ = ' "$work/raw.out" || fail "without the plugin, p squares prints its members" "$work/raw.out"
grep -q 'strads::dvector<long> "squares"' "$work/raw.out" && fail "the plugin was loaded" "$work/raw.out"

# sgdmf on 2 logical nodes, stopped at its checksum (every node has made its DDS by then).
cat > "$work/sgdmf.gdb" << 'GDB'
set pagination off
set python print-stack full
set print elements 2
break strads::Checksum(strads::Runtime&, std::initializer_list<strads::DdsBase*>)
run
strads node 0
strads dds
p $strads_dds("W")
strads print W 3
strads print W 700
GDB
gdb_run "$work/sgdmf.out" -x "$work/sgdmf.gdb" --args "$sgdmf" --ratings 20000 --users 1000 \
  --items 300 --epochs 1 --nodes 2 --threads 1
out=$work/sgdmf.out
grep -qE '^strads::dvector<std::array<float, 32>> "W" size 1000, node 0 of 2 owns \[0, 500\)$' "$out" || fail "strads dds" "$out"
grep -qE 'strads::dvector<std::array<float, 32>> "W" size 1000, node 0 of 2 owns \[0, 500\) = \{.*\.\.\.\}$' "$out" || fail "p W" "$out"
grep -qE '^W\[3\] = \{.*\}  \(owned by node 0\)$' "$out" || fail "strads print W 3" "$out"
grep -qE '^W\[700\] = \{.*\}  \(owned by node 1, read on node 1\)$' "$out" || fail "strads print W 700" "$out"
grep -q 'Traceback' "$out" && fail "a Python traceback" "$out"
echo "ok: printers, xmethods and DDS commands auto-loaded; raw members without the plugin"
