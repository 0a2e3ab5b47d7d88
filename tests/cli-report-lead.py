#!/usr/bin/env python3
"""The report leads with what its reader came for (issue 29, section 2).

A run of a real allocator (a PyTorch snapshot with a recorded OOM): the
first section is the OOM, its numbers (request, device free, cached free,
shortfall) equal to an independent reading of the pickle (Python's
pickle: the oom entry, the segments mapped and the blocks allocated
before it); then the recorded peak against the floor (the lower bound,
not a "best plan"); then who holds the memory (the bytes live at the
OOM, by call site, summing to what the pickle says is live). A snapshot
without an OOM: who holds the memory at the peak, its bytes the lower
bound. A planning instance (CSV): the strategies table stays first.

argv: memlens, the source root. TAP."""
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done  # noqa: E402

tmp = tempfile.mkdtemp()


def report(path, ext, *extra):
    out = os.path.join(tmp, 'r.' + ext)
    p = subprocess.run([memlens, 'report', path, '-o', out, '--quiet', '--strategies', 'first-fit,greedy-size'] + list(extra),
                       capture_output=True, text=True)
    if not os.path.exists(out):
        print('# ' + p.stderr.strip().replace('\n', '\n# '))
        return ''
    with open(out) as f:
        return f.read()


def headings(md):
    return [l[3:].strip() for l in md.splitlines() if l.startswith('## ')]


def card(md, label):
    """The value of the Markdown card '- label: **value** — note'."""
    m = re.search(r'^- %s: \*\*([^*]+)\*\*' % re.escape(label), md, re.M)
    return m.group(1) if m else None


def mib(n):
    return '%.2f MiB' % (n / 2**20)


# ---- the OOM fixture, read by Python --------------------------------------
oom_pickle = os.path.join(src, 'tests', 'data', 'oom-expandable-3dev.pickle')
with open(oom_pickle, 'rb') as f:
    snap = pickle.load(f)
# memlens reads the device with a recorded OOM by default
dev = next(d for d, t in enumerate(snap['device_traces']) if any(e['action'] == 'oom' for e in t))
trace = snap['device_traces'][dev]
k = next(i for i, e in enumerate(trace) if e['action'] == 'oom')
oom = trace[k]
segs = [s for s in snap['segments'] if s['device'] == dev]
add = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1, 'segment_unmap': -1}
reserved = sum(s['total_size'] for s in segs) - sum(add.get(e['action'], 0) * e['size'] for e in trace)
live = {}
for e in trace[:k]:
    reserved += add.get(e['action'], 0) * e['size']
    if e['action'] == 'alloc':
        live[e['addr']] = e['size']
    elif e['action'] == 'free_completed':
        live.pop(e['addr'], None)
allocated = sum(live.values())
cached_free = reserved - allocated
shortfall = max(0, oom['size'] - (oom['device_free'] + cached_free))
print('# device %d: request %d, device free %d, reserved %d, allocated %d' % (dev, oom['size'], oom['device_free'], reserved, allocated))

md = report(oom_pickle, 'md')
hs = headings(md)
ok(hs[:3] == ['Out of memory', 'The run', 'Who holds the memory'], 'snapshot with an OOM: it leads with the OOM, the run, the holders (%s)' % hs[:4])
ok(hs.index('Strategies') > hs.index('Who holds the memory') if 'Strategies' in hs else False, 'the strategies come after')
ok(card(md, 'request refused') == mib(oom['size']), 'request refused %s = the oom entry %s' % (card(md, 'request refused'), mib(oom['size'])))
ok(card(md, 'device free') == mib(oom['device_free']), 'device free %s = %s' % (card(md, 'device free'), mib(oom['device_free'])))
ok(card(md, 'cached free') == mib(cached_free), 'cached free %s = reserved - allocated = %s' % (card(md, 'cached free'), mib(cached_free)))
ok(shortfall > 0 and card(md, 'shortfall') == mib(shortfall),
   'shortfall %s = request - (device free + cached free) = %s' % (card(md, 'shortfall'), mib(shortfall)))
ok(re.search(r'^- request refused: .*device %d, stream %d' % (dev, oom['stream']), md, re.M) is not None, 'the device and the stream named')
ok(card(md, 'best plan') is None and card(md, 'floor (lower bound)') is not None,
   'the lower bound is the floor, no "best plan" card')

js = json.loads(report(oom_pickle, 'json') or '{}')
h = js.get('holders') or {}
ok(h.get('at') == 'oom' and h.get('bytes') == allocated and h.get('buffers') == len(live),
   'holders at the OOM: %s bytes in %s buffers = the pickle\'s %d in %d' % (h.get('bytes'), h.get('buffers'), allocated, len(live)))
ok(sum(s['bytes'] for s in h.get('sites', [])) == allocated and sum(s['buffers'] for s in h.get('sites', [])) == len(live),
   'the call sites add up to what is live')
ok(list(js).index('holders') < list(js).index('results') if 'holders' in js and 'results' in js else False,
   'JSON: holders before results (docs/report-schema.md order)')

# ---- a snapshot without an OOM: holders at the peak -------------------------
plain = os.path.join(src, 'tests', 'data', 'streams-annotate.pickle')
md = report(plain, 'md')
hs = headings(md)
ok(hs[:2] == ['Who holds the memory', 'Strategies'], 'snapshot without an OOM: holders first (%s)' % hs[:3])
js = json.loads(report(plain, 'json') or '{}')
h = js.get('holders') or {}
ok(h.get('at') == 'peak' and h.get('bytes') == js.get('lower_bound') and h.get('tick') == js.get('lower_bound_tick'),
   'holders at the peak hold the lower bound (%s at tick %s)' % (h.get('bytes'), h.get('tick')))

# ---- a planning instance: the strategies first -------------------------------
csvfile = os.path.join(src, 'samples', 'tiny.16.csv')
md = report(csvfile, 'md')
hs = headings(md)
ok(hs[:1] == ['Strategies'], 'planning instance: the strategies table first (%s)' % hs[:2])
ok(card(md, 'best plan') is not None and 'holders' not in json.loads(report(csvfile, 'json') or '{}'),
   'planning instance: the best plan card, no holders')
sys.exit(done())
