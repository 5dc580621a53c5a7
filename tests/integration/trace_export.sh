#!/usr/bin/env bash
# strads trace export on a real lock-engine trace of 2 nodes x 2 threads (chaos, so that locks
# are handed over and waited for): the JSON validates as Chrome Trace Events
# (validate_trace_events.py: fields per phase, flows pair up inside slices, slices nest per
# track), and its counts equal the trace's own: an operator slice per operator invocation, a
# message arrow per delivery, a handover arrow per logged lock grant (trace stats --json). Times
# are in the trace (format 6): operator slices have durations, and the nodes' waits appear as
# slices. --node and --from/--to select. The validator fails on a broken file.
#   trace_export.sh STRADS WORKDIR SGDMF VALIDATOR
set -u
strads=$1 work=$2 sgdmf=$3 validator=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fail() { echo "FAIL: $1"; [ -n "${2:-}" ] && head -c 3000 "$2"; exit 1; }
"$strads" record --chaos 5 -o locks -- "$sgdmf" --ratings 40000 --users 2000 --items 600 \
  --epochs 2 --async-engine locks --nodes 2 --threads 2 > record.out 2>&1 || fail record record.out
"$strads" trace stats locks --json > stats.json || fail "trace stats"
"$strads" trace export locks -o locks.json 2> export.err || fail export export.err
python3 "$validator" locks.json --counts > counts.json 2> validate.err || fail "validation" validate.err
python3 - <<'PY' || exit 1
import json, sys
stats, counts = json.load(open("stats.json")), json.load(open("counts.json"))
invocations = sum(s["invocations"] for n in stats["nodes"] for s in n["sites"])
deliveries = sum(n["events_by_kind"].get("delivery", 0) for n in stats["nodes"])
logged = sum(n["events_by_kind"].get("lock_grant", 0) for n in stats["nodes"])
waits = sum(n["events_by_kind"].get("wait", 0) for n in stats["nodes"])
checks = [("operator slices", counts["slices"].get("operator", 0), invocations),
          ("message arrows", counts["arrows"].get("message", 0), deliveries),
          ("lock handover arrows", counts["arrows"].get("handover", 0), logged),
          ("wait slices", counts["slices"].get("wait", 0), waits),
          ("processes", counts["processes"], 2), ("tracks", counts["tracks"], 6)]
for name, got, want in checks:
    if got != want:
        sys.exit(f"FAIL: {name}: the export has {got}, the trace {want}")
if invocations == 0 or deliveries == 0 or logged == 0:
    sys.exit(f"FAIL: a lock-engine trace of 2x2 without operators, deliveries or grants: {checks}")
ops = [e for e in json.load(open("locks.json"))["traceEvents"] if e.get("cat") == "operator"]
if sum(float(e["dur"]) for e in ops) <= 0:
    sys.exit("FAIL: operator slices without time")
print("counts", {n: g for n, g, _ in checks})
PY
# One node, and an event range of it: fewer events, still valid.
"$strads" trace export locks --node 1 -o node1.json 2> /dev/null || fail "export --node 1"
python3 "$validator" node1.json --counts > node1.counts 2> v1.err || fail "validation --node 1" v1.err
grep -q '"processes": 1' node1.counts || fail "--node 1 exported other nodes" node1.counts
"$strads" trace export locks --node 0 --from 10 --to 200 -o range.json 2> /dev/null || fail "export range"
python3 "$validator" range.json > /dev/null 2> v2.err || fail "validation of a range" v2.err
python3 -c '
import json, sys
ev = [e for e in json.load(open("range.json"))["traceEvents"] if "event" in e.get("args", {})]
bad = [e for e in ev if not 10 <= e["args"]["event"] <= 200]
sys.exit(f"FAIL: events outside --from 10 --to 200: {bad[:2]}" if bad or not ev else 0)' || exit 1
"$strads" trace export locks --node 7 > /dev/null 2> node7.err
[ $? -eq 2 ] && grep -q "no node 7" node7.err || fail "--node 7 of a 2-node trace" node7.err
# The validator can fail: an unpaired flow, and two slices of a track that overlap.
python3 - <<'PY'
import json
doc = json.load(open("locks.json"))
ev = doc["traceEvents"]
first_s = next(i for i, e in enumerate(ev) if e["ph"] == "s")
json.dump({"traceEvents": ev[:first_s] + ev[first_s + 1:]}, open("unpaired.json", "w"))
x = next(e for e in ev if e["ph"] == "X" and e["cat"] == "operator")
y = dict(x, ts=float(x["ts"]) + float(x["dur"]) / 2)
json.dump({"traceEvents": ev + [y]}, open("overlap.json", "w"))
PY
python3 "$validator" unpaired.json > /dev/null 2>&1 && fail "the validator accepted an unpaired flow"
python3 "$validator" overlap.json > /dev/null 2>&1 && fail "the validator accepted overlapping slices"
echo "ok: trace export validates; $(cat counts.json)"
