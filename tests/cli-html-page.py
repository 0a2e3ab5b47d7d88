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
shots = sys.argv[3] if len(sys.argv) > 3 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done  # noqa: E402

chromium = shutil.which('chromium') or shutil.which('chromium-browser')
if not chromium:
    print('1..0 # SKIP chromium is not installed (tools/deps.sh installs it)')
    sys.exit(0)
tmp = tempfile.mkdtemp()
ALIGN = 512
BASE = 0x7f0000000000
SITES = ['model.py:%d:forward' % (40 + 3 * k) for k in range(8)] + \
    ['torch/optim/adam.py:84:_init_group', 'torch/nn/functional.py:3053:cross_entropy']
BIG = {'addr': BASE + (64 << 20), 'size': 64 << 20, 'start': 1000, 'end': 5000, 'stack': 1, 'stream': 9}


def write_trace(path, seed=29, horizon=20000):
    """64 slots of 1 MiB reused over @horizon ticks by small buffers, and
    one 64 MiB buffer above them."""
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
    events = []
    for k, b in enumerate(bufs):
        events.append((b['start'], 1, k))
        events.append((b['end'], 0, k))
    events.sort()  # at one tick: frees first, then allocations by buffer
    with open(path, 'w') as f:
        f.write(json.dumps({'format': 'memlens-trace', 'version': 1, 'alignment': ALIGN}) + '\n')
        for s, site in enumerate(SITES, 1):
            file, line, func = site.split(':')
            f.write(json.dumps({'kind': 'stack', 'sid': s, 'site': site, 'frames': [[file, int(line), func]]}) + '\n')
        for tick, alloc, k in events:
            b = bufs[k]
            if alloc:
                f.write(json.dumps({'kind': 'alloc', 'tick': tick, 'id': k + 1, 'addr': hex(b['addr']), 'size': b['size'],
                                    'stream': b['stream'], 'stack': b['stack']}) + '\n')
            else:
                f.write(json.dumps({'kind': 'free', 'tick': tick, 'id': k + 1}) + '\n')


def read_trace(path):
    """The buffers of the file, in allocation order (memlens's buffer
    index), sizes rounded to the alignment, and one past the last tick."""
    sites, live, out, last = {}, {}, [], 0
    with open(path) as f:
        head = json.loads(f.readline())
        align = head.get('alignment', 1)
        for line in f:
            e = json.loads(line)
            if e['kind'] == 'stack':
                sites[e['sid']] = e['site']
            elif e['kind'] == 'alloc':
                b = {'addr': int(e['addr'], 16), 'size': -(-e['size'] // align) * align, 'start': e['tick'],
                     'site': sites[e['stack']], 'stream': e['stream']}
                live[e['id']] = b
                out.append(b)
            elif e['kind'] == 'free':
                live.pop(e['id'])['end'] = e['tick']
            last = max(last, e.get('tick', 0))
    return out, last + 1


def live_max(bufs):
    """The most bytes live at once (frees before allocations at a tick)."""
    steps = sorted([(x['start'], 1, x['size']) for x in bufs] + [(x['end'], 0, -x['size']) for x in bufs])
    top = cur = 0
    for _, _, dv in steps:
        cur += dv
        top = max(top, cur)
    return top


def harness(body):
    """A script that runs @body (JavaScript filling the object `out`)
    and writes `out` as JSON into <pre id="results">, or the error."""
    return r'''
<script>
(function () {
  const out = {};
  try {
%s
  } catch (e) {
    out.error = String(e) + ' ' + e.stack;
  }
  const pre = document.createElement('pre');
  pre.id = 'results';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
''' % body


DIFF_HARNESS = harness(r'''
    const ps = window.memlensPages;
    out.fits = ps.map(p => Object.assign({}, p.view));
    out.modes = ps.map(p => p.mode);
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


def browse(page, *args):
    cmd = [chromium, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--window-size=1280,900',
           '--user-data-dir=' + os.path.join(tmp, 'profile')] + list(args) + ['file://' + page]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp)


trace = os.path.join(tmp, 't.jsonl')
write_trace(trace)
bufs, end_tick = read_trace(trace)
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
harness = os.path.join(tmp, 'h.html')
with open(harness, 'w') as f:
    f.write(text.replace('</body>', HARNESS % {'big': big, 'zoom_tick': 7000, 'addr': hex(probe), 'site': site}
                         + '</body>'))
r = browse(harness, '--dump-dom', '--virtual-time-budget=5000')
m = re.search(r'<pre id="results">(.*?)</pre>', r.stdout, re.S)
res = json.loads(html.unescape(m.group(1))) if m else {'error': 'no results: ' + r.stderr[-800:]}
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

# diff --interactive: two runs, one scale, one view
trace_b = os.path.join(tmp, 'b.jsonl')
write_trace(trace_b, seed=30, horizon=15000)
bufs_b, end_b = read_trace(trace_b)
dpage = os.path.join(tmp, 'd.html')
p = subprocess.run([memlens, 'diff', trace, trace_b, '--interactive', '-o', dpage, '--quiet'], capture_output=True, text=True)
ok(p.returncode in (0, 1) and os.path.exists(dpage), 'diff --interactive writes the page (%s)' % p.stderr.strip()[:200])
dtext = open(dpage).read() if os.path.exists(dpage) else ''
dh = os.path.join(tmp, 'dh.html')
with open(dh, 'w') as f:
    f.write(dtext.replace('</body>', DIFF_HARNESS + '</body>'))
r = browse(dh, '--dump-dom', '--virtual-time-budget=5000')
m = re.search(r'<pre id="results">(.*?)</pre>', r.stdout, re.S)
dres = json.loads(html.unescape(m.group(1))) if m else {'error': 'no results: ' + r.stderr[-800:]}
fits = dres.get('fits', [])
ok(len(fits) == 2 and all(f['t1'] == max(end_tick, end_b) and f['a1'] == max(top, live_max(bufs_b)) for f in fits)
   and all(m == 'active' for m in dres.get('modes', [])),
   'both runs stacked on one scale: ticks to %d, bytes to %d (%s %s)'
   % (max(end_tick, end_b), max(top, live_max(bufs_b)), fits, dres.get('error', '')))
zs = dres.get('zoomed', [])
ok(len(zs) == 2 and zs[0] == zs[1] and zs[0]['t1'] - zs[0]['t0'] < max(end_tick, end_b) / 2,
   'zooming one zooms the other (%s)' % zs)

md = os.path.join(tmp, 'r.md')
p = subprocess.run([memlens, 'report', trace, '--interactive', '-o', md, '--quiet'], capture_output=True, text=True)
ok(p.returncode == 2 and not os.path.exists(md) and '--interactive' in p.stderr,
   '--interactive with a report that is not HTML is refused, nothing written (%s)' % p.stderr.strip())

shot = os.path.join(shots or tmp, 'html-page.png')
r = browse(harness, '--screenshot=' + shot, '--virtual-time-budget=5000')
ok(os.path.exists(shot) and os.path.getsize(shot) > 10000, "a screenshot of the page: %s %s" % (shot, "" if os.path.exists(shot) else r.stderr[-300:]))
sys.exit(done())
