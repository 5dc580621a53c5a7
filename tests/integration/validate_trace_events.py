#!/usr/bin/env python3
"""Checks a Chrome Trace Event JSON file as Perfetto UI and chrome://tracing read it.

  validate_trace_events.py FILE [--counts]

- every event has the fields its phase requires (X: ts, dur >= 0; i: ts, scope s; s/f: ts, id,
  cat, f with bp "e"; M: the args its name needs), pid and tid integers;
- flows pair up: each (cat, id) has exactly one "s" and one "f", and each of them lies inside a
  complete slice of its own track (Perfetto binds a flow end to its enclosing slice);
- complete slices nest per track (pid, tid): two slices of a track are disjoint or one holds
  the other.
Exit 0 and "ok ..." when valid; exit 1 with the first few problems otherwise. --counts prints the
counts (slices per category, arrows per category, instants) as JSON on stdout.
"""
import collections
import json
import sys


def ns(value):  # microseconds with ns digits -> integer ns
    return round(float(value) * 1000)


def main():
    path = sys.argv[1]
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    problems = []

    def bad(i, what):
        if len(problems) < 20:
            problems.append(f"event {i}: {what}: {json.dumps(events[i])[:200]}")
        else:
            problems.append(None)

    required = {"X": ("ts", "dur"), "i": ("ts", "s"), "s": ("ts", "id", "cat"),
                "f": ("ts", "id", "cat", "bp"), "M": ("args",)}
    slices = collections.defaultdict(list)  # (pid, tid) -> [(begin, end)]
    flows = collections.defaultdict(lambda: {"s": [], "f": []})
    counts = {"slices": collections.Counter(), "arrows": collections.Counter(), "instants": 0,
              "tracks": set(), "processes": set()}
    for i, e in enumerate(events):
        if not isinstance(e, dict):
            bad(i, "not an object")
            continue
        ph = e.get("ph")
        if ph not in required:
            bad(i, f"unknown phase {ph!r}")
            continue
        missing = [k for k in ("name", "pid", "tid") + required[ph] if k not in e]
        if missing:
            bad(i, f"phase {ph} without {', '.join(missing)}")
            continue
        if not isinstance(e["pid"], int) or not isinstance(e["tid"], int):
            bad(i, "pid and tid must be integers")
            continue
        track = (e["pid"], e["tid"])
        if ph == "M":
            arg = "sort_index" if e["name"].endswith("sort_index") else "name"
            if e["name"] not in ("process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index") or arg not in e["args"]:
                bad(i, f"metadata {e['name']!r} without args.{arg}")
            if e["name"] == "process_name":
                counts["processes"].add(e["pid"])
            if e["name"] == "thread_name":
                counts["tracks"].add(track)
            continue
        try:
            t = ns(e["ts"])
        except (TypeError, ValueError):
            bad(i, "ts is not a number")
            continue
        if ph == "X":
            d = ns(e["dur"])
            if d < 0:
                bad(i, "negative dur")
                continue
            slices[track].append((t, t + d, i))
            counts["slices"][e.get("cat", "")] += 1
        elif ph == "i":
            if e["s"] not in ("t", "p", "g"):
                bad(i, f"instant scope {e['s']!r}")
            counts["instants"] += 1
        else:
            if ph == "f" and e["bp"] != "e":
                bad(i, "flow end without bp 'e'")
            flows[(e["cat"], e["id"])][ph].append((track, t, i))

    # Nesting per track.
    for track, spans in slices.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for begin, end, i in spans:
            while stack and stack[-1][1] <= begin:
                stack.pop()
            if stack and end > stack[-1][1]:
                bad(i, f"slice [{begin}, {end}] ns overlaps slice [{stack[-1][0]}, "
                       f"{stack[-1][1]}] ns (event {stack[-1][2]}) on track {track} without "
                       "nesting")
            stack.append((begin, end, i))

    def inside_slice(track, t):
        return any(b <= t <= e for b, e, _ in slices.get(track, ()))

    for (cat, fid), ends in flows.items():
        if len(ends["s"]) != 1 or len(ends["f"]) != 1:
            i = (ends["s"] + ends["f"])[0][2]
            bad(i, f"flow {cat}/{fid} has {len(ends['s'])} starts and {len(ends['f'])} ends")
            continue
        for ph in ("s", "f"):
            track, t, i = ends[ph][0]
            if not inside_slice(track, t):
                bad(i, f"flow {ph} at {t} ns is inside no slice of track {track}")
        counts["arrows"][cat] += 1

    if problems:
        shown = [p for p in problems if p]
        print(f"FAIL: {path}: {len(problems)} problems", file=sys.stderr)
        for p in shown:
            print("  " + p, file=sys.stderr)
        return 1
    summary = {"slices": dict(counts["slices"]), "arrows": dict(counts["arrows"]),
               "instants": counts["instants"], "processes": len(counts["processes"]),
               "tracks": len(counts["tracks"]), "events": len(events)}
    if "--counts" in sys.argv:
        print(json.dumps(summary))
    else:
        print(f"ok: {path}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
