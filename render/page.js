// page.js — draws the interactive figures of a memlens HTML page
// (render/page.h). Plain JavaScript, nothing loaded: every figure's data is
// a JSON object in its <script type="application/json" class="ml-data">,
// the buffers as little-endian typed arrays in base64. The layout (ticks ×
// global address) was computed in C; this file only draws it, on a canvas.
//
// Level of detail: a buffer at least one pixel wide and tall is one
// rectangle; smaller ones are binned into the pixels they touch (coverage
// and colour summed per pixel through difference arrays along x for the
// wide-and-thin and along y for the tall-and-narrow), so a zoomed-out view
// of a million buffers is one image, not a million rectangles.
//
// The panels (curves, peaks, the state at a tick, a buffer's stack, the
// legend) are page-panels.js, which follows this file in the page and
// starts the figures.
//
// window.memlensPages lists the figures (for tests and the benchmark):
// each has view {t0, t1, a0, a1}, zoomAt(), zoomRange(), pan(), fit(),
// hoverAt(), clickAt(), search(), setColor(), selectTick(), draw().
'use strict';
window.memlensLib = (function () {
  const RED = [192, 22, 26];
  const MARGIN = { left: 78, right: 10, top: 8, bottom: 24 };
  const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

  // Base64 to bytes: natively where the browser can (Uint8Array.fromBase64,
  // Chromium 140+, Firefox 133+), else through atob.
  function decode(s) {
    if (Uint8Array.fromBase64) return Uint8Array.fromBase64(s).buffer;
    const bin = atob(s);
    const u8 = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
    return u8.buffer;
  }

  function human(b) {
    let u = 0;
    while (b >= 1024 && u < UNITS.length - 1) { b /= 1024; u++; }
    return u ? b.toFixed(2) + ' ' + UNITS[u] : b + ' bytes';
  }

  function hex(v) { return '0x' + v.toString(16); }

  // A round step near span / n: 1, 2 or 5 times a power of @base.
  function niceStep(span, n, base) {
    const raw = span / n;
    let p = Math.pow(base, Math.floor(Math.log(raw) / Math.log(base)));
    for (const m of [1, 2, 5, 10]) if (p * m >= raw) return p * m;
    return p * 10;
  }

  // The first index i in [0, n) with a[i] > v (a non-decreasing).
  function upper(a, v) {
    let lo = 0, hi = a.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (a[m] > v) hi = m; else lo = m + 1; }
    return lo;
  }

  function Page(fig) {
    const t0 = performance.now();
    const d = JSON.parse(fig.querySelector('script.ml-data').textContent);
    const t1 = performance.now();
    const T = d.ticks32 ? Uint32Array : Float64Array;
    this.fig = fig;
    this.d = d;
    this.n = d.n;
    this.start = new T(decode(d.start));
    this.end = new T(decode(d.end));
    this.addr = new Float64Array(decode(d.addr));
    this.size = new Float64Array(decode(d.size));
    this.place = new Float64Array(decode(d.place));
    this.site = new Uint32Array(decode(d.site));
    this.stream = new Uint32Array(decode(d.stream));
    this.buffer = new Uint32Array(decode(d.buffer));
    this.rank = new Uint32Array(decode(d.rank));
    this.stack = new Uint32Array(decode(d.stack));
    // the colour class of each item under each colouring (call site, stream,
    // kind, and compile_context / user_metadata where the trace records them)
    this.clsBy = {};
    for (const c of d.colorings) if (d['cls_' + c.key]) this.clsBy[c.key] = new Uint8Array(decode(d['cls_' + c.key]));
    this.palette = d.palette;
    this.cssPalette = d.palette.map(c => 'rgb(' + c.join(',') + ')');
    this.colorBy = 'site';
    this.cls = this.clsBy.site;
    this.wide = new Map(d.wide.map(w => [w[0], w]));
    this.startMs = t0;
    this.parseMs = t1 - t0;
    this.decodeMs = performance.now() - t1;
    // prefix maxima of the ends: the items that reach past t start at upper(maxEnd, t)
    this.maxEnd = new Float64Array(this.n);
    let m = 0;
    for (let i = 0; i < this.n; i++) { m = Math.max(m, this.end[i]); this.maxEnd[i] = m; }
    fig.querySelector('.ml-title').textContent = d.title || d.plan;
    this.canvas = fig.querySelector('canvas.ml-canvas');
    this.tip = fig.querySelector('.ml-tip');
    this.rangeEl = fig.querySelector('.ml-range');
    this.foundEl = fig.querySelector('.ml-found');
    this.matches = null;
    this.matched = new Uint8Array(this.n);
    this.tick = null;      // the tick whose state is shown
    this.band = null;      // a range being dragged: [x0, x1] CSS pixels
    this.hovered = -1;
    this.mode = d.view === 'active' ? 'active' : 'address';
    this.loadTiles();
    this.fitView();
    this.bind();
    this.initPanels();
    this.draw();
  }

  // The level-of-detail tiles (page-tiles.c): PNG pictures drawn in C,
  // usable once decoded.
  Page.prototype.loadTiles = function () {
    const t = this.d.tiles, self = this;
    this.tiles = null;
    if (!t) return;
    // each tile loaded, then decoded into a bitmap (createImageBitmap; an
    // image is decoded at its first drawing, 100 ms a tile: a frame late)
    // (onload, not decode(): headless chromium leaves decode() pending)
    const bitmap = b64 => new Promise(function (ok, fail) {
      const im = new Image();
      im.onload = () => ok(im);
      im.onerror = fail;
      im.src = 'data:image/png;base64,' + b64;
    }).then(im => window.createImageBitmap ? createImageBitmap(im) : im);
    const set = levels => Promise.all(levels.map(l => Promise.all(l.map(bitmap))));
    this.tilesReady = Promise.all([set(t.address), set(t.active)]).then(function (both) {
      self.tiles = { address: both[0], active: both[1] };
      self.draw();
    }, function (e) { self.tiles = null; self.tileError = String(e); });
  };

  // The vertical extent the tiles of the view's mode cover.
  Page.prototype.tileTop = function () { return this.mode === 'active' ? this.d.liveMax : this.d.extent; };

  // The coarsest tile level that has at least the canvas's resolution
  // for the view (tiles cover all the addresses: a view zoomed in on
  // bytes finer than a tile's row has none); -1 when none.
  Page.prototype.tileLevel = function (p) {
    const t = this.d.tiles, v = this.view;
    // (the stacked view paints a search's matches into its buffers)
    if (!this.tiles || this.colorBy !== t.by || (this.mode === 'active' && this.matches)) return -1;
    const dpr = window.devicePixelRatio || 1, set = this.tiles[this.mode];
    if ((v.a1 - v.a0) / (p.h * dpr) < this.tileTop() / t.h) return -1;
    const tpp = (v.t1 - v.t0) / (p.w * dpr);
    for (let L = 0; L < set.length; L++)
      if (this.d.endTick / (t.w * set[L].length) <= tpp) return L;
    return -1;
  };

  // Draws the view from the tiles of level L: the part of each in view
  // (ticks and bytes: linked figures may show more than this one has).
  Page.prototype.drawTiles = function (ctx, p, L) {
    const t = this.d.tiles, v = this.view, imgs = this.tiles[this.mode][L], tw = this.d.endTick / imgs.length;
    const A = Math.max(1, this.tileTop()), a0 = Math.max(0, v.a0), a1 = Math.min(A, v.a1);
    ctx.imageSmoothingEnabled = true;
    ctx.imageSmoothingQuality = 'medium';
    let drawn = 0;
    if (a1 <= a0) return { rects: 0, binned: 0, tiles: 0, level: L };
    const sy = (A - a1) / A * t.h, sh = (a1 - a0) / A * t.h, y1 = this.pixel(0, a1).y, y0 = this.pixel(0, a0).y;
    for (let k = 0; k < imgs.length; k++) {
      const ta = Math.max(v.t0, k * tw), tb = Math.min(v.t1, (k + 1) * tw);
      if (tb <= ta) continue;
      const x0 = this.pixel(ta, 0).x, x1 = this.pixel(tb, 0).x;
      ctx.drawImage(imgs[k], (ta - k * tw) / tw * t.w, sy, (tb - ta) / tw * t.w, sh, x0, y1, x1 - x0, y0 - y1);
      drawn++;
    }
    return { rects: 0, binned: 0, tiles: drawn, level: L };
  };

  // The vertical axis: addresses, or the stacked live bytes (linked
  // figures: the byte scale they share).
  Page.prototype.top = function () {
    if (this.mode === 'active') return Math.max(1, this.d.aMax || this.d.liveMax);
    return Math.max(1, this.d.extent);
  };

  // The time axis: [0, the end tick), or the span linked figures share.
  Page.prototype.span = function () { return Math.max(1, this.d.tMax || this.d.endTick); };

  Page.prototype.fitView = function () {
    this.view = { t0: 0, t1: this.span(), a0: 0, a1: this.top() };
  };

  // Switches between address × time ('address') and the stacked view ('active').
  Page.prototype.setMode = function (mode) {
    this.mode = mode === 'active' ? 'active' : 'address';
    this.modeEl.value = this.mode;
    this.fit();
  };

  Page.prototype.fit = function () { this.fitView(); this.draw(); };

  // The plot rectangle in CSS pixels.
  Page.prototype.plot = function () {
    const w = this.canvas.clientWidth || this.canvas.width, h = this.canvas.clientHeight || this.canvas.height;
    return { x: MARGIN.left, y: MARGIN.top, w: Math.max(10, w - MARGIN.left - MARGIN.right),
      h: Math.max(10, h - MARGIN.top - MARGIN.bottom), cw: w, ch: h };
  };

  // Tick and byte under CSS pixel (x, y) of the canvas.
  Page.prototype.at = function (x, y) {
    const p = this.plot(), v = this.view;
    return { t: v.t0 + (x - p.x) / p.w * (v.t1 - v.t0), a: v.a0 + (p.y + p.h - y) / p.h * (v.a1 - v.a0) };
  };

  // And back: the CSS pixel of tick t, byte a.
  Page.prototype.pixel = function (t, a) {
    const p = this.plot(), v = this.view;
    return { x: p.x + (t - v.t0) / (v.t1 - v.t0) * p.w, y: p.y + p.h - (a - v.a0) / (v.a1 - v.a0) * p.h };
  };

  Page.prototype.clamp = function () {
    const v = this.view, T = this.span(), A = this.top();
    const tw = Math.min(T, Math.max(1e-3, v.t1 - v.t0)), aw = Math.min(A, Math.max(1, v.a1 - v.a0));
    v.t0 = Math.min(T - tw, Math.max(0, v.t0)); v.t1 = v.t0 + tw;
    v.a0 = Math.min(A - aw, Math.max(0, v.a0)); v.a1 = v.a0 + aw;
  };

  // Zooms by @f (< 1: in) around tick @t (bytes: around byte @t).
  Page.prototype.zoomAt = function (t, f, bytes) {
    const v = this.view;
    if (bytes) { v.a0 = t - (t - v.a0) * f; v.a1 = t + (v.a1 - t) * f; }
    else { v.t0 = t - (t - v.t0) * f; v.t1 = t + (v.t1 - t) * f; }
    this.clamp();
    this.draw();
  };

  Page.prototype.pan = function (dt, da) {
    const v = this.view;
    v.t0 += dt; v.t1 += dt; v.a0 += da; v.a1 += da;
    this.clamp();
    this.draw();
  };

  // The pixel grids of the binned buffers, kept between frames: weight
  // and colour sums as difference arrays along x (rows) and along y (cols).
  Page.prototype.grids = function (W, H) {
    const g = this.g;
    if (g && g.W === W && g.H === H) { g.rows.fill(0); g.cols.fill(0); return g; }
    this.g = { W: W, H: H, rows: new Float32Array((W + 1) * H * 4), cols: new Float32Array((H + 1) * W * 4),
      img: new ImageData(W, H) };
    return this.g;
  };

  // Draws the buffers of the view: large ones as rectangles, the rest binned.
  Page.prototype.drawItems = function (ctx, p) {
    const L = this.tileLevel(p);
    if (L >= 0) return this.drawTiles(ctx, p, L);
    const v = this.view, W = Math.ceil(p.w), H = Math.ceil(p.h);
    const sx = p.w / (v.t1 - v.t0), sy = p.h / (v.a1 - v.a0);
    const g = this.grids(W, H), rows = g.rows, cols = g.cols;
    const lo = upper(this.maxEnd, v.t0), hi = upper(this.start, v.t1 - 1e-9);
    let rects = 0, binned = 0, last = -1;
    const outlined = [];
    for (let i = lo; i < hi; i++) {
      if (this.end[i] <= v.t0) continue;
      const y1 = (v.a1 - this.addr[i]) * sy, y0 = (v.a1 - this.addr[i] - this.size[i]) * sy;
      if (y1 <= 0 || y0 >= p.h) continue;
      const x0 = Math.max(0, (this.start[i] - v.t0) * sx), x1 = Math.min(p.w, (this.end[i] - v.t0) * sx);
      const k = this.cls[i], c = this.palette[k], top = Math.max(0, y0), bot = Math.min(p.h, y1);
      if (x1 - x0 >= 1 && bot - top >= 1) {
        if (k !== last) { ctx.fillStyle = this.cssPalette[k]; last = k; }
        ctx.fillRect(p.x + x0, p.y + top, x1 - x0, bot - top);
        if (x1 - x0 >= 4 && bot - top >= 4) outlined.push(x0, top, x1 - x0, bot - top);
        rects++;
        continue;
      }
      binned++;
      if (bot - top < 1) {            // thin: one row, columns [c0, c1)
        const r = Math.min(H - 1, Math.floor(top)), w = bot - top;
        const c0 = Math.min(W - 1, Math.floor(x0)), c1 = Math.max(c0 + 1, Math.min(W, Math.ceil(x1)));
        const k0 = (r * (W + 1) + c0) * 4, k1 = (r * (W + 1) + c1) * 4;
        rows[k0] += w; rows[k0 + 1] += w * c[0]; rows[k0 + 2] += w * c[1]; rows[k0 + 3] += w * c[2];
        rows[k1] -= w; rows[k1 + 1] -= w * c[0]; rows[k1 + 2] -= w * c[1]; rows[k1 + 3] -= w * c[2];
      } else {                        // narrow: one column, rows [r0, r1)
        const col = Math.min(W - 1, Math.floor(x0)), w = x1 - x0;
        const r0 = Math.floor(top), r1 = Math.max(r0 + 1, Math.ceil(bot));
        const k0 = (col * (H + 1) + r0) * 4, k1 = (col * (H + 1) + r1) * 4;
        cols[k0] += w; cols[k0 + 1] += w * c[0]; cols[k0 + 2] += w * c[1]; cols[k0 + 3] += w * c[2];
        cols[k1] -= w; cols[k1 + 1] -= w * c[0]; cols[k1 + 2] -= w * c[1]; cols[k1 + 3] -= w * c[2];
      }
    }
    if (binned) this.drawBins(ctx, p, g);
    // rectangles 4 pixels or more: a thin outline, so that neighbours of
    // one colour stay apart
    ctx.strokeStyle = 'rgba(0,0,0,0.35)'; ctx.lineWidth = 1;
    for (let k = 0; k < outlined.length; k += 4)
      ctx.strokeRect(p.x + outlined[k] + 0.5, p.y + outlined[k + 1] + 0.5, outlined[k + 2] - 1, outlined[k + 3] - 1);
    return { rects: rects, binned: binned };
  };

  // The binned buffers as one image: the prefix sums of both grids, in
  // place; coverage is the pixel's opacity, the colour the weighted mean.
  Page.prototype.drawBins = function (ctx, p, g) {
    const W = g.W, H = g.H, rows = g.rows, cols = g.cols, px = g.img.data;
    for (let r = 0; r < H; r++)
      for (let k = r * (W + 1) * 4 + 4, e = k + W * 4; k < e; k++) rows[k] += rows[k - 4];
    for (let c = 0; c < W; c++)
      for (let k = c * (H + 1) * 4 + 4, e = k + H * 4; k < e; k++) cols[k] += cols[k - 4];
    for (let r = 0, o = 0; r < H; r++) {
      for (let c = 0; c < W; c++, o += 4) {
        const a = (r * (W + 1) + c) * 4, b = (c * (H + 1) + r) * 4, w = rows[a] + cols[b];
        if (w <= 1e-6) { px[o + 3] = 0; continue; }
        px[o] = (rows[a + 1] + cols[b + 1]) / w; px[o + 1] = (rows[a + 2] + cols[b + 2]) / w;
        px[o + 2] = (rows[a + 3] + cols[b + 3]) / w; px[o + 3] = 255 * Math.min(1, 0.25 + w);
      }
    }
    if (!this.off) this.off = document.createElement('canvas');
    if (this.off.width !== W || this.off.height !== H) { this.off.width = W; this.off.height = H; }
    this.off.getContext('2d').putImageData(g.img, 0, 0);
    ctx.drawImage(this.off, p.x, p.y, W, H);
  };

  // The tick a pixel column of the stacked view shows (a whole tick).
  Page.prototype.columnTick = function (c, W) {
    const v = this.view;
    return Math.floor(v.t0 + (c + 0.5) * (v.t1 - v.t0) / W);
  };

  // Inserts item i into @live, kept by rank (the bottom of the stack first).
  function insertByRank(live, rank, i) {
    let lo = 0, hi = live.length;
    while (lo < hi) { const m = (lo + hi) >> 1; if (rank[live[m]] < rank[i]) lo = m + 1; else hi = m; }
    live.splice(lo, 0, i);
  }

  // The items live at tick t, by rank.
  Page.prototype.liveAt = function (t) {
    const live = [];
    for (let i = upper(this.maxEnd, t), e = upper(this.start, t); i < e; i++)
      if (this.end[i] > t) insertByRank(live, this.rank, i);
    return live;
  };

  // The stacked view: every pixel column shows the items live at its
  // tick stacked by rank (the longest-lived at the bottom, the order the
  // scene computed), painted straight into the image; search matches red.
  Page.prototype.drawActive = function (ctx, p) {
    const L = this.tileLevel(p);
    if (L >= 0) return this.drawTiles(ctx, p, L);
    const v = this.view, W = Math.ceil(p.w), H = Math.ceil(p.h), sy = p.h / (v.a1 - v.a0);
    const g = this.grids(W, H), px = g.img.data;
    px.fill(0);
    const live = [];
    let next = upper(this.maxEnd, v.t0), drawn = 0;
    for (let c = 0; c < W; c++) {
      const t = this.columnTick(c, W);
      for (; next < this.n && this.start[next] <= t; next++)
        if (this.end[next] > t) insertByRank(live, this.rank, next);
      let keep = 0;
      for (let k = 0; k < live.length; k++) if (this.end[live[k]] > t) live[keep++] = live[k];
      live.length = keep;
      let y = 0;
      for (const i of live) {
        const b0 = y, b1 = y + this.size[i];
        y = b1;
        if (b1 <= v.a0) continue;
        if (b0 >= v.a1) break;
        const r0 = Math.max(0, Math.floor((v.a1 - b1) * sy)), r1 = Math.min(H, Math.max(r0 + 1, Math.ceil((v.a1 - b0) * sy)));
        const col = this.matched[i] ? RED : this.palette[this.cls[i]];
        // a buffer 3 pixels tall or more starts with a darker row, so that
        // neighbours of one colour stay apart
        const edge = r1 - r0 >= 3 ? 0.7 : 1;
        for (let r = r0, o = (r0 * W + c) * 4; r < r1; r++, o += W * 4) {
          const f = r === r0 ? edge : 1;
          px[o] = col[0] * f; px[o + 1] = col[1] * f; px[o + 2] = col[2] * f; px[o + 3] = 255;
        }
        drawn++;
      }
    }
    if (!this.off) this.off = document.createElement('canvas');
    if (this.off.width !== W || this.off.height !== H) { this.off.width = W; this.off.height = H; }
    this.off.getContext('2d').putImageData(g.img, 0, 0);
    ctx.drawImage(this.off, p.x, p.y, W, H);
    return { rects: 0, binned: 0, stacked: drawn };
  };

  // The item of the stacked view at tick t, stacked byte a; -1 when none.
  Page.prototype.hitActive = function (t, a) {
    let y = 0;
    for (const i of this.liveAt(Math.floor(t))) {
      if (a >= y && a < y + this.size[i]) return i;
      y += this.size[i];
    }
    return -1;
  };

  Page.prototype.drawAxes = function (ctx, p) {
    const v = this.view;
    ctx.fillStyle = '#333'; ctx.strokeStyle = '#ccc'; ctx.font = '11px sans-serif'; ctx.lineWidth = 1;
    ctx.strokeRect(p.x + 0.5, p.y + 0.5, p.w - 1, p.h - 1);
    const ts = Math.max(1, niceStep(v.t1 - v.t0, 8, 10));
    ctx.textAlign = 'center'; ctx.textBaseline = 'top';
    for (let t = Math.ceil(v.t0 / ts) * ts; t <= v.t1; t += ts) {
      const x = this.pixel(t, 0).x;
      ctx.fillRect(x, p.y + p.h, 1, 4);
      ctx.fillText(String(t), x, p.y + p.h + 6);
    }
    const as = niceStep(v.a1 - v.a0, 6, 2);
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    for (let a = Math.ceil(v.a0 / as) * as; a <= v.a1; a += as) {
      const y = this.pixel(0, a).y;
      ctx.fillRect(p.x - 4, y, 4, 1);
      ctx.fillText(human(a), p.x - 6, y);
    }
  };

  // Outlines the matches of the last search that are in view.
  Page.prototype.drawMatches = function (ctx, p) {
    if (!this.matches) return;
    ctx.save();
    ctx.beginPath(); ctx.rect(p.x, p.y, p.w, p.h); ctx.clip();
    ctx.strokeStyle = '#c0161a'; ctx.lineWidth = 2;
    const v = this.view;
    let drawn = 0;
    for (const i of this.matches) {
      if (this.end[i] <= v.t0 || this.start[i] >= v.t1) continue;
      const a = this.pixel(this.start[i], this.addr[i] + this.size[i]), b = this.pixel(this.end[i], this.addr[i]);
      ctx.strokeRect(a.x, a.y, Math.max(2, b.x - a.x), Math.max(2, b.y - a.y));
      if (++drawn >= 20000) break;
    }
    ctx.restore();
  };

  // Linked figures (diff's two runs) show the same ticks, and in the
  // stacked view the same bytes: every change of view is copied to them.
  Page.prototype.link = function () {
    for (const q of this.pages || []) {
      if (q === this || !q.d.linked) continue;
      if (q.mode !== this.mode) { q.mode = this.mode; q.modeEl.value = q.mode; q.fitView(); }
      q.view.t0 = this.view.t0; q.view.t1 = this.view.t1;
      if (this.mode === 'active') { q.view.a0 = this.view.a0; q.view.a1 = this.view.a1; }
      q.clamp();
      q.draw(true);
    }
  };

  Page.prototype.draw = function (linked) {
    const c = this.canvas, dpr = window.devicePixelRatio || 1, p = this.plot();
    const t = performance.now();
    if (c.width !== Math.round(p.cw * dpr) || c.height !== Math.round(p.ch * dpr)) {
      c.width = Math.round(p.cw * dpr); c.height = Math.round(p.ch * dpr);
    }
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, p.cw, p.ch);
    ctx.save();
    ctx.beginPath(); ctx.rect(p.x, p.y, p.w, p.h); ctx.clip();
    const active = this.mode === 'active';
    this.stats = active ? this.drawActive(ctx, p) : this.drawItems(ctx, p);
    ctx.restore();
    if (!active) { this.drawBands(ctx, p); this.drawMatches(ctx, p); }
    this.drawOom(ctx, p);
    if (this.tick !== null && this.tick >= this.view.t0 && this.tick <= this.view.t1) {
      ctx.fillStyle = 'rgba(0,0,0,0.6)';
      ctx.fillRect(Math.round(this.pixel(this.tick + 0.5, 0).x), p.y, 1, p.h);
    }
    this.drawAxes(ctx, p);
    this.drawPanels();
    const v = this.view;
    this.rangeEl.textContent = 'view: ticks ' + v.t0.toFixed(1) + ' – ' + v.t1.toFixed(1) + ' · bytes ' +
      human(Math.round(v.a0)) + ' – ' + human(Math.round(v.a1));
    this.frameMs = performance.now() - t;
    if (this.d.linked && !linked) this.link();
  };

  // The item under tick t, byte a: one that holds the point, else the
  // largest within @tolT ticks and @tolA bytes; -1 when none.
  Page.prototype.hit = function (t, a, tolT, tolA) {
    const lo = upper(this.maxEnd, t - tolT), hi = upper(this.start, t + tolT);
    let best = -1;
    for (let i = lo; i < hi; i++) {
      if (this.end[i] + tolT <= t) continue;
      const inside = this.start[i] <= t && t < this.end[i] && this.addr[i] <= a && a < this.addr[i] + this.size[i];
      if (inside) return i;
      if (this.addr[i] - tolA <= a && a < this.addr[i] + this.size[i] + tolA && (best < 0 || this.size[i] > this.size[best]))
        best = i;
    }
    return best;
  };

  // Item i's text: bytes and address exact (past 2^53 from the
  // figure's "wide" strings, which the Float64 columns would round).
  Page.prototype.describe = function (i) {
    const s = this.start[i], e = this.end[i], b = this.size[i], place = this.place[i], w = this.wide.get(i);
    const bytes = w ? w[1] : String(b), addr = w ? '0x' + BigInt(w[2]).toString(16) : hex(place);
    const g = this.d.bands.length ? this.d.segs[this.segOf(this.addr[i])] : null, note = this.notes.get(i);
    return 'buffer #' + this.buffer[i] + ' · ' + human(b) + ' (' + bytes + ' bytes)\n' +
      this.d.sites[this.site[i]] + '\n' +
      'ticks ' + s + ' – ' + e + ' (lifetime ' + (e - s) + ' ticks)\n' +
      'stream ' + (this.d.streams[this.stream[i]] || this.stream[i]) + (place ? ' · address ' + addr : '') +
      (g && g[7] >= 0 ? '\nin ' + this.d.bands[g[7]][3] : '') +
      (note ? note[2].map(text => '\nannotated: ' + text).join('') +
        (note[1] > note[2].length ? '\n… ' + (note[1] - note[2].length) + ' more annotations' : '') : '');
  };

  // The tooltip at CSS pixel (x, y) of the canvas; its text, '' when none.
  Page.prototype.hoverAt = function (x, y) {
    const p = this.plot(), q = this.at(x, y), v = this.view;
    const inPlot = x >= p.x && x < p.x + p.w && y >= p.y && y < p.y + p.h;
    const i = !inPlot ? -1 : this.mode === 'active' ? this.hitActive(this.columnTick(Math.floor(x - p.x), Math.ceil(p.w)), q.a)
      : this.hit(q.t, q.a, 2 * (v.t1 - v.t0) / p.w, 2 * (v.a1 - v.a0) / p.h);
    const oom = inPlot ? this.oomAt(x, y) : '';
    // no buffer there: the band of (pool, stream), whose label a thin band may lack
    const band = i < 0 && !oom && inPlot && this.mode === 'address' ? this.bandAt(q.a) : -1;
    this.hovered = oom ? -1 : i;
    if (i < 0 && !oom && band < 0) { this.tip.hidden = true; this.tip.textContent = ''; return ''; }
    this.tip.textContent = oom || (i >= 0 ? this.describe(i) : this.bandText(band));
    this.tip.dataset.buffer = oom || i < 0 ? '' : this.buffer[i];
    this.tip.dataset.band = band >= 0 ? band : '';
    this.tip.hidden = false;
    const left = this.canvas.offsetLeft + x + 14;
    this.tip.style.left = Math.min(left, this.canvas.offsetLeft + p.cw - this.tip.offsetWidth - 4) + 'px';
    this.tip.style.top = (this.canvas.offsetTop + y + 14) + 'px';
    return this.tip.textContent;
  };

  // Search: an address (0x… or decimal) finds the buffers whose bytes
  // held it; any other text, those whose call site or annotate text
  // contains it (any case).
  Page.prototype.search = function (text) {
    text = text.trim();
    this.matches = null;
    this.matched.fill(0);
    if (!text) { this.foundEl.textContent = ''; this.draw(); return null; }
    const m = [], num = /^(0x[0-9a-f]+|[0-9]+)$/i.test(text);
    if (num) {
      const a = Number(text.toLowerCase().startsWith('0x') ? parseInt(text.slice(2), 16) : text);
      for (let i = 0; i < this.n; i++)
        if (this.place[i] && this.place[i] <= a && a < this.place[i] + this.size[i]) m.push(i);
    } else {
      // the call site, or an annotate text tied to the buffer
      const want = text.toLowerCase(), sites = this.d.sites.map(s => s.toLowerCase().includes(want));
      const noted = new Set(this.d.notes.filter(n => n[2].some(t => t.toLowerCase().includes(want))).map(n => n[0]));
      for (let i = 0; i < this.n; i++) if (sites[this.site[i]] || noted.has(i)) m.push(i);
    }
    let bytes = 0;
    for (const i of m) bytes += this.size[i];
    this.matches = m;
    this.matched.fill(0);
    for (const i of m) this.matched[i] = 1;
    this.foundEl.dataset.count = m.length;
    this.foundEl.dataset.buffers = m.slice(0, 50).map(i => this.buffer[i]).join(',');
    this.foundEl.textContent = m.length + (m.length === 1 ? ' buffer' : ' buffers') + ' (' + human(bytes) + ')' +
      (m.length ? ': ' + m.slice(0, 5).map(i => '#' + this.buffer[i] + ' at ticks ' + this.start[i] + '–' + this.end[i]).join(', ') +
        (m.length > 5 ? ', …' : '') : '');
    this.draw();
    return m;
  };

  // Zooms the time axis to ticks [ta, tb] (either order).
  Page.prototype.zoomRange = function (ta, tb) {
    const v = this.view;
    v.t0 = Math.min(ta, tb); v.t1 = Math.max(ta, tb, v.t0 + 1e-3);
    this.clamp();
    this.draw();
  };

  // A click at CSS pixel (x, y) of the canvas: on the time axis, the
  // state at that tick; on a buffer, its stack. Returns what it did.
  Page.prototype.clickAt = function (x, y) {
    const p = this.plot();
    if (x >= p.x && x < p.x + p.w && y >= p.y + p.h) { this.selectTick(Math.floor(this.at(x, y).t)); return 'tick'; }
    this.hoverAt(x, y);
    const i = this.hovered;
    if (i < 0) return '';
    this.showStack(i);
    return 'buffer';
  };

  // Pointer gestures on @el, shared by the canvas and the curves panel:
  // a drag that starts where @isAxis(x, y) says selects a range of ticks
  // (zoom to it on release), any other drag pans; a press and release in
  // place is a click (@click(x, y)).
  Page.prototype.gestures = function (el, isAxis, click, redraw) {
    const self = this;
    let drag = null;
    function local(e) { const r = el.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; }
    el.addEventListener('pointerdown', function (e) {
      const q = local(e);
      drag = { x: e.clientX, y: e.clientY, q: q, v: Object.assign({}, self.view), range: isAxis(q.x, q.y), moved: false };
      if (el.setPointerCapture && e.pointerId !== undefined) try { el.setPointerCapture(e.pointerId); } catch (x) { /* synthetic */ }
      el.style.cursor = drag.range ? 'col-resize' : 'grabbing';
    });
    el.addEventListener('pointermove', function (e) {
      const q = local(e);
      if (!drag) { if (el === self.canvas) self.hoverAt(q.x, q.y); return; }
      if (Math.abs(e.clientX - drag.x) + Math.abs(e.clientY - drag.y) >= 3) drag.moved = true;
      if (!drag.moved) return;
      if (drag.range) { self.band = [drag.q.x, q.x]; redraw(); return; }
      const p = self.plot(), v = self.view, w = drag.v;
      const dt = -(e.clientX - drag.x) / p.w * (w.t1 - w.t0), da = (e.clientY - drag.y) / p.h * (w.a1 - w.a0);
      v.t0 = w.t0 + dt; v.t1 = w.t1 + dt; v.a0 = w.a0 + da; v.a1 = w.a1 + da;
      self.clamp(); redraw();
    });
    el.addEventListener('pointerup', function (e) {
      const q = local(e), d = drag;
      drag = null; el.style.cursor = ''; self.band = null;
      if (!d) return;
      if (!d.moved) { click(q.x, q.y); return; }
      if (d.range) self.zoomRange(self.at(d.q.x, 0).t, self.at(q.x, 0).t);
    });
  };

  Page.prototype.bind = function () {
    const c = this.canvas, self = this;
    let queued = false;
    function redraw() {
      if (queued) return;
      queued = true;
      requestAnimationFrame(function () { queued = false; self.draw(); });
    }
    function local(e) { const r = c.getBoundingClientRect(); return { x: e.clientX - r.left, y: e.clientY - r.top }; }
    this.redraw = redraw;
    c.addEventListener('wheel', function (e) {
      e.preventDefault();
      const q = local(e), at = self.at(q.x, q.y), f = e.deltaY < 0 ? 1 / 1.25 : 1.25;
      if (e.shiftKey) { const v = self.view; v.a0 = at.a - (at.a - v.a0) * f; v.a1 = at.a + (v.a1 - at.a) * f; }
      else { const v = self.view; v.t0 = at.t - (at.t - v.t0) * f; v.t1 = at.t + (v.t1 - at.t) * f; }
      self.clamp(); redraw();
    }, { passive: false });
    this.gestures(c, function (x, y) { const p = self.plot(); return y >= p.y + p.h; },
      function (x, y) { self.clickAt(x, y); }, redraw);
    c.addEventListener('pointerleave', function () { self.tip.hidden = true; });
    c.addEventListener('dblclick', function () { self.fit(); });
    this.fig.querySelector('.ml-fit').addEventListener('click', function () { self.fit(); });
    this.modeEl = this.fig.querySelector('.ml-mode');
    this.modeEl.value = this.mode;
    this.modeEl.addEventListener('change', function () { self.setMode(self.modeEl.value); });
    const box = this.fig.querySelector('.ml-search');
    box.addEventListener('change', function () { self.search(box.value); });
    box.addEventListener('keydown', function (e) { if (e.key === 'Enter') self.search(box.value); });
    window.addEventListener('resize', redraw);
  };

  return { Page: Page, decode: decode, human: human, hex: hex, niceStep: niceStep, upper: upper, MARGIN: MARGIN };
})();
