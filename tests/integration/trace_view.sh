#!/usr/bin/env bash
# strads trace view on a real lock-engine trace of 2 nodes x 2 threads (chaos, so that locks are
# handed over and waited for): headless Chromium opens the page from file:// and its test hook
# (<pre id=drawn>, window.stradsDrawn) reports what the first frame drew, which must equal the
# trace's own counts (trace stats --json, trace info --json); the screenshot is not blank; the
# page refers to nothing outside itself. A page whose data is broken draws nothing, and the
# check says so (the check can fail). Then a synthetic trace past kViewEagerRows, whose page
# draws its first frame from tiles and keeps its rows and Describe texts in compressed blocks:
# its drawn counts must equal the trace's too, and a search decodes the event's blocks and shows
# the same Describe text as `strads trace dump`.
#   trace_view.sh STRADS WORKDIR SGDMF SYNTHETIC_TRACE
set -u
strads=$1 work=$2 sgdmf=$3 synthetic=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
fail() { echo "FAIL: $1"; [ -n "${2:-}" ] && head -c 3000 "$2"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser) ||
  fail "no chromium (scripts/setup.sh installs the Debian package)"
# Chromium in a test: its own profile, no sandbox (root in CI), no GPU.
chrome() {
  timeout 60 "$browser" --headless --disable-gpu --no-sandbox --no-first-run \
    --disable-dev-shm-usage --user-data-dir="$work/profile" --window-size=1400,900 \
    --virtual-time-budget=10000 "$@" 2> chrome.err
}

"$strads" record --chaos 5 -o locks -- "$sgdmf" --ratings 40000 --users 2000 --items 600 \
  --epochs 2 --async-engine locks --nodes 2 --threads 2 > record.out 2>&1 || fail record record.out
"$strads" trace stats locks --json > stats.json || fail "trace stats"
"$strads" trace info locks --json > info.json || fail "trace info"
"$strads" trace view locks -o view.html 2> view.err || fail "trace view" view.err
grep -Eq '(src|href)="?(https?:)?//' view.html && fail "the page loads something from outside"

chrome --dump-dom "file://$work/view.html" > dom.html || fail "chromium --dump-dom" chrome.err
chrome --screenshot="$work/trace_view.png" "file://$work/view.html" > /dev/null ||
  fail "chromium --screenshot" chrome.err
# The hook and the trace's counts: check_drawn DOM STATS INFO
check_drawn() {
python3 - "$@" <<'PY'
import html, json, re, sys
m = re.search(r'<pre id="drawn">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
if not m or not m.group(1).strip():
    sys.exit("FAIL: the page drew nothing (no test hook in the DOM)")
drawn = json.loads(html.unescape(m.group(1)))
stats, info = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
kinds = lambda k: sum(n["events_by_kind"].get(k, 0) for n in stats["nodes"])
invocations = sum(s["invocations"] for n in stats["nodes"] for s in n["sites"])
checks = [("nodes", drawn["nodes"], len(stats["nodes"])),
          ("threads", drawn["threads"], info["threads_per_node"]),
          ("operator slices", drawn["slices"], invocations),
          ("waits", drawn["waits"], kinds("wait")),
          ("message arrows", drawn["message_arrows"], kinds("delivery")),
          ("lock handover arrows", drawn["handover_arrows"], kinds("lock_grant")),
          ("arrows", drawn["arrows"], kinds("delivery") + kinds("lock_grant"))]
for name, got, want in checks:
    if got != want:
        sys.exit(f"FAIL: {name}: the page drew {got}, the trace has {want}")
if invocations == 0 or kinds("delivery") == 0 or kinds("lock_grant") == 0:
    sys.exit(f"FAIL: a lock-engine trace of 2x2 without operators, deliveries or grants: {checks}")
print("drawn", {n: g for n, g, _ in checks})
PY
}
check_drawn dom.html stats.json info.json || exit 1
# The screenshot: decode the PNG (zlib + the PNG row filters) and count its colours.
python3 - trace_view.png <<'PY' || exit 1
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("FAIL: the screenshot is not a PNG")
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
if depth != 8 or ctype not in (2, 6):
    sys.exit(f"FAIL: unexpected PNG (depth {depth}, colour type {ctype})")
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, colours = bytearray(stride), set()
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, bpp * 2))
    prev = line
if len(colours) < 20:
    sys.exit(f"FAIL: the screenshot is blank: {len(colours)} colours")
print(f"screenshot {w}x{h}: {len(colours)} colours")
PY
# The check can fail: a page whose data does not load draws nothing.
sed 's/const STRADS_VIEW_DATA = /const STRADS_VIEW_BROKEN = /' view.html > broken.html
chrome --dump-dom "file://$work/broken.html" > broken_dom.html || fail "chromium on broken.html"
grep -Eq '<pre id="drawn">[^<]+</pre>' broken_dom.html && fail "a broken page reported drawn counts"
"$strads" trace view no_such_trace -o x.html > /dev/null 2> missing.err
[ $? -eq 0 ] && fail "trace view of a missing trace succeeded" missing.err

# Past kViewEagerRows: tiles, compressed blocks after the renderer, Describe texts decoded on
# demand. The search (through the page's #search= hook) must find event 70000 of node 1 and show
# its Describe text, the one `trace dump` prints.
"$synthetic" large 150000 > /dev/null || fail "synthetic_trace"
"$strads" trace stats large --json > large_stats.json || fail "trace stats large"
"$strads" trace info large --json > large_info.json || fail "trace info large"
"$strads" trace view large -o large.html 2> large_view.err || fail "trace view large" large_view.err
grep -q '<script type="application/octet-stream"' large.html ||
  fail "the page of 150 000 events has no compressed blocks"
chrome --dump-dom "file://$work/large.html#search=node%201%20event%2070000" > large_dom.html ||
  fail "chromium --dump-dom large.html" chrome.err
check_drawn large_dom.html large_stats.json large_info.json || exit 1
want=$("$strads" trace dump large --node 1 | sed -n "s/^node 1 #70000 thread [0-9]* //p")
[ -n "$want" ] || fail "trace dump has no event 70000 of node 1"
got=$(python3 -c '
import html, re, sys
m = re.search(r"<span id=\"search-result\">(.*?)</span>", open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m else "")' large_dom.html)
case "$got" in
  *"event 70000"*"$want"*) echo "search: $got" ;;
  *) fail "the search for node 1 event 70000 showed '$got', not the Describe text '$want'" ;;
esac
echo "ok: trace view draws the trace's counts; $(cat view.err)"
