#!/usr/bin/env bash
# strads trace stats agrees with strads trace info on a lock-engine trace of 2 nodes x 2 threads
# (events, logged and implied lock grants per node) and counts an SSP trace's deliveries in the
# message matrix as each node's delivery events; operator times lie in each node's span and its
# waits add up to its wait events; its JSON parses.
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
        # Times (format 6): operator invocations take time, inside the node's span; waits
        # inside operators are among the node's, kind by kind.
        in_sites = sum(site["time_ns"] for site in s["sites"])
        if not 0 < in_sites <= s["time_ns"]:
            sys.exit(f"FAIL: {t} node {k}: operator time {in_sites} ns, node span {s['time_ns']} ns")
        for kind, w in s["waits"].items():
            inside = sum(site["waits"].get(kind, {}).get("count", 0) for site in s["sites"])
            if inside > w["count"] or w["ns"] < 20000 * w["count"]:
                sys.exit(f"FAIL: {t} node {k}: {kind} waits {w}, {inside} inside operators")
        if sum(w["count"] for w in s["waits"].values()) != s["events_by_kind"].get("wait", 0):
            sys.exit(f"FAIL: {t} node {k}: waits {s['waits']} are not its wait events")
locks, ssp = load("locks.stats.json"), load("ssp.stats.json")
if sum(n["lock_acquires"] for n in locks["nodes"]) == 0 or not locks["hottest_elements"]:
    sys.exit("FAIL: no lock grants counted in a lock-engine trace")
if ssp["messages"][0][1] == 0 or ssp["messages"][1][0] == 0:
    sys.exit(f"FAIL: SSP messages between the two nodes missing: {ssp['messages']}")
print("ok: trace stats agrees with trace info; message matrix", ssp["messages"])
PY
