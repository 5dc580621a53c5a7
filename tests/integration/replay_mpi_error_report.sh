#!/usr/bin/env bash
# Under mpiexec, a rank's failure that is not a divergence (here a trace error of rank 1: its log
# is a FIFO) reaches the user through `strads replay`, which prints every rank's report from
# STRADS_REPLAY_REPORTS: MPI_Abort may lose the stderr of the other ranks. A line that starts
# "strads replay: sgdmf: node 1:" comes only from that route.
#   replay_mpi_error_report.sh STRADS SGDMF MPIEXEC WORK
set -uo pipefail
strads=$1 sgdmf=$2 mpiexec=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
small=(--ratings 2000 --users 100 --items 50 --epochs 1 --quiet --threads 1)
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${small[@]}" > /dev/null ||
  { echo "FAIL: could not record"; exit 1; }
rm "$work/trace/node-1.log"
mkfifo "$work/trace/node-1.log"
err=$(timeout -k 5 60 "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${small[@]}" 2>&1 >/dev/null)
rc=$?
echo "$err"
[[ $rc -eq 2 ]] || { echo "FAIL: expected exit 2, got $rc"; exit 1; }
grep -q "^strads replay: sgdmf: node 1: replay: .*node-1.log: offset 0: not a regular file" <<< "$err" ||
  { echo "FAIL: rank 1's report did not come through strads replay"; exit 1; }
echo "ok: rank 1's report printed by strads replay"
