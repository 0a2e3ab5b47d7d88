// page-panels.js — the panels of an interactive figure (render/page.h),
// after page.js in the page: the legend of the colouring chosen, the live
// / reserved / fragmentation curves under the picture on its time axis
// (with the peaks marked), the list of peaks with their blame, the
// segments and blocks at a clicked tick, and a clicked buffer's stack.
// Every number comes from the figure's data, computed in C
// (render/page-panels.c): the curves (per-bin maxima on long traces), the
// peak groups and who holds the memory at each, the segments' lifetimes
// and mappings. The state at a tick is put together here from those and
// the buffers, as ml_state_at (sim/analysis/state.h) does: per segment
// reserved at the tick, its live buffers in address order, the bytes
// between them free where mapped, unmapped elsewhere.
'use strict';
(function () {
  const L = window.memlensLib, Page = L.Page, human = L.human, hex = L.hex, upper = L.upper, decode = L.decode;
  const CM = { top: 6, bottom: 6 };
  const LIVE = '#4e79a7', RESERVED = '#f28e2b', FRAG = '#c0161a';
  const MAX_ROWS = 2000;   // blocks listed at a tick (the totals count all)

  function node(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  // Exact bytes for a JSON value that may be a string past 2^53.
  function exact(v) { return typeof v === 'string' ? v : String(v); }

  Page.prototype.initPanels = function () {
    const d = this.d, fig = this.fig, self = this, c = d.curve;
    this.curvesEl = fig.querySelector('canvas.ml-curves');
    this.legendEl = fig.querySelector('.ml-legend');
    this.stateEl = fig.querySelector('.ml-state');
    this.stackEl = fig.querySelector('.ml-stack');
    this.peaksEl = fig.querySelector('.ml-peaks ol');
    this.curve = { n: c.n, tick: new Float64Array(decode(c.tick)), live: new Float64Array(decode(c.live)),
      reserved: new Float64Array(decode(c.reserved)), frag: c.fragKnown ? new Float32Array(decode(c.frag)) : null };
    let top = 1;
    for (let i = 0; i < c.n; i++) top = Math.max(top, this.curve.live[i], this.curve.reserved[i]);
    this.curve.top = top;
    // segments by global base, for the segment of an address
    this.segOrder = d.segs.map((s, g) => g).sort((a, b) => d.segs[a][0] - d.segs[b][0]);
    this.segBase = Float64Array.from(this.segOrder, g => d.segs[g][0]);
    this.segMaps = new Map();
    for (const m of d.maps) {
      if (!this.segMaps.has(m[0])) this.segMaps.set(m[0], []);
      this.segMaps.get(m[0]).push(m);
    }
    this.notes = new Map(d.notes.map(n => [n[0], n]));
    this.colorEl = fig.querySelector('.ml-color');
    this.colorEl.value = this.colorBy;
    this.colorEl.addEventListener('change', function () { self.setColor(self.colorEl.value); });
    this.gestures(this.curvesEl, function () { return true; },
      function (x) { self.selectTick(Math.floor(self.at(x, 0).t)); }, this.redraw);
    this.listPeaks();
    this.drawLegend();
  };

  // ---- colour ------------------------------------------------------------------

  Page.prototype.setColor = function (key) {
    if (!this.clsBy[key]) key = 'site';
    this.colorBy = key;
    this.cls = this.clsBy[key];
    this.colorEl.value = key;
    this.drawLegend();
    this.draw();
  };

  // The legend of the colouring: the scene's colour classes (the same as
  // the static picture's and the viewer's), full labels.
  Page.prototype.drawLegend = function () {
    const el = this.legendEl;
    el.textContent = '';
    const by = this.d.colorings.find(c => c.key === this.colorBy);
    if (this.colorBy === 'site' && this.d.perBuffer) {
      el.appendChild(node('span', 'one colour per buffer (the input names no call sites)'));
      return;
    }
    for (const [k, label, count] of by.classes) {
      const s = node('span');
      const sw = node('i');
      sw.style.background = this.cssPalette[k];
      s.appendChild(sw);
      s.appendChild(document.createTextNode(label + ' (' + count + (count === 1 ? ' buffer)' : ' buffers)')));
      s.dataset.cls = k;
      el.appendChild(s);
    }
  };

  // ---- curves ------------------------------------------------------------------

  // Per pixel column of ticks [ta, tb): the highest value of @val there
  // (a step curve: each point holds until the next).
  Page.prototype.columnMax = function (val, W) {
    const v = this.view, c = this.curve, out = new Float64Array(W);
    let k = upper(c.tick, v.t0) - 1;
    for (let x = 0; x < W; x++) {
      const tb = v.t0 + (x + 1) * (v.t1 - v.t0) / W;
      let m = k >= 0 ? val[k] : 0;
      while (k + 1 < c.n && c.tick[k + 1] < tb) { k++; m = Math.max(m, val[k]); }
      out[x] = m;
    }
    return out;
  };

  Page.prototype.drawCurves = function () {
    const el = this.curvesEl, dpr = window.devicePixelRatio || 1, p = this.plot();
    const w = el.clientWidth || el.width, h = el.clientHeight || el.height;
    if (el.width !== Math.round(w * dpr) || el.height !== Math.round(h * dpr)) {
      el.width = Math.round(w * dpr); el.height = Math.round(h * dpr);
    }
    // headroom above the highest value for the key; linked figures (diff's
    // two runs) on one scale
    let most = this.curve.top;
    if (this.d.linked) for (const q of this.pages || []) if (q.d.linked) most = Math.max(most, q.curve.top);
    const ctx = el.getContext('2d'), W = Math.ceil(p.w), ph = h - CM.top - CM.bottom, top = most * 1.2;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, w, h);
    const y = b => CM.top + ph - b / top * ph;
    const live = this.columnMax(this.curve.live, W), res = this.columnMax(this.curve.reserved, W);
    ctx.save();
    ctx.beginPath(); ctx.rect(p.x, 0, p.w, h); ctx.clip();
    ctx.fillStyle = 'rgba(78,121,167,0.35)';
    for (let x = 0; x < W; x++) if (live[x] > 0) ctx.fillRect(p.x + x, y(live[x]), 1, CM.top + ph - y(live[x]));
    const line = (vals, color, scale) => {
      ctx.strokeStyle = color; ctx.lineWidth = 1.5; ctx.beginPath();
      for (let x = 0; x < W; x++) ctx[x ? 'lineTo' : 'moveTo'](p.x + x + 0.5, scale(vals[x]));
      ctx.stroke();
    };
    line(live, LIVE, y);
    line(res, RESERVED, y);
    if (this.curve.frag) line(this.columnMax(this.curve.frag, W), FRAG, f => CM.top + ph - f * ph);
    // the peaks: a dot at every occurrence in view
    ctx.fillStyle = '#222';
    let dots = 0;
    for (const pk of this.d.peaks)
      for (const t of pk.ticks) {
        if (t < this.view.t0 || t > this.view.t1) continue;
        ctx.beginPath(); ctx.arc(this.pixel(t + 0.5, 0).x, y(Number(pk.live)), 2.5, 0, 2 * Math.PI); ctx.fill();
        dots++;
      }
    if (this.tick !== null) { ctx.fillStyle = 'rgba(0,0,0,0.6)'; ctx.fillRect(Math.round(this.pixel(this.tick + 0.5, 0).x), 0, 1, h); }
    ctx.restore();
    // axes: bytes on the left, fragmentation on the right
    ctx.fillStyle = '#333'; ctx.font = '11px sans-serif'; ctx.strokeStyle = '#ccc'; ctx.lineWidth = 1;
    ctx.strokeRect(p.x + 0.5, CM.top + 0.5, p.w - 1, ph - 1);
    ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
    const as = L.niceStep(top, 3, 2);
    for (let a = 0; a <= most; a += as) { ctx.fillRect(p.x - 4, y(a), 4, 1); ctx.fillText(human(a), p.x - 6, y(a)); }
    ctx.textAlign = 'left'; ctx.textBaseline = 'top';
    ctx.fillStyle = 'rgba(255,255,255,0.85)'; ctx.fillRect(p.x + 2, CM.top + 2, 320, 16);
    const keys = [['live', LIVE], ['reserved', RESERVED]].concat(this.curve.frag ? [['fragmentation (0–100 %)', FRAG]] : []);
    let kx = p.x + 8;
    for (const [name, color] of keys) {
      ctx.fillStyle = color; ctx.fillRect(kx, CM.top + 8, 12, 3);
      ctx.fillStyle = '#333'; ctx.fillText(name, kx + 16, CM.top + 4);
      kx += 24 + ctx.measureText(name).width;
    }
    this.curveStats = { liveMax: Math.max(0, ...live), reservedMax: Math.max(0, ...res), dots: dots, top: most };
    return ctx;
  };

  // The range being dragged, shaded on both canvases.
  Page.prototype.drawBand = function (ctx, top, h) {
    if (!this.band) return;
    const a = Math.min(this.band[0], this.band[1]), b = Math.max(this.band[0], this.band[1]);
    ctx.fillStyle = 'rgba(26,86,168,0.18)';
    ctx.fillRect(a, top, b - a, h);
  };

  Page.prototype.drawPanels = function () {
    const p = this.plot();
    this.drawBand(this.canvas.getContext('2d'), p.y, p.h);
    const ctx = this.drawCurves();
    this.drawBand(ctx, 0, this.curvesEl.clientHeight || this.curvesEl.height);
  };

  // ---- bands of (pool, stream) ----------------------------------------------------

  // The band (index in d.bands) that holds global address @a, -1 for none.
  Page.prototype.bandAt = function (a) {
    const bands = this.d.bands;
    for (let b = 0; b < bands.length; b++) if (a >= bands[b][0] && a < bands[b][1]) return b;
    return -1;
  };

  // The band's hover text: its label and how many segments it has.
  Page.prototype.bandText = function (b) {
    const band = this.d.bands[b];
    return band[3] + '\n' + band[2] + (band[2] === 1 ? ' segment' : ' segments');
  };

  // Whether rectangles @r and @q meet.
  function meet(r, q) { return r.x < q.x + q.w && q.x < r.x + r.w && r.y < q.y + q.h && q.y < r.y + r.h; }

  // Where a label of @w x @h goes, its band's visible part being rows
  // [y0, y1) (as the static picture puts it, _ml_draw_bands): inside at
  // the top left, or lower inside clear of the labels @placed; else just
  // above the band (side -1), else just below (+1); inside the plot and
  // clear of @placed, or null.
  function placeLabel(p, y0, y1, w, h, placed) {
    const x = p.x + 4;
    if (x + w > p.x + p.w - 2) return null;
    for (let y = Math.max(y0, p.y) + 2; y + h <= Math.min(y1, p.y + p.h) - 2;) {
      const r = { x: x, y: y, w: w, h: h, side: 0 };
      const hit = placed.filter(q => meet(r, q));
      if (!hit.length) return r;
      y = Math.max(y + 1, ...hit.map(q => q.y + q.h + 1));
    }
    for (const [y, side] of [[y0 - h - 1, -1], [y1 + 1, 1]]) {
      const r = { x: x, y: y, w: w, h: h, side: side };
      if (r.y >= p.y && r.y + r.h <= p.y + p.h && !placed.some(q => meet(r, q))) return r;
    }
    return null;
  }

  // The bands over the address view: a dashed line where one ends and the
  // next begins, each band's label at the top left of its visible part on
  // a veil (beside a band too thin for it, with an arrow at the band); a
  // band with no room for its label has none, its hover names it.
  Page.prototype.drawBands = function (ctx, p) {
    const bands = this.d.bands, v = this.view;
    this.bandLabels = [];
    if (!bands.length || this.mode !== 'address') return;
    ctx.save();
    ctx.beginPath(); ctx.rect(p.x, p.y, p.w, p.h); ctx.clip();
    ctx.setLineDash([6, 3]); ctx.lineWidth = 1.5; ctx.strokeStyle = 'rgba(0,0,0,0.6)';
    ctx.beginPath();
    for (let b = 1; b < bands.length; b++) {
      const y = Math.floor(this.pixel(0, bands[b][0]).y) + 0.5;
      if (y > p.y && y < p.y + p.h) { ctx.moveTo(p.x, y); ctx.lineTo(p.x + p.w, y); }
    }
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.font = 'bold 10.5px sans-serif'; ctx.textAlign = 'left'; ctx.textBaseline = 'top';
    const placed = [], h = 15;
    for (let b = bands.length - 1; b >= 0; b--) {   // the top band first, as the picture
      const lo = Math.max(bands[b][0], v.a0), hi = Math.min(bands[b][1], v.a1);
      if (hi <= lo) continue;
      const y0 = this.pixel(0, hi).y, y1 = this.pixel(0, lo).y;
      const r = placeLabel(p, y0, y1, ctx.measureText(bands[b][3] + ' ↓').width + 8, h, placed);
      if (!r) continue;
      const text = bands[b][3] + (r.side < 0 ? ' ↓' : r.side > 0 ? ' ↑' : '');
      if (!r.side) r.w = ctx.measureText(text).width + 8;
      placed.push(r);
      ctx.fillStyle = 'rgba(255,255,255,0.88)'; ctx.fillRect(r.x, r.y, r.w, r.h);
      ctx.strokeStyle = 'rgba(0,0,0,0.6)'; ctx.lineWidth = 1; ctx.strokeRect(r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
      ctx.fillStyle = '#222'; ctx.fillText(text, r.x + 4, r.y + 2);
      this.bandLabels.push({ band: b, text: text, x: r.x, y: r.y, w: r.w, h: r.h, top: y0, bottom: y1 });
    }
    ctx.restore();
  };

  // ---- the OOM ---------------------------------------------------------------------

  // Where the refused request is drawn, in CSS pixels, as the static
  // picture puts it (ml_timeline_oom_request_box): at the OOM tick (at
  // least 12 pixels wide), from where the plan would have placed it
  // (address × time) or on top of the stack (stacked); null when none.
  Page.prototype.oomBox = function () {
    const o = this.d.oom;
    if (!o || !o.drawn) return null;
    const x0 = this.pixel(o.tick, 0).x, x1 = Math.max(this.pixel(o.tick + 1, 0).x, x0 + 12);
    const lo = this.mode === 'active' ? o.stack : o.addr, hi = lo + o.bytes;
    let y0 = this.pixel(0, hi).y, y1 = this.pixel(0, lo).y;
    if (y1 - y0 < 3) { const c = (y0 + y1) / 2; y0 = c - 1.5; y1 = c + 1.5; }
    return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  };

  // The OOM: a red line at its tick, the refused request hatched.
  Page.prototype.drawOom = function (ctx, p) {
    const o = this.d.oom;
    if (!o || o.tick < this.view.t0 || o.tick > this.view.t1) return;
    ctx.save();
    ctx.beginPath(); ctx.rect(p.x, p.y, p.w, p.h); ctx.clip();
    ctx.fillStyle = '#c0161a';
    ctx.fillRect(this.pixel(o.tick, 0).x - 1, p.y, 2, p.h);
    const b = this.oomBox();
    if (b) {
      ctx.fillStyle = 'rgba(192,22,26,0.18)'; ctx.fillRect(b.x, b.y, b.w, b.h);
      ctx.strokeStyle = '#c0161a'; ctx.lineWidth = 1.5; ctx.strokeRect(b.x, b.y, b.w, b.h);
      ctx.save();
      ctx.beginPath(); ctx.rect(b.x, b.y, b.w, b.h); ctx.clip();
      ctx.beginPath(); ctx.lineWidth = 1;
      for (let k = -b.h; k < b.w; k += 6) { ctx.moveTo(b.x + k, b.y + b.h); ctx.lineTo(b.x + k + b.h, b.y); }
      ctx.stroke();
      ctx.restore();
    }
    ctx.restore();
  };

  // The OOM's text when CSS pixel (x, y) is on the refused request, else ''.
  Page.prototype.oomAt = function (x, y) {
    const o = this.d.oom, b = this.oomBox();
    if (!b || x < b.x || x >= b.x + b.w || y < b.y || y >= b.y + b.h) return '';
    return 'out of memory at tick ' + o.tick + ' (' + o.verdict + ')\n' +
      'request of ' + human(Number(o.request)) + ' (' + exact(o.request) + ' bytes) refused\n' +
      'live ' + human(Number(o.live)) + ', reserved ' + human(Number(o.reserved));
  };

  // ---- the state at a tick -------------------------------------------------------

  // The segment that holds global address @a (the scene lays them side by side).
  Page.prototype.segOf = function (a) {
    let k = upper(this.segBase, a) - 1;
    while (k > 0 && this.d.segs[this.segOrder[k]][1] === 0) k--;
    return k < 0 ? -1 : this.segOrder[k];
  };

  // The segments and blocks at tick @t (after its events): see the top.
  Page.prototype.stateAt = function (t) {
    const segs = this.d.segs, pieces = new Map(), hw = new Map();
    for (let i = upper(this.maxEnd, t), e = upper(this.start, t); i < e; i++) {
      if (this.end[i] <= t) continue;
      const g = this.segOf(this.addr[i]);
      if (!pieces.has(g)) pieces.set(g, []);
      pieces.get(g).push([this.addr[i] - segs[g][0], this.size[i], i]);
    }
    const growable = segs.some(s => s[6] === 'growable' && s[3] <= t && t < s[4]);
    for (let i = 0, e = growable ? upper(this.start, t) : 0; i < e; i++) {
      const g = this.segOf(this.addr[i]);
      if (segs[g][6] === 'growable') hw.set(g, Math.max(hw.get(g) || 0, this.addr[i] - segs[g][0] + this.size[i]));
    }
    const out = { tick: t, segs: [], allocated: 0, free: 0, unmapped: 0, blocks: 0 };
    for (let g = 0; g < segs.length; g++) {
      const s = segs[g];
      if (!(s[3] <= t && t < s[4])) continue;
      const p = (pieces.get(g) || []).sort((a, b) => a[0] - b[0] || this.buffer[a[2]] - this.buffer[b[2]]);
      let size = Number(s[2]);
      if (p.length) size = Math.max(size, p[p.length - 1][0] + p[p.length - 1][1]);
      let mapped;
      if (s[6] === 'growable') mapped = hw.get(g) ? [[0, hw.get(g)]] : [];
      else if (s[6] === 'expandable' && this.segMaps.has(g))
        mapped = this.segMaps.get(g).filter(m => m[3] <= t && t < m[4]).map(m => [m[1], Math.min(size, m[1] + m[2])])
          .sort((a, b) => a[0] - b[0]);
      else mapped = [[0, size]];
      const ss = { seg: g, size: size, kind: s[6], addr: s[5], allocated: 0, free: 0, unmapped: 0, blocks: [] };
      const emit = (off, n, kind, item) => {
        if (n <= 0) return;
        ss.blocks.push({ offset: off, size: n, kind: kind, item: item });
        ss[kind] += n;
      };
      const gap = (lo, hi) => {
        let x = lo;
        for (const [a0, b0] of mapped) {
          if (x >= hi) break;
          const a = Math.max(a0, x), b = Math.min(b0, hi);
          if (b <= a) continue;
          emit(x, a - x, 'unmapped', -1); emit(a, b - a, 'free', -1);
          x = b;
        }
        if (x < hi) emit(x, hi - x, 'unmapped', -1);
      };
      let x = 0;
      for (const [off, n, i] of p) {
        if (off > x) gap(x, off);
        emit(off, n, 'allocated', i);
        x = Math.max(x, off + n);
      }
      if (x < size) gap(x, size);
      out.allocated += ss.allocated; out.free += ss.free; out.unmapped += ss.unmapped; out.blocks += ss.blocks.length;
      out.segs.push(ss);
    }
    return out;
  };

  // Shows the state at tick @t; linked figures (diff's two runs) show
  // their own state at the same tick.
  Page.prototype.selectTick = function (t, linked) {
    t = Math.max(0, Math.min(this.span() - 1, Math.floor(t)));
    this.tick = t;
    this.state = this.stateAt(t);
    this.showState(this.state);
    this.draw();
    if (this.d.linked && !linked)
      for (const q of this.pages || []) if (q !== this && q.d.linked) q.selectTick(t, true);
    return this.state;
  };

  // One segment's row: a bar of its blocks (allocated in their colour,
  // free grey, unmapped white) over its address space.
  Page.prototype.segmentBar = function (ss) {
    const bar = node('div', null, 'ml-segbar');
    bar.style.cssText = 'display:flex;height:10px;border:1px solid #bbb;margin:2px 0 4px';
    for (const b of ss.blocks) {
      const e = node('span');
      e.style.cssText = 'flex:' + b.size + ' 1 0;min-width:0;background:' +
        (b.kind === 'allocated' ? this.cssPalette[this.cls[b.item]] : b.kind === 'free' ? '#ddd' : '#fff');
      bar.appendChild(e);
    }
    return bar;
  };

  Page.prototype.showState = function (st) {
    const el = this.stateEl;
    el.textContent = '';
    el.appendChild(node('h4', 'At tick ' + st.tick));
    const sum = node('p', st.segs.length + (st.segs.length === 1 ? ' segment' : ' segments') + ' reserved: ' +
      human(st.allocated) + ' allocated, ' + human(st.free) + ' free (cached), ' + human(st.unmapped) + ' unmapped', 'ml-sum');
    sum.title = st.allocated + ' bytes allocated, ' + st.free + ' free, ' + st.unmapped + ' unmapped';
    Object.assign(sum.dataset, { allocated: st.allocated, free: st.free, unmapped: st.unmapped, segments: st.segs.length });
    el.appendChild(sum);
    const box = node('div', null, 'ml-blocks');
    let rows = 0, band = -1;
    // with bands of (pool, stream): their segments together, each band
    // headed by its label and sums (as the state panel of render --at)
    const bands = this.d.bands, bandOf = ss => bands.length ? this.d.segs[ss.seg][7] : -1;
    const segs = st.segs.slice().sort((a, b) => bandOf(a) - bandOf(b) || a.seg - b.seg);
    for (const ss of segs) {
      if (bandOf(ss) !== band) {
        band = bandOf(ss);
        const mine = segs.filter(x => bandOf(x) === band);
        const sum = k => mine.reduce((n, x) => n + x[k], 0);
        const h = node('div', bands[band][3] + ' — ' + mine.length + (mine.length === 1 ? ' segment' : ' segments') +
          ': ' + human(sum('allocated')) + ' allocated, ' + human(sum('free')) + ' free (cached)', 'ml-bandhead');
        Object.assign(h.dataset, { band: band, segments: mine.length, allocated: sum('allocated'), free: sum('free') });
        box.appendChild(h);
      }
      const head = node('div', 'segment ' + ss.seg + (Number(ss.addr) ? ' at ' + hex(Number(ss.addr)) : '') + ', ' +
        human(ss.size) + (ss.kind === 'fixed' ? '' : ' (' + ss.kind + ')') + ': ' + human(ss.allocated) + ' allocated, ' +
        human(ss.free) + ' free' + (ss.unmapped ? ', ' + human(ss.unmapped) + ' unmapped' : ''));
      head.className = 'ml-seg';
      head.dataset.seg = ss.seg;
      box.appendChild(head);
      box.appendChild(this.segmentBar(ss));
      const ul = node('ul');
      for (const b of ss.blocks) {
        if (rows++ >= MAX_ROWS) break;
        const note = b.item >= 0 ? this.notes.get(b.item) : null;
        const who = b.item >= 0 ? ' #' + this.buffer[b.item] + ' ' + this.d.sites[this.site[b.item]] +
          (note ? ' — annotated: ' + note[2].join('; ') + (note[1] > note[2].length ? '; …' : '') : '') : '';
        const li = node('li', '+' + human(b.offset) + ': ' + human(b.size) + ' ' + b.kind + who, 'ml-block');
        li.title = 'offset ' + b.offset + ', ' + b.size + ' bytes';
        Object.assign(li.dataset, { seg: ss.seg, offset: b.offset, size: b.size, kind: b.kind,
          buffer: b.item >= 0 ? this.buffer[b.item] : '' });
        ul.appendChild(li);
      }
      box.appendChild(ul);
    }
    if (rows > MAX_ROWS) box.appendChild(node('p', '… ' + (st.blocks - MAX_ROWS) + ' more blocks (zoom in on the picture)', 'ml-hint'));
    el.appendChild(box);
  };

  // ---- a buffer's stack ------------------------------------------------------------

  Page.prototype.showStack = function (i) {
    const el = this.stackEl, frames = this.d.stacks[this.stack[i]] || [];
    el.textContent = '';
    el.appendChild(node('h4', 'Buffer #' + this.buffer[i]));
    for (const line of this.describe(i).split('\n').slice(1)) el.appendChild(node('p', line, 'ml-what'));
    el.dataset.buffer = this.buffer[i];
    if (!frames.length) { el.appendChild(node('p', 'The trace recorded no stack for this buffer.', 'ml-hint')); return; }
    el.appendChild(node('p', 'Stack, innermost first (' + frames.length + (frames.length === 1 ? ' frame):' : ' frames):')));
    const ol = node('ol', null, 'ml-frames');
    for (const f of frames) ol.appendChild(node('li', f));
    el.appendChild(ol);
  };

  // ---- peaks -----------------------------------------------------------------------

  Page.prototype.listPeaks = function () {
    const ol = this.peaksEl, self = this;
    ol.textContent = '';
    if (!this.d.peaks.length) { ol.appendChild(node('li', 'no peaks (nothing is live)')); return; }
    this.d.peaks.forEach(function (pk, k) {
      const li = node('li', null, 'ml-peakrow');
      const b = node('button', pk.text, 'ml-peak');
      b.type = 'button';
      b.title = 'zoom to tick ' + pk.top;
      b.addEventListener('click', function () { self.zoomToPeak(k); });
      li.appendChild(b);
      li.appendChild(node('span', ' at tick ' + pk.top + ', ' + pk.nLive + ' buffers live; held by:'));
      const ul = node('ul');
      for (const [site, bytes, count] of pk.sites) {
        const s = node('li', site + ': ' + human(Number(bytes)) + ' (' + count + (count === 1 ? ' buffer)' : ' buffers)'));
        s.dataset.bytes = exact(bytes);
        ul.appendChild(s);
      }
      if (pk.nSites > pk.sites.length) ul.appendChild(node('li', '… ' + (pk.nSites - pk.sites.length) + ' more call sites'));
      li.appendChild(ul);
      li.dataset.top = pk.top;
      li.dataset.live = exact(pk.live);
      ol.appendChild(li);
    });
  };

  // Zooms to peak group @k's first occurrence at its level (a fortieth
  // of the trace around it) and shows the state there.
  Page.prototype.zoomToPeak = function (k) {
    const pk = this.d.peaks[k], w = Math.max(20, this.span() / 40);
    this.view.t0 = pk.top + 0.5 - w / 2; this.view.t1 = pk.top + 0.5 + w / 2;
    this.clamp();
    this.selectTick(pk.top);
  };

  // ---- start -----------------------------------------------------------------------

  const pages = [];
  for (const fig of document.querySelectorAll('figure.ml-page')) {
    const p = new Page(fig);
    p.loadMs = performance.now();
    fig.dataset.loadMs = p.loadMs.toFixed(1);
    pages.push(p);
  }
  Page.prototype.pages = pages;
  window.memlensPages = pages;
  // the curves of linked figures share the highest of their scales
  for (const p of pages) if (p.d.linked) p.draw(true);
})();
