#!/usr/bin/env python3
"""The Kineto reader against an independent reading of the same files by
Python's json (ts kept exact with Decimal): every Kineto / Chrome trace
fixture in tests/data and the fuzz corpus, for the default device and each
device the file holds, event for event (tick, kind, id, address, size,
time, stream) as `memlens convert` writes them; times in ns from the first
event's, exactly; and windows (--range) by ticks and by times: the events
inside, the buffers carried in at the tick before the window and those cut
at its end, the window's peak of live bytes.

This is the mapping docs/pytorch.md describes, written again from the
text: the [memory] events of the device (the accelerator with the most,
ties to the lowest id, else the CPU), ordered by ts (stable; an event
without ts first), frees paired with allocations by address; the free of
an address never allocated is a buffer from before the trace (tick 0), and
the first event's Total Allocated less its Bytes less those is one more.

  kineto-oracle.py MEMLENS SRCDIR
"""
import decimal
import gzip
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

MEMLENS, SRC = sys.argv[1], sys.argv[2]
n_test = 0
failed = 0


def ok(cond, what):
    global n_test, failed
    n_test += 1
    print('%s %d - %s' % ('ok' if cond else 'not ok', n_test, what))
    if not cond:
        failed += 1


def load(path):
    raw = open(path, 'rb').read()
    if raw[:2] == b'\x1f\x8b':
        raw = gzip.decompress(raw)
    doc = json.loads(raw, parse_float=decimal.Decimal)
    return doc if isinstance(doc, list) else doc.get('traceEvents')


def num(v):
    """A number or a numeric string as an int (None when it is none)."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, str):
        try:
            return int(v, 16) if v[:2] in ('0x', '0X') else int(v)
        except ValueError:
            return None
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() else None
    return v


def dev_key(args):
    t, i = num(args.get('Device Type', 0)), num(args.get('Device Id', 0))
    return 'cpu' if t == 0 else i


def ts_ns(e):
    ts = e.get('ts')
    if ts is None or isinstance(ts, bool):
        return None
    try:
        d = decimal.Decimal(str(ts)) * 1000
    except decimal.InvalidOperation:
        return None
    return int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))


def pick(evs, device):
    mems = [(i, e) for i, e in enumerate(evs) if isinstance(e, dict) and e.get('name') == '[memory]']
    counts = Counter(dev_key(e['args']) for _, e in mems)
    if device is None:
        acc = [k for k in counts if k != 'cpu' and k is not None and 0 <= k <= 4095]
        dev = min(acc, key=lambda k: (-counts[k], k)) if acc else ('cpu' if 'cpu' in counts else None)
    else:
        dev = device if device in counts else None
    return dev, [(i, e) for i, e in mems if dev_key(e['args']) == dev]


def mapping(evs, device=None):
    """The trace: a list of groups (one per [memory] event, and one for the
    tick-0 buffers), each (position tick, time, [event dicts])."""
    dev, kept = pick(evs, device)
    if dev is None:
        return None
    kept.sort(key=lambda p: (ts_ns(p[1]) if ts_ns(p[1]) is not None else -(1 << 200), p[0]))
    times = [ts_ns(e) for _, e in kept if ts_ns(e) is not None]
    origin = times[0] if times else 0
    state, next_id, zero = {}, 1, []
    for _, e in kept:
        a, b = num(e['args']['Addr']), num(e['args']['Bytes'])
        if b > 0:
            state[a] = 1
        elif b < 0 and a in state:
            state[a] = 2
        elif b < 0:
            zero.append(dict(kind='alloc', tick=0, id=next_id, addr=a, size=-b, time=-1, stream=0))
            state[a] = 2
            next_id += 1
    if kept and num(kept[0][1]['args'].get('Total Allocated')) is not None:
        before = num(kept[0][1]['args']['Total Allocated']) - num(kept[0][1]['args']['Bytes']) - sum(z['size'] for z in zero)
        if before >= 1:
            zero.append(dict(kind='alloc', tick=0, id=next_id, addr=None, size=before, time=-1, stream=0))
            next_id += 1
    groups = [(0, -1, zero)]
    live = {z['addr']: z['id'] for z in zero if z['addr'] is not None}
    tick = 1
    for _, e in kept:
        a, b = num(e['args']['Addr']), num(e['args']['Bytes'])
        t = ts_ns(e)
        t = t - origin if t is not None else -1
        s = num(e['args'].get('Stream', 0))
        s = s if s is not None and 0 <= s < 2 ** 32 else 0
        out, first = [], tick
        if b > 0:
            if a in live:
                out.append(dict(kind='free', tick=tick, id=live[a], addr=a, size=0, time=t, stream=s))
                tick += 1
            out.append(dict(kind='alloc', tick=tick, id=next_id, addr=a, size=b, time=t, stream=s))
            live[a] = next_id
            next_id += 1
            tick += 1
        elif b < 0 and a in live:
            out.append(dict(kind='free', tick=tick, id=live.pop(a), addr=a, size=-b, time=t, stream=s))
            tick += 1
        if out:
            groups.append((first, t, out))
    return groups


def memlens_events(path, *args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'out.jsonl')
        p = subprocess.run([MEMLENS, 'convert', path, out] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            return None, p.stderr
        lines = [json.loads(l) for l in open(out)]
    evs, tick = [], -1
    for l in lines[1:]:
        tick = l.get('tick', tick + 1)
        addr = l.get('addr')
        evs.append(dict(kind=l['kind'], tick=tick, id=l.get('id'), addr=int(addr, 16) if addr else None,
                        size=l.get('size', 0), time=l.get('time_ns', -1), stream=l.get('stream', 0)))
    return evs, p.stderr


def window(groups, lo, hi, times):
    """The window [lo, hi] of the whole trace @groups: its events, the
    buffers carried in (id -> alloc), those cut at its end (ids)."""
    last, where, inside, first_tick = 0, 'before', [], None
    live, live_at_end, freed_after = {}, None, set()
    for pos_tick, t, evs in groups:
        if pos_tick > 0:
            last = max(last, t) if times and t >= 0 else last
            at = last if times else pos_tick
            if where == 'before' and at >= lo:
                where, first_tick, carried = 'in', pos_tick - 1, dict(live)
            if where == 'in' and at > hi:
                where, live_at_end = 'after', dict(live)
        for e in evs:
            if e['kind'] == 'alloc':
                live[e['id']] = e
            else:
                live.pop(e['id'], None)
                if where == 'after' and e['id'] in live_at_end:
                    freed_after.add(e['id'])
            if where == 'in':
                inside.append(e)
    if where == 'before':
        return None
    return first_tick, carried, inside, freed_after


def peak(events):
    live, cur, best = {}, 0, 0
    for e in sorted(events, key=lambda e: (e['tick'], e['kind'] == 'alloc')):
        if e['kind'] == 'alloc':
            live[e['id']] = (e['size'] + 255) // 256 * 256
            cur += live[e['id']]
        else:
            cur -= live.pop(e['id'], 0)
        best = max(best, cur)
    return best


def fixtures():
    out = []
    for d, prefix in (('tests/data', 'kineto-'), ('tests/fuzz/corpus/kineto', '')):
        for f in sorted(os.listdir(os.path.join(SRC, d))):
            if f.startswith(prefix) and (f.endswith('.json') or f.endswith('.json.gz')):
                out.append(os.path.join(SRC, d, f))
    return out


compared = 0
for path in fixtures():
    evs = load(path)
    name = os.path.relpath(path, SRC)
    devs = sorted({dev_key(e['args']) for e in evs if isinstance(e, dict) and e.get('name') == '[memory]'} - {'cpu'})
    for device in [None] + devs:
        groups = mapping(evs, device)
        want = [e for _, _, g in groups for e in g]
        got, err = memlens_events(path, *(['--device', str(device)] if device is not None else []))
        ok(got == want, '%s, device %s: %d events as Python reads them%s' % (
            name, 'default' if device is None else device, len(want), '' if got == want else ': %s' % (err.strip() or
               next(('%s against %s' % (g, w) for g, w in zip(got or [], want) if g != w), 'counts %d / %d' % (len(got or []), len(want))))))
        compared += len(want)
    # windows: a third of the ticks from the middle, and the same by time
    groups = mapping(evs)
    ticks = [g[0] for g in groups if g[0] > 0]
    times = [g[1] for g in groups if g[0] > 0 and g[1] >= 0]
    cases = [(ticks[len(ticks) // 3], ticks[2 * len(ticks) // 3], False)] if len(ticks) >= 3 else []
    if len(times) >= 3:
        cases.append((times[len(times) // 3], times[2 * len(times) // 3], True))
    for lo, hi, by_time in cases:
        spec = '%dns:%dns' % (lo, hi) if by_time else '%d:%d' % (lo, hi)
        first, carried, inside, cut = window(groups, lo, hi, by_time)
        got, err = memlens_events(path, '--range', spec)
        if got is None:
            ok(False, '%s --range %s: %s' % (name, spec, err.strip()))
            continue
        state = [e for e in got if e['tick'] == first and e['kind'] == 'alloc' and e['id'] in carried]
        ok(sorted(e['id'] for e in state) == sorted(carried) and all(e['size'] == carried[e['id']]['size'] for e in state),
           '%s --range %s: the %d buffers live before the window are carried in at tick %d' % (name, spec, len(carried), first))
        body = [e for e in got if e not in state and not (e['kind'] == 'free' and e['id'] in cut and e['tick'] == max(x['tick'] for x in got))]
        ok(body == inside, '%s --range %s: the %d events inside, as in the whole trace' % (name, spec, len(inside)))
        last = max(e['tick'] for e in inside) if inside else first
        clipped = sorted(e['id'] for e in got if e['kind'] == 'free' and e['tick'] == last + 1)
        ok(clipped == sorted(cut), '%s --range %s: %d buffers cut at its end (freed later)' % (name, spec, len(cut)))
        ok(peak(got) == peak(list(carried.values()) + inside), '%s --range %s: the peak of live bytes in the window' % (name, spec))

# the epoch fixture: times exact to the ns, from the first event
got, _ = memlens_events(os.path.join(SRC, 'tests/data/kineto-epoch.json'))
ok(got is not None and [e['time'] for e in got] == [0, 999, 2998, 8999],
   'kineto-epoch.json: ts 1700000000123457.001 .. 1700000000123466 are 0, 999, 2998, 8999 ns from the first')
ok(compared >= 300, '%d events compared in all' % compared)
print('1..%d' % n_test)
sys.exit(1 if failed else 0)
