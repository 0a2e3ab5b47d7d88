#!/bin/bash
# The interactive HTML page on a large trace (docs/performance.md, "HTML
# page"). Usage:
#   flock /work/wt/suite.lock bench/html-page.sh BUILD_DIR [BUFFERS | FILE]
# Generates the viewer benchmark's trace (bench/gen-viewer-trace.py, cached
# in /tmp), writes the report twice with one strategy (best-fit) — static
# (SVG pictures) and --interactive — and prints for each the time memlens
# took and the file's size; for the interactive page, the bytes of its
# typed arrays and string tables (the compact data: 55 bytes a buffer, one
# more per compile_context / user_metadata colouring the trace has, and
# the call-site / name strings) against the file, and of its tiles and
# curves.
# Then opens the page in headless chromium (software drawing, --disable-gpu)
# with a script appended that records: the time from navigation to the
# first picture (HTML parse, JSON.parse, base64 decode, first draw) and
# until the tiles are decoded, and the script's drawing time per frame
# (with the tile level each frame drew, '-' for none) along a fixed path:
# 10 fits, 20 zooms in of 1.5x at the middle, 30 pans deep in, 20 zooms
# out; then, as baselines in the same run, 10 fits coloured by stream
# (no tiles: every buffer visited), 5 fits of the stacked view, and 10
# pans at zoom 2.
set -e
BUILD=${1:-build}
N=${2:-1000000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$N" ]; then
  TRACE=$N
else
  TRACE=/tmp/memlens-bench-$N.csv
  [ -s "$TRACE" ] || python3 "$SRC/bench/gen-viewer-trace.py" "$TRACE" "$N"
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
now () { date +%s.%N; }
for mode in static interactive; do
  flag=; [ $mode = interactive ] && flag=--interactive
  t0=$(now)
  "$BUILD/cli/memlens" report "$TRACE" --strategies best-fit $flag -o "$T/$mode.html" --quiet || [ $? = 1 ]
  t1=$(now)
  echo "$mode: memlens report $(echo "$t1 - $t0" | bc) s, $(stat -c %s "$T/$mode.html") bytes"
done
echo "trace: $(stat -c %s "$TRACE") bytes ($TRACE)"
python3 - "$T/interactive.html" <<'PY'
import base64, json, re, sys
text = open(sys.argv[1]).read()
d = json.loads(re.search(r'<script type="application/json" class="ml-data">(.*?)</script>', text, re.S).group(1))
cols = ('start', 'end', 'addr', 'size', 'place', 'site', 'stream', 'buffer', 'rank', 'stack') + \
    tuple(k for k in d if k.startswith('cls_'))
raw = sum(len(base64.b64decode(d[k])) for k in cols)
b64 = sum(len(d[k]) for k in cols)
strings = sum(len(s.encode()) + 1 for s in d['sites'] + d['streams'])
tiles = sum(len(t) for k in ('address', 'active') for l in d.get('tiles', {}).get(k, []) for t in l)
curve = sum(len(d['curve'][k]) for k in ('tick', 'live', 'reserved', 'frag'))
print('interactive page: %d bytes (first figure: %d buffers); typed arrays %d bytes raw, %d in base64; '
      'string tables %d bytes (%d strings); tiles %d bytes of base64 PNG; curves %d bytes of base64 (%d points of %d); '
      'file / compact data (arrays + strings) = %.2f'
      % (len(text.encode()), d['n'], raw, b64, strings, len(d['sites']), tiles, curve, d['curve']['n'],
         d['curve']['points'], len(text.encode()) / (raw + strings)))
PY
cat >"$T/bench.js" <<'JS'
<script>
(function () {
  const out = { firstPicture: performance.now() }, p = window.memlensPages[0], frames = {};
  out.items = p.n;
  out.parseMs = p.parseMs;
  out.decodeMs = p.decodeMs;
  out.startMs = p.startMs;
  out.builtMs = p.loadMs;
  function run(name, n, step) {
    const ms = [], lv = [];
    for (let k = 0; k < n; k++) { step(k); ms.push(p.frameMs); lv.push(p.stats.level === undefined ? '-' : p.stats.level); }
    ms.sort((a, b) => a - b);
    frames[name] = { n: n, median: ms[n >> 1], p95: ms[Math.floor(n * 0.95)], max: ms[n - 1], tiles: lv.join('') };
  }
  function frames_() {
  out.tilesMs = performance.now() - out.firstPicture;
  run('fit', 10, () => p.fit());
  const mid = p.d.endTick / 2;
  run('zoom in 1.5x', 20, () => p.zoomAt(mid, 1 / 1.5));
  out.deep = Object.assign({}, p.view);
  run('pan deep', 30, () => p.pan((p.view.t1 - p.view.t0) / 10, 0));
  run('zoom out 1.5x', 20, () => p.zoomAt((p.view.t0 + p.view.t1) / 2, 1.5));
  // the same fit without tiles (colour by stream: the tiles are by call site)
  p.setColor('stream');
  run('fit, no tiles', 10, () => p.fit());
  p.setColor('site');
  p.setMode('active');
  run('stacked fit', 5, () => p.fit());
  p.setMode('address');
  run('pan at fit zoom x2', 10, (k) => { if (!k) p.zoomAt(mid, 0.5); p.pan((p.view.t1 - p.view.t0) / 20, 0); });
  out.frames = frames;
  for (const s of document.querySelectorAll('script.ml-data')) s.remove();
  const pre = document.createElement('pre');
  pre.id = 'bench';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
  }
  (p.tilesReady || Promise.resolve()).then(frames_);
})();
</script>
JS
python3 - "$T/interactive.html" "$T/bench.js" "$T/b.html" <<'PY'
import sys
text, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], 'w').write(text.replace('</body>', js + '</body>'))
PY
t0=$(now)
chromium --headless --no-sandbox --disable-gpu --no-first-run --window-size=1280,900 \
  --user-data-dir="$T/profile" --dump-dom "file://$T/b.html" 2>/dev/null >"$T/dom.html"
t1=$(now)
echo "chromium: $(echo "$t1 - $t0" | bc) s from start to exit"
python3 - "$T/dom.html" <<'PY'
import html, json, re, sys
m = re.search(r'<pre id="bench">(.*?)</pre>', open(sys.argv[1]).read(), re.S)
r = json.loads(html.unescape(m.group(1)))
print('page: %d items, first picture %.0f ms after navigation: the HTML read by %.0f ms, then JSON.parse %.0f ms, '
      'base64 decode %.0f ms, the first figure built and drawn by %.0f ms; tiles decoded %.0f ms after the first picture'
      % (r['items'], r['firstPicture'], r['startMs'], r['parseMs'], r['decodeMs'], r['builtMs'], r['tilesMs']))
for name, f in r['frames'].items():
    print('  %-18s %2d frames: draw ms median %.1f, p95 %.1f, max %.1f; tile level per frame %s'
          % (name, f['n'], f['median'], f['p95'], f['max'], f['tiles']))
PY
