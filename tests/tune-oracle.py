#!/usr/bin/env python3
"""Checks `memlens tune --json` against Python's own reading of the
snapshot (no memlens code): the capacity (the first OOM's reserved bytes
plus device_free), the recorded settings' row (from the recorded state
under the recorded settings, it must be the recording: the reserved peak
without an OOM; the OOM's request, reserved bytes and live requested
bytes with one), the answer's need and shortfall, and, when the OOM is
the trace's last allocator event (so the dump-time segments are the state
at the OOM), the strands at the OOM: every inactive block put under the
first rule that keeps the request from it, the rounding inside the active
blocks, and PyTorch's viewer's two measures.

Usage: tune-oracle.py SNAPSHOT TUNE.json   (exit 1 with the first mismatch)
"""
import json
import pickle
import sys

MiB = 1 << 20


class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refusing %s.%s" % (module, name))


def fail(msg):
    print('mismatch: ' + msg)
    sys.exit(1)


def check(what, got, want):
    if got != want:
        fail('%s: tune says %r, the pickle %r' % (what, got, want))


def strands_at_oom(segs, request, max_split):
    size = max(512, (request + 511) // 512 * 512)
    small = size <= MiB
    out = dict.fromkeys(['small_pool', 'large_pool', 'other_stream', 'oversize', 'cached_segments', 'too_small',
                         'usable', 'rounding'], 0)
    squares = 0
    for s in segs:
        blocks = s['blocks']
        for b in blocks:
            if b['state'] != 'inactive':
                out['rounding'] += b['size'] - b.get('requested_size', b['size'])
                continue
            squares += b['size'] ** 2
            seg_small = s.get('segment_type') == 'small'
            if seg_small != small:
                k = 'small_pool' if seg_small else 'large_pool'
            elif s.get('stream', 0) != 0:
                k = 'other_stream'
            elif (size < max_split <= b['size']) or (size >= max_split and b['size'] >= size + 20 * MiB):
                k = 'oversize'
            elif len(blocks) == 1 and not s.get('is_expandable'):
                k = 'cached_segments'
            elif b['size'] < size:
                k = 'too_small'
            else:
                k = 'usable'
            out[k] += b['size']
    return out, squares


def main(path, tune_path):
    with open(path, 'rb') as f:
        snap = DataOnly(f).load()
    doc = json.load(open(tune_path))
    dev, t = doc['device'], doc['tune']
    segments = snap if isinstance(snap, list) else snap.get('segments', [])
    traces = [] if isinstance(snap, list) else snap.get('device_traces', []) or []
    segs = [s for s in segments if s.get('device', 0) == dev]
    trace = traces[dev] if dev < len(traces) else []
    add = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1, 'segment_unmap': -1}
    reserved = sum(s['total_size'] for s in segs) - sum(add.get(e['action'], 0) * e.get('size', 0) for e in trace)
    live_end = sum(b.get('requested_size', b['size']) for s in segs for b in s['blocks']
                   if b['state'] in ('active_allocated', 'active_pending_free'))
    live = live_end - sum(e['size'] for e in trace if e['action'] == 'alloc') \
        + sum(e['size'] for e in trace if e['action'] == 'free_completed')
    top, oom, oom_at = reserved, None, None
    for i, e in enumerate(trace):
        a = e['action']
        reserved += add.get(a, 0) * e.get('size', 0)
        live += e['size'] if a == 'alloc' else -e['size'] if a == 'free_completed' else 0
        if a == 'oom' and oom is None:
            oom, oom_at = {'request': e['size'], 'reserved': reserved, 'live': live, 'free': e['device_free']}, i
        top = max(top, reserved)
    rec = t['rows'][0]
    check('the recorded row', rec['change'], '')
    if oom is None:
        check('the recorded row\'s OOM', rec['oom'], None)
        check('the recorded row\'s reserved peak', rec['reserved_peak'], top)
        print('reserved peak %d, as recorded' % top)
        return
    check('the capacity', t['capacity'], oom['reserved'] + oom['free'])
    o = rec['oom']
    if o is None or not o['recorded']:
        fail('the recorded row does not fail at the recorded OOM')
    check('the OOM request', o['request'], oom['request'])
    check('the reserved bytes at the OOM', o['reserved'], oom['reserved'])
    check('the live bytes at the OOM', o['live'], oom['live'])
    if t['answer']['verdict'] == 'none fits':
        need = oom['live'] + oom['request']
        check('the need', t['answer']['need'], need)
        check('the shortfall', t['answer']['shortfall'], max(0, need - t['capacity']))
    last = max(i for i, e in enumerate(trace) if e['action'] in ('alloc', 'free_completed', 'segment_alloc',
                                                                  'segment_free', 'segment_map', 'segment_unmap', 'oom'))
    if last == oom_at:
        settings = snap.get('allocator_settings', {})
        ms = settings.get('max_split_size', -1)
        want, squares = strands_at_oom(segs, oom['request'], ms if ms and ms > 0 else 1 << 64)
        got = rec['strands']['oom']
        for k, v in want.items():
            check('the strand %s at the OOM' % k, got[k], v)
        frag = squares / oom['reserved'] ** 2 if oom['reserved'] else 0
        if abs(got['memory_viz_fragmentation'] - frag) > 1e-6:
            fail('calculate_fragmentation: %r against %r' % (got['memory_viz_fragmentation'], frag))
    print('capacity %d, OOM of %d with %d reserved and %d live, as recorded' % (
        t['capacity'], oom['request'], oom['reserved'], oom['live']))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
