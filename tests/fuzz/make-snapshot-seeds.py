#!/usr/bin/env python3
"""Cuts every shared PyTorch snapshot (/work/shared/data/torch-snapshots,
or the folder given) down to a seed of at most 4 KiB, the fuzzers'
-max_len, and writes it to tests/fuzz/corpus/snapshot/ and .../load/ as
shared-NAME.pickle (run by hand; the seeds are committed, so no test
needs the shared data).

A cut keeps the file's shape: the same top-level keys in the same order,
the first segments of each device with their first blocks (history
shortened), the first entries of every device trace, the first
annotations, the allocator settings, frames lists cut to a few frames,
and the memo sharing torch made (a frames list met by several entries is
one object in the cut too, so the pickler writes BINGET as torch did). It
is pickled with the protocol of the original (byte 1 of the file). The
cut gets smaller until it fits.
"""
import os
import pickle
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else '/work/shared/data/torch-snapshots'
LIMIT = 4096


def cut(v, n, memo):
    """@v with every list cut to its first @n items (frames to 2, history
    to 1), shared objects kept shared."""
    if id(v) in memo:
        return memo[id(v)]
    if isinstance(v, dict):
        out = {}
        memo[id(v)] = out
        for k, x in v.items():
            if k == 'frames' and isinstance(x, list):
                m = 2
            elif k == 'history' and isinstance(x, list):
                m = 1
            elif k == 'blocks' and isinstance(x, list):
                m = max(1, n // 2)
            else:
                m = n
            out[k] = cut(x, m, memo) if isinstance(x, (list, dict, tuple)) else x
        return out
    if isinstance(v, list):
        out = []
        memo[id(v)] = out
        out.extend(cut(x, n, memo) if isinstance(x, (list, dict, tuple)) else x for x in v[:n])
        return out
    if isinstance(v, tuple):
        return tuple(cut(x, n, memo) if isinstance(x, (list, dict, tuple)) else x for x in v)
    return v


def top(v, n):
    """The whole snapshot cut: segments to @n, each device trace to 3n
    entries (as many devices as it holds), annotations to @n."""
    memo = {}
    if isinstance(v, list):
        return cut(v, n, memo)
    out = {}
    for k, x in v.items():
        if k == 'device_traces' and isinstance(x, list):
            out[k] = [cut(t, 3 * n, memo) for t in x]
        else:
            out[k] = cut(x, n, memo)
    return out


for name in sorted(os.listdir(src)):
    if not name.endswith(('.pickle', '.pkl')):
        continue
    raw = open(os.path.join(src, name), 'rb').read()
    proto = raw[1] if raw[:1] == b'\x80' else 2
    snap = pickle.loads(raw)
    for n in (8, 6, 4, 3, 2, 1):
        data = pickle.dumps(top(snap, n), protocol=proto)
        if len(data) <= LIMIT:
            break
    base = 'shared-' + name.rsplit('.', 1)[0] + '.pickle'
    for target in ('snapshot', 'load'):
        with open(os.path.join(here, 'corpus', target, base), 'wb') as f:
            f.write(data)
    print('%-32s %9d B -> %5d B (lists cut to %d, protocol %d)' % (name, len(raw), len(data), n, proto))
