#!/bin/bash
# The GTK4 viewer in a real window under Xvfb: open a sample, zoom and
# select through the actions, pick a buffer by the hit test, switch
# strategy, compare, export PNG/SVG/PDF/report (test-viewer-window drives
# a window of the viewer's application, checks each step's effect and
# prints TAP, renumbered here).
# $1 = memlens-view, $2 = source root, $3 = memlens, $4 = test-viewer-window.
# Skips without Xvfb (TAP: the plan "1..0 # SKIP" and exit 0; 77 would be
# a TAP error).
VIEW=$1
SRC=$2
MEMLENS=$3
WINDOW_TEST=$4
if ! command -v xvfb-run >/dev/null 2>&1 || ! command -v Xvfb >/dev/null 2>&1; then
  echo "1..0 # SKIP Xvfb (xvfb-run) is not installed"
  exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_DATA_HOME="$T/data" XDG_CONFIG_HOME="$T/config" XDG_CACHE_HOME="$T/cache"
export GSK_RENDERER=cairo GTK_A11Y=none NO_AT_BRIDGE=1 GDK_BACKEND=x11
# Sanitizer builds: GObject's type system keeps a 128-byte block for the
# life of the process that tests/lsan.supp suppresses (libgobject), but
# the fast unwinder loses the stack in a library built without frame
# pointers (Debian 12's glib 2.74.6-2+deb12u9: the report names only
# "<unknown module>"), so the suppression cannot match; the slow
# unwinder finds libgobject. Only the viewer's processes pay for it.
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}fast_unwind_on_malloc=0"
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
# xrun CMD...: CMD under Xvfb; its own exit status, which the command
# writes down itself: xvfb-run replaces it with 5 when removing its
# temporary folder fails (seen on a loaded machine)
# (once more when the command did not run at all: Xvfb failed to start on
# a loaded machine, and xvfb-run said 1)
xrun() {
  local r try
  for try in 1 2; do
    rm -f "$T/xrc"
    XRC="$T/xrc" timeout 150 xvfb-run -a -s "-screen 0 1600x1000x24" sh -c '"$@"; echo $? >"$XRC"' sh "$@"
    r=$?
    [ -s "$T/xrc" ] && return "$(cat "$T/xrc")"
  done
  return "$r"
}

# the command hands over to the viewer
"$MEMLENS" view --help >"$T/help" 2>&1; ok $? "memlens view --help exits 0"
grep -q "Usage: memlens view" "$T/help"; ok $? "it shows its usage"
out=$("$MEMLENS" view --version 2>&1); [ "$out" = "memlens-view $("$MEMLENS" --version | cut -d' ' -f2)" ]; ok $? "memlens view runs memlens-view from the build tree ($out)"
MEMLENS_VIEW=/nonexistent/memlens-view "$MEMLENS" view x.jsonl >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot run" "$T/err"; ok $? "a missing viewer is a clear error, exit 2"
# the scripted runs live in the test and the benchmark, not in the viewer
for opt in --self-test="$T/out" --bench="$T/bench.json"; do
  "$VIEW" "$opt" x.jsonl >/dev/null 2>"$T/err"; rc=$?
  [ $rc -ne 0 ] && grep -q "Unknown option ${opt%%=*}" "$T/err"; ok $? "memlens-view has no ${opt%%=*} option (exit $rc)"
done

# the scripted path through a real window
mkdir -p "$T/out"
xrun "$WINDOW_TEST" "$T/out" "$SRC/samples/viewer-demo.jsonl" >"$T/tap" 2>"$T/log"; rc=$?
if grep -q "cannot open display\|Xvfb failed" "$T/log"; then
  echo "1..0 # SKIP Xvfb could not start"
  exit 0
fi
while read -r line; do
  case "$line" in
    "ok "*) ok 0 "viewer: ${line#ok * - }";;
    "not ok "*) ok 1 "viewer: ${line#not ok * - }";;
  esac
done <"$T/tap"
[ $rc -eq 0 ]; ok $? "the scripted run exits 0 (got $rc)"
[ "$(grep -c '^ok' "$T/tap")" -ge 30 ]; ok $? "it ran every step ($(grep -c '^ok' "$T/tap") checks)"
[ -s "$T/out/window-open.png" ] && [ -s "$T/out/window-compare.png" ]; ok $? "screenshots were taken"

# a bad file is reported in the window, not a crash
printf 'this is not a trace\n' >"$T/bad.jsonl"
xrun "$WINDOW_TEST" "$T/out" "$T/bad.jsonl" >"$T/tap2" 2>"$T/log2"; rc=$?
[ $rc -eq 1 ] && grep -q "^not ok 1 - the file opens" "$T/tap2"; ok $? "a bad file fails to load cleanly (exit $rc, no crash)"

# every kind of file that does not open: the reason in the window (on
# screen, not on a hidden page) and the same line on stderr; without the
# scripted run the exit status is 2 (nothing opened)
: >"$T/empty.pickle"
head -c 100 "$SRC/tests/data/tiny-snapshot.pickle" >"$T/truncated.pickle"
printf '\x80\x04garbage, not a pickle at all' >"$T/garbage.pickle"
mkdir -p "$T/folder.pickle"
for f in empty.pickle truncated.pickle garbage.pickle folder.pickle missing.pickle; do
  # the reader's own message for the file, from another command
  want=$("$MEMLENS" stats "$T/$f" 2>&1 >/dev/null | sed 's/^memlens stats: //')
  xrun "$WINDOW_TEST" "$T/out" "$T/$f" >"$T/tap5" 2>"$T/log5"; rc=$?
  shown=$(cat "$T/out/error.txt" 2>/dev/null)
  [ $rc -eq 1 ] && grep -q "^ok 2 - the window shows why" "$T/tap5" && [ "$shown" = "Could not open $want" ]
  ok $? "$f: the window shows \"$shown\" (exit $rc)"
  grep -qxF "memlens view: Could not open $want" "$T/log5"; ok $? "$f: and stderr says it"
  rm -f "$T/out/error.txt"
done
# the same without the scripted run: the window opens, shows it, and when
# it is closed the exit status is 2; xdotool closes it
if command -v xdotool >/dev/null 2>&1; then
  cat >"$T/close.sh" <<'SH'
"$1" "$2" 2>"$3" & pid=$!
for i in $(seq 1 100); do
  xdotool search --onlyvisible --classname "^memlens-view$" >/dev/null 2>&1 && break
  sleep 0.1
done
sleep 1
xdotool search --onlyvisible --classname "^memlens-view$" windowfocus --sync key ctrl+q 2>/dev/null || kill $pid
wait $pid
SH
  xrun sh "$T/close.sh" "$VIEW" "$T/missing.pickle" "$T/log6"; rc=$?
  [ $rc -eq 2 ] && grep -q "memlens view: Could not open $T/missing.pickle: cannot open" "$T/log6"
  ok $? "a file that does not open: the window shows it, stderr says it, exit 2 once closed (exit $rc)"
  xrun sh "$T/close.sh" "$VIEW" "$SRC/samples/viewer-demo.jsonl" "$T/log6"; rc=$?
  [ $rc -eq 0 ]; ok $? "a file that opens: exit 0 once closed (exit $rc)"
  [ $rc -eq 0 ] || sed 's/^/#   /' "$T/log6"
fi
# bad options and values: refused before any window opens, exit 2
"$MEMLENS" view --bogus x.pickle >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "unrecognized option '--bogus'" "$T/err"; ok $? "memlens view --bogus exits 2 with the usage (exit $rc)"
"$MEMLENS" view --strategy foo x.pickle >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--strategy foo: no such strategy" "$T/err"; ok $? "view --strategy foo is refused, naming it (exit $rc)"
"$MEMLENS" view --compare nope x.pickle >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--compare nope: no such strategy" "$T/err"; ok $? "view --compare nope likewise (exit $rc)"
"$MEMLENS" view --device one x.pickle >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--device one: not a device number" "$T/err"; ok $? "view --device one is refused (exit $rc)"
"$MEMLENS" view --axis sideways x.pickle >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--axis sideways" "$T/err"; ok $? "view --axis sideways is refused (exit $rc)"

# a snapshot with three devices: the OOM's device by default, named in the
# window, and another chosen in the header's selector with a real click
DEV3="$SRC/tests/data/oom-expandable-3dev.pickle"
xrun "$WINDOW_TEST" "$T/out" "$DEV3" >"$T/tap7" 2>"$T/log7"; rc=$?
[ $rc -eq 0 ] && ! grep -q "^not ok" "$T/tap7"; ok $? "3 devices: the device script passes (exit $rc)"
sed 's/^/#   /' "$T/tap7"
# which device holds the OOM, and each device's entries, from the pickle itself
if python3 -c 1 2>/dev/null; then
  python3 - "$DEV3" >"$T/want-devices" <<'PY'
import pickle, sys
s = pickle.load(open(sys.argv[1], 'rb'))
tr = s['device_traces']
devs = sorted(set(range(len(tr))) | {seg['device'] for seg in s['segments']})
oom = [d for d in devs if d < len(tr) and any(e['action'] == 'oom' for e in tr[d])]
print("device %d of %d: it recorded an OOM (%d trace entries)" % (oom[0], len(devs), len(tr[oom[0]])))
for d in devs:
    n = len(tr[d]) if d < len(tr) else 0
    print("Device %d · %d entries%s" % (d, n, " · OOM" if d in oom else "") if n else "Device %d · no trace" % d)
PY
  diff "$T/want-devices" "$T/out/devices.txt" >"$T/ddiff"; ok $? "the window's device line and selector rows match the pickle ($(head -1 "$T/want-devices"))"
  cat "$T/ddiff"
fi
# the OOM's refused request, drawn in both views: its size from the pickle
if python3 -c 1 2>/dev/null; then
  req=$(python3 -c 'import pickle, sys
s = pickle.load(open(sys.argv[1], "rb"))
print([e["size"] for t in s["device_traces"] for e in t if e["action"] == "oom"][0])' "$DEV3")
  grep -q "^ok .* address view: the refused request ($req B) is on screen, hatched red" "$T/tap7" \
    && grep -q "^ok .* active view: the refused request ($req B) is on screen, hatched red" "$T/tap7"
  ok $? "the OOM's refused request ($req B, the pickle's oom entry) is drawn in the address and active views"
fi
xrun "$WINDOW_TEST" "$T/out" --device 2 "$DEV3" >"$T/tap8" 2>"$T/log8"; rc=$?
grep -q "^ok 2 - the window names the device it shows (device 2 of 3" "$T/tap8" && grep -q "^ok [0-9]* - input: choosing device 1" "$T/tap8"
ok $? "--device 2 opens device 2, and the selector goes to device 1 (exit $rc)"
read -r d nb ne <"$T/out/device2.txt"
want=$("$MEMLENS" stats --device 1 --json "$DEV3" 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["device"], j["buffers"], j["events"])')
[ "$d $nb $ne" = "$want" ]; ok $? "device 1 in the window has the buffers and events stats --device 1 reads ($d $nb $ne)"

# a snapshot's pools and streams as bands, search by frame and by address
# (at any tick, at a tick, at the State page's tick), and --device host:
# what the window shows against Python's reading of each pickle
# (tests/snaplib.py: the pickle's segments grouped by (pool, stream), the
# blocks' lifetimes rebuilt from the trace)
TD="$SRC/tests/data/torch"
for case in "graph-two-streams.pickle" "groups.pickle" "annotate.pickle" "--device host host-pinned.pickle"; do
  set -- $case
  file=${!#}
  rm -f "$T/out/snapshot.txt" "$T/out/search.txt" "$T/out/details.txt" "$T/out/colours.txt"
  if [ $# -gt 1 ]; then
    MEMLENS_TEST_SCRIPT=snapshot xrun "$WINDOW_TEST" "$T/out" "$1" "$2" "$TD/$file" >"$T/tap10" 2>"$T/log10"; rc=$?
  else
    MEMLENS_TEST_SCRIPT=snapshot xrun "$WINDOW_TEST" "$T/out" "$TD/$file" >"$T/tap10" 2>"$T/log10"; rc=$?
  fi
  [ $rc -eq 0 ] && ! grep -q "^not ok" "$T/tap10"; ok $? "$case: the snapshot script passes (exit $rc)"
  sed 's/^/#   /' "$T/tap10"
  python3 - "$SRC/tests" "$TD/$file" "$T/out/snapshot.txt" "$T/out/search.txt" "$case" "$T/out/details.txt" "$T/out/colours.txt" >"$T/pyout" 2>&1 <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
from snaplib import load_pickle, lifetimes, segments_ever, python_bands, pool_name, entry_key, regex_key
path, shown, found, case, details, colours = sys.argv[2:8]
snap = load_pickle(path)
host = "host" in case
lines = open(shown).read().splitlines()
bad = []
bufs, _ = lifetimes(snap, host)
if lines[1] != "buffers %d" % len(bufs):
    bad.append("%s, the pickle has %d buffers" % (lines[1], len(bufs)))
if host and "pinned host memory" not in lines[0]:
    bad.append("the device line: " + lines[0])
got = {l[5:].split(":")[0]: set(int(a, 16) for a in l.split(":", 1)[1].split()) for l in lines if l.startswith("band ")}
want = python_bands(segments_ever(snap)) if not host else {}
if len(want) < 2:
    want = {}
if got != want:
    bad.append("bands %s, Python %s" % (got, want))
searches = open(found).read().splitlines()
for l in searches:
    q, _, rest = l[5:].partition(": ") if ": " in l else (l[5:-1], "", "")
    have = set(rest.split())
    if q.startswith("0x"):
        a, _, t = q.partition("@")
        a = int(a, 16)
        hit = [b for b in bufs if b[0] <= a < b[0] + b[1] and (not t or b[2] <= int(t) < b[3])]
    else:
        hit = [b for b in bufs if any(q.lower() in ("%s:%d:%s" % (f["filename"], f["line"], f["name"])).lower()
                                      for f in b[5])]
    exp = set("0x%x:%d:%d" % (b[0], b[2], b[3]) for b in hit)
    if have != exp:
        bad.append("find %s: %s, Python %s" % (q, sorted(have), sorted(exp)))
# Details: each buffer's pool (its entry's pool_id, else the pool of the
# segment holding it) and the annotate entries at its address while live
trace = snap["host_traces"] if host else snap["device_traces"][0]
segs = snap["host_segments"] if host else snap["segments"]
def seg_pool(a):
    return next((tuple(s.get("segment_pool_id", (0, 0))) for s in segs
                 if s["address"] <= a < s["address"] + s["total_size"]), (0, 0))
want_details = []
for b in sorted(bufs, key=lambda b: (b[2], b[0])):
    pool = tuple(b[4]["pool_id"]) if b[4] and "pool_id" in b[4] else seg_pool(b[0])
    line = "0x%x:%d:%d" % (b[0], b[2], b[3]) + ("" if pool == (0, 0) else " | pool " + pool_name(pool))
    for i, e in enumerate(trace):
        if e["action"] == "annotate" and e["addr"] == b[0] and b[2] <= i + 1 < b[3]:
            line += " | annotated " + e["user_metadata"]
    want_details.append(line)
got_details = open(details).read().splitlines()
if sorted(got_details) != sorted(want_details):
    bad.append("details %s, Python %s" % (got_details, want_details))
# colour by group: each buffer's class and the legend against the entries'
# own compile_context / user_metadata and the frames expression
keys = {"compile_context": entry_key("compile_context"), "user_metadata": entry_key("user_metadata"),
        "frames": regex_key(r"model\.py:[0-9]+:([a-z_]+)")}
got_col, by = {}, None
for l in open(colours).read().splitlines():
    if l.startswith("colour "):
        by, _, legend = l[7:].partition(": ")
        got_col[by] = (sorted(legend.split(" | ")), set())
    else:
        got_col[by][1].add(l)
for by, key in keys.items():
    drawn = [b for b in bufs if b[1] > 0]
    want_bufs = set("0x%x:%d:%d %s" % (b[0], b[2], b[3], key(b) or "(none)") for b in drawn)
    want_legend = sorted(set(key(b) or "(none)" for b in drawn))
    if got_col.get(by) != (want_legend, want_bufs):
        bad.append("colour by %s: %s, Python %s" % (by, got_col.get(by), (want_legend, want_bufs)))
print("; ".join(bad) if bad else "%s | %d searches, %d buffers' details and groups as Python finds them | %s" % (
    lines[0], len(searches), len(got_details), " | ".join(l for l in lines[2:] + [d for d in got_details if "|" in d])))
sys.exit(1 if bad else 0)
PY
  ok $? "$case: the window's bands, buffers, search results, Details (pool, annotations) and colours by group match the pickle ($(head -c 400 "$T/pyout"))"
done

# two files on one time and byte scale: the sample and a copy whose
# largest gradient is twice as large
python3 - "$SRC/samples/train-step.jsonl" "$T/train-step-b.jsonl" <<'PY'
import json, sys
out, done = [], False
for line in open(sys.argv[1]):
    j = json.loads(line)
    if not done and j.get('kind') == 'alloc' and j.get('name') == 'grad.logits':
        j['size'] *= 2
        done = True
    out.append(json.dumps(j))
open(sys.argv[2], 'w').write('\n'.join(out) + '\n')
PY
xrun "$WINDOW_TEST" "$T/out" "$SRC/samples/train-step.jsonl" "$T/train-step-b.jsonl" >"$T/tap9" 2>"$T/log9"; rc=$?
[ $rc -eq 0 ] && ! grep -q "^not ok" "$T/tap9" && grep -q "^ok .* the second file is drawn in the lower timeline" "$T/tap9"
ok $? "view A B: the two-file script passes (exit $rc)"
sed 's/^/#   /' "$T/tap9"
# the shared byte scale is the larger recorded footprint, from the files
want=$(python3 - "$SRC/samples/train-step.jsonl" "$T/train-step-b.jsonl" <<'PY'
import json, sys
best = 0
for p in sys.argv[1:]:
    lo, hi = None, 0
    for line in open(p):
        j = json.loads(line)
        if j.get('kind') == 'alloc' and 'addr' in j:
            a = int(j['addr'], 16) if isinstance(j['addr'], str) else j['addr']
            lo = a if lo is None else min(lo, a)
            hi = max(hi, a + j['size'])
    best = max(best, hi - lo)
print(best)
PY
)
grep -q "one byte scale: both axes reach $want B" "$T/tap9"; ok $? "the shared byte scale is the larger address span of the two files ($want B)"
"$MEMLENS" view a b c >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "3 files" "$T/err"; ok $? "view with three files is refused (exit $rc)"

# a name with underscores keeps them in the Recent menu
cp "$SRC/samples/viewer-demo.jsonl" "$T/viewer_demo_copy.jsonl"
xrun "$WINDOW_TEST" "$T/out" "$T/viewer_demo_copy.jsonl" >"$T/tap4" 2>"$T/log4"; rc=$?
[ $rc -eq 0 ] && grep -q "^ok .* the Recent menu lists viewer_demo_copy.jsonl with its underscores kept" "$T/tap4"
ok $? "the Recent menu keeps the underscores of viewer_demo_copy.jsonl (exit $rc)"

# a planning instance (CSV, no addresses): best-fit by default
cat >"$T/ex.12.csv" <<'CSV'
id,lower,upper,size
b1,0,3,4
b2,3,9,4
b3,0,9,4
b4,9,21,4
b5,0,21,4
CSV
xrun "$WINDOW_TEST" "$T/out" "$T/ex.12.csv" >"$T/tap3" 2>"$T/log3"; rc=$?
[ $rc -eq 0 ]; ok $? "the CSV instance goes through the same script (exit $rc)"
grep -q "the view now shows first-fit" "$T/tap3"; ok $? "it starts with best-fit and switches to first-fit"

echo "1..$n"
[ "$failed" -eq 0 ]
