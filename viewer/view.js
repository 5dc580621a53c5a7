// The trace viewer's renderer (view.html): a canvas timeline of nodes x threads with zoom, pan,
// level of detail, arrows, hover details and search, and the tables of `trace stats`. Plain
// JavaScript, no library: the page must open from file:// without a network.
//
// Data: STRADS_VIEW_DATA (trace/include/strads/trace/view_data.h: tiles per zoom level and row
// blocks, inline or in compressed elements after this script, decoded when a zoom first needs
// them), STRADS_VIEW_STATS (`trace stats --json`), STRADS_VIEW_TITLE.
(function () {
  'use strict';
  const D = STRADS_VIEW_DATA, S = STRADS_VIEW_STATS;
  const ROW_H = 22, NODE_GAP = 10, LABEL_W = 96, MIN_LABEL_PX = 40;
  // A track's rows are drawn one by one when at most this many are in view (and their blocks
  // are decoded); beyond, from the tiles.
  const RAW_LIMIT = 200000;

  // Parts of the data (view_data.h): inline base64, or "#ID", a compressed element after this
  // script, decoded when a zoom first reaches it.
  function base64Bytes(b64) {
    const s = atob(b64), a = new Uint8Array(s.length);
    for (let i = 0; i < s.length; ++i) a[i] = s.charCodeAt(i);
    return a;
  }
  const loaded = new Map();  // ref -> ArrayBuffer, or null while it is being decoded
  const decoding = new Map();  // ref -> the promise of its decoding
  let redrawQueued = false;
  function whenParsed() {
    return document.readyState !== 'loading' ? Promise.resolve()
        : new Promise((done) => document.addEventListener('DOMContentLoaded', done, {once: true}));
  }
  // The bytes of `ref`, or null when they are still being decoded (then the frame is drawn again
  // when they are).
  function bytesOf(ref) {
    if (loaded.has(ref)) return loaded.get(ref);
    if (ref[0] !== '#') {
      loaded.set(ref, base64Bytes(ref).buffer);
      return loaded.get(ref);
    }
    loaded.set(ref, null);
    decoding.set(ref, whenParsed().then(() => {
      const bytes = base64Bytes(document.getElementById(ref.slice(1)).textContent);
      return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate')))
          .arrayBuffer();
    }).then((buffer) => {
      loaded.set(ref, buffer);
      if (!redrawQueued) {
        redrawQueued = true;
        requestAnimationFrame(() => { redrawQueued = false; draw(); refreshTooltip(); });
      }
    }));
    return null;
  }
  // A promise of `ref`'s bytes being there.
  function ready(ref) { return bytesOf(ref) ? Promise.resolve() : decoding.get(ref); }
  const decoded = new Map();  // ref -> decoded block or tiles
  function decode(ref, how) {
    if (decoded.has(ref)) return decoded.get(ref);
    const buffer = bytesOf(ref);
    if (!buffer) return null;
    const value = how(buffer);
    decoded.set(ref, value);
    return value;
  }

  // Both kinds of block begin alike: u32 n, u32 wide, f64 base, then two time columns (f64 if
  // wide, else u32). Returns them and where the rest begins.
  function blockHead(buffer) {
    const head = new Uint32Array(buffer, 0, 2), n = head[0], wide = head[1];
    const T = wide ? Float64Array : Uint32Array, tb = wide ? 8 : 4;
    return {n, base: new Float64Array(buffer, 8, 1)[0], first: new T(buffer, 16, n),
            second: new T(buffer, 16 + n * tb, n), at: 16 + 2 * n * tb};
  }
  // A row block: the head (begin deltas, durations), index deltas, index spans, labels, kinds.
  function decodeRows(buffer) {
    const {n, base, first: dbegin, second: dur, at} = blockHead(buffer);
    const di = new Uint32Array(buffer, at, n), ds = new Uint32Array(buffer, at + 4 * n, n);
    const label = new Uint32Array(buffer, at + 8 * n, n), kind = new Uint8Array(buffer, at + 12 * n, n);
    const begin = new Float64Array(n), end = new Float64Array(n);
    const index = new Uint32Array(n), index_end = new Uint32Array(n);
    let t = base, x = 0;
    for (let i = 0; i < n; ++i) {
      t += dbegin[i];
      begin[i] = t, end[i] = t + dur[i];
      x = (x + di[i]) >>> 0;
      index[i] = x, index_end[i] = (x + ds[i]) >>> 0;
    }
    return {n, begin, end, index, index_end, label, kind};
  }
  // An arrow block: the head (from and to, from base), from tracks, to tracks, kinds.
  function decodeArrows(buffer) {
    const {n, base, first, second, at} = blockHead(buffer);
    const from = new Uint32Array(buffer, at, n), to = new Uint32Array(buffer, at + 4 * n, n);
    const kind = new Uint8Array(buffer, at + 8 * n, n);
    const from_ns = new Float64Array(n), to_ns = new Float64Array(n);
    for (let i = 0; i < n; ++i) from_ns[i] = base + first[i], to_ns[i] = base + second[i];
    return {n, from, to, from_ns, to_ns, kind};
  }
  // Row tiles: per track its non-empty buckets (bucket, count, busy), and counts summed so far
  // for estimates.
  function decodeRowTiles(buffer) {
    const n = new Uint32Array(buffer, 0, 1)[0];
    const start = new Uint32Array(buffer, 4, tracks + 1);
    let at = 4 + 4 * (tracks + 1);
    const bucket = new Uint32Array(buffer, at, n), count = new Uint32Array(buffer, at += 4 * n, n);
    const busy = new Float32Array(buffer, at += 4 * n, n);
    const before = new Float64Array(n + 1);
    for (let i = 0; i < n; ++i) before[i + 1] = before[i] + count[i];
    return {n, start, bucket, count, busy, before};
  }
  function decodeArrowTiles(buffer) {
    const n = new Uint32Array(buffer, 0, 1)[0];
    return {n, e: new Uint32Array(buffer, 4, 6 * n)};
  }

  const perNode = D.threads + 1, tracks = D.nodes * perNode;
  // A group of rows: its blocks per track ({lo, hi, n, imin, imax, ref}) and its tile levels.
  function group(g, name) {
    const byTrack = Array.from({length: tracks}, () => []);
    for (const [track, lo, hi, n, imin, imax, ref] of g.blocks) byTrack[track].push({lo, hi, n, imin, imax, ref});
    return {name, rows: g.rows, byTrack, levels: g.tiles};
  }
  const slices = group(D.slices, 'slices'), waits = group(D.waits, 'waits');
  const instants = group(D.instants, 'instants');
  const arrowBlocks = D.arrows.blocks.map(([lo, hi, n, ref]) => ({lo, hi, n, ref}));
  const strings = D.strings;
  // Everything inline (a small trace): decoded now.
  for (const g of [slices, waits, instants])
    for (const list of g.byTrack) for (const b of list) if (b.ref[0] !== '#') decode(b.ref, decodeRows);
  for (const b of arrowBlocks) if (b.ref[0] !== '#') decode(b.ref, decodeArrows);

  // Rows on screen: per node its driver first, then thread 0 ... T-1.
  function nodeOf(track) { return Math.floor(track / perNode); }
  function threadOf(track) { return track % perNode; }
  function trackName(track) {
    const t = threadOf(track);
    return 'node ' + nodeOf(track) + ' ' + (t === D.threads ? 'driver' : 'thread ' + t);
  }
  function rowY(track) {
    const t = threadOf(track), row = t === D.threads ? 0 : t + 1;
    return nodeOf(track) * (perNode * ROW_H + NODE_GAP) + row * ROW_H;
  }
  function trackAtY(y) {
    const node = Math.floor(y / (perNode * ROW_H + NODE_GAP));
    const row = Math.floor((y - node * (perNode * ROW_H + NODE_GAP)) / ROW_H);
    if (node < 0 || node >= D.nodes || row < 0 || row >= perNode) return -1;
    return node * perNode + (row === 0 ? D.threads : row - 1);
  }

  const maxNs = D.span_ns;
  let t0 = 0, t1 = maxNs * 1.01;
  let highlight = null;  // {r, i, track}: row i of decoded block r

  const canvas = document.getElementById('timeline'), ctx = canvas.getContext('2d');
  const tooltip = document.getElementById('tooltip');
  const height = D.nodes * (perNode * ROW_H + NODE_GAP);
  function resize() {
    const ratio = window.devicePixelRatio || 1, w = Math.max(400, window.innerWidth - 26);
    canvas.style.width = w + 'px';
    canvas.style.height = height + 'px';
    canvas.width = w * ratio;
    canvas.height = height * ratio;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  }
  function plotW() { return canvas.clientWidth - LABEL_W; }
  function X(ns) { return LABEL_W + (ns - t0) / (t1 - t0) * plotW(); }
  function nsAt(x) { return t0 + (x - LABEL_W) / plotW() * (t1 - t0); }

  function hue(label) { return (label * 137) % 360; }

  // Tiles: level `level` of a group's tile list, or null while it is being decoded.
  function tiles(levels, level, how) { return decode(levels[level].ref, how); }
  function bucketWidth(levels, level) { return maxNs / levels[level].buckets; }
  // The coarsest level whose buckets are no wider than a pixel (or the finest there is), else
  // the finest decoded one coarser than it: level 0 is always inline.
  function tileLevel(levels, how) {
    const pixel = (t1 - t0) / plotW();
    let want = levels.length - 1;
    for (let l = 0; l < levels.length; ++l) if (bucketWidth(levels, l) <= pixel) { want = l; break; }
    for (let l = want; l > 0; --l) if (tiles(levels, l, how)) return l;
    return 0;
  }
  // Entries of track `track` of tiles `t` whose bucket lies in [t0, t1] at width w: [first, end).
  function tileRange(t, track, w) {
    const lo = Math.floor(t0 / w), hi = Math.floor(t1 / w);
    let a = t.start[track], b = t.start[track + 1];
    while (a < b) { const m = (a + b) >> 1; if (t.bucket[m] < lo) a = m + 1; else b = m; }
    let c = a, d = t.start[track + 1];
    while (c < d) { const m = (c + d) >> 1; if (t.bucket[m] <= hi) c = m + 1; else d = m; }
    return [a, c];
  }
  // How many rows of `g` on `track` begin in view, from level 0.
  function estimate(g, track) {
    const t = tiles(g.levels, 0, decodeRowTiles), [a, b] = tileRange(t, track, bucketWidth(g.levels, 0));
    return t.before[b] - t.before[a];
  }

  // The first row of block `r` that may reach into [t0, ...): rows of a track do not overlap,
  // so the one before the first that begins at t0 or later may still be open.
  function firstVisible(r) {
    let lo = 0, hi = r.n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r.begin[mid] < t0) lo = mid + 1; else hi = mid;
    }
    return lo > 0 && r.end[lo - 1] >= t0 ? lo - 1 : lo;
  }
  // The decoded blocks of `g` on `track` that overlap the view, or null if some are not decoded
  // yet (their decoding has begun).
  function visibleBlocks(g, track) {
    const out = [];
    let ready = true;
    for (const b of g.byTrack[track]) {
      if (b.hi < t0 || b.lo > t1) continue;
      const r = decode(b.ref, decodeRows);
      if (!r) ready = false; else out.push(r);
    }
    return ready ? out : null;
  }

  // Draws the rows of `g` on `track` in [t0, t1]. One by one when few are in view: a row
  // narrower than a pixel joins the pixel column it falls in (level of detail), so a frame costs
  // a few operations per row at most and one rectangle per pixel. Else from the tiles: a column
  // per bucket, as opaque as the bucket is busy. Returns how many rows it covered.
  const rawTracks = new Set();  // group name + ' ' + track: drawn row by row in the last frame
  function drawRows(g, track, y, h, color, aggregate, labels) {
    const blocks = estimate(g, track) <= RAW_LIMIT ? visibleBlocks(g, track) : null;
    rawTracks[blocks ? 'add' : 'delete'](g.name + ' ' + track);
    if (!blocks) return drawTiles(g, track, y, h, aggregate);
    let covered = 0, lastPx = -1;
    for (const r of blocks) {
      for (let i = firstVisible(r); i < r.n && r.begin[i] <= t1; ++i) {
        ++covered;
        const x0 = Math.max(LABEL_W, X(r.begin[i])), x1 = Math.min(LABEL_W + plotW(), X(r.end[i]));
        if (x1 - x0 < 1) {
          const px = Math.floor(x0);
          if (px === lastPx) continue;
          lastPx = px;
          ctx.fillStyle = aggregate;
          ctx.fillRect(px, y, 1, h);
          continue;
        }
        ctx.fillStyle = color(r, i);
        ctx.fillRect(x0, y, x1 - x0, h);
        if (labels && x1 - x0 > MIN_LABEL_PX) {
          ctx.save();
          ctx.beginPath();
          ctx.rect(x0, y, x1 - x0, h);
          ctx.clip();
          ctx.fillStyle = '#111';
          ctx.fillText(strings[r.label[i]], x0 + 3, y + h - 5);
          ctx.restore();
        }
      }
    }
    return covered;
  }
  // Busy fractions drawn in ALPHAS steps, one path each, so a frame fills a few paths per track.
  const ALPHAS = 4;
  function drawTiles(g, track, y, h, aggregate) {
    const level = tileLevel(g.levels, decodeRowTiles), t = tiles(g.levels, level, decodeRowTiles);
    const w = bucketWidth(g.levels, level), [a, b] = tileRange(t, track, w);
    const paths = Array.from({length: ALPHAS}, () => new Path2D());
    let lastPx = -1;
    for (let k = a; k < b; ++k) {
      const x0 = Math.max(LABEL_W, X(t.bucket[k] * w)), x1 = Math.min(LABEL_W + plotW(), X((t.bucket[k] + 1) * w));
      if (x1 - x0 < 1 && Math.floor(x0) === lastPx) continue;
      lastPx = Math.floor(x0);
      paths[Math.min(ALPHAS - 1, Math.floor(t.busy[k] * ALPHAS))].rect(x0, y, Math.max(1, x1 - x0), h);
    }
    ctx.fillStyle = aggregate;
    paths.forEach((path, step) => {
      ctx.globalAlpha = 0.25 + 0.75 * (step + 1) / ALPHAS;
      ctx.fill(path);
    });
    ctx.globalAlpha = 1;
    return t.before[b] - t.before[a];
  }

  // Arrows collected per kind and drawn as one path each; with heads when they are few enough to
  // tell apart. Arrows whose ends round to the same pixels are drawn once.
  const ARROW_STYLE = ['rgba(40,90,200,0.8)', 'rgba(230,120,0,0.8)'];
  const MAX_HEADS = 2000;
  class Arrows {
    constructor() { this.lines = [[], []]; this.seen = new Set(); }
    add(kind, x0, y0, x1, y1) {
      const key = kind + ',' + Math.round(x0) + ',' + y0 + ',' + Math.round(x1) + ',' + y1;
      if (this.seen.has(key)) return;
      this.seen.add(key);
      this.lines[kind].push(x0, y0, x1, y1);
    }
    draw() {
      const heads = this.seen.size <= MAX_HEADS;
      ctx.lineWidth = 1;
      this.lines.forEach((l, kind) => {
        const line = new Path2D(), head = new Path2D();
        for (let k = 0; k < l.length; k += 4) {
          const x0 = l[k], y0 = l[k + 1], x1 = l[k + 2], y1 = l[k + 3];
          line.moveTo(x0, y0);
          line.lineTo(x1, y1);
          if (!heads) continue;
          const angle = Math.atan2(y1 - y0, x1 - x0);
          head.moveTo(x1, y1);
          head.lineTo(x1 - 6 * Math.cos(angle - 0.4), y1 - 6 * Math.sin(angle - 0.4));
          head.lineTo(x1 - 6 * Math.cos(angle + 0.4), y1 - 6 * Math.sin(angle + 0.4));
          head.closePath();
        }
        ctx.strokeStyle = ctx.fillStyle = ARROW_STYLE[kind];
        ctx.stroke(line);
        if (heads) ctx.fill(head);
      });
    }
  }
  // Arrows with an end in view: one by one when few, else one per tile entry (arrows of one
  // kind between the same two tracks and buckets). Adds to drawn's counts.
  function drawArrows(drawn) {
    const levels = D.arrows.tiles, t = tiles(levels, 0, decodeArrowTiles), w0 = bucketWidth(levels, 0);
    const lo = Math.floor(t0 / w0), hi = Math.floor(t1 / w0);
    let inView = 0;
    for (let k = 0; k < t.n; ++k) {
      const f = t.e[6 * k + 3], g = t.e[6 * k + 4];
      if ((f >= lo && f <= hi) || (g >= lo && g <= hi)) inView += t.e[6 * k + 5];
    }
    let blocks = null;
    if (inView <= RAW_LIMIT) {
      blocks = [];
      for (const b of arrowBlocks) {
        if (b.hi < t0 || b.lo > t1) continue;
        const r = decode(b.ref, decodeArrows);
        if (!r) blocks = null;
        if (!blocks) continue;  // go on asking for the others
        blocks.push(r);
      }
    }
    const out = new Arrows();
    if (!blocks) {
      const level = tileLevel(levels, decodeArrowTiles), tl = tiles(levels, level, decodeArrowTiles);
      const w = bucketWidth(levels, level), a = Math.floor(t0 / w), b = Math.floor(t1 / w);
      for (let k = 0; k < tl.n; ++k) {
        const e = tl.e.subarray(6 * k, 6 * k + 6);
        if (!((e[3] >= a && e[3] <= b) || (e[4] >= a && e[4] <= b))) continue;
        drawn.arrows += e[5];
        drawn[e[0] ? 'handover_arrows' : 'message_arrows'] += e[5];
        out.add(e[0], X((e[3] + 0.5) * w), rowY(e[1]) + ROW_H / 2, X((e[4] + 0.5) * w), rowY(e[2]) + ROW_H / 2);
      }
    } else {
      for (const r of blocks) {
        for (let i = 0; i < r.n; ++i) {
          const a = r.from_ns[i], b = r.to_ns[i];
          if ((a < t0 || a > t1) && (b < t0 || b > t1)) continue;
          ++drawn.arrows;
          ++drawn[r.kind[i] ? 'handover_arrows' : 'message_arrows'];
          out.add(r.kind[i], X(a), rowY(r.from[i]) + ROW_H / 2, X(b), rowY(r.to[i]) + ROW_H / 2);
        }
      }
    }
    out.draw();
  }

  function draw() {
    const drawn = {nodes: D.nodes, threads: D.threads, slices: 0, worker_slices: 0, waits: 0,
                   instants: 0, arrows: 0, message_arrows: 0, handover_arrows: 0};
    ctx.clearRect(0, 0, canvas.clientWidth, height);
    ctx.font = '11px system-ui, sans-serif';
    for (let track = 0; track < tracks; ++track) {
      const y = rowY(track);
      ctx.fillStyle = threadOf(track) === D.threads ? '#eef2f7' : (threadOf(track) % 2 ? '#f7f7f7' : '#fcfcfc');
      ctx.fillRect(0, y, canvas.clientWidth, ROW_H);
      ctx.fillStyle = '#333';
      ctx.fillText(trackName(track), 4, y + ROW_H - 7);
      const count = drawRows(slices, track, y + 2, ROW_H - 4,
                             (r, i) => 'hsl(' + hue(r.label[i]) + (r.kind[i] ? ',45%,80%)' : ',55%,65%)'),
                             '#8a9bb0', true);
      drawn[threadOf(track) === D.threads ? 'slices' : 'worker_slices'] += count;
      drawn.waits += drawRows(waits, track, y + 6, ROW_H - 12, () => '#d0443e', '#d0443e', false);
      drawn.instants += drawRows(instants, track, y + ROW_H - 5, 4, () => '#333', '#333', false);
    }
    drawArrows(drawn);
    if (highlight) {
      const r = highlight.r, i = highlight.i;
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      const x0 = X(r.begin[i]), x1 = Math.max(X(r.end[i]), x0 + 2);
      ctx.strokeRect(x0 - 2, rowY(highlight.track) + 1, x1 - x0 + 4, ROW_H - 2);
    }
    ctx.fillStyle = '#555';
    ctx.fillText(fmtNs(t0) + ' .. ' + fmtNs(t1), LABEL_W + 4, 10);
    return drawn;
  }

  function fmtNs(ns) {
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
    return ns.toFixed(0) + ' ns';
  }

  // The Describe text of node `node`'s event `index`, '' if it has none, null while its block
  // is being decoded.
  const describeRefs = new Map(D.describe.blocks.map(([node, first, ref]) => [node + ':' + first, ref]));
  function describeText(node, index) {
    const first = Math.floor(index / D.describe.block) * D.describe.block;
    const ref = describeRefs.get(node + ':' + first);
    if (!ref) return '';
    const lines = decode(ref, (buffer) => new TextDecoder().decode(buffer).split('\n'));
    return lines ? lines[index - first] : null;
  }

  // What a hit is, in words: the library's Describe text for an event; for a tile, what it
  // stands for.
  function details(hit) {
    if (hit.tile) {
      const t = hit.tile, k = hit.k;
      return t.count[k] + ' ' + hit.g.name + ' begin in ' + fmtNs(hit.b0) + ' .. ' + fmtNs(hit.b1) +
          ' on ' + trackName(hit.track) + ', busy ' + Math.round(100 * t.busy[k]) + '%\n(zoom in to see each)';
    }
    const r = hit.r, i = hit.i, track = hit.track;
    let text = strings[r.label[i]] + '\n' + trackName(track) + ', ';
    text += hit.g === slices ? 'events ' + r.index[i] + '..' + r.index_end[i] : 'event ' + r.index[i];
    text += '\n' + fmtNs(r.begin[i]) + (r.end[i] > r.begin[i] ? ' + ' + fmtNs(r.end[i] - r.begin[i]) : '');
    if (hit.g !== slices) {
      const d = describeText(nodeOf(track), r.index[i]);
      text += '\n' + (d === null ? '(decoding the Describe text)' : d);
    }
    return text;
  }

  // The hit under (x, y): an instant within 3 pixels, else a wait, else a slice; on a track
  // drawn from tiles, the bucket under the pointer.
  function rowAt(x, y) {
    const track = trackAtY(y);
    if (track < 0 || x < LABEL_W) return null;
    const ns = nsAt(x), slack = 3 * (t1 - t0) / plotW();
    for (const g of [instants, waits, slices]) {
      if (!rawTracks.has(g.name + ' ' + track)) {
        const level = tileLevel(g.levels, decodeRowTiles), t = tiles(g.levels, level, decodeRowTiles);
        const w = bucketWidth(g.levels, level), want = Math.floor(ns / w);
        const [a, b] = tileRange(t, track, w);
        for (let k = a; k < b; ++k)
          if (t.bucket[k] === want && t.count[k] > 0) return {g, tile: t, k, track, b0: want * w, b1: (want + 1) * w};
        continue;
      }
      let best = null, bestDist = Infinity;
      for (const r of visibleBlocks(g, track) || []) {
        let a = 0, b = r.n;
        while (a < b) {
          const mid = (a + b) >> 1;
          if (r.begin[mid] < ns - slack) a = mid + 1; else b = mid;
        }
        for (let i = Math.max(0, a - 1); i < r.n && r.begin[i] <= ns + slack; ++i) {
          if (r.end[i] + slack < ns) continue;
          const dist = r.end[i] > r.begin[i] && ns >= r.begin[i] && ns <= r.end[i] ? 0
              : Math.min(Math.abs(r.begin[i] - ns), Math.abs(r.end[i] - ns));
          if (dist < bestDist) best = {g, r, i, track}, bestDist = dist;
        }
      }
      if (best) return best;
    }
    return null;
  }

  // "node K event N": the instant, wait or operator slice of that node-log index. Decodes the
  // blocks whose index range holds N.
  async function find(node, index) {
    for (const g of [instants, waits, slices]) {
      for (let track = node * perNode; track < (node + 1) * perNode; ++track) {
        for (const b of g.byTrack[track]) {
          if (index < b.imin || index > b.imax) continue;
          await ready(b.ref);
          const r = decode(b.ref, decodeRows);
          for (let i = 0; i < r.n; ++i)
            if (r.index[i] === index || (g === slices && r.index_end[i] === index)) return {g, r, i, track};
        }
      }
    }
    return null;
  }

  function fill(id, rowsHtml) { document.getElementById(id).innerHTML = rowsHtml; }
  function tables() {
    let html = '<tr><th></th>' + S.messages.map((_, to) => '<th>node ' + to + '</th>').join('') + '</tr>';
    S.messages.forEach((row, from) => {
      html += '<tr><th>node ' + from + '</th>' + row.map((c) => '<td>' + c + '</td>').join('') + '</tr>';
    });
    fill('matrix', html);
    const dds = Object.entries(S.handovers_per_dds);
    fill('per-dds', '<tr><th>DDS</th><th>handovers</th></tr>' +
        (dds.length ? dds.map(([d, c]) => '<tr><td>' + d + '</td><td>' + c + '</td></tr>').join('')
                    : '<tr><td colspan=2>none logged</td></tr>'));
    fill('hottest', '<tr><th>DDS</th><th>element</th><th>handovers</th></tr>' +
        S.hottest_elements.map((h) => '<tr><td>' + h.dds + '</td><td>' + h.element + '</td><td>' +
                               h.handovers + '</td></tr>').join(''));
    const events = S.nodes.reduce((n, x) => n + x.events, 0);
    document.getElementById('summary').textContent =
        D.nodes + ' nodes x ' + D.threads + ' threads, ' + events + ' events, ' + slices.rows +
        ' slices (operators on the drivers and their workers), ' + waits.rows + ' waits, ' + D.arrows.rows + ' arrows';
    document.getElementById('title').textContent = 'strads trace view: ' + STRADS_VIEW_TITLE;
    document.getElementById('legend').innerHTML =
        '<span style="background:hsl(200,55%,65%)"></span>operator (driver)' +
        '<span style="background:hsl(200,45%,80%)"></span>operator (worker)' +
        '<span style="background:#d0443e"></span>wait' +
        '<span style="background:#333"></span>untimed event (placed)' +
        '<span style="background:rgb(40,90,200)"></span>message' +
        '<span style="background:rgb(230,120,0)"></span>lock handover' +
        '<span style="background:#8a9bb0"></span>slices narrower than a pixel';
  }

  // Interaction.
  let drag = null, hover = null;
  // The tooltip of the pointer's place (again when a block it needed has been decoded).
  function refreshTooltip() {
    const hit = hover && rowAt(hover.x, hover.y);
    if (!hit) { tooltip.style.display = 'none'; return; }
    tooltip.textContent = details(hit);
    tooltip.style.left = Math.min(hover.x + 12, canvas.clientWidth - 300) + 'px';
    tooltip.style.top = (hover.y + 14) + 'px';
    tooltip.style.display = 'block';
  }
  canvas.addEventListener('wheel', (ev) => {
    ev.preventDefault();
    const at = nsAt(ev.offsetX), f = Math.exp(ev.deltaY * 0.002);
    const w = Math.max(100, (t1 - t0) * f);
    t0 = at - (at - t0) * w / (t1 - t0);
    t1 = t0 + w;
    draw();
  }, {passive: false});
  canvas.addEventListener('mousedown', (ev) => { drag = {x: ev.offsetX, t0, t1}; canvas.style.cursor = 'grabbing'; });
  window.addEventListener('mouseup', () => { drag = null; canvas.style.cursor = 'grab'; });
  canvas.addEventListener('mousemove', (ev) => {
    if (drag) {
      const shift = (ev.offsetX - drag.x) / plotW() * (drag.t1 - drag.t0);
      t0 = drag.t0 - shift, t1 = drag.t1 - shift;
      tooltip.style.display = 'none';
      draw();
      return;
    }
    hover = {x: ev.offsetX, y: ev.offsetY};
    refreshTooltip();
  });
  canvas.addEventListener('mouseleave', () => { hover = null; tooltip.style.display = 'none'; });
  document.getElementById('search-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const out = document.getElementById('search-result');
    const m = /node\s*(\d+)\s*(?:event)?\s*(\d+)/i.exec(document.getElementById('search').value);
    if (!m) { out.textContent = 'type "node K event N"'; return; }
    out.textContent = 'searching';
    const hit = await find(Number(m[1]), Number(m[2]));
    if (!hit) { out.textContent = 'node ' + m[1] + ' has no event ' + m[2] + ' on the timeline'; return; }
    highlight = hit;
    const b = hit.r.begin[hit.i], e = hit.r.end[hit.i], w = Math.max(4 * (e - b), 50000);
    t0 = (b + e) / 2 - w / 2, t1 = t0 + w;
    draw();
    const describe = hit.g === slices ? null : describeRefs.get(nodeOf(hit.track) + ':' +
        Math.floor(hit.r.index[hit.i] / D.describe.block) * D.describe.block);
    if (describe) await ready(describe);
    out.textContent = details(hit).replace(/\n/g, ' | ');
  });
  document.getElementById('reset').addEventListener('click', () => {
    t0 = 0, t1 = maxNs * 1.01, highlight = null;
    draw();
  });
  window.addEventListener('resize', () => { resize(); draw(); });

  tables();
  resize();
  const drawStart = performance.now(), first = draw();
  first.draw_ms = Math.round(performance.now() - drawStart);
  // The test hook (tests/integration/trace_view.sh): what the first frame, the whole trace, drew;
  // and when it was done, since navigation began (bench/view_bench.sh prints it).
  first.first_frame_ms = Math.round(performance.now());
  window.stradsDrawn = first;
  document.getElementById('drawn').textContent = JSON.stringify(first);
  // A search from the address (file:///.../view.html#search=node%201%20event%2070000), for links
  // and for the test, which cannot type.
  const query = decodeURIComponent(location.hash.slice(1));
  if (query.startsWith('search=')) {
    document.getElementById('search').value = query.slice('search='.length);
    document.getElementById('search-form').requestSubmit();
  }
  // And when the parser has reached the end of the page, all blocks available to a zoom.
  whenParsed().then(() => {
    first.all_parsed_ms = Math.round(performance.now());
    document.getElementById('drawn').textContent = JSON.stringify(first);
  });
})();
