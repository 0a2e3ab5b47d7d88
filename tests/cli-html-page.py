#!/usr/bin/env python3
"""The interactive HTML page (report --interactive, issue 29 section 1) in a
real browser: Debian's chromium, headless.

A trace written here (explicit ticks and recorded addresses, so that every
expected number is read back from the file by a few lines of Python) is
reported with --interactive; a copy of the page gets a test script at its
end (inline, as the page's own policy allows) that drives the page with
real DOM events — a pointer move over a known buffer, a wheel turn, the
search box — and writes what it saw into the DOM; chromium --dump-dom
prints it. Checked against the raw file: the hover text (bytes, call site,
ticks, stream, address), the visible tick range after the zoom, the
buffers an address search finds, the buffers a call-site search finds;
and that a zoomed-out view bins what is under a pixel. The page holds no
network reference, and a screenshot is written for people to look at.

argv: memlens, the source root, [a folder for the screenshot]. TAP; skips
(1..0) without chromium or without the HTML report (no cairo)."""
import atexit
import html
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

memlens, src = sys.argv[1], sys.argv[2]
shots = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done  # noqa: E402

chromium = shutil.which('chromium') or shutil.which('chromium-browser')
if not chromium:
    print('1..0 # SKIP chromium is not installed (tools/deps.sh installs it)')
    sys.exit(0)
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)   # screenshots to keep: the third argument
ALIGN = 512
BASE = 0x7f0000000000
SITES = ['model.py:%d:forward' % (40 + 3 * k) for k in range(8)] + \
    ['torch/optim/adam.py:84:_init_group', 'torch/nn/functional.py:3053:cross_entropy']
BIG = {'addr': BASE + (64 << 20), 'size': 64 << 20, 'start': 1000, 'end': 5000, 'stack': 1, 'stream': 9}


FRAMES = [['torch/nn/modules/module.py', 1527, '_call_impl'], ['train.py', 88, 'main']]
# segments (id, address, bytes, allocated at, freed at or None): the 64
# slots lie in the first two, the 64 MiB buffer in the second; the third
# holds nothing (all of it free while it is reserved)
SEGMENTS = [(1, BASE, 32 << 20, 0, None), (2, BASE + (32 << 20), 96 << 20, 0, None),
            (3, BASE + (256 << 20), 2 << 20, 100, 15000)]


def write_trace(path, seed=29, horizon=20000, segments=SEGMENTS):
    """64 slots of 1 MiB reused over @horizon ticks by small buffers, and
    one 64 MiB buffer above them, in the segments above."""
    rnd = random.Random(seed)
    bufs = [dict(BIG)]
    for slot in range(64):
        t = rnd.randrange(0, 200)
        while t < horizon:
            life = rnd.randrange(5, 400)
            bufs.append({'addr': BASE + (slot << 20), 'size': rnd.randrange(1, 2049) * 512 - rnd.randrange(0, 2),
                         'start': t, 'end': t + life, 'stack': 1 + rnd.randrange(len(SITES)),
                         'stream': rnd.choice((7, 9))})
            t += life + rnd.randrange(0, 50)
    events = []  # (tick, order, line): segments reserved first, then frees, allocations, segment frees
    for k, b in enumerate(bufs):
        events.append((b['start'], 1, k, {'kind': 'alloc', 'tick': b['start'], 'id': k + 1, 'addr': hex(b['addr']),
                                          'size': b['size'], 'stream': b['stream'], 'stack': b['stack']}))
        events.append((b['end'], 0, k, {'kind': 'free', 'tick': b['end'], 'id': k + 1}))
    for sid, addr, size, t0, t1 in segments:
        events.append((t0, -1, sid, {'kind': 'segment_alloc', 'tick': t0, 'id': sid, 'addr': hex(addr), 'size': size}))
        if t1 is not None:
            events.append((t1, 2, sid, {'kind': 'segment_free', 'tick': t1, 'id': sid, 'addr': hex(addr), 'size': size}))
    events.sort(key=lambda e: e[:3])
    with open(path, 'w') as f:
        f.write(json.dumps({'format': 'memlens-trace', 'version': 1, 'alignment': ALIGN}) + '\n')
        for s, site in enumerate(SITES, 1):
            file, line, func = site.split(':')
            f.write(json.dumps({'kind': 'stack', 'sid': s, 'site': site,
                                'frames': [[file, int(line), func]] + FRAMES}) + '\n')
        for e in events:
            f.write(json.dumps(e[3]) + '\n')


def read_trace(path):
    """The buffers of the file, in allocation order (memlens's buffer
    index), sizes rounded to the alignment, and one past the last tick;
    the stacks' frames and the segments."""
    sites, frames, live, out, last, segs, seg_live = {}, {}, {}, [], 0, [], {}
    with open(path) as f:
        head = json.loads(f.readline())
        align = head.get('alignment', 1)
        for line in f:
            e = json.loads(line)
            if e['kind'] == 'stack':
                sites[e['sid']] = e['site']
                frames[e['sid']] = ['%s:%d:%s' % tuple(x) for x in e['frames']]
            elif e['kind'] == 'alloc':
                b = {'addr': int(e['addr'], 16), 'size': -(-e['size'] // align) * align, 'start': e['tick'],
                     'site': sites[e['stack']], 'stream': e['stream'], 'frames': frames[e['stack']]}
                live[e['id']] = b
                out.append(b)
            elif e['kind'] == 'free':
                live.pop(e['id'])['end'] = e['tick']
            elif e['kind'] == 'segment_alloc':
                g = {'addr': int(e['addr'], 16), 'size': e['size'], 'start': e['tick'], 'end': None}
                seg_live[e['id']] = g
                segs.append(g)
            elif e['kind'] == 'segment_free':
                seg_live.pop(e['id'])['end'] = e['tick']
            last = max(last, e.get('tick', 0))
    for g in segs:
        g['end'] = last + 1 if g['end'] is None else g['end']
    return out, last + 1, segs


def state_at(bufs, segs, t):
    """The blocks at tick t, per segment reserved then in address order:
    (segment address, offset, bytes, kind, buffer index or '')."""
    out = []
    for g in sorted(segs, key=lambda g: g['addr']):
        if not g['start'] <= t < g['end']:
            continue
        x = 0
        for k, b in sorted(((k, b) for k, b in enumerate(bufs) if b['start'] <= t < b['end']
                            and g['addr'] <= b['addr'] < g['addr'] + g['size']), key=lambda kb: kb[1]['addr']):
            off = b['addr'] - g['addr']
            if off > x:
                out.append((g['addr'], x, off - x, 'free', ''))
            out.append((g['addr'], off, b['size'], 'allocated', k))
            x = max(x, off + b['size'])
        if x < g['size']:
            out.append((g['addr'], x, g['size'] - x, 'free', ''))
    return out


def live_max(bufs):
    """The most bytes live at once (frees before allocations at a tick)."""
    steps = sorted([(x['start'], 1, x['size']) for x in bufs] + [(x['end'], 0, -x['size']) for x in bufs])
    top = cur = 0
    for _, _, dv in steps:
        cur += dv
        top = max(top, cur)
    return top


def harness(body, wait_tiles=False):
    """A script that runs @body (JavaScript filling the object `out`)
    and writes `out` as JSON into <pre id="results">, or the error; with
    @wait_tiles, once the first figure's tiles are decoded."""
    return r'''
<script>
(function () {
  function run() {
    const out = {};
    try {
%s
    } catch (e) {
      out.error = String(e) + ' ' + e.stack;
    }
    const pre = document.createElement('pre');
    pre.id = 'results';
    pre.textContent = JSON.stringify(out);
    pre.style.display = 'none';  // --dump-dom reads it; screenshots show the page alone
    document.body.appendChild(pre);
  }
  if (%s) (window.memlensPages[0].tilesReady || Promise.resolve()).then(run); else run();
})();
</script>
''' % (body, 'true' if wait_tiles else 'false')


DIFF_HARNESS = harness(r'''
    const ps = window.memlensPages;
    out.fits = ps.map(p => Object.assign({}, p.view));
    out.modes = ps.map(p => p.mode);
    out.curveTops = ps.map(p => p.curveStats.top);
    ps[0].selectTick(3000);
    out.linkedTick = ps.map(p => p.tick);
    out.linkedSum = ps.map(p => Object.assign({}, p.stateEl.querySelector('.ml-sum').dataset));
    ps[1].zoomAt(ps[1].view.t1 / 3, 0.25);
    out.zoomed = ps.map(p => Object.assign({}, p.view));''')

HARNESS = harness(r'''
    const p = window.memlensPages[0], c = p.canvas, r = c.getBoundingClientRect();
    out.pages = window.memlensPages.length;
    out.fit = Object.assign({}, p.view);
    out.fitStats = p.stats;
    const K = %(big)d;
    let i = 0;
    while (i < p.n && p.buffer[i] !== K) i++;
    const at = p.pixel((p.start[i] + p.end[i]) / 2, p.addr[i] + p.size[i] / 2);
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + at.x, clientY: r.top + at.y, bubbles: true }));
    out.hover = p.tip.textContent;
    out.hoverShown = !p.tip.hidden;
    // a wheel event's clientX is a whole pixel: the anchor is the tick there
    const zx = Math.round(r.left + p.pixel(%(zoom_tick)d, 0).x);
    out.zoomTick = p.at(zx - r.left, 0).t;
    out.tickPerPixel = (p.view.t1 - p.view.t0) / p.plot().w;
    c.dispatchEvent(new WheelEvent('wheel', { clientX: zx, clientY: r.top + r.height / 2, deltaY: -100,
      bubbles: true, cancelable: true }));
    out.zoom = Object.assign({}, p.view);
    p.zoomAt(%(zoom_tick)d, 0.5);
    out.zoom2 = Object.assign({}, p.view);
    p.draw();
    out.range = p.rangeEl.textContent;
    out.zoomStats = p.stats;
    const box = p.fig.querySelector('.ml-search');
    box.value = '%(addr)s';
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    out.addrCount = Number(p.foundEl.dataset.count);
    out.addrBuffers = p.foundEl.dataset.buffers;
    out.addrText = p.foundEl.textContent;
    box.value = '%(site)s';
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    out.siteCount = Number(p.foundEl.dataset.count);
    p.fit();
    out.refit = Object.assign({}, p.view);
    // the stacked view: its scale, the stack at a column, the hover there
    p.fig.querySelector('.ml-mode').value = 'active';
    p.fig.querySelector('.ml-mode').dispatchEvent(new Event('change'));
    out.activeFit = Object.assign({}, p.view);
    const W = Math.ceil(p.plot().w), col = Math.floor(p.pixel((p.start[i] + p.end[i]) / 2, 0).x - p.plot().x);
    const tc = p.columnTick(col, W), live = p.liveAt(tc);
    let below = 0, total = 0, seen = false;
    for (const j of live) { if (j === i) seen = true; if (!seen) below += p.size[j]; total += p.size[j]; }
    out.activeTick = tc; out.activeTotal = total;
    const ay = p.pixel(0, below + p.size[i] / 2).y;
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + p.plot().x + col + 0.5, clientY: r.top + ay, bubbles: true }));
    out.activeHover = p.tip.textContent;
    out.activeStats = p.stats;
    p.setMode('address');
    // for the screenshot: the address search's matches outlined, the hover shown
    box.value = '%(addr)s';
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    // (headless screenshots ignore scrolling: hide what comes before the figure)
    for (let e = p.fig.previousElementSibling; e; e = e.previousElementSibling) e.style.display = 'none';
    p.draw();
    const r2 = c.getBoundingClientRect(), at2 = p.pixel((p.start[i] + p.end[i]) / 2, p.addr[i] + p.size[i] / 2);
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r2.left + at2.x, clientY: r2.top + at2.y, bubbles: true }));
''')


PANELS_HARNESS = harness(r"""
    const p = window.memlensPages[0], c = p.canvas, r = c.getBoundingClientRect(), pl = p.plot();
    const K = %(big)d;
    let i = 0;
    while (i < p.n && p.buffer[i] !== K) i++;
    function press(el, x, y, x2) {
      const b = el.getBoundingClientRect();
      el.dispatchEvent(new PointerEvent('pointerdown', { clientX: b.left + x, clientY: b.top + y, bubbles: true }));
      if (x2 !== undefined)
        el.dispatchEvent(new PointerEvent('pointermove', { clientX: b.left + x2, clientY: b.top + y, bubbles: true }));
      el.dispatchEvent(new PointerEvent('pointerup', { clientX: b.left + (x2 === undefined ? x : x2), clientY: b.top + y,
        bubbles: true }));
    }
    // the curves at the fit: their highest columns
    out.curves = Object.assign({}, p.curveStats);
    // a click on the time axis, under tick %(tick)d
    press(c, p.pixel(%(tick)d + 0.5, 0).x, pl.y + pl.h + 10);
    out.tick = p.tick;
    out.blocks = Array.from(p.stateEl.querySelectorAll('li.ml-block'), li => [li.dataset.seg, Number(li.dataset.offset),
      Number(li.dataset.size), li.dataset.kind, li.dataset.buffer, li.textContent]);
    out.segHeads = Array.from(p.stateEl.querySelectorAll('.ml-seg'), e => e.textContent);
    out.stateSum = p.stateEl.querySelector('.ml-sum').textContent;
    out.segAddr = p.d.segs.map(s => s[5]);
    // a click on the 64 MiB buffer: its stack
    const at = p.pixel((p.start[i] + p.end[i]) / 2, p.addr[i] + p.size[i] / 2);
    press(c, at.x, at.y);
    out.stackBuffer = p.stackEl.dataset.buffer;
    out.frames = Array.from(p.stackEl.querySelectorAll('ol.ml-frames li'), e => e.textContent);
    out.stackText = p.stackEl.textContent;
    // the peaks list, and a click on the first
    out.peaks = Array.from(p.peaksEl.querySelectorAll('li.ml-peakrow'), li => ({ top: Number(li.dataset.top),
      live: li.dataset.live, text: li.querySelector('button').textContent,
      sites: Array.from(li.querySelectorAll('ul li[data-bytes]'), e => [e.textContent, e.dataset.bytes]),
      more: li.querySelector('ul li:not([data-bytes])') ? li.querySelector('ul li:not([data-bytes])').textContent : '' }));
    p.peaksEl.querySelector('button.ml-peak').click();
    out.peakView = Object.assign({}, p.view);
    out.peakTick = p.tick;
    // colour by stream: the legend and the 64 MiB buffer's pixel
    p.fit();
    const px = (x, y) => Array.from(c.getContext('2d').getImageData(Math.round(x * devicePixelRatio),
      Math.round(y * devicePixelRatio), 1, 1).data.slice(0, 3));
    const at2 = p.pixel((p.start[i] + p.end[i]) / 2, p.addr[i] + p.size[i] / 4);
    out.pixSite = px(at2.x, at2.y);
    p.colorEl.value = 'stream';
    p.colorEl.dispatchEvent(new Event('change'));
    out.pixStream = px(at2.x, at2.y);
    out.legend = Array.from(p.legendEl.querySelectorAll('span'), e => [e.textContent, Number(e.dataset.cls)]);
    out.palette = p.palette;
    // drag along the time axis from tick %(t0)d to %(t1)d
    const x0 = p.pixel(%(t0)d, 0).x, x1 = p.pixel(%(t1)d, 0).x;
    out.dragFrom = p.at(Math.round(r.left + x0) - r.left, 0).t;
    out.dragTo = p.at(Math.round(r.left + x1) - r.left, 0).t;
    press(c, Math.round(r.left + x0) - r.left, pl.y + pl.h + 10, Math.round(r.left + x1) - r.left);
    out.dragView = Object.assign({}, p.view);
    out.range = p.rangeEl.textContent;
    // for the screenshot: the state at the tick, the stack, the legend by stream
    for (let e = p.fig.previousElementSibling; e; e = e.previousElementSibling) e.style.display = 'none';
    p.fit();
    press(c, p.pixel(%(tick)d + 0.5, 0).x, pl.y + pl.h + 10);
    press(c, at.x, at.y);
""")


TILES_HARNESS = harness(r"""
    const p = window.memlensPages[0], c = p.canvas;
    const K = %(big)d;
    let i = 0;
    while (i < p.n && p.buffer[i] !== K) i++;
    const px = (x, y) => Array.from(c.getContext('2d').getImageData(Math.round(x * devicePixelRatio),
      Math.round(y * devicePixelRatio), 1, 1).data.slice(0, 3));
    out.tiles = p.d.tiles ? [p.d.tiles.address.map(l => l.length), p.d.tiles.active.map(l => l.length)] : null;
    out.fit = p.stats;
    const at = p.pixel((p.start[i] + p.end[i]) / 2, p.addr[i] + p.size[i] / 2);
    out.bigPixel = px(at.x, at.y);
    const empty = p.pixel(%(empty_tick)d, %(empty_byte)d);
    out.emptyPixel = px(empty.x, empty.y);
    out.legend = Array.from(p.legendEl.querySelectorAll('span'), e => [e.textContent, Number(e.dataset.cls)]);
    out.palette = p.palette;
    const r = c.getBoundingClientRect();
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + at.x, clientY: r.top + at.y, bubbles: true }));
    out.hover = p.tip.textContent;
    out.levels = [];
    for (let k = 0; k < 4; k++) { p.zoomAt(%(zoom_tick)d, 0.5); out.levels.push(p.stats); }
    p.fit();
    p.setColor('stream');
    out.stream = p.stats;
    p.setColor('site');
    // the stacked view's tile: the bottom of the stack at tick %(stack_tick)d
    p.setMode('active');
    out.active = p.stats;
    const sp = p.pixel(%(stack_tick)d, %(stack_byte)d);
    out.activePixel = px(sp.x, sp.y);
    out.activeTop = p.view.a1;
""", wait_tiles=True)


def browse(page, *args):
    cmd = [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--window-size=1280,900',
           '--user-data-dir=' + os.path.join(tmp, 'profile')] + list(args) + ['file://' + page]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp)


def drive(page, script, name, budget=5000):
    """@page (its text) with @script appended before </body>, written to
    @name in the temp folder and opened in chromium: the results the
    script left (or {'error': why}), and the file (for screenshots)."""
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        f.write(page.replace('</body>', script + '</body>'))
    r = browse(path, '--dump-dom', '--virtual-time-budget=%d' % budget)
    m = re.search(r'<pre id="results"[^>]*>(.*?)</pre>', r.stdout, re.S)
    return (json.loads(html.unescape(m.group(1))) if m else {'error': 'no results: ' + r.stderr[-800:]}), path


def read(path):
    return open(path).read() if os.path.exists(path) else ''


trace = os.path.join(tmp, 't.jsonl')
write_trace(trace)
bufs, end_tick, segs = read_trace(trace)
page = os.path.join(tmp, 'r.html')
p = subprocess.run([memlens, 'report', trace, '--interactive', '--strategies', 'first-fit', '-o', page, '--quiet'],
                   capture_output=True, text=True)
if p.returncode != 0 and 'without cairo' in p.stderr:
    print('1..0 # SKIP this memlens has no HTML report (built without cairo)')
    sys.exit(0)
ok(p.returncode == 0 and os.path.exists(page), 'report --interactive writes the page (%s)' % p.stderr.strip()[:200])
text = open(page).read() if os.path.exists(page) else ''
ok("default-src 'none'" in text and not re.search(r'(src|href)="(https?:)?//|@import|url\(http', text),
   'the page loads nothing: its policy says so and it holds no network reference')
fig1 = text.split('id="page-1"')[1].split('</figure>')[0] if 'id="page-1"' in text else ''
ok('<canvas' in fig1 and '<svg' not in fig1 and '"plan":"recorded"' in fig1,
   'the recorded plan is a canvas figure, not SVG')

big = [k for k, x in enumerate(bufs) if x['size'] == 64 << 20][0]
b = bufs[big]
probe = b['addr'] + 12345
held = [k for k, x in enumerate(bufs) if x['addr'] <= probe < x['addr'] + x['size']]
site = 'ADAM.py'  # any case
by_site = [k for k, x in enumerate(bufs) if site.lower() in x['site'].lower()]
res, hpage = drive(text, HARNESS % {'big': big, 'zoom_tick': 7000, 'addr': hex(probe), 'site': site}, 'h.html')
ok('error' not in res, 'the page ran without an error (%s)' % res.get('error', '')[:300])
ok(res.get('pages') == text.count('class="ml-canvas"') >= 1, 'every canvas is an interactive figure (%s)' % res.get('pages'))
fit = res.get('fit', {})
ok(fit.get('t0') == 0 and fit.get('t1') == end_tick, 'the fitted view spans ticks 0 to %d (one past the last tick)' % end_tick)

want = ['buffer #%d' % big, '%d bytes' % b['size'], b['site'], 'ticks %d – %d (lifetime %d ticks)'
        % (b['start'], b['end'], b['end'] - b['start']), 'stream %d' % b['stream'], 'address %s' % hex(b['addr'])]
hover = res.get('hover', '')
ok(res.get('hoverShown') and all(w in hover for w in want), 'hover over the 64 MiB buffer says %s (got %r)' % (want, hover))

zt = res.get('zoomTick', 0)
z = res.get('zoom', {})
exp = (zt - zt * 0.8, zt + (end_tick - zt) * 0.8)
ok(abs(zt - 7000) <= res.get('tickPerPixel', 0) and abs(z.get('t0', -1) - exp[0]) < 1e-6 and abs(z.get('t1', -1) - exp[1]) < 1e-6,
   'a wheel turn at tick 7000 shows ticks %.3f to %.3f (got %s)' % (exp[0], exp[1], z))
z2 = res.get('zoom2', {})
exp2 = (7000 - (7000 - exp[0]) * 0.5, 7000 + (exp[1] - 7000) * 0.5)
ok(abs(z2.get('t0', -1) - exp2[0]) < 1e-6 and abs(z2.get('t1', -1) - exp2[1]) < 1e-6
   and ('ticks %.1f – %.1f' % exp2) in res.get('range', ''),
   'zoomAt(7000, 0.5) then shows ticks %.1f to %.1f, and says so (%r)' % (exp2 + (res.get('range'),)))
ok(res.get('addrCount') == len(held) and res.get('addrBuffers') == ','.join(map(str, held[:50])),
   'searching %s finds the %d buffers whose bytes held it (%s)' % (hex(probe), len(held), res.get('addrText', '')[:120]))
ok(res.get('siteCount') == len(by_site) and len(by_site) > 0,
   'searching %r finds the %d buffers from a call site containing it' % (site, len(by_site)))
fs = res.get('fitStats', {})
ok(fs.get('binned', 0) > 1000 and fs.get('rects', 0) >= 1 and fs.get('binned', 0) + fs.get('rects', 0) == len(bufs),
   'zoomed out, the %d buffers under a pixel are binned, the large ones drawn (%s)' % (len(bufs), fs))
zs = res.get('zoomStats', {})
ok(zs.get('rects', 0) + zs.get('binned', 0) < len(bufs), 'zoomed in, only the buffers in view are drawn (%s)' % zs)
ok(res.get('refit', {}).get('t1') == end_tick, 'Fit shows everything again')

top = live_max(bufs)
ok(res.get('activeFit', {}).get('a1') == top, 'the stacked view fits the most bytes live at once, %d (%s)' % (top, res.get('activeFit')))
tc = res.get('activeTick', -1)
live_tc = sum(x['size'] for x in bufs if x['start'] <= tc < x['end'])
ok(res.get('activeTotal') == live_tc, 'its column at tick %d stacks the %d bytes live then' % (tc, live_tc))
ok(all(w in res.get('activeHover', '') for w in want), 'hover over the 64 MiB buffer in the stack names it (%r)'
   % res.get('activeHover'))

# the panels: curves, the state at a clicked tick, a buffer's stack, the
# peaks, colour by stream, a drag along the time axis
TICK, T0, T1 = 3000, 3000, 9000
pres, ph = drive(text, PANELS_HARNESS % {'big': big, 'tick': TICK, 't0': T0, 't1': T1}, 'ph.html')
ok('error' not in pres, 'the panels ran without an error (%s)' % pres.get('error', '')[:300])


def reserved_at(t):
    return sum(g['size'] for g in segs if g['start'] <= t < g['end'])


res_max = max(reserved_at(t) for t in {g['start'] for g in segs} | {g['end'] - 1 for g in segs})
cv = pres.get('curves', {})
ok(cv.get('liveMax') == top and cv.get('reservedMax') == res_max,
   'the curves reach the most live bytes, %d, and the most reserved, %d (%s)' % (top, res_max, cv))
tick = pres.get('tick')
want_blocks = state_at(bufs, segs, tick if tick is not None else -1)
got = pres.get('blocks', [])
seg_addr = pres.get('segAddr', [])
got_blocks = [(int(seg_addr[int(b[0])]), b[1], b[2], b[3], int(b[4]) if b[4] else '') for b in got] if seg_addr else []
ok(tick == TICK and got_blocks == want_blocks and len(want_blocks) > 60,
   'a click on the time axis at tick %d lists its %d blocks as Python reads them from the file (%d listed; '
   'first %s)' % (TICK, len(want_blocks), len(got_blocks), got_blocks[:2]))


def human(b):
    units, u = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'], 0
    while b >= 1024 and u < len(units) - 1:
        b /= 1024
        u += 1
    return '%.2f %s' % (b, units[u]) if u else '%d bytes' % b


alloc_t = sum(b[2] for b in want_blocks if b[3] == 'allocated')
free_t = sum(b[2] for b in want_blocks if b[3] == 'free')
live_segs = sum(1 for g in segs if g['start'] <= TICK < g['end'])
ok(pres.get('stateSum', '').startswith('%d segments reserved: %s allocated, %s free (cached), 0 bytes unmapped'
                                       % (live_segs, human(alloc_t), human(free_t))),
   'and sums them: %d segments, %s allocated, %s free (%r)' % (live_segs, human(alloc_t), human(free_t),
                                                              pres.get('stateSum')))
rows_ok = all(('+%s: %s %s' % (human(b[1]), human(b[2]), b[3])) in t[5] and (b[4] == '' or bufs[b[4]]['site'] in t[5])
              for b, t in zip(want_blocks, got))
ok(rows_ok and got, 'each block reads "+offset: bytes kind #buffer call site"')
ok(pres.get('stackBuffer') == str(big) and pres.get('frames') == b['frames'] and len(b['frames']) == 3,
   'a click on the 64 MiB buffer shows its whole stack: %s (%s)' % (b['frames'], pres.get('frames')))

# the highest peak, its first tick and who holds it (by call site, largest first)
steps = sorted(set([x['start'] for x in bufs] + [x['end'] for x in bufs]))
lv = {t: sum(x['size'] for x in bufs if x['start'] <= t < x['end']) for t in steps}
first_top = min(t for t in steps if lv[t] == top)
held_by = {}
for x in bufs:
    if x['start'] <= first_top < x['end']:
        h = held_by.setdefault(x['site'], [0, 0])
        h[0] += x['size']
        h[1] += 1
holders = sorted(held_by.items(), key=lambda kv: (-kv[1][0], kv[0]))
pk = (pres.get('peaks') or [{}])[0]
want_sites = [('%s: %s (%d %s)' % (site, human(v[0]), v[1], 'buffer' if v[1] == 1 else 'buffers'), str(v[0]))
              for site, v in holders[:len(pk.get('sites', []))]]
ok(pk.get('top') == first_top and pk.get('live') == str(top) and pk.get('text', '').startswith(human(top)),
   'the first peak: %s at tick %d (%s)' % (human(top), first_top, {k: pk.get(k) for k in ('top', 'live', 'text')}))
more = len(holders) - len(want_sites)
ok([tuple(x) for x in pk.get('sites', [])] == want_sites and len(want_sites) >= 5
   and pk.get('more', '') == ('… %d more call sites' % more if more else ''),
   'held by the call sites Python sums at that tick, largest first (%s; want %s)' % (pk.get('sites', [])[:3], want_sites[:3]))
pv = pres.get('peakView', {})
ok(pres.get('peakTick') == first_top and pv.get('t0', 1e9) < first_top < pv.get('t1', -1)
   and abs((pv.get('t1', 0) - pv.get('t0', 0)) - end_tick / 40) < 1e-6,
   'a click on it zooms to a fortieth of the trace around tick %d and shows the state there (%s)' % (first_top, pv))
streams = {}
for x in bufs:
    streams[x['stream']] = streams.get(x['stream'], 0) + 1
legend = pres.get('legend', [])
ok(sorted(t for t, _ in legend) == sorted('stream %d (%d buffers)' % kv for kv in streams.items()),
   'colour by stream: the legend names each stream and its buffers (%s)' % legend)
cls9 = [k for t, k in legend if t.startswith('stream %d ' % b['stream'])]
pal = pres.get('palette', [])
ok(cls9 and pres.get('pixStream') == pal[cls9[0]] and pres.get('pixSite') != pres.get('pixStream'),
   'and the 64 MiB buffer is painted in its stream\'s colour (%s, was %s)' % (pres.get('pixStream'), pres.get('pixSite')))
dv = pres.get('dragView', {})
ok(abs(dv.get('t0', -1) - pres.get('dragFrom', 0)) < 1e-6 and abs(dv.get('t1', -1) - pres.get('dragTo', 0)) < 1e-6
   and abs(dv.get('t0', -1) - T0) < end_tick / 1000 and abs(dv.get('t1', -1) - T1) < end_tick / 1000
   and ('ticks %.1f – %.1f' % (dv.get('t0', -1), dv.get('t1', -1))) in pres.get('range', ''),
   'a drag along the time axis from tick %d to %d shows that range (%s)' % (T0, T1, pres.get('range')))

# a larger trace: zoomed out, the page draws the tiles drawn in C
trace_t = os.path.join(tmp, 'tiles.jsonl')
write_trace(trace_t, seed=31, horizon=40000)
bufs_t = read_trace(trace_t)[0]
tpage = os.path.join(tmp, 'tiles.html')
p = subprocess.run([memlens, 'report', trace_t, '--interactive', '--strategies', 'recorded', '-o', tpage, '--quiet'],
                   capture_output=True, text=True)
ok(p.returncode in (0, 1) and os.path.exists(tpage), 'report --interactive of %d buffers (%s)' % (len(bufs_t), p.stderr[:200]))
big_t = [k for k, x in enumerate(bufs_t) if x['size'] == 64 << 20][0]
# a place no buffer ever holds: above the slots (64 MiB up), after the 64 MiB buffer's end
tres, _ = drive(read(tpage), TILES_HARNESS % {
        'big': big_t, 'empty_tick': 30000, 'empty_byte': 96 << 20, 'zoom_tick': 20000,
        'stack_tick': 3000, 'stack_byte': 32 << 20}, 'th.html', budget=8000)
# the stacked view puts the longest-lived buffer live at a tick at the bottom
live3k = [x for x in bufs_t if x['start'] <= 3000 < x['end']]
assert max(live3k, key=lambda x: x['end'] - x['start']) is bufs_t[big_t]
assert not any(x['start'] <= 30000 < x['end'] and x['addr'] >= BASE + (64 << 20) for x in bufs_t)
ok('error' not in tres and tres.get('tiles') == [[1, 2, 4, 8], [1, 2, 4, 8]],
   'the page of %d buffers carries tiles at four levels (%s %s)' % (len(bufs_t), tres.get('tiles'), tres.get('error', '')))
ok(tres.get('fit', {}).get('level') == 0 and tres.get('fit', {}).get('rects') == 0,
   'zoomed out, it draws the coarsest tile and no buffer (%s)' % tres.get('fit'))
site_cls = [k for t, k in tres.get('legend', []) if t.startswith(bufs_t[big_t]['site'] + ' (')]
pal = tres.get('palette', [])
ok(site_cls and tres.get('bigPixel') == pal[site_cls[0]] and tres.get('emptyPixel') == [255, 255, 255],
   'the tile shows the 64 MiB buffer in its call site\'s colour %s and white where nothing was (%s, %s)'
   % (pal[site_cls[0]] if site_cls else None, tres.get('bigPixel'), tres.get('emptyPixel')))
ok(('buffer #%d' % big_t) in tres.get('hover', '') and ('%d bytes' % bufs_t[big_t]['size']) in tres.get('hover', ''),
   'hover over a tile still names the buffer (%r)' % tres.get('hover'))
lv = [x.get('level') for x in tres.get('levels', [])]
ok(lv[:4] == [1, 2, 3, None] and tres.get('levels', [{}] * 4)[3].get('rects', 0) > 0,
   'zooming in takes finer tiles, then past them the buffers themselves (%s)' % tres.get('levels'))
ok(tres.get('stream', {}).get('level') is None and tres.get('stream', {}).get('rects', 0) > 0,
   'colour by stream draws the buffers (the tiles are by call site) (%s)' % tres.get('stream'))
ok(tres.get('active', {}).get('level') == 0 and tres.get('activeTop') == live_max(bufs_t)
   and site_cls and tres.get('activePixel') == pal[site_cls[0]],
   'the stacked view draws its tile too, up to the %d bytes live at most, the 64 MiB buffer at the bottom at tick '
   '3000 (%s, %s)' % (live_max(bufs_t), tres.get('active'), tres.get('activePixel')))

# bytes and addresses past 2^53 (a 64-bit pointer with its top bits set):
# the hover shows them exactly, as the file has them
wtrace = os.path.join(tmp, 'wide.jsonl')
WIDE = {'addr': '0xffd0000000000001', 'size': str(2 ** 53 + 1)}
with open(wtrace, 'w') as f:
    f.write(json.dumps({'format': 'memlens-trace', 'version': 1, 'alignment': 1}) + '\n')
    f.write(json.dumps({'kind': 'alloc', 'tick': 0, 'id': 1, 'addr': WIDE['addr'], 'size': WIDE['size'], 'stream': 7}) + '\n')
    f.write(json.dumps({'kind': 'free', 'tick': 5, 'id': 1}) + '\n')
wpage = os.path.join(tmp, 'wide.html')
p = subprocess.run([memlens, 'report', wtrace, '--interactive', '--strategies', 'recorded', '-o', wpage, '--quiet'],
                   capture_output=True, text=True)
wres, _ = drive(read(wpage), harness(r"""
    const p = window.memlensPages[0], c = p.canvas, r = c.getBoundingClientRect();
    const at = p.pixel((p.start[0] + p.end[0]) / 2, p.addr[0] + p.size[0] / 2);
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + at.x, clientY: r.top + at.y, bubbles: true }));
    out.hover = p.tip.textContent;"""), 'wh.html')
want_w = ['(%d bytes)' % int(WIDE['size']), 'address %s' % hex(int(WIDE['addr'], 16))]
ok(p.returncode in (0, 1) and all(w in wres.get('hover', '') for w in want_w),
   'past 2^53, the hover says %s exactly (%r %s)' % (want_w, wres.get('hover'), wres.get('error', '')))

# the page fits a 1280 px window: no sideways scrolling
fres, _ = drive(text, harness(r"""
    out.scroll = document.documentElement.scrollWidth;
    out.client = document.documentElement.clientWidth;"""), 'fit.html')
ok(fres.get('scroll', 1e9) <= fres.get('client', 0),
   'the page needs no sideways scrolling in a 1280 px window (%s px of %s)' % (fres.get('scroll'), fres.get('client')))

# a recorded OOM: the refused request drawn where the static picture puts
# it, its hover text from the file's oom event
otrace = os.path.join(tmp, 'oom.jsonl')
OOM = {'kind': 'oom', 'tick': 6, 'size': 6291000, 'device_free': 1 << 20, 'stream': 7}
OEVENTS = [{'kind': 'segment_alloc', 'tick': 0, 'id': 1, 'addr': hex(BASE), 'size': 8 << 20},
           {'kind': 'alloc', 'tick': 1, 'id': 1, 'addr': hex(BASE), 'size': 2 << 20, 'stream': 7},
           {'kind': 'alloc', 'tick': 2, 'id': 2, 'addr': hex(BASE + (4 << 20)), 'size': 3 << 20, 'stream': 7},
           {'kind': 'free', 'tick': 4, 'id': 1},
           {'kind': 'alloc', 'tick': 5, 'id': 3, 'addr': hex(BASE), 'size': 1 << 20, 'stream': 7},
           OOM, {'kind': 'free', 'tick': 8, 'id': 2}, {'kind': 'free', 'tick': 9, 'id': 3}]
with open(otrace, 'w') as f:
    for e in [{'format': 'memlens-trace', 'version': 1, 'alignment': 512}] + OEVENTS:
        f.write(json.dumps(e) + '\n')
opage = os.path.join(tmp, 'oom.html')
p = subprocess.run([memlens, 'report', otrace, '--interactive', '--strategies', 'recorded', '-o', opage, '--quiet'],
                   capture_output=True, text=True)
ores, _ = drive(read(opage), harness(r"""
    const p = window.memlensPages[0], c = p.canvas, r = c.getBoundingClientRect(), b = p.oomBox();
    c.dispatchEvent(new PointerEvent('pointermove', { clientX: r.left + b.x + b.w / 2, clientY: r.top + b.y + b.h / 2,
      bubbles: true }));
    out.hover = p.tip.textContent;
    out.boxTick = p.at(b.x + 1, 0).t;"""), 'oh.html')
olive = {}
for e in OEVENTS:
    if e['tick'] > OOM['tick']:
        break
    if e['kind'] == 'alloc':
        olive[e['id']] = e['size']
    elif e['kind'] == 'free':
        olive.pop(e['id'])
live_oom = sum(olive.values())
reserved_oom = sum(e['size'] for e in OEVENTS if e['kind'] == 'segment_alloc')
want_o = ['out of memory at tick %d' % OOM['tick'], 'request of %s (%d bytes) refused' % (human(OOM['size']), OOM['size']),
          'live %s, reserved %s' % (human(live_oom), human(reserved_oom))]
ok(p.returncode in (0, 1) and all(w in ores.get('hover', '') for w in want_o) and int(ores.get('boxTick', -1)) == OOM['tick'],
   'a recorded OOM: its request drawn at tick %d, the hover says %s (%r %s)' % (OOM['tick'], want_o, ores.get('hover'),
                                                                          ores.get('error', '')))

# diff --interactive: two runs, one scale, one view
trace_b = os.path.join(tmp, 'b.jsonl')
# (its empty segment is larger: B reserves more than A)
write_trace(trace_b, seed=30, horizon=15000, segments=SEGMENTS[:2] + [(3, BASE + (256 << 20), 8 << 20, 100, 12000)])
bufs_b, end_b, segs_b = read_trace(trace_b)
dpage = os.path.join(tmp, 'd.html')
p = subprocess.run([memlens, 'diff', trace, trace_b, '--interactive', '-o', dpage, '--quiet'], capture_output=True, text=True)
ok(p.returncode in (0, 1) and os.path.exists(dpage), 'diff --interactive writes the page (%s)' % p.stderr.strip()[:200])
dtext = open(dpage).read() if os.path.exists(dpage) else ''
dres, _ = drive(dtext, DIFF_HARNESS, 'dh.html')
fits = dres.get('fits', [])
ok(len(fits) == 2 and all(f['t1'] == max(end_tick, end_b) and f['a1'] == max(top, live_max(bufs_b)) for f in fits)
   and all(m == 'active' for m in dres.get('modes', [])),
   'both runs stacked on one scale: ticks to %d, bytes to %d (%s %s)'
   % (max(end_tick, end_b), max(top, live_max(bufs_b)), fits, dres.get('error', '')))
res_b = max(sum(g['size'] for g in segs_b if g['start'] <= t < g['end']) for t in {g['start'] for g in segs_b})
ok(res_b > res_max and dres.get('curveTops') == [max(res_max, live_max(bufs_b), res_b)] * 2,
   'their curves share one byte scale: up to B\'s %d reserved (A: %d) (%s)' % (res_b, res_max, dres.get('curveTops')))
want_sum = []
for bb, gg in ((bufs, segs), (bufs_b, segs_b)):
    st = state_at(bb, gg, 3000)
    want_sum.append({'allocated': str(sum(x[2] for x in st if x[3] == 'allocated')),
                     'free': str(sum(x[2] for x in st if x[3] == 'free')), 'unmapped': '0',
                     'segments': str(sum(1 for g in gg if g['start'] <= 3000 < g['end']))})
ok(dres.get('linkedTick') == [3000, 3000] and dres.get('linkedSum') == want_sum,
   'a tick chosen in A shows each run\'s own state there (%s; want %s)' % (dres.get('linkedSum'), want_sum))
zs = dres.get('zoomed', [])
ok(len(zs) == 2 and zs[0] == zs[1] and zs[0]['t1'] - zs[0]['t0'] < max(end_tick, end_b) / 2,
   'zooming one zooms the other (%s)' % zs)

md = os.path.join(tmp, 'r.md')
p = subprocess.run([memlens, 'report', trace, '--interactive', '-o', md, '--quiet'], capture_output=True, text=True)
ok(p.returncode == 2 and not os.path.exists(md) and '--interactive' in p.stderr,
   '--interactive with a report that is not HTML is refused, nothing written (%s)' % p.stderr.strip())

# PyTorch snapshots (issue 32): pools and streams as labelled bands, a
# block's annotate texts; checked against Python's reading of the pickles
BANDS_HARNESS = harness(r"""
    const p = window.memlensPages[0], pl = p.plot();
    out.plot = pl;
    out.bands = p.d.bands;
    out.labels = p.bandLabels;
    out.items = Array.from({ length: p.n }, (_, i) => [p.place[i], p.start[i], p.addr[i], p.size[i]]);
    out.rows = p.d.bands.map(b => [p.pixel(0, b[1]).y, p.pixel(0, b[0]).y]);
    // hover each band's middle row, left to right, until it names the band
    out.hovers = p.d.bands.map(function (b, k) {
      const y = Math.min(pl.y + pl.h - 1, Math.max(pl.y + 1, (p.pixel(0, b[1]).y + p.pixel(0, b[0]).y) / 2));
      for (let x = pl.x + 1; x < pl.x + pl.w; x += 2) {
        p.hoverAt(x, y);
        if (p.tip.dataset.band === String(k)) return [x, y, p.tip.textContent];
      }
      return null;
    });
    // every buffer's hover text and Buffer panel (annotate texts)
    out.texts = Array.from({ length: p.n }, (_, i) => p.describe(i));
    out.panels = Array.from({ length: p.n }, function (_, i) { p.showStack(i); return p.stackEl.textContent; });
    // the state at the last tick: a head per band
    p.selectTick(p.d.endTick - 1);
    out.stateTick = p.tick;
    out.stateRows = Array.from(p.stateEl.querySelectorAll('li.ml-block'), e => [e.dataset.buffer, e.textContent]);
    out.buffers = Array.from(p.buffer);
    out.bandHeads = Array.from(p.stateEl.querySelectorAll('.ml-bandhead'), e => [p.d.bands[Number(e.dataset.band)][3],
      Number(e.dataset.segments), Number(e.dataset.allocated), Number(e.dataset.free), e.textContent]);
    // the search box finds a buffer by its annotate text too
    out.noteSearch = (p.search('FOR BACKWARD') || []).map(i => [p.place[i], p.start[i]]);
    p.search('');
    for (let e = p.fig.previousElementSibling; e; e = e.previousElementSibling) e.style.display = 'none';
    p.draw();""")

sys.path.insert(0, os.path.join(src, 'tests'))
from snaplib import load_pickle, lifetimes, segments_ever, python_bands, band_label  # noqa: E402
TORCH = os.path.join(src, 'tests', 'data', 'torch')
MiB = 1 << 20


def thin_snapshot(path):
    """Three bands, the middle one (a CUDA graph pool's 2 MiB segment
    between two of 1 GiB) under a pixel tall: its label cannot go inside.
    Nothing is live before tick 2 (hover finds the bands there)."""
    A, B, C = 0x7F1000000000, 0x7F2000000000, 0x7F3000000000
    fr = [{'filename': '/home/u/train.py', 'line': 7, 'name': 'step'}]

    def seg(addr, total, used, pool):
        return {'device': 0, 'address': addr, 'total_size': total, 'stream': 0, 'segment_type': 'large',
                'segment_pool_id': pool, 'is_expandable': False, 'frames': [],
                'blocks': [{'address': addr, 'size': used, 'requested_size': used, 'state': 'active_allocated',
                            'frames': fr},
                           {'address': addr + used, 'size': total - used, 'requested_size': 0, 'state': 'inactive',
                            'frames': []}]}
    trace = [{'action': 'alloc', 'addr': a, 'size': n, 'stream': 0, 'time_us': 10 * k, 'frames': fr, 'pool_id': pool}
             for k, (a, n, pool) in enumerate(((A, 256 * MiB, (0, 0)), (B, MiB, (1, 0)), (C, 256 * MiB, (0, 1))), 1)]
    snap = {'segments': [seg(A, 1 << 30, 256 * MiB, (0, 0)), seg(B, 2 * MiB, MiB, (1, 0)), seg(C, 1 << 30, 256 * MiB, (0, 1))],
            'device_traces': [trace]}
    import pickle
    with open(path, 'wb') as f:
        pickle.dump(snap, f)


def meet(r, q):
    return r['x'] < q['x'] + q['w'] and q['x'] < r['x'] + r['w'] and r['y'] < q['y'] + q['h'] and q['y'] < r['y'] + r['h']


thin = os.path.join(tmp, 'thin.pickle')
thin_snapshot(thin)
band_shot = None
for name in ('graph-two-streams', 'mempool', 'graph-private-reuse', 'streams-64bit', 'thin'):
    path = thin if name == 'thin' else os.path.join(TORCH, name + '.pickle')
    snap = load_pickle(path)
    segs = segments_ever(snap)
    want = python_bands(segs)
    bpage = os.path.join(tmp, name + '.html')
    p = subprocess.run([memlens, 'report', path, '--interactive', '--strategies', 'recorded', '-o', bpage, '--quiet'],
                       capture_output=True, text=True)
    bres, bh = drive(read(bpage), BANDS_HARNESS, name + '-h.html')
    if name == 'graph-two-streams':
        band_shot = bh
    got = {b[3]: b[2] for b in bres.get('bands', [])}
    wanted = {k: len(v) for k, v in want.items()} if len(want) > 1 else {}
    ok(p.returncode in (0, 1) and 'error' not in bres and got == wanted,
       '%s: the page\'s bands are the (pool, stream) groups of the pickle\'s segments, with their counts: %s (got %s %s)'
       % (name, wanted, got, bres.get('error', '')[:200]))
    # each buffer lies in the band of the segment that holds it
    bufs_p, _ = lifetimes(snap)
    band_of = {}
    for b in bufs_p:
        seg = [a for a, g in segs.items() if a <= b[0] < a + g[0] and g[3] <= b[2] < g[4]]
        band_of[(b[0], b[2])] = band_label(*segs[seg[0]][1:3]) if seg else None
    bands = bres.get('bands', [])
    placed = []
    for place, start, addr, size_ in bres.get('items', []):
        lab = band_of.get((place, start))
        hold = [b[3] for b in bands if b[0] <= addr and addr + size_ <= b[1]]
        placed.append(hold == ([lab] if bands else []))
    ok(placed and all(placed) and len(placed) == len(bufs_p),
       '%s: each of the %d buffers is drawn inside the band of its segment\'s pool and stream' % (name, len(bufs_p)))
    if not bands:
        continue
    # the labels: whole, inside the plot, apart, in their band or just beside it
    pl, labels, rows = bres.get('plot', {}), bres.get('labels', []), bres.get('rows', [])
    good = True
    for k, lb in enumerate(labels):
        text, band = lb['text'], bands[lb['band']][3]
        side = -1 if text.endswith(' ↓') else 1 if text.endswith(' ↑') else 0
        top, bot = rows[lb['band']]
        good = good and text.rstrip(' ↓↑') == band and pl['x'] <= lb['x'] and lb['x'] + lb['w'] <= pl['x'] + pl['w'] \
            and pl['y'] <= lb['y'] and lb['y'] + lb['h'] <= pl['y'] + pl['h'] \
            and not any(meet(lb, q) for q in labels[k + 1:]) \
            and (top <= lb['y'] and lb['y'] + lb['h'] <= bot if side == 0 else
                 abs(lb['y'] + lb['h'] + 1 - top) < 0.01 if side < 0 else abs(lb['y'] - bot - 1) < 0.01)
    shown = sorted(bands[lb['band']][3] for lb in labels)
    tall = sorted(b[3] for b, r in zip(bands, rows) if r[1] - r[0] >= 20)
    ok(good and labels and set(tall) <= set(shown),
       '%s: labels %s drawn whole inside the plot, apart, each in its band or beside it with an arrow; every band '
       '20 px tall or more labelled' % (name, [lb['text'] for lb in labels]))
    hov = bres.get('hovers', [])
    want_h = ['%s\n%d segment%s' % (b, len(want[b]), '' if len(want[b]) == 1 else 's') for b in (x[3] for x in bands)]
    ok([h[2] if h else None for h in hov] == want_h,
       '%s: hovering each band where no buffer is names it and its segments: %s' % (name, want_h))
    # the state at the last tick: per band its segments reserved then, the
    # bytes of the blocks live in them and the rest free (cached)
    st_tick, st = bres.get('stateTick', -1), {}
    for a, (sz, pool, stream, s0, s1) in segs.items():
        if s0 <= st_tick < s1:
            al = sum(b[1] for b in bufs_p if b[2] <= st_tick < b[3] and a <= b[0] < a + sz)
            n0, al0, fr0 = st.get(band_label(pool, stream), (0, 0, 0))
            st[band_label(pool, stream)] = (n0 + 1, al0 + al, fr0 + sz - al)
    heads = {h[0]: tuple(h[1:4]) for h in bres.get('bandHeads', [])}
    ok(st_tick == len(snap['device_traces'][0]) and heads == st and len(bres.get('bandHeads', [])) == len(st),
       '%s at tick %d: the At-a-tick panel heads each band with its segments, allocated and free bytes %s (got %s)'
       % (name, st_tick, st, [h[4] for h in bres.get('bandHeads', [])]))
    if name == 'thin':
        th = [b for b, r in zip(bands, rows) if r[1] - r[0] < 1]
        ok(len(th) == 1 and th[0][3] == band_label((1, 0), 0)
           and all(not lb['text'].startswith(th[0][3]) or lb['text'][-1] in '↓↑' for lb in labels),
           'a band under a pixel tall (%s) has its label beside it, with an arrow, or none; its hover still names it'
           % [b[3] for b in th])

# annotate: the text of an annotate entry shows with the block live at its
# address then, in the hover and the Buffer panel; nowhere else
for path in (os.path.join(TORCH, 'annotate.pickle'), os.path.join(TORCH, 'annotate-many.pickle'),
             os.path.join(src, 'tests', 'data', 'streams-annotate.pickle')):
    snap = load_pickle(path)
    bufs_p, _ = lifetimes(snap)
    want_a = {}
    for k, e in enumerate(snap['device_traces'][0]):
        if e['action'] == 'annotate':
            for b in bufs_p:
                if b[0] == e['addr'] and b[2] <= k + 1 < b[3]:
                    want_a.setdefault((b[0], b[2]), []).append(e['user_metadata'])
    apage = os.path.join(tmp, 'annotate.html')
    p = subprocess.run([memlens, 'report', path, '--interactive', '--strategies', 'recorded', '-o', apage, '--quiet'],
                       capture_output=True, text=True)
    ares, _ = drive(read(apage), BANDS_HARNESS, 'annotate-h.html')
    got_a, in_panel = {}, True
    for (place, start, _a, _s), text, panel in zip(ares.get('items', []), ares.get('texts', []), ares.get('panels', [])):
        notes_ = [ln[len('annotated: '):] for ln in text.split('\n') if ln.startswith('annotated: ')]
        if notes_:
            got_a[(place, start)] = notes_
            in_panel = in_panel and all('annotated: ' + n_ in panel for n_ in notes_)
    ok(p.returncode in (0, 1) and 'error' not in ares and got_a == want_a and in_panel and ares.get('items'),
       '%s: the annotate texts show with the blocks Python ties them to, in the hover and the Buffer panel: %s (got %s)'
       % (os.path.basename(path), want_a, got_a))
    # the At-a-tick panel's rows of annotated blocks end with their texts
    item_of = {str(b_): k for k, b_ in enumerate(ares.get('buffers', []))}
    keys = [(x[0], x[1]) for x in ares.get('items', [])]
    rows = [(keys[item_of[b_]], t) for b_, t in ares.get('stateRows', []) if b_ in item_of]
    ok(rows and all((t.endswith(' — annotated: ' + '; '.join(want_a[k])) if k in want_a else 'annotated' not in t)
                    for k, t in rows),
       '%s: in the At-a-tick panel the rows of annotated blocks end with their texts, no other row has any (%d rows)'
       % (os.path.basename(path), len(rows)))
    want_s = sorted(k for k, v in want_a.items() if any('for backward' in t.lower() for t in v))
    ok(sorted(tuple(x) for x in ares.get('noteSearch', [])) == want_s,
       '%s: searching "FOR BACKWARD" finds the blocks annotated so: %s' % (os.path.basename(path), want_s))

# colour by compile_context and by user_metadata (sim/analysis/groups.h):
# each buffer's class is its alloc entry's text, as Python reads it; a
# trace that records none offers the choice disabled, saying so
GROUPS_HARNESS = harness(r"""
    const p = window.memlensPages[0], c = p.canvas;
    out.options = Array.from(p.colorEl.options, o => [o.value, o.textContent, o.disabled]);
    out.palette = p.palette;
    const px = (x, y) => Array.from(c.getContext('2d').getImageData(Math.round(x * devicePixelRatio),
      Math.round(y * devicePixelRatio), 1, 1).data.slice(0, 3));
    out.by = {};
    for (const key of ['compile_context', 'user_metadata']) {
      if (p.colorEl.querySelector('option[value="' + key + '"]').disabled) continue;
      p.colorEl.value = key;
      p.colorEl.dispatchEvent(new Event('change'));
      out.by[key] = {
        legend: Array.from(p.legendEl.querySelectorAll('span'), e => [e.textContent, Number(e.dataset.cls)]),
        items: Array.from({ length: p.n }, function (_, i) {
          const at = p.pixel((p.start[i] + p.end[i]) / 2, p.addr[i] + p.size[i] / 2);
          return [p.place[i], p.start[i], p.cls[i], px(at.x, at.y)];
        }) };
    }
    for (let e = p.fig.previousElementSibling; e; e = e.previousElementSibling) e.style.display = 'none';
    p.colorEl.value = 'compile_context';
    p.colorEl.dispatchEvent(new Event('change'));""")
groups_shot = None
for name in ('groups', 'compile-context', 'graph-two-streams'):
    path = os.path.join(TORCH, name + '.pickle')
    snap = load_pickle(path)
    bufs_p, _ = lifetimes(snap)
    gpage = os.path.join(tmp, 'g-' + name + '.html')
    p = subprocess.run([memlens, 'report', path, '--interactive', '--strategies', 'recorded', '-o', gpage, '--quiet'],
                       capture_output=True, text=True)
    gres, gh = drive(read(gpage), GROUPS_HARNESS, 'g-' + name + '-h.html')
    groups_shot = groups_shot or gh
    opts = {o[0]: (o[1], o[2]) for o in gres.get('options', [])}
    for key in ('compile_context', 'user_metadata'):
        want_g = {(b[0], b[2]): (b[4] or {}).get(key) or '(none)' for b in bufs_p}
        if set(want_g.values()) == {'(none)'}:
            ok(opts.get(key) == ('colour by %s (none in this trace)' % key, True),
               '%s records no %s: the choice is offered disabled and says so (%s)' % (name, key, opts.get(key)))
            continue
        got_by = gres.get('by', {}).get(key, {})
        legend = {k: t.rsplit(' (', 1)[0] for t, k in got_by.get('legend', [])}
        counts = {}
        for g in want_g.values():
            counts[g] = counts.get(g, 0) + 1
        want_legend = sorted('%s (%d %s)' % (g, n_, 'buffer' if n_ == 1 else 'buffers') for g, n_ in counts.items())
        items = got_by.get('items', [])
        got_g = {(pl_, st): legend.get(k) for pl_, st, k, _ in items}
        pal = gres.get('palette', [])
        painted = all(pix == pal[k] for _, _, k, pix in items)
        ok(opts.get(key, ('', True))[1] is False and got_g == want_g and len(items) == len(bufs_p)
           and sorted(t for t, _ in got_by.get('legend', [])) == want_legend and painted,
           '%s: colour by %s puts each of the %d buffers in its alloc entry\'s group, painted in its colour; legend %s '
           '(got %s %s)' % (name, key, len(bufs_p), want_legend, sorted(got_by.get('legend', [])), gres.get('error', '')))

# a CSV has no such columns: the choices say the format records none
csv_in = os.path.join(src, 'samples', 'tiny.16.csv')
with open(csv_in) as f:
    header = f.readline().strip().split(',')
cpage = os.path.join(tmp, 'csv.html')
p = subprocess.run([memlens, 'report', csv_in, '--interactive', '-o', cpage, '--quiet'], capture_output=True, text=True)
copts = dict(re.findall(r'<option value="(compile_context|user_metadata)" disabled="disabled">([^<]*)</option>', read(cpage)))
ok(not {'compile_context', 'user_metadata'} & set(header)
   and copts == {k: 'colour by %s (this format records none)' % k for k in ('compile_context', 'user_metadata')},
   'a CSV (columns %s) offers compile_context and user_metadata disabled, saying the format records none (%s)'
   % (header, copts))

for name, src_page in (('html-page.png', hpage), ('html-page-panels.png', ph), ('html-page-bands.png', band_shot),
                       ('html-page-groups.png', groups_shot)):
    if not src_page:
        continue
    shot = os.path.join(shots or tmp, name)
    if os.path.exists(shot):
        os.unlink(shot)
    r = browse(src_page, '--screenshot=' + shot, '--virtual-time-budget=5000', '--window-size=1280,1400')
    ok(os.path.exists(shot) and os.path.getsize(shot) > 10000,
       "a screenshot of the page: %s %s" % (shot, "" if os.path.exists(shot) else r.stderr[-300:]))
sys.exit(done())
