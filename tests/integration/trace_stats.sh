#!/usr/bin/env bash
# strads trace stats agrees with strads trace info on a lock-engine trace of 2 nodes x 2 threads
# (events, logged and implied lock grants per node) and counts an SSP trace's deliveries in the
# message matrix as each node's delivery events; its JSON parses.
#   trace_stats.sh STRADS WORKDIR SGDMF MLR
set -u
strads=$1 work=$2 sgdmf=$3 mlr=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
"$strads" record --chaos 3 -o locks -- "$sgdmf" --ratings 40000 --users 2000 --items 600 \
  --epochs 2 --async-engine locks --nodes 2 --threads 2 > /dev/null 2>&1 || { echo "FAIL: record"; exit 1; }
"$strads" record -o ssp -- "$mlr" --samples 20000 --epochs 2 --sync ssp --staleness 2 \
  --nodes 2 --threads 1 > /dev/null 2>&1 || { echo "FAIL: record ssp"; exit 1; }
for t in locks ssp; do
  "$strads" trace info "$t" --json > "$t.info.json" || { echo "FAIL: info $t"; exit 1; }
  "$strads" trace stats "$t" --json > "$t.stats.json" || { echo "FAIL: stats $t"; exit 1; }
done
python3 - <<'PY'
import json, sys
def load(name): return json.load(open(name))
for t in ("locks", "ssp"):
    info, stats = load(t + ".info.json"), load(t + ".stats.json")
    for i, s in zip(info["nodes"], stats["nodes"]):
        k = s["node"]
        if s["events"] != i["events"]:
            sys.exit(f"FAIL: {t} node {k}: {s['events']} events, trace info says {i['events']}")
        if s["events_by_kind"].get("lock_grant", 0) != i["events_per_kind"]["lock_grant"]:
            sys.exit(f"FAIL: {t} node {k}: logged grants differ from trace info")
        if s["lock_acquires"] != i["lock_acquires"]:
            sys.exit(f"FAIL: {t} node {k}: {s['lock_acquires']} lock grants, trace info says {i['lock_acquires']}")
        delivered = sum(row[k] for row in stats["messages"])
        if delivered != s["events_by_kind"].get("delivery", 0):
            sys.exit(f"FAIL: {t} node {k}: message matrix column {delivered} != deliveries")
locks, ssp = load("locks.stats.json"), load("ssp.stats.json")
if sum(n["lock_acquires"] for n in locks["nodes"]) == 0 or not locks["hottest_elements"]:
    sys.exit("FAIL: no lock grants counted in a lock-engine trace")
if ssp["messages"][0][1] == 0 or ssp["messages"][1][0] == 0:
    sys.exit(f"FAIL: SSP messages between the two nodes missing: {ssp['messages']}")
print("ok: trace stats agrees with trace info; message matrix", ssp["messages"])
PY
