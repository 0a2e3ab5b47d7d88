#!/usr/bin/env python3
"""An independent reading of a PyTorch memory snapshot, for the tests.

Reads the pickle with Python's own pickle module (classes refused: the
files are plain dicts and lists) and prints, as one JSON object, per
device: the trace entries, the count of each action, the bytes reserved
at the start of the trace, at its end and at most, and each `oom` entry's
index, request, device_free and the bytes reserved just before it.

Reserved bytes at the end are the device's segments at dump time (their
total_size); at the start, that minus what the trace's segment entries
added (segment_alloc and segment_map add their size, segment_free and
segment_unmap take it away), never below 0; the maximum is the running
sum from the start. No memlens code is used: this is what memlens's
`stats --json` ("devices") and `diagnose --json` ("recorded_oom") must
agree with.

Usage: snapshot-oracle.py SNAPSHOT
"""
import json
import pickle
import sys


class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refusing %s.%s" % (module, name))


def main(path):
    with open(path, 'rb') as f:
        snap = DataOnly(f).load()
    if isinstance(snap, list):
        segments, traces = snap, []
    else:
        segments, traces = snap.get('segments', []), snap.get('device_traces', []) or []
    # the devices the file holds: a device_traces list each, and those its
    # segments name (segments on device 1 alone are not devices 0 and 1)
    held = set(range(len(traces))) | {s.get('device', 0) for s in segments}
    out = {}
    for d in sorted(held):
        segs = [s for s in segments if s.get('device', 0) == d]
        trace = traces[d] if d < len(traces) else []
        end = sum(s['total_size'] for s in segs)
        add = {'segment_alloc': 1, 'segment_map': 1, 'segment_free': -1, 'segment_unmap': -1}
        net = sum(add.get(e.get('action'), 0) * e.get('size', 0) for e in trace)
        cur = max(0, end - net)
        start, top, ooms, actions = cur, cur, [], {}
        for i, e in enumerate(trace):
            a = e.get('action')
            actions[a] = actions.get(a, 0) + 1
            cur += add.get(a, 0) * e.get('size', 0)
            if a == 'oom':
                ooms.append({'index': i, 'request': e.get('size', 0), 'device_free': e.get('device_free', 0),
                             'reserved': cur})
            top = max(top, cur)
        out[str(d)] = {'entries': len(trace), 'segments': len(segs), 'actions': actions, 'reserved_start': start,
                       'reserved_end': end, 'reserved_max': top, 'ooms': ooms}
    print(json.dumps(out, sort_keys=True))


if __name__ == '__main__':
    main(sys.argv[1])
