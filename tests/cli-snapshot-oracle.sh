#!/bin/bash
# memlens against an independent reading of each snapshot (tests/snapshot-oracle.py,
# Python's pickle only): every fixture here, and every real snapshot in ../shared
# (those subtests are skipped when it is absent). Then the hand-worked numbers of
# the expandable-segments OOM fixture (tests/data/make-fixtures.py).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip_all "no python3"
ORACLE="$SRC/tests/snapshot-oracle.py"
D="$SRC/tests/data"

# agree FILE: stats --json "devices" and diagnose --json "recorded_oom" (per
# device with an OOM) equal the oracle's numbers exactly
agree() {
  local f=$1 b
  b=$(basename "$f")
  python3 "$ORACLE" "$f" >"$T/oracle.json"; ok $? "oracle reads $b"
  run stats "$f" --json
  want=$(python3 -c 'import json,sys; print(1 if any(v["ooms"] for v in json.load(open(sys.argv[1])).values()) else 0)' "$T/oracle.json")
  ok $([ $rc -eq "$want" ]; echo $?) "stats $b (exit $rc; 1 when the file records an OOM)"
  cp "$T/out" "$T/stats.json"
  : >"$T/diag.json"
  for d in $(python3 -c 'import json,sys; print(" ".join(k for k, v in json.load(open(sys.argv[1])).items() if v["ooms"]))' "$T/oracle.json"); do
    "$MEMLENS" diagnose "$f" --device "$d" --json --strategies first-fit >"$T/d.json" 2>/dev/null
    [ $? -eq 1 ]; ok $? "$b: diagnose --device $d exits 1 (the trace recorded an OOM)"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["device"] = int(sys.argv[2]); print(json.dumps(d))' "$T/d.json" "$d" >>"$T/diag.json"
  done
  python3 - "$T/oracle.json" "$T/stats.json" "$T/diag.json" "$f" <<'EOF'
import json, pickle, sys
oracle = json.load(open(sys.argv[1]))
stats = json.load(open(sys.argv[2]))
diags = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
snap = pickle.load(open(sys.argv[4], 'rb'))
# memlens names free_completed "free" and annotations "mark"
# a device's actions are named as PyTorch names them (issue 25, item 5);
# a user_defined entry is an annotation
kind = {'user_defined': 'annotate'}
bad = []
devs = {str(d['device']): d for d in stats.get('devices', [])}
if sorted(devs) != sorted(oracle):
    bad.append('devices %s, the oracle %s' % (sorted(devs), sorted(oracle)))
for k, o in oracle.items():
    m = devs.get(k)
    if not m:
        continue
    acts = {}
    for a, n in o['actions'].items():
        acts[kind.get(a, a)] = acts.get(kind.get(a, a), 0) + n
    for key in ('entries', 'segments', 'reserved_start', 'reserved_end', 'reserved_max', 'ooms'):
        if m[key] != o[key]:
            bad.append('device %s %s: memlens %s, oracle %s' % (k, key, m[key], o[key]))
    if m['actions'] != acts:
        bad.append('device %s actions: memlens %s, oracle %s' % (k, m['actions'], acts))
    if m['oom'] != bool(o['ooms']):
        bad.append('device %s oom flag' % k)
for d in diags:
    o = oracle[str(d['device'])]['ooms'][0]
    r = d['diagnosis']['recorded_oom'] or {}
    for key in ('index', 'request', 'device_free', 'reserved'):
        if r.get(key) != o[key]:
            bad.append('device %s recorded OOM %s: memlens %s, oracle %s' % (d['device'], key, r.get(key), o[key]))
    if d['diagnosis']['fits']:
        bad.append('device %s: the replay with the refused request "fits"' % d['device'])
# the allocator settings as the file has them: max_split_size in bytes,
# -1 (or no key) is PyTorch's default, unlimited
settings = snap.get('allocator_settings') if isinstance(snap, dict) else None
if settings is not None:
    ms = settings.get('max_split_size', -1)
    want = 'max_split_size_mb=%s,expandable_segments=%d' % ('unlimited' if ms < 0 else ms >> 20,
                                                             bool(settings.get('expandable_segments')))
    marks = [m['text'] for m in stats.get('marks', []) if m['tick'] == 0 and m['text'].startswith('allocator settings: ')]
    if len(marks) != 1 or not marks[0].startswith('allocator settings: ' + want):
        bad.append('settings mark %s, the file says %s' % (marks, want))
    for d in diags:
        if not d.get('allocator_settings', '').startswith(want):
            bad.append('diagnose allocator_settings %s, the file says %s' % (d.get('allocator_settings'), want))
for line in bad:
    print('# ' + line)
sys.exit(1 if bad else 0)
EOF
  ok $? "$b: memlens and the oracle agree on every device (entries, actions, reserved start/end/max, OOMs, allocator settings)"
}

for f in "$D"/*.pickle "$D"/*.pkl; do agree "$f"; done
S=""
for s in "$SRC/../shared/data/torch-snapshots" /work/shared/data/torch-snapshots; do
  [ -d "$s" ] && { S=$s; break; }
done
if [ -n "$S" ]; then
  for f in "$S"/*.pickle "$S"/*.pkl; do agree "$f"; done
else
  tap_n=$((tap_n + 1)); echo "ok $tap_n - # SKIP no ../shared/data/torch-snapshots"
fi

# ---- the expandable-segments OOM on device 1 of 3, worked by hand ----
# device 1: pages of 20 MiB. Mapped 40 + 20 + 40 = 100 MiB (the maximum),
# 40 MiB unmapped before the OOM: reserved 60 MiB; live then: c = 50 MiB;
# cached free 60 - 50 = 10 MiB in two 5 MiB blocks; device free 45 MiB:
# 10 + 45 = 55 MiB < 70 MiB request -> CAPACITY; implied capacity
# 60 + 45 = 105 MiB; with the request live at the OOM 50 + 70 = 120 MiB
# must be held: nothing fits in 105 MiB.
F="$D/oom-expandable-3dev.pickle"
run diagnose "$F"
[ $rc -eq 1 ]; ok $? "diagnose exits 1: the trace recorded an OOM"
contains "$T/err" "reading device 1 of 3: it recorded an OOM"; ok $? "the OOM's device is read by default, and stderr says why"
head -1 "$T/out" | grep -q "records an OOM on device 1"; ok $? "the recorded OOM comes first"
contains "$T/out" "verdict: CAPACITY — cached free + device free = 55.00 MiB is less than the 70.00 MiB request"; ok $? "verdict CAPACITY (10 + 45 < 70 MiB)"
contains "$T/out" "reserved 60.00 MiB · allocated 50.00 MiB · cached free 10.00 MiB (largest free block in the cache 5.00 MiB)"; ok $? "reserved 60, allocated 50, cached free 10 (largest 5) MiB"
contains "$T/out" "called from /home/u/models.py:181 update_nodes <- /home/u/train.py:50 main"; ok $? "the OOM's call site: the user's frames, not torch's"
contains "$T/out" "under 105.00 MiB (the device memory the OOM implies"; ok $? "capacity: reserved + device free = 105 MiB"
grep -q "fits:" "$T/out"; [ $? -ne 0 ]; ok $? "no strategy is said to fit"
grep -q "1 buffers" "$T/out"; [ $? -ne 0 ]; ok $? "one buffer is \"1 buffer\""
grep -E "^    (first-fit|best-fit|greedy-size|hybrid|anneal|ilp) " "$T/out" | grep -vc "OOM at tick 12 (capacity), needs" | grep -qx 0
ok $? "online and offline strategies alike: OOM at tick 12 (capacity) — the lower bound is above the capacity"
run diagnose "$F" --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["diagnosis"]; r = d["recorded_oom"]; MiB = 1 << 20
assert d["fits"] is False and d["oom"] is not None, "fits/oom"
assert d["capacity"] == 105 * MiB and d["lower_bound"] == 120 * MiB, (d["capacity"], d["lower_bound"])
assert (r["index"], r["request"], r["device_free"], r["reserved"], r["live"], r["cached_free"], r["largest_cached_block"]) \
    == (11, 70 * MiB, 45 * MiB, 60 * MiB, 50 * MiB, 10 * MiB, 5 * MiB), r
assert r["verdict"] == "capacity" and r["implied_capacity"] == 105 * MiB
assert not any(a.get("fits") for a in d["alternatives"]), "an alternative fits"
# 120 MiB must be live at tick 12 (c 50 + the refused 70): every plan fails
# there, on capacity, offline planners too (nothing fits before it: at most
# 65 MiB live); "peak" of a failed run is with the capacity lifted at the
# OOM: first-fit places c at [45, 95) and the request at [95, 165) MiB
alts = {a["strategy"]: a for a in d["alternatives"] if "oom" in a}
for name in ("first-fit", "greedy-size", "hybrid", "anneal", "ilp"):
    o = alts[name]["oom"]
    assert (o["tick"], o["verdict"], o["request"]) == (12, "capacity", 70 * MiB), (name, o)
assert alts["first-fit"]["peak"] == 165 * MiB and alts["greedy-size"]["peak"] == 120 * MiB
' "$T/out"; ok $? "--json: fits false, the recorded numbers exact, no alternative fits, every OOM a capacity one at tick 12"
run compare "$F" --strategies best-fit --json
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
rows = rows.get("results", rows.get("rows", rows)) if isinstance(rows, dict) else rows
rec = [r for r in rows if r.get("strategy") == "recorded"][0]
assert rec["peak"] == 100 << 20, rec["peak"]
' "$T/out"; ok $? "the recorded peak is the 100 MiB mapped at most (segment_unmap counted)"
run stats "$F" --device 2 --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["device"] == 2 and d["buffers"] == 1, d' "$T/out"; ok $? "--device 2: the device without a trace, its one live block"
if have_html; then
  run report "$F" -o "$T/r.html"
  contains "$T/r.html" "The trace records an OOM at tick 12 (entry 11)"; ok $? "the HTML report leads with the recorded OOM"
else
  skip "the HTML report leads with the recorded OOM" "built without cairo"
fi

"$MEMLENS" report "$F" -o "$T/r.json" 2>/dev/null
python3 - "$T/r.json" "$F" <<'EOF'
import json, pickle, sys
d = json.load(open(sys.argv[1]))['diagnosis']; tr = pickle.load(open(sys.argv[2], 'rb'))['device_traces'][1]
k = next(i for i, e in enumerate(tr) if e['action'] == 'oom')
live = {}
for e in tr[:k]:
    if e['action'] == 'alloc':
        live[e['addr']] = e['size']
    elif e['action'] == 'free_completed':
        live.pop(e['addr'])
# the report's alignment table: what is live at the recorded OOM plus its request
for w in d['alignment']:
    up = lambda n: (n + w['align'] - 1) // w['align'] * w['align']
    assert w['live_at_oom'] == sum(up(n) for n in live.values()) + up(tr[k]['size']), w
EOF
ok $? "the report's alignment table: live at the recorded OOM plus the request (was 0 B)"

# ---- expandable segments that unmap (tests/data/make-fixtures.py, worked by
# hand there): release_cached_blocks unmaps the whole free pages [40, 80) MiB
# so that a 60 MiB request maps [120, 180) under the 170 MiB the device
# allowed; a later 50 MiB request maps the page [40, 60) in the hole (the
# lowest room); the OOM: 162 MiB mapped, 8 MiB device free, a 30 MiB request.
F="$D/expandable-unmap.pickle"
python3 - "$F" >"$T/want.json" <<'EOF'
import json, pickle, sys
snap = pickle.load(open(sys.argv[1], 'rb'))
tr = snap['device_traces'][0]
k = next(i for i, e in enumerate(tr) if e['action'] == 'oom')
reserved = sum(e['size'] * {'segment_map': 1, 'segment_unmap': -1}.get(e['action'], 0) for e in tr[:k])
live = {}
for e in tr[:k]:
    if e['action'] == 'alloc':
        live[e['addr']] = (e['size'] + 511) // 512 * 512
    elif e['action'] == 'free_completed':
        live.pop(e['addr'])
allocs = [e for e in tr if e['action'] == 'alloc']
print(json.dumps({'index': k, 'reserved': reserved, 'live': sum(live.values()), 'request': tr[k]['size'],
                  'device_free': tr[k]['device_free'], 'allocs': len(allocs),
                  'maps': sum(e['action'] == 'segment_map' for e in tr),
                  'offsets': [e['addr'] - (0x7f3000000000 if e['size'] <= 1 << 20 else 0x7f2000000000) for e in allocs]}))
EOF
ok $? "the oracle reads the unmapping fixture"
run compare "$F" --strategies caching --json
python3 - "$T/out" "$T/want.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))['caching_conformance']; w = json.load(open(sys.argv[2]))
# hand-worked: 8 allocations at their real addresses; the 7 mappings in
# order, the one into the hole included; at the end 3 mapped ranges:
# [0, 60) and [80, 180) MiB of the large pool, the 2 MiB small page
assert (c['allocs'], c['address_matched']) == (w['allocs'], 8) == (8, 8), c
assert (c['segment_events_recorded'], c['segment_events_emulated'], c['segment_events_matched']) == (w['maps'], 7, 7), c
assert c['end_segments_match'] and c['end_segments_recorded'] == 3 and c['end_bytes_emulated'] == 162 << 20, c
EOF
ok $? "unmapping fixture: address conformance 8 / 8, mappings 7 / 7 (the hole's included), 3 ranges at the end"
"$MEMLENS" plan "$F" --strategy caching --capacity 170M -o "$T/p.json" 2>/dev/null
run compare "$F" --strategies caching --capacity 170M --json
python3 - "$T/out" "$T/p.json" "$T/want.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); p = json.load(open(sys.argv[2])); w = json.load(open(sys.argv[3])); MiB = 1 << 20
r = [x for x in r['results'] if x['strategy'] == 'caching'][0]
# under 170 MiB the emulation runs out at f (122 + 60), unmaps the 40 MiB of
# whole free pages, retries, and so follows the recorded curve: peak 162 MiB,
# no OOM, every block at its recorded offset
# ... and replays the request the device refused (issue 25, item 4): it
# fails there as the real allocator did, with the recorded numbers
o = r['oom']
assert (o['tick'], o['request'], o['reserved'], o['live']) == (w['index'] + 1, w['request'], w['reserved'], w['live']), (o, w)
assert o['verdict'] == 'capacity' and o['free'] == 170 * MiB - w['live'], o
assert (r['retries'], r['retry_released']) == (1, 40 * MiB), (r['retries'], r['retry_released'])
got = [b['offset'] for b in sorted(p['buffers'], key=lambda b: b['index'])]
assert got == w['offsets'], (got, w['offsets'])
EOF
ok $? "caching under the device's 170 MiB: one retry unmaps 40 MiB, every offset the recorded one, and the refused request fails as recorded"
run diagnose "$F" --json
python3 - "$T/out" "$T/want.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))['diagnosis']; w = json.load(open(sys.argv[2])); r = d['recorded_oom']; MiB = 1 << 20
assert (r['index'], r['request'], r['device_free'], r['reserved'], r['live']) == \
    (w['index'], w['request'], w['device_free'], w['reserved'], w['live']) == (24, 30 * MiB, 8 * MiB, 162 * MiB, 150 * MiB + 1024), r
assert r['cached_free'] == 12 * MiB - 1024 and r['largest_cached_block'] == 10 * MiB and r['verdict'] == 'capacity', r
assert d['capacity'] == 170 * MiB and d['fits'] is False
# the emulation fails only where the real allocator failed: at the OOM's
# tick, on the refused request, with what the real one had mapped
o = d['oom']
assert o['tick'] == r['tick'] and o['request'] == 30 * MiB and o['reserved'] == 162 * MiB and o['verdict'] == 'capacity', o
assert not any(a.get('fits') for a in d['alternatives']), 'an alternative fits'
EOF
ok $? "unmapping fixture: diagnose's replay fails at the recorded OOM only, with 162 MiB mapped"

# ---- the PyTorch 2.0 layout: blocks without address, with history ----
run stats "$D/old-layout-2.0.pickle" --json
ok $rc "the old layout loads"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
# before the trace: the 2 MiB block at the segment base (history: 2 MiB - 100 requested)
assert d["requested_bytes"] == (2 << 20) - 100 + (1 << 20) + (1 << 20) + 8, d["requested_bytes"]
assert d["buffers"] == 4, d["buffers"]
' "$T/out"; ok $? "old layout: the block before the trace gets its size from history, its address from the blocks before it"
# ---- the PyTorch 1.13 layout: a list of segments, blocks with history and
# no address; and a 2.x trace on two streams with an annotate entry ----
run stats "$D/legacy-1.13.pkl" --json
python3 - "$T/out" "$D/legacy-1.13.pkl" <<'EOF'
import json, pickle, sys
d = json.load(open(sys.argv[1])); segs = pickle.load(open(sys.argv[2], 'rb'))
live = [b for s in segs for b in s['blocks'] if b['state'] == 'active_allocated']
# every live block is a buffer; its requested bytes are its history's
assert d['buffers'] == len(live) == 3, d['buffers']
assert d['requested_bytes'] == sum(h['real_size'] for b in live for h in b['history']), d['requested_bytes']
assert d['devices'][0]['reserved_end'] == sum(s['total_size'] for s in segs)
EOF
ok $? "the 1.13 layout loads: blocks without address, sizes from the segment, requested bytes from history"
run compare "$D/streams-annotate.pickle" --strategies best-fit --json
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["caching_conformance"]
# stream 0x7fffe0001230 does not take stream 0 free 16 MiB: all 3 at their address
assert (c["allocs"], c["address_matched"], c["segment_events_matched"]) == (3, 3, 2), c
' "$T/out"; ok $? "two streams: per-stream reuse, 3 / 3 addresses"
run stats "$D/streams-annotate.pickle"
contains "$T/out" "streams      2 allocating"; ok $? "two streams read"
contains "$T/out" "phase 2"; ok $? "an annotate entry is a mark with its text"

# ---- a Kineto trace: two CPU threads, Total Allocated / Total Reserved ----
K="$D/kineto-two-threads.json"
run check "$K"
ok $rc "check: no race on a Kineto trace (tid is a thread, not a stream)"
run stats "$K" --json
python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); MiB = 1 << 20; v = d["devices"][0]
# 6 MiB allocated before the window: 2 MiB freed in it (a tick-0 buffer), 4 MiB never
# seen (one buffer "allocated before the trace"); peak 30 + 1 + 4 = 35 MiB = the
# largest Total Allocated; Total Reserved 20 -> 40 MiB
assert d["streams"] == 1 and d["buffers"] == 6, (d["streams"], d["buffers"])
assert d["lower_bound"] == 35 * MiB and v["allocated_max"] == 35 * MiB, (d["lower_bound"], v)
assert (v["reserved_start"], v["reserved_end"], v["reserved_max"]) == (20 * MiB, 40 * MiB, 40 * MiB), v
' "$T/out"; ok $? "Kineto: memory before the window as a buffer, Total Allocated / Total Reserved read"
run diagnose "$K" --strategies first-fit
contains "$T/out" "under 16.00 GiB"; ok $? "Kineto: deviceProperties totalGlobalMem is the default capacity"
# the numbers again, computed from the JSON: the recorded reserved curve is
# Total Reserved (its maximum, and the first tick at it: memory events take
# ticks 1, 2, ... in time order), and what was allocated before the first
# event and never freed in the trace is one buffer "allocated before the
# trace": the first Total Allocated, less the first event's bytes, less the
# bytes the trace frees without having allocated them
run stats "$K" --json
cp "$T/out" "$T/kstats.json"
run compare "$K" --strategies best-fit --json
python3 - "$K" "$T/kstats.json" "$T/out" <<'EOF'
import json, sys
mem = [e for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('name') == '[memory]']
mem = sorted(mem, key=lambda e: e['ts'])   # stable: file order within a time
stats = json.load(open(sys.argv[2])); rec = [r for r in json.load(open(sys.argv[3]))['results'] if r['strategy'] == 'recorded'][0]
steps = [(0, mem[0]['args']['Total Reserved'])] + [(k + 1, e['args']['Total Reserved']) for k, e in enumerate(mem)]
top = max(v for _, v in steps)
assert rec['peak'] == top and rec['peak_tick'] == min(t for t, v in steps if v == top), (rec['peak'], rec['peak_tick'], steps)
seen, unseen = set(), 0
for e in mem:
    a, b = e['args']['Addr'], e['args']['Bytes']
    if b > 0:
        seen.add(a)
    elif a in seen:
        seen.discard(a)
    else:
        unseen += -b
before = mem[0]['args']['Total Allocated'] - mem[0]['args']['Bytes'] - unseen
named = [b for p in stats['peaks'] for b in p['blame'] if b.get('name') == 'allocated before the trace']
assert before > 0 and named and all(b['bytes'] == before and b['start'] == 0 for b in named), (before, named)
EOF
ok $? "Kineto, from the JSON: the recorded peak and its tick are Total Reserved's; memory before the window is one buffer of the right size"
finish
