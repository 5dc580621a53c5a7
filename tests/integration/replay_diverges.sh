#!/usr/bin/env bash
# A replay of a changed run ends with a divergence report and exit status 3, never a hang:
# a changed input file, changed arithmetic, another rank count, other flags.
#   replay_diverges.sh STRADS MPIEXEC SGDMF WORKDIR
set -u
strads=$1 mpiexec=$2 sgdmf=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
# A small ratings file: user item rating.
awk 'BEGIN { for (k = 0; k < 20000; ++k) print (k * 7919) % 500, (k * 104729) % 300, 1 + k % 5 }' \
  > "$work/ratings.txt"
base=(--data "$work/ratings.txt" --async-engine locks)
args=("${base[@]}" --epochs 2 --threads 2)
"$strads" record -o "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}" > /dev/null 2>&1 \
  || { echo "recording failed"; exit 1; }

expect_divergence() {  # NAME REGEX COMMAND...
  local name=$1 regex=$2
  shift 2
  timeout 120 "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  if [ "$rc" -ne 3 ]; then
    echo "$name: expected exit status 3 (divergence), got $rc"; cat "$work/$name.err"; exit 1
  fi
  if ! grep -Eq "$regex" "$work/$name.err"; then
    echo "$name: the report does not match '$regex':"; cat "$work/$name.err"; exit 1
  fi
  echo "--- $name: exit 3"; grep -v '^Abort' "$work/$name.err" | head -6
}

# The unchanged run replays (so that the failures below are the changes' doing).
"$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}" > /dev/null 2>&1 \
  || { echo "the unchanged replay failed"; exit 1; }

# The ranks' reports go to a directory in $TMPDIR (where /tmp is not writable, TMPDIR names a
# place that is; a fixed /tmp failed every replay there): one that does not exist fails the
# replay as bad input (exit 2) naming it, and the divergence below reads its reports from one
# with spaces.
status=0
TMPDIR="$work/no such dir" "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}" \
  > /dev/null 2> "$work/tmpdir.err" || status=$?
[ "$status" = 2 ] ||
  { echo "a replay with a missing TMPDIR exited $status, not 2:"; cat "$work/tmpdir.err"; exit 1; }
grep -q "$work/no such dir/strads-replay-" "$work/tmpdir.err" ||
  { echo "the replay did not make its reports in TMPDIR:"; cat "$work/tmpdir.err"; exit 1; }
mkdir -p "$work/tmp dir"

cp "$work/ratings.txt" "$work/ratings.orig"
sed -i '5000s/.*/1 2 3/' "$work/ratings.txt"
expect_divergence changed_input "the input file changed since the recording" \
  env TMPDIR="$work/tmp dir" "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}"
[ -z "$(ls -A "$work/tmp dir")" ] || { echo "the replay left its reports in TMPDIR"; exit 1; }
expect_divergence changed_input_single "replay divergence on node [01]" \
  "$strads" replay --single-process "$work/trace" -- "$sgdmf" "${args[@]}"
cp "$work/ratings.orig" "$work/ratings.txt"
# An edit that keeps the file's length (a rating 5 -> 4): only the content hash can tell.
awk 'NR == 5000 { sub(/5$/, "4") } { print }' "$work/ratings.orig" > "$work/ratings.txt"
cmp -s "$work/ratings.orig" "$work/ratings.txt" && { echo "the edit changed nothing"; exit 1; }
[ "$(stat -c %s "$work/ratings.orig")" = "$(stat -c %s "$work/ratings.txt")" ] ||
  { echo "the edit changed the length"; exit 1; }
expect_divergence same_length_edit "the input file changed since the recording" \
  "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}"
cp "$work/ratings.orig" "$work/ratings.txt"

# The same bytes under another path are the same input: a note, not a divergence.
mkdir -p "$work/moved"
cp "$work/ratings.txt" "$work/moved/renamed.txt"
moved=(--data "$work/moved/renamed.txt" --async-engine locks --epochs 2 --threads 2)
"$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${moved[@]}" > /dev/null \
  2> "$work/moved.err" || { echo "the replay of a renamed input failed"; cat "$work/moved.err"; exit 1; }
grep -q "reads '$work/moved/renamed.txt' where the recording read '$work/ratings.txt': the same bytes" \
  "$work/moved.err" || { echo "no note on the renamed input"; cat "$work/moved.err"; exit 1; }
echo "--- renamed input: exit 0, $(grep -c 'same bytes' "$work/moved.err") note(s)"

# Same orders, other arithmetic: each operator's outcome digest is in the trace (it replayed
# with exit 0 and another checksum behind a "note").
expect_divergence changed_arithmetic "operator wrote other values" \
  "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${args[@]}" --gamma 0.02
expect_divergence changed_arithmetic_single "operator wrote other values" \
  "$strads" replay --single-process "$work/trace" -- "$sgdmf" "${args[@]}" --gamma 0.02

expect_divergence more_ranks "recorded on 2 nodes; this run has 4" \
  "$strads" replay "$work/trace" -- "$mpiexec" -n 4 "$sgdmf" "${args[@]}"
expect_divergence more_epochs "the recording ends here" \
  "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${base[@]}" --threads 2 --epochs 3
# Trailing events: the recording goes on after this run ends (it replayed with exit 0).
expect_divergence fewer_epochs "actual   the program finished" \
  "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${base[@]}" --threads 2 --epochs 1
expect_divergence fewer_threads "recorded with 2 threads per node; this run has 1" \
  "$strads" replay "$work/trace" -- "$mpiexec" -n 2 "$sgdmf" "${base[@]}" --epochs 2 --threads 1
echo "ok: every changed replay diverged with a report"
