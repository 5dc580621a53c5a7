#!/usr/bin/env bash
# Recording with checkpoints cuts the trace into segments (trace/FORMAT.md, "segments"), and
# `strads replay --from-checkpoint` replays from one of them.
#   segmented_trace.sh bounded STRADS MPIEXEC SGDMF WORK
#     sgdmf (lock engine, 2 ranks x 2 threads) recorded with a checkpoint every 5 epochs and
#     --checkpoint-keep 2, for 50 and for 100 epochs: the disk use (printed) does not grow with
#     the epochs, while a recording without checkpoints does; then the 100-epoch trace replays
#     from its last checkpoint to the recorded epoch lines and checksum, on the cluster and in
#     one process, and a replay from the start is refused by name.
#   segmented_trace.sh chaos STRADS MPIEXEC SGDMF WORK SEEDS
#     SEEDS chaos recordings, each replayed from its next-to-last checkpoint on the cluster and
#     in one process: the recorded epoch lines and checksum every time; a live restart from the
#     same checkpoint (no replay) gives another checksum for at least one seed.
#   segmented_trace.sh crash STRADS MPIEXEC SGDMF WORK
#     rank 1 killed (SIGKILL) at the end of operator 11 of a recording: a replay from its last
#     checkpoint, on the cluster and in one process, prints the recorded run's epoch lines (a
#     prefix of them, through the checkpoint at least) and stops with "the recording ends here
#     (the recorded run died)", exit 3, within a timeout.
#   segmented_trace.sh errors STRADS MPIEXEC SGDMF WORK
#     a missing segment, a corrupt one and an unknown checkpoint: exit 2, the file named.
set -u
mode=$1 strads=$2 mpiexec=$3 sgdmf=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
small=(--ratings 20000 --users 1000 --items 300 --async-engine locks --threads 2)
results() { grep -E '^(epoch|checksum)' "$1"; }
fail() { echo "FAIL: $*"; exit 1; }
bytes() { du -sb "$1" | cut -f1; }
# The operators a trace holds (its operator begin events, all nodes): unlike its bytes, which
# the wait events of a loaded machine make vary, a count that only the run's length sets.
operators() {
  "$strads" trace info --json "$1" 2> /dev/null | grep -o '"operator_begin": [0-9]*' |
    awk '{ s += $2 } END { print s + 0 }'
}
# record NAME EPOCHS [FLAGS...]: a 2-rank recording into $work/NAME.strace, output NAME.out.
record() {
  local name=$1 epochs=$2
  shift 2
  "$strads" record -o "$work/$name.strace" -- "$mpiexec" -n 2 "$sgdmf" "${small[@]}" \
    --epochs "$epochs" "$@" > "$work/$name.out" 2> "$work/$name.err" ||
    { cat "$work/$name.err"; fail "recording $name"; }
}
# same_results A B: the epoch lines and the checksum of two outputs are equal.
same_results() {
  diff <(results "$1") <(results "$2") > "$work/diff" || { cat "$work/diff"; fail "$1 and $2 differ"; }
}

case $mode in
bounded)
  for epochs in 50 100; do
    record "b$epochs" "$epochs" --checkpoint "$work/b$epochs.ckpt" --checkpoint-every 10 \
      --checkpoint-keep 2
    record "plain$epochs" "$epochs"
    trace=$(bytes "$work/b$epochs.strace") ckpt=$(bytes "$work/b$epochs.ckpt")
    plain=$(bytes "$work/plain$epochs.strace")
    ops=$(operators "$work/b$epochs.strace") plain_ops=$(operators "$work/plain$epochs.strace")
    eval "ops$epochs=$ops total$epochs=$((trace + ckpt)) plain$epochs=$plain_ops"
    echo "epochs $epochs: trace $trace bytes ($ops operator invocations held) in" \
      "$(ls "$work/b$epochs.strace" | grep -c log) node log files, checkpoints $ckpt bytes;" \
      "without checkpoints the trace is $plain bytes ($plain_ops operator invocations)"
  done
  # Bounded: the disk use at 100 epochs within 25% of 50's, and the trace holds as many
  # operators; the recording without checkpoints holds every operator, twice as many.
  [ $((total100 * 4)) -le $((total50 * 5)) ] || fail "disk use grew: $total50 -> $total100 bytes"
  [ "$ops100" -le "$ops50" ] || fail "the trace holds more operators: $ops50 -> $ops100"
  [ "$plain100" -ge $((plain50 * 2)) ] ||
    fail "control: a trace without checkpoints did not grow ($plain50 -> $plain100 operators)"
  ls "$work/b100.strace" | grep -q '^node-0.log$' && fail "segment 0 was not deleted"
  "$strads" trace info "$work/b100.strace" > "$work/info.txt" 2>&1 || { cat "$work/info.txt"; fail "trace info"; }
  grep -q "replay it from checkpoint" "$work/info.txt" || { cat "$work/info.txt"; fail "trace info: no note"; }
  # A replay from the start cannot be: refused, naming the checkpoint to start from.
  "$strads" replay "$work/b100.strace" -- "$mpiexec" -n 2 "$sgdmf" "${small[@]}" --epochs 100 \
    --checkpoint "$work/b100.ckpt" --checkpoint-every 10 > "$work/start.out" 2>&1
  code=$?
  [ $code = 2 ] && grep -q "replay it from checkpoint [0-9]" "$work/start.out" ||
    { cat "$work/start.out"; fail "a replay from the start of a trace without its start: exit $code"; }
  # From the last checkpoint, on the cluster and in one process.
  timeout 300 "$strads" replay --from-checkpoint "$work/b100.strace" -- "$mpiexec" -n 2 "$sgdmf" \
    "${small[@]}" --epochs 100 --checkpoint "$work/b100.ckpt" --checkpoint-every 10 \
    > "$work/cluster.out" 2> "$work/cluster.err" || { cat "$work/cluster.err"; fail "cluster replay"; }
  same_results "$work/b100.out" "$work/cluster.out"
  timeout 300 "$strads" replay --single-process --from-checkpoint "$work/b100.strace" -- \
    "$sgdmf" "${small[@]}" --epochs 100 > "$work/single.out" 2> "$work/single.err" ||
    { cat "$work/single.err"; fail "single-process replay"; }
  same_results "$work/b100.out" "$work/single.out"
  echo "ok: disk use $total50 bytes at 50 epochs, $total100 at 100 (operators held $ops50," \
    "$ops100; without checkpoints $plain50, $plain100); the last checkpoint replays to the" \
    "recorded checksum"
  ;;
chaos)
  seeds=$6 differ=0
  for seed in $(seq "$seeds"); do
    ck=$work/c$seed.ckpt
    record "c$seed" 6 --checkpoint "$ck" --checkpoint-every 4 --chaos "$seed"
    # Checkpoints after operators 4, 8, 12 (2 operators an epoch); the last 2 are kept.
    timeout 300 "$strads" replay --from-checkpoint 8 "$work/c$seed.strace" -- "$mpiexec" -n 2 \
      "$sgdmf" "${small[@]}" --epochs 6 > "$work/cluster.out" 2> "$work/cluster.err" ||
      { cat "$work/cluster.err"; fail "seed $seed: cluster replay"; }
    same_results "$work/c$seed.out" "$work/cluster.out"
    timeout 300 "$strads" replay --single-process --from-checkpoint 8 "$work/c$seed.strace" -- \
      "$sgdmf" "${small[@]}" --epochs 6 > "$work/single.out" 2> "$work/single.err" ||
      { cat "$work/single.err"; fail "seed $seed: single-process replay"; }
    same_results "$work/c$seed.out" "$work/single.out"
    if [ "$seed" -le 3 ]; then  # the control: a live restart from ckpt-8 under chaos
      "$mpiexec" -n 2 "$sgdmf" "${small[@]}" --epochs 6 --chaos "$((seed + 100))" \
        --restart "$ck/ckpt-8" > "$work/live.out" 2> "$work/live.err" ||
        { cat "$work/live.err"; fail "seed $seed: live restart"; }
      [ "$(results "$work/live.out" | tail -1)" != "$(results "$work/c$seed.out" | tail -1)" ] &&
        differ=$((differ + 1))
    fi
    results "$work/c$seed.out" | tail -1 >> "$work/checksums"
    rm -rf "$work/c$seed.strace" "$ck"
  done
  [ $differ -ge 1 ] || fail "control: 3 live restarts from checkpoint 8 all gave the recorded checksum"
  echo "ok: $seeds chaos recordings replayed from checkpoint 8 on the cluster and in one process;" \
    "$(sort -u "$work/checksums" | wc -l) distinct recorded checksums; $differ of 3 live" \
    "restarts from the same checkpoint differ"
  ;;
crash)
  STRADS_TEST_KILL_RANK=1:11 "$strads" record -o "$work/k.strace" -- "$mpiexec" -n 2 "$sgdmf" \
    "${small[@]}" --epochs 6 --checkpoint "$work/k.ckpt" --checkpoint-every 4 > "$work/k.out" \
    2> "$work/k.err" && fail "the recording with rank 1 killed succeeded"
  for how in cluster single; do
    if [ $how = cluster ]; then
      cmd=(--from-checkpoint "$work/k.strace" -- "$mpiexec" -n 2 "$sgdmf")
    else
      cmd=(--single-process --from-checkpoint "$work/k.strace" -- "$sgdmf")
    fi
    timeout 120 "$strads" replay "${cmd[@]}" "${small[@]}" --epochs 6 > "$work/$how.out" 2>&1
    code=$?
    [ $code = 3 ] && grep -q "the recording ends here (the recorded run died)" "$work/$how.out" ||
      { cat "$work/$how.out"; fail "$how replay of the killed run: exit $code"; }
    lines=$(grep -c '^epoch' "$work/$how.out")
    [ "$lines" -ge 4 ] || { cat "$work/$how.out"; fail "$how: $lines epoch lines, the checkpoint is after 4"; }
    diff <(grep '^epoch' "$work/k.out" | head -n "$lines") <(grep '^epoch' "$work/$how.out") ||
      fail "$how: the replayed epoch lines are not the recorded run's"
  done
  echo "ok: the killed run ($(grep -c '^epoch' "$work/k.out") epoch lines) replayed from its" \
    "last checkpoint to where its trace ends, then exit 3 (cluster and one process)"
  ;;
errors)
  record e 6 --checkpoint "$work/e.ckpt" --checkpoint-every 4
  replay() {  # EXPECTED_CODE PATTERN ARGS...
    local want=$1 pattern=$2
    shift 2
    timeout 300 "$strads" replay "$@" -- "$mpiexec" -n 2 "$sgdmf" "${small[@]}" --epochs 6 \
      > "$work/r.out" 2>&1
    local code=$?
    [ "$code" = "$want" ] && grep -q -- "$pattern" "$work/r.out" ||
      { cat "$work/r.out"; fail "replay $*: exit $code, expected $want and '$pattern'"; }
  }
  replay 2 "checkpoints of .* that the trace has segments from are 8, 12" --from-checkpoint 4 "$work/e.strace"
  cp "$work/e.strace/node-1.from-8.log" "$work/saved.log"
  rm "$work/e.strace/node-1.from-8.log"
  replay 2 "node-1.from-8.log: offset 0: missing" --from-checkpoint 8 "$work/e.strace"
  # A flipped byte in the middle of a segment: its LZ4 content checksum or chunk checksum.
  cp "$work/saved.log" "$work/e.strace/node-1.from-8.log"
  size=$(stat -c %s "$work/e.strace/node-1.from-8.log")
  # The byte is inverted, not overwritten with a constant: the trace differs from run to run, and
  # a constant that happened to be there already corrupted nothing (the replay then exited 0).
  python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(int(sys.argv[2])); b = f.read(1); f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xff]))' \
    "$work/e.strace/node-1.from-8.log" $((size / 2))
  replay 2 "node-1.from-8.log: offset" --from-checkpoint 8 "$work/e.strace"
  echo "ok: unknown checkpoint, missing segment and corrupt segment refused with exit 2, by name"
  ;;
*) fail "unknown mode $mode" ;;
esac
