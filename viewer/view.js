// The trace viewer's renderer (view.html): a canvas timeline of nodes x threads with zoom, pan,
// level of detail, arrows, hover details and search, and the tables of `trace stats`. Plain
// JavaScript, no library: the page must open from file:// without a network.
//
// Data: STRADS_VIEW_DATA (trace/include/strads/trace/view_data.h: base64 typed-array columns,
// rows sorted by track, then begin), STRADS_VIEW_STATS (`trace stats --json`), STRADS_VIEW_TITLE.
(function () {
  'use strict';
  const D = STRADS_VIEW_DATA, S = STRADS_VIEW_STATS;
  const NOT_DESCRIBED = 0xffffffff;
  const ROW_H = 22, NODE_GAP = 10, LABEL_W = 96, MIN_LABEL_PX = 40;

  function buffer(b64) {
    const s = atob(b64), a = new Uint8Array(s.length);
    for (let i = 0; i < s.length; ++i) a[i] = s.charCodeAt(i);
    return a.buffer;
  }
  function rows(g) {
    return {
      n: g.rows, track: new Uint32Array(buffer(g.track)),
      begin: new Float64Array(buffer(g.begin_ns)), end: new Float64Array(buffer(g.end_ns)),
      kind: new Uint8Array(buffer(g.kind)), label: new Uint32Array(buffer(g.label)),
      index: new Uint32Array(buffer(g.index)), index_end: new Uint32Array(buffer(g.index_end)),
      describe: new Uint32Array(buffer(g.describe)), start: new Uint32Array(buffer(g.track_start)),
    };
  }
  const slices = rows(D.slices), waits = rows(D.waits), instants = rows(D.instants);
  const arrows = {
    n: D.arrows.rows, kind: new Uint8Array(buffer(D.arrows.kind)),
    from: new Uint32Array(buffer(D.arrows.from_track)), to: new Uint32Array(buffer(D.arrows.to_track)),
    from_ns: new Float64Array(buffer(D.arrows.from_ns)), to_ns: new Float64Array(buffer(D.arrows.to_ns)),
  };
  const strings = D.strings;
  const perNode = D.threads + 1, tracks = D.nodes * perNode;

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

  let maxNs = 1;
  for (const g of [slices, waits, instants])
    for (let i = 0; i < g.n; ++i) if (g.end[i] > maxNs) maxNs = g.end[i];
  let t0 = 0, t1 = maxNs * 1.01;
  let highlight = null;  // {g, i}

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
  // The first row of track `track` in group `g` that may reach into [t0, ...): rows of a track
  // do not overlap, so the one before the first that begins at t0 or later may still be open.
  function firstVisible(g, track) {
    let lo = g.start[track], hi = g.start[track + 1];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (g.begin[mid] < t0) lo = mid + 1; else hi = mid;
    }
    return lo > g.start[track] && g.end[lo - 1] >= t0 ? lo - 1 : lo;
  }

  // Draws the rows of `g` on `track` in [t0, t1]; a row narrower than a pixel joins the pixel
  // column it falls in (level of detail), so a frame costs a few operations per row at most
  // and one rectangle per pixel. Returns how many rows it covered.
  function drawRows(g, track, y, h, color, aggregate, labels) {
    let covered = 0, lastPx = -1;
    const end = g.start[track + 1];
    for (let i = firstVisible(g, track); i < end && g.begin[i] <= t1; ++i) {
      ++covered;
      const x0 = Math.max(LABEL_W, X(g.begin[i])), x1 = Math.min(LABEL_W + plotW(), X(g.end[i]));
      if (x1 - x0 < 1) {
        const px = Math.floor(x0);
        if (px === lastPx) continue;
        lastPx = px;
        ctx.fillStyle = aggregate;
        ctx.fillRect(px, y, 1, h);
        continue;
      }
      ctx.fillStyle = color(i);
      ctx.fillRect(x0, y, x1 - x0, h);
      if (labels && x1 - x0 > MIN_LABEL_PX) {
        ctx.save();
        ctx.beginPath();
        ctx.rect(x0, y, x1 - x0, h);
        ctx.clip();
        ctx.fillStyle = '#111';
        ctx.fillText(strings[g.label[i]], x0 + 3, y + h - 5);
        ctx.restore();
      }
    }
    return covered;
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
                             (i) => 'hsl(' + hue(slices.label[i]) + (slices.kind[i] ? ',45%,80%)' : ',55%,65%)'),
                             '#8a9bb0', true);
      drawn[threadOf(track) === D.threads ? 'slices' : 'worker_slices'] += count;
      drawn.waits += drawRows(waits, track, y + 6, ROW_H - 12, () => '#d0443e', '#d0443e', false);
      drawn.instants += drawRows(instants, track, y + ROW_H - 5, 4, () => '#333', '#333', false);
    }
    // Arrows with an end in view; when many share their pixels, one line stands for them.
    const seen = arrows.n > 5000 ? new Set() : null;
    ctx.lineWidth = 1;
    for (let i = 0; i < arrows.n; ++i) {
      const a = arrows.from_ns[i], b = arrows.to_ns[i];
      if ((a < t0 || a > t1) && (b < t0 || b > t1)) continue;
      ++drawn.arrows;
      ++drawn[arrows.kind[i] ? 'handover_arrows' : 'message_arrows'];
      const x0 = X(a), y0 = rowY(arrows.from[i]) + ROW_H / 2;
      const x1 = X(b), y1 = rowY(arrows.to[i]) + ROW_H / 2;
      if (seen) {
        const key = Math.round(x0) + ',' + arrows.from[i] + ',' + Math.round(x1) + ',' + arrows.to[i];
        if (seen.has(key)) continue;
        seen.add(key);
      }
      ctx.strokeStyle = arrows.kind[i] ? 'rgba(230,120,0,0.8)' : 'rgba(40,90,200,0.8)';
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y1);
      ctx.stroke();
      const angle = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 6 * Math.cos(angle - 0.4), y1 - 6 * Math.sin(angle - 0.4));
      ctx.lineTo(x1 - 6 * Math.cos(angle + 0.4), y1 - 6 * Math.sin(angle + 0.4));
      ctx.closePath();
      ctx.fillStyle = ctx.strokeStyle;
      ctx.fill();
    }
    if (highlight) {
      const g = highlight.g, i = highlight.i;
      ctx.strokeStyle = '#000';
      ctx.lineWidth = 2;
      const x0 = X(g.begin[i]), x1 = Math.max(X(g.end[i]), x0 + 2);
      ctx.strokeRect(x0 - 2, rowY(g.track[i]) + 1, x1 - x0 + 4, ROW_H - 2);
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

  // What a row of group `g` is, in words: the library's Describe text where the data has it.
  function details(g, i) {
    const track = g.track[i];
    let text = strings[g.label[i]] + '\n' + trackName(track) + ', ';
    if (g === slices) {
      text += 'events ' + g.index[i] + '..' + g.index_end[i];
    } else {
      text += 'event ' + g.index[i];
    }
    text += '\n' + fmtNs(g.begin[i]) + (g.end[i] > g.begin[i] ? ' + ' + fmtNs(g.end[i] - g.begin[i]) : '');
    if (g !== slices) {
      text += '\n' + (g.describe[i] !== NOT_DESCRIBED ? strings[g.describe[i]]
          : '(past the first ' + D.described_limit + ' described events: strads trace dump --node ' +
            nodeOf(track) + ')');
    }
    return text;
  }

  // The row under (x, y): an instant within 3 pixels, else a wait, else a slice.
  function rowAt(x, y) {
    const track = trackAtY(y);
    if (track < 0 || x < LABEL_W) return null;
    const ns = nsAt(x), slack = 3 * (t1 - t0) / plotW();
    for (const g of [instants, waits, slices]) {
      let best = -1, bestDist = Infinity;
      const lo = g.start[track], hi = g.start[track + 1];
      let a = lo, b = hi;
      while (a < b) {
        const mid = (a + b) >> 1;
        if (g.begin[mid] < ns - slack) a = mid + 1; else b = mid;
      }
      for (let i = Math.max(lo, a - 1); i < hi && g.begin[i] <= ns + slack; ++i) {
        if (g.end[i] + slack < ns) continue;
        const dist = g.end[i] > g.begin[i] && ns >= g.begin[i] && ns <= g.end[i] ? 0
            : Math.min(Math.abs(g.begin[i] - ns), Math.abs(g.end[i] - ns));
        if (dist < bestDist) best = i, bestDist = dist;
      }
      if (best >= 0) return {g, i: best};
    }
    return null;
  }

  // "node K event N": the instant, wait or operator slice of that node-log index.
  function find(node, index) {
    for (const g of [instants, waits, slices]) {
      for (let track = node * perNode; track < (node + 1) * perNode; ++track) {
        for (let i = g.start[track]; i < g.start[track + 1]; ++i) {
          if (g.index[i] === index || (g === slices && g.index_end[i] === index)) return {g, i};
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
        D.nodes + ' nodes x ' + D.threads + ' threads, ' + events + ' events, ' + slices.n +
        ' slices (operators on the drivers and their workers), ' + waits.n + ' waits, ' + arrows.n + ' arrows';
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
  let drag = null;
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
    const hit = rowAt(ev.offsetX, ev.offsetY);
    if (!hit) { tooltip.style.display = 'none'; return; }
    tooltip.textContent = details(hit.g, hit.i);
    tooltip.style.left = Math.min(ev.offsetX + 12, canvas.clientWidth - 300) + 'px';
    tooltip.style.top = (ev.offsetY + 14) + 'px';
    tooltip.style.display = 'block';
  });
  canvas.addEventListener('mouseleave', () => { tooltip.style.display = 'none'; });
  document.getElementById('search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const out = document.getElementById('search-result');
    const m = /node\s*(\d+)\s*(?:event)?\s*(\d+)/i.exec(document.getElementById('search').value);
    if (!m) { out.textContent = 'type "node K event N"'; return; }
    const hit = find(Number(m[1]), Number(m[2]));
    if (!hit) { out.textContent = 'node ' + m[1] + ' has no event ' + m[2] + ' on the timeline'; return; }
    highlight = hit;
    const b = hit.g.begin[hit.i], e = hit.g.end[hit.i], w = Math.max(4 * (e - b), 50000);
    t0 = (b + e) / 2 - w / 2, t1 = t0 + w;
    out.textContent = details(hit.g, hit.i).replace(/\n/g, ' | ');
    draw();
  });
  document.getElementById('reset').addEventListener('click', () => {
    t0 = 0, t1 = maxNs * 1.01, highlight = null;
    draw();
  });
  window.addEventListener('resize', () => { resize(); draw(); });

  tables();
  resize();
  const first = draw();
  // The test hook (tests/integration/trace_view.sh): what the first frame, the whole trace, drew;
  // and when it was done, since navigation began (bench/view_bench.sh prints it).
  first.first_frame_ms = Math.round(performance.now());
  window.stradsDrawn = first;
  document.getElementById('drawn').textContent = JSON.stringify(first);
})();
