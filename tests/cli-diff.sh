#!/bin/bash
# memlens diff on two hand-made traces with known differences: the JSON
# table checked field by field against an independent computation from
# the raw JSONL (Python), the text and HTML outputs, bad input; and on
# two of the shared PyTorch snapshots when present.
. "$(dirname "$0")/lib.sh"

# A: one step of a weight, two activations and a temporary; B: the same
# program with a warm-up allocation before the first mark, the first
# activation 80 bytes instead of 50, the temporary gone and a new buffer.
cat >"$T/a.jsonl" <<'EOF2'
{"format":"memlens-trace","version":1,"alignment":1}
{"kind":"mark","name":"step"}
{"kind":"alloc","id":1,"size":100,"site":"w.py:1:init"}
{"kind":"alloc","id":2,"size":50,"site":"act.py:2:forward"}
{"kind":"alloc","id":3,"size":30,"site":"act.py:2:forward"}
{"kind":"free","id":2}
{"kind":"alloc","id":4,"size":20,"site":"tmp.py:3:scratch"}
{"kind":"free","id":3}
{"kind":"free","id":4}
{"kind":"mark","name":"step"}
{"kind":"alloc","id":5,"size":50,"site":"act.py:2:forward"}
{"kind":"free","id":5}
EOF2
cat >"$T/b.jsonl" <<'EOF2'
{"format":"memlens-trace","version":1,"alignment":1}
{"kind":"alloc","id":10,"size":16,"site":"warm.py:5:warmup"}
{"kind":"free","id":10}
{"kind":"mark","name":"step"}
{"kind":"alloc","id":1,"size":100,"site":"w.py:1:init"}
{"kind":"alloc","id":2,"size":80,"site":"act.py:2:forward"}
{"kind":"alloc","id":3,"size":30,"site":"act.py:2:forward"}
{"kind":"free","id":2}
{"kind":"alloc","id":6,"size":40,"site":"new.py:9:extra"}
{"kind":"free","id":3}
{"kind":"free","id":6}
{"kind":"mark","name":"step"}
{"kind":"alloc","id":5,"size":50,"site":"act.py:2:forward"}
{"kind":"free","id":5}
EOF2

run diff "$T/a.jsonl" "$T/b.jsonl" --json
ok $rc "diff --json exits 0"
cp "$T/out" "$T/diff.json"

# the same table from the raw files: ticks are event indexes, a buffer
# lives [alloc, free) (never freed: to the end), the peak is the first
# tick with the most live bytes; allocations pair per site in order,
# restarting at each mark both runs share (here: both "step" marks)
python3 - "$T/a.jsonl" "$T/b.jsonl" "$T/diff.json" >"$T/py" 2>&1 <<'PY'
import json, sys
def load(path):
    evs = [json.loads(l) for l in open(path) if l.strip()][1:]
    bufs, live, marks = [], {}, []
    for t, e in enumerate(evs):
        if e["kind"] == "alloc":
            live[e["id"]] = len(bufs)
            bufs.append({"site": e["site"], "size": e["size"], "start": t, "end": None, "seg": len(marks)})
        elif e["kind"] == "free":
            bufs[live.pop(e["id"])]["end"] = t
        elif e["kind"] == "mark":
            marks.append(t)
    for b in bufs:
        if b["end"] is None:
            b["end"] = len(evs)
    end = max([len(evs)] + [b["end"] for b in bufs])
    best, tick = -1, 0
    for t in range(end):
        v = sum(b["size"] for b in bufs if b["start"] <= t < b["end"])
        if v > best:
            best, tick = v, t
    return bufs, best, tick
A, pa, ta = load(sys.argv[1])
B, pb, tb = load(sys.argv[2])
got = json.load(open(sys.argv[3]))
bad = []
def check(what, g, w):
    if g != w:
        bad.append("%s: got %r, want %r" % (what, g, w))
check("A peak", got["a"]["peak"], pa); check("A peak tick", got["a"]["peak_tick"], ta)
check("B peak", got["b"]["peak"], pb); check("B peak tick", got["b"]["peak_tick"], tb)
check("change", got["change"], pb - pa)
check("aligned by", got["aligned_by"], "marks"); check("anchors", got["anchors"], 2)
sites = sorted(set(b["site"] for b in A + B))
def key(bufs):
    seen, out = {}, {}
    for b in bufs:
        k = (b["seg"], b["site"]); n = seen.get(k, 0); seen[k] = n + 1
        out[(b["seg"], b["site"], n)] = b
    return out
# B's first allocation comes before its first mark: its marks are shifted by one
# segment relative to A's only if A has an allocation before its first mark (it has not)
ka, kb = key(A), key(B)
pairs = [k for k in ka if k in kb]
check("pairs", got["pairs"], len(pairs))
want = []
for s in sites:
    ab = sum(b["size"] for b in A if b["site"] == s and b["start"] <= ta < b["end"])
    bb = sum(b["size"] for b in B if b["site"] == s and b["start"] <= tb < b["end"])
    na = sum(1 for b in A if b["site"] == s); nb = sum(1 for b in B if b["site"] == s)
    rs = sum(1 for k in pairs if k[1] == s and ka[k]["size"] != kb[k]["size"])
    # the site's own maximum in each run (issue 25, item 7): the most of its
    # bytes live at one tick, and the first tick it is reached
    def own(bufs):
        best, at = 0, 0
        for t in range(max([b["end"] for b in bufs] + [0]) + 1):
            v = sum(b["size"] for b in bufs if b["site"] == s and b["start"] <= t < b["end"])
            if v > best:
                best, at = v, t
        return best, at
    (am, at_a), (bm, at_b) = own(A), own(B)
    want.append({"site": s, "a_bytes": ab, "b_bytes": bb, "change": bb - ab, "a_allocs": na, "b_allocs": nb,
                 "resized": rs, "status": "new" if na == 0 else "gone" if nb == 0 else "both",
                 "a_max": am, "a_max_tick": at_a, "b_max": bm, "b_max_tick": at_b})
want.sort(key=lambda r: (-abs(r["change"]), -max(r["a_bytes"], r["b_bytes"]), r["site"]))
check("rows", got["sites"], want)
print("\n".join(bad) if bad else "ok")
print(json.dumps(want))
PY
[ "$(head -1 "$T/py")" = ok ]; ok $? "the JSON matches the table computed from the raw files ($(head -1 "$T/py"))"
contains "$T/diff.json" '"site":"act.py:2:forward","a_bytes":80,"b_bytes":110,"change":30'; ok $? "act.py grew by 30 bytes at the peak (80 -> 110)"
contains "$T/diff.json" '"site":"tmp.py:3:scratch","a_bytes":0,"b_bytes":0,"change":0,"a_allocs":1,"b_allocs":0,"resized":0,"status":"gone"'; ok $? "tmp.py is gone in B"
contains "$T/diff.json" '"site":"new.py:9:extra","a_bytes":0,"b_bytes":0,"change":0,"a_allocs":0,"b_allocs":1,"resized":0,"status":"new"'; ok $? "new.py is new in B"

run diff "$T/a.jsonl" "$T/b.jsonl"
ok $rc "diff (text) exits 0"
contains "$T/out" "change +30 B"; ok $? "the text gives the change of the peak (+30 B)"
grep -q "^act.py:2:forward .* +30 B .* 3 -> 3 .* 1$" "$T/out"; ok $? "and act.py's row: +30 B, 3 -> 3 allocations, 1 resized"
grep -q "new.py:9:extra.*new in B" "$T/out"; ok $? "new in B is said"
grep -q "tmp.py:3:scratch.*gone in B" "$T/out"; ok $? "gone in B is said"
contains "$T/out" "paired between the 2 marks"; ok $? "it says the marks aligned the runs"

# like with like (issue 25, item 7): softmax peaks early in A, away from
# A's peak (0 B there), and at B's peak; the rows give each site's own
# maximum beside the bytes at each peak, and say which is which
printf '%s\n' '{"format":"memlens-trace","version":1,"alignment":1}' \
  '{"kind":"alloc","id":1,"size":96,"site":"nn.py:7:softmax"}' '{"kind":"free","id":1}' \
  '{"kind":"alloc","id":2,"size":200,"site":"nn.py:3:matmul"}' '{"kind":"free","id":2}' >"$T/sa.jsonl"
printf '%s\n' '{"format":"memlens-trace","version":1,"alignment":1}' \
  '{"kind":"alloc","id":2,"size":200,"site":"nn.py:3:matmul"}' '{"kind":"alloc","id":1,"size":600,"site":"nn.py:7:softmax"}' \
  '{"kind":"free","id":1}' '{"kind":"free","id":2}' >"$T/sb.jsonl"
run diff "$T/sa.jsonl" "$T/sb.jsonl" --json
contains "$T/out" '"site":"nn.py:7:softmax","a_bytes":0,"b_bytes":600,"change":600,"a_allocs":1,"b_allocs":1,"resized":1,"status":"both","a_max":96,"a_max_tick":0,"b_max":600,"b_max_tick":1}'
ok $? "softmax: 0 B at A's peak, but 96 B at its own maximum in A (tick 0), 600 B in B"
run diff "$T/sa.jsonl" "$T/sb.jsonl"
grep -qE "^nn.py:7:softmax +0 B +600 B +\+600 B +96 B +600 B " "$T/out" && contains "$T/out" "own max: the most of the site's bytes live at once"
ok $? "the text gives both, and says which is which"

# without marks: pairing by order per call site
grep -v '"mark"' "$T/a.jsonl" >"$T/a2.jsonl"; grep -v '"mark"' "$T/b.jsonl" >"$T/b2.jsonl"
run diff "$T/a2.jsonl" "$T/b2.jsonl" --json
contains "$T/out" '"aligned_by":"order","anchors":0,"pairs":4'; ok $? "without marks: paired by order per site (4 pairs)"

# one sample, one change: a weight twice as large. Weights live at every
# tick, so the peak grows by exactly that and no other site changes.
sed 's/"size":7077888,\("stream":7,"time_ns":[0-9]*,"name":"h0.attn.qkv.weight"\)/"size":14155776,\1/' \
  "$SRC/samples/train-step.jsonl" >"$T/changed.jsonl"
[ "$(cmp -l "$SRC/samples/train-step.jsonl" "$T/changed.jsonl" 2>/dev/null | wc -l)" -gt 0 ]; ok $? "the changed copy differs"
run diff "$SRC/samples/train-step.jsonl" "$T/changed.jsonl" --json
ok $rc "diff of the sample and its changed copy"
python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
changed = [(r["site"], r["change"]) for r in d["sites"] if r["change"]]
assert d["change"] == 7077888, d["change"]
assert changed == [("train.py:41:build_model", 7077888)], changed
assert sum(r["resized"] for r in d["sites"]) == 1
assert d["aligned_by"] == "marks" and d["anchors"] > 0
assert all(r["status"] == "both" for r in d["sites"])
PY
ok $? "exactly one site grows, by the weight's 7077888 bytes; one allocation resized; aligned by the sample's marks"

# the HTML report
if have_html; then
  run diff "$T/a.jsonl" "$T/b.jsonl" -o "$T/d.html" --quiet
  ok $rc "diff -o writes the HTML report"
  [ "$(grep -o '<svg' "$T/d.html" | wc -l)" -eq 2 ]; ok $? "with both runs' figures"
  contains "$T/d.html" 'data-site="act.py:2:forward" data-a="80" data-b="110" data-change="30"'; ok $? "and the table row of act.py"
  ! grep -qiE '<script[^>]*src|src="http|href="http|url\(http|@import' "$T/d.html"; ok $? "it loads nothing (no script, image or style from elsewhere)"
  [ "$(grep -c '<script>' "$T/d.html")" -eq 1 ] && [ "$(grep -o '<figure class="linked">' "$T/d.html" | wc -l)" -eq 2 ] \
    && contains "$T/d.html" 'id="zoom-reset"'
  ok $? "one inline script links the zoom of the two figures, with a reset button"
  # the script's behaviour on a stand-in for the page (node, no browser):
  # a wheel notch over A zooms both at the pointer, a drag over B pans
  # both, a double-click shows all again
  if command -v node >/dev/null 2>&1; then
    node - "$T/d.html" >"$T/zoom" 2>&1 <<'JS'
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const js = html.match(/<script>([\s\S]*?)<\/script>/)[1];
const boxes = [...html.matchAll(/<figure class="linked"><svg[^>]*viewBox="([^"]*)"/g)].map(m => m[1]);
function Svg(vb) { this.a = { viewBox: vb }; this.on = {}; }
Svg.prototype.getAttribute = function (k) { return this.a[k]; };
Svg.prototype.setAttribute = function (k, v) { this.a[k] = v; };
Svg.prototype.addEventListener = function (t, f) { this.on[t] = f; };
Svg.prototype.getBoundingClientRect = function () { return { left: 100, top: 50, width: 800, height: 310 }; };
const svgs = boxes.map(b => new Svg(b)), button = new Svg('');
global.document = { querySelectorAll: s => s === 'figure.linked svg' ? svgs : [], getElementById: id => id === 'zoom-reset' ? button : null };
new Function(js)();
const say = (what) => console.log(what + ': ' + svgs.map(s => s.getAttribute('viewBox')).join(' | '));
say('start');
// the pointer at a quarter across, half down: (300, 205) on screen is (400, 310) in the 1600 x 620 picture
svgs[0].on.wheel({ deltaY: -1, clientX: 300, clientY: 205, preventDefault() {} });
say('wheel');
svgs[1].on.pointerdown({ clientX: 500, clientY: 200, pointerId: 1 });
svgs[1].on.pointermove({ clientX: 400, clientY: 200 });
svgs[1].on.pointerup({});
say('drag');
svgs[0].on.dblclick({});
say('dblclick');
svgs[0].on.wheel({ deltaY: -1, clientX: 300, clientY: 205, preventDefault() {} });
button.on.click({});
say('button');
JS
    # by hand: zoom 1.25 at (400, 310): w 1280, x = 400 - 400 / 1.25 = 80, y = 310 - 310 / 1.25 = 62;
    # a 100 px drag left on an 800 px figure showing 1280 units: x + 160 = 240
    cat >"$T/zoom-want" <<'EOF2'
start: 0 0 1600 620 | 0 0 1600 620
wheel: 80 62 1280 496 | 80 62 1280 496
drag: 240 62 1280 496 | 240 62 1280 496
dblclick: 0 0 1600 620 | 0 0 1600 620
button: 0 0 1600 620 | 0 0 1600 620
EOF2
    diff "$T/zoom-want" "$T/zoom" >&2; ok $? "the two figures zoom at the pointer, pan and reset together (node)"
  else
    skip "the two figures zoom at the pointer, pan and reset together" "node is not installed"
  fi
else
  skip "diff -o writes the HTML report" "built without cairo"
fi

# bad input
run diff "$T/a.jsonl"
ok $([ $rc -eq 2 ]; echo $?) "one file is a usage error"
printf 'not a trace\n' >"$T/bad.jsonl"
run diff "$T/a.jsonl" "$T/bad.jsonl"
ok $([ $rc -eq 2 ] && grep -q "bad.jsonl" "$T/err"; echo $?) "a bad B is named, exit 2"
run diff "$T/a.jsonl" "$T/b.jsonl" -o "$T/d.pdf"
ok $([ $rc -eq 2 ] && [ ! -e "$T/d.pdf" ]; echo $?) "a report that is not .html is refused, nothing written"

# two shared snapshots
S="$SHARED/data/torch-snapshots"
if [ -f "$S/magma27_trace.pickle" ] && [ -f "$S/bcrafton_trace.pickle" ]; then
  run diff "$S/magma27_trace.pickle" "$S/bcrafton_trace.pickle" --json
  ok $rc "diff of two shared snapshots"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['change']==d['b']['peak']-d['a']['peak'] and len(d['sites'])>3" "$T/out"
  ok $? "a JSON table with its sites"
fi
finish
