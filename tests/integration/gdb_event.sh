# Sourced by the scripts that stop a replay under gdb at an event (gdb_replay.sh,
# tag_output.sh); they set strads, work (with work/trace and work/dump.txt, the node's
# `strads trace dump`), prog, args and fail().
#   gdb_at_event NODE N OUT < COMMANDS: `strads gdb --node NODE --event N` with COMMANDS, its
#   output in OUT; fails unless it stopped with NODE about to take exactly event N of the dump.
gdb_at_event() {
  local node=$1 n=$2 out=$3 description
  description=$(sed -n "s/^node $node #$n thread [0-9]* //p" "$work/dump.txt")
  [ -n "$description" ] || fail "no event $n of node $node in the dump" "$work/dump.txt"
  timeout 300 "$strads" gdb --node "$node" --event "$n" "$work/trace" -- "$prog" "${args[@]}" \
    > "$out" 2>&1
  grep -qxF "strads: node $node is about to take event $n: $description" "$out" ||
    fail "expected the stop before event $n: $description" "$out"
}
