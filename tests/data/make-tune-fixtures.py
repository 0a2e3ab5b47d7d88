#!/usr/bin/env python3
"""Writes the snapshots `memlens tune` is checked on (run once by hand;
the files are committed). Each is laid out by PyTorch's caching allocator
rules (docs/pytorch.md) with the default settings, so that the replay under
the recorded settings reproduces it exactly; what each should answer is
worked out beside it and checked by tests/cli-tune.sh."""
import pickle

MiB = 1 << 20
A = 0x7f4000000000
user = [{'filename': '/home/u/train.py', 'line': 77, 'name': 'step'}]
t = [0]


def at(action, addr, size, **kw):
    t[0] += 1
    e = {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': t[0], 'frames': user}
    e.update(kw)
    return e


def free(addr, size):
    return [at('free_requested', addr, size), at('free_completed', addr, size)]


def oom(size, device_free):
    e = at('oom', 0, size, device_free=device_free)
    del e['addr']
    return e


def seg(addr, blocks):
    """A dump-time segment from (size, requested or None for free) blocks."""
    out, a = [], addr
    for size, req in blocks:
        out.append({'address': a, 'size': size, 'requested_size': req or 0,
                    'state': 'active_allocated' if req else 'inactive', 'frames': user if req else []})
        a += size
    total = a - addr
    live = sum(s for s, r in blocks if r)
    return {'device': 0, 'address': addr, 'total_size': total, 'allocated_size': live, 'active_size': live,
            'requested_size': sum(r or 0 for s, r in blocks), 'stream': 0, 'segment_type': 'large',
            'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': [], 'blocks': blocks and out}


settings = {'PYTORCH_CUDA_ALLOC_CONF': '', 'max_split_size': -1, 'garbage_collection_threshold': 0.0,
            'expandable_segments': False, 'roundup_power2_divisions': {str(1 << k): 0 for k in range(16)}}

# ---- an OOM caused by fragmentation (default settings, 150 MiB device) ----
# a 120 MiB segment, freed and cut into six 20 MiB blocks (best fit splits
# the one free block at its low end); freeing the 1st, 3rd and 5th leaves
# three 20 MiB holes (60 MiB cached free). A 40 MiB request fits no hole:
# a new 40 MiB segment, 120 + 40 > 150; no cached segment is wholly free:
# the OOM, with 30 MiB free on the device. With expandable_segments:True
# the same run maps 20 MiB pages: the holes are whole pages, which
# release_cached_blocks unmaps (120 - 60 = 60 MiB mapped) before the 40 MiB
# are mapped (100 MiB): it fits, its peak the 120 MiB of the start.
# max_split_size_mb:32 fits too, dearer: the 120 MiB block is oversize for
# the 20 MiB requests, which get 20 MiB segments of their own (the 120 MiB
# one released by release_available_cached_blocks on the way); the three
# freed ones are wholly free and go back before the 40 MiB segment; peak 140
# MiB, 8 cudaMalloc and 4 cudaFree. Same number of settings changed, less
# reserved: expandable_segments:True is the answer.
t[0] = 1000
frag = [at('segment_alloc', A, 120 * MiB), at('alloc', A, 120 * MiB), *free(A, 120 * MiB)]
frag += [at('alloc', A + k * 20 * MiB, 20 * MiB) for k in range(6)]
for k in (0, 2, 4):
    frag += free(A + k * 20 * MiB, 20 * MiB)
frag.append(oom(40 * MiB, 30 * MiB))
snap = {
    'segments': [seg(A, [(20 * MiB, None), (20 * MiB, 20 * MiB)] * 3)],
    'device_traces': [frag],
    'allocator_settings': settings,
}
with open('tune-fragmentation.pickle', 'wb') as f:
    pickle.dump(snap, f, protocol=4)

# ---- an OOM no setting avoids (default settings, 150 MiB device) ----
# 100 MiB live and a request of 80 MiB: 180 MiB against 150, whatever the
# layout: short by 30 MiB.
t[0] = 2000
cap = [at('segment_alloc', A, 100 * MiB), at('alloc', A, 100 * MiB), oom(80 * MiB, 50 * MiB)]
snap = {
    'segments': [seg(A, [(100 * MiB, 100 * MiB)])],
    'device_traces': [cap],
    'allocator_settings': settings,
}
with open('tune-capacity.pickle', 'wb') as f:
    pickle.dump(snap, f, protocol=4)
