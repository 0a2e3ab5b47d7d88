#!/usr/bin/env python3
"""Writes the tiny PyTorch-snapshot fixtures the tests read (run once by
hand; the files are committed, nothing runs Python at test time)."""
import pickle

A = 0x100000000
MiB = 1 << 20
frames = [{'filename': '/usr/lib/python3/site-packages/torch/nn/modules/module.py', 'line': 1, 'name': '_call_impl'},
          {'filename': '/home/u/train.py', 'line': 42, 'name': 'forward'}]
snap = {
    'segments': [
        {'device': 0, 'address': A, 'total_size': 2 * MiB, 'allocated_size': 512, 'active_size': 512,
         'requested_size': 100, 'stream': 0, 'segment_type': 'small', 'segment_pool_id': (0, 0),
         'is_expandable': False, 'frames': [],
         'blocks': [{'address': A, 'size': 512, 'requested_size': 100, 'state': 'active_allocated', 'frames': frames},
                    {'address': A + 512, 'size': 2 * MiB - 512, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
    ],
    'device_traces': [[
        {'action': 'segment_alloc', 'addr': A, 'size': 2 * MiB, 'stream': 0, 'time_us': 100, 'frames': frames},
        {'action': 'alloc', 'addr': A, 'size': 100, 'stream': 0, 'time_us': 101, 'frames': frames},
        {'action': 'alloc', 'addr': A + 512, 'size': 1000, 'stream': 0, 'time_us': 102, 'frames': frames},
        {'action': 'free_requested', 'addr': A + 512, 'size': 1000, 'stream': 0, 'time_us': 103, 'frames': frames},
        {'action': 'free_completed', 'addr': A + 512, 'size': 1000, 'stream': 0, 'time_us': 104, 'frames': frames},
        {'action': 'oom', 'device_free': 1234, 'size': 4 << 30, 'stream': 0, 'time_us': 105, 'frames': []},
        {'action': 'snapshot', 'addr': 0, 'size': 0, 'stream': 0, 'time_us': 106, 'frames': []},
    ], []],
    'allocator_settings': {'expandable_segments': False},
    'external_annotations': [{'stage': 'START', 'name': 'step', 'device': 0, 'time_us': 103}],
}
with open('tiny-snapshot.pickle', 'wb') as f:
    pickle.dump(snap, f, protocol=4)
with open('tiny-snapshot-p2.pickle', 'wb') as f:
    pickle.dump(snap, f, protocol=2)
with open('tiny-legacy.pkl', 'wb') as f:
    pickle.dump(snap['segments'], f, protocol=4)

# expandable segments (small pool): pages of 2 MiB mapped at the segment's end
E = 0x200000000
exp = {
    'segments': [
        {'device': 0, 'address': E, 'total_size': 4 * MiB, 'allocated_size': 512 + MiB, 'active_size': 512 + MiB,
         'requested_size': 100 + MiB, 'stream': 0, 'segment_type': 'small', 'segment_pool_id': (0, 0),
         'is_expandable': True, 'frames': [],
         'blocks': [{'address': E, 'size': 512, 'requested_size': 100, 'state': 'active_allocated', 'frames': []},
                    {'address': E + 512, 'size': MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []},
                    {'address': E + 512 + MiB, 'size': MiB, 'requested_size': MiB, 'state': 'active_allocated', 'frames': []},
                    {'address': E + 512 + 2 * MiB, 'size': 2 * MiB - 512, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
    ],
    'device_traces': [[
        {'action': 'segment_map', 'addr': E, 'size': 2 * MiB, 'stream': 0, 'time_us': 1, 'frames': []},
        {'action': 'alloc', 'addr': E, 'size': 100, 'stream': 0, 'time_us': 2, 'frames': []},
        {'action': 'alloc', 'addr': E + 512, 'size': MiB, 'stream': 0, 'time_us': 3, 'frames': []},
        {'action': 'segment_map', 'addr': E + 2 * MiB, 'size': 2 * MiB, 'stream': 0, 'time_us': 4, 'frames': []},
        {'action': 'alloc', 'addr': E + 512 + MiB, 'size': MiB, 'stream': 0, 'time_us': 5, 'frames': []},
        {'action': 'free_requested', 'addr': E + 512, 'size': MiB, 'stream': 0, 'time_us': 6, 'frames': []},
        {'action': 'free_completed', 'addr': E + 512, 'size': MiB, 'stream': 0, 'time_us': 7, 'frames': []},
    ]],
    'allocator_settings': {'expandable_segments': True},
}
with open('tiny-expandable.pickle', 'wb') as f:
    pickle.dump(exp, f, protocol=4)

# ---- an OOM on device 1 of 3, with expandable segments (large pool) ----
# Laid out by the rules of docs/pytorch.md ("expandable segments"): pages of
# 20 MiB mapped at the lowest room; release_cached_blocks unmaps the wholly
# free pages before the OOM is reported. Hand-worked numbers in
# tests/cli-diagnose-oom.sh.
B = 0x7f0000000000
user = [{'filename': '/usr/lib/python3/site-packages/torch/nn/functional.py', 'line': 1701, 'name': 'relu'},
        {'filename': '/home/u/models.py', 'line': 181, 'name': 'update_nodes'},
        {'filename': '/home/u/train.py', 'line': 50, 'name': 'main'},
        {'filename': '??', 'line': 0, 'name': 'PyEval_EvalFrame'}]
def ev(action, addr, size, t, frames=(), **kw):
    e = {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': t, 'frames': list(frames)}
    e.update(kw)
    return e
dev1 = [
    ev('segment_map', B, 40 * MiB, 1000),                 # 30 MiB -> two 20 MiB pages
    ev('alloc', B, 30 * MiB, 1001, user),                 # a
    ev('segment_map', B + 40 * MiB, 20 * MiB, 1002),      # 15 MiB: the free 10 MiB tail + one page
    ev('alloc', B + 30 * MiB, 15 * MiB, 1003, user),      # b
    ev('free_requested', B, 30 * MiB, 1004),
    ev('free_completed', B, 30 * MiB, 1005),
    ev('segment_map', B + 60 * MiB, 40 * MiB, 1006),      # 50 MiB: the free 15 MiB tail + two pages
    ev('alloc', B + 45 * MiB, 50 * MiB, 1007, user),      # c
    ev('free_requested', B + 30 * MiB, 15 * MiB, 1008),
    ev('free_completed', B + 30 * MiB, 15 * MiB, 1009),   # free [B, B + 45 MiB)
    ev('segment_unmap', B, 40 * MiB, 1010),               # release_cached_blocks: two whole pages
]
oom = {'action': 'oom', 'device_free': 45 * MiB, 'size': 70 * MiB, 'stream': 0, 'time_us': 1011, 'frames': user}
dev1 += [oom,
         ev('free_requested', B + 45 * MiB, 50 * MiB, 1012),
         ev('free_completed', B + 45 * MiB, 50 * MiB, 1013)]
S0 = 0x7e0000000000
dev0 = [ev('segment_alloc', S0, 2 * MiB, 10)]
for k in range(8):
    dev0 += [ev('alloc', S0, 1000, 11 + 3 * k, user), ev('free_requested', S0, 1000, 12 + 3 * k),
             ev('free_completed', S0, 1000, 13 + 3 * k)]
dev0 += [ev('alloc', S0 + 1024, 4096, 40, user), ev('snapshot', 0, 0, 41)]
D2 = 0x7d0000000000
multi = {
    'segments': [
        {'device': 0, 'address': S0, 'total_size': 2 * MiB, 'allocated_size': 4096, 'active_size': 4096,
         'requested_size': 4096, 'stream': 0, 'segment_type': 'small', 'segment_pool_id': (0, 0),
         'is_expandable': False, 'frames': [],
         'blocks': [{'address': S0, 'size': 1024, 'requested_size': 0, 'state': 'inactive', 'frames': []},
                    {'address': S0 + 1024, 'size': 4096, 'requested_size': 4096, 'state': 'active_allocated', 'frames': user},
                    {'address': S0 + 5120, 'size': 2 * MiB - 5120, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
        # device 1 at dump time: the one mapped range left, [B + 40 MiB, B + 100 MiB), all free
        {'device': 1, 'address': B + 40 * MiB, 'total_size': 60 * MiB, 'allocated_size': 0, 'active_size': 0,
         'requested_size': 0, 'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0),
         'is_expandable': True, 'frames': [],
         'blocks': [{'address': B + 40 * MiB, 'size': 60 * MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
        {'device': 2, 'address': D2, 'total_size': 20 * MiB, 'allocated_size': 8 * MiB, 'active_size': 8 * MiB,
         'requested_size': 8 * MiB, 'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0),
         'is_expandable': False, 'frames': [],
         'blocks': [{'address': D2, 'size': 8 * MiB, 'requested_size': 8 * MiB, 'state': 'active_allocated', 'frames': user},
                    {'address': D2 + 8 * MiB, 'size': 12 * MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
    ],
    'device_traces': [dev0, dev1, []],
    'allocator_settings': {'max_split_size': -1, 'expandable_segments': True, 'roundup_power2_divisions': {'1': 0}},
}
with open('oom-expandable-3dev.pickle', 'wb') as f:
    pickle.dump(multi, f, protocol=4)

# ---- the PyTorch 2.0 layout: blocks without "address", with "history";
# no is_expandable; trace entries without time_us and frames ----
O = 0x300000000
hist = lambda addr, size: [{'addr': addr, 'real_size': size, 'frames': frames}]
old = {
    'segments': [
        {'device': 0, 'address': O, 'total_size': 20 * MiB, 'allocated_size': 3 * MiB, 'active_size': 3 * MiB,
         'stream': 0, 'segment_type': 'large',
         'blocks': [{'size': 2 * MiB, 'state': 'active_allocated', 'history': hist(O, 2 * MiB - 100)},
                    {'size': 1 * MiB, 'state': 'inactive', 'history': []},
                    {'size': 1 * MiB, 'state': 'active_allocated', 'history': hist(O + 3 * MiB, MiB)},
                    {'size': 16 * MiB, 'state': 'inactive'}]},
        {'device': 0, 'address': O + 64 * MiB, 'total_size': 2 * MiB, 'allocated_size': 512, 'active_size': 512,
         'stream': 0, 'segment_type': 'small',
         'blocks': [{'size': 512, 'state': 'active_allocated', 'history': hist(O + 64 * MiB, 8)},
                    {'size': 2 * MiB - 512, 'state': 'inactive'}]},
    ],
    'device_traces': [[
        {'action': 'alloc', 'addr': O + 2 * MiB, 'size': MiB, 'stream': 0},
        {'action': 'alloc', 'addr': O + 3 * MiB, 'size': MiB, 'stream': 0},
        {'action': 'free_requested', 'addr': O + 2 * MiB, 'size': MiB, 'stream': 0},
        {'action': 'free_completed', 'addr': O + 2 * MiB, 'size': MiB, 'stream': 0},
        {'action': 'segment_alloc', 'addr': O + 64 * MiB, 'size': 2 * MiB, 'stream': 0},
        {'action': 'alloc', 'addr': O + 64 * MiB, 'size': 8, 'stream': 0},
    ]],
}
with open('old-layout-2.0.pickle', 'wb') as f:
    pickle.dump(old, f, protocol=2)

# ---- a Kineto trace: two CPU threads, Total Allocated / Total Reserved,
# 6 MiB allocated before the window (2 MiB of it freed inside it) ----
import json
A1, A2, A3, P = 0x7f1000000000, 0x7f1000400000, 0x7f1002000000, 0x7f0ff0000000
mem = [  # ts, tid, addr, bytes, total allocated, total reserved (MiB)
    (10, 100, A1, 4, 10, 20), (11, 200, A2, 1, 11, 20), (12, 100, A1, -4, 7, 20), (13, 200, P, -2, 5, 20),
    (14, 100, A3, 30, 35, 40), (15, 200, A2, -1, 34, 40), (16, 100, A3, -30, 4, 40),
    (17, 200, A1, 2, 6, 40), (18, 200, A1, -2, 4, 40)]
kineto = {
    'schemaVersion': 1,
    'deviceProperties': [{'id': 0, 'name': 'Tesla V100-SXM2-16GB', 'totalGlobalMem': 16 << 30}],
    'traceEvents': [{'ph': 'X', 'cat': 'cpu_op', 'name': 'aten::empty', 'pid': 1, 'tid': 100, 'ts': 9, 'dur': 10}] + [
        {'ph': 'i', 'cat': 'cpu_instant_event', 's': 't', 'name': '[memory]', 'pid': 1, 'tid': tid, 'ts': ts,
         'args': {'Total Reserved': tr * MiB, 'Total Allocated': ta * MiB, 'Bytes': b * MiB, 'Addr': addr,
                  'Device Id': 0, 'Device Type': 1}}
        for ts, tid, addr, b, ta, tr in mem],
}
with open('kineto-two-threads.json', 'w') as f:
    json.dump(kineto, f, indent=1)

# ---- expandable segments that unmap: release_cached_blocks and the holes
# it leaves (device 0; large-pool pages of 20 MiB from L, small-pool pages
# of 2 MiB from S; the device lets this process map 170 MiB). Laid out by
# the rules of docs/pytorch.md, "Expandable segments in the caching
# emulation"; the numbers are worked by hand in tests/cli-snapshot-oracle.sh.
L, S = 0x7f2000000000, 0x7f3000000000
t = [1000]
def at(action, addr, size, **kw):
    t[0] += 1
    e = {'action': action, 'addr': addr, 'size': size, 'stream': 0, 'time_us': t[0], 'frames': user}
    e.update(kw)
    return e
def free(addr, size):
    return [at('free_requested', addr, size), at('free_completed', addr, size)]
unmap = [
    at('segment_map', L, 40 * MiB), at('alloc', L, 30 * MiB),                      # a: 2 pages [0, 40)
    at('segment_map', L + 40 * MiB, 40 * MiB), at('alloc', L + 30 * MiB, 50 * MiB),  # b: the free 10 + 2 pages
    at('segment_map', L + 80 * MiB, 20 * MiB), at('alloc', L + 80 * MiB, 10 * MiB),  # c: 1 page, 10 MiB left free
    *free(L, 30 * MiB), *free(L + 80 * MiB, 10 * MiB),                              # [0, 30) and [80, 100) free
    at('segment_map', S, 2 * MiB), at('alloc', S, 1000),                           # s: the small pool, 1024 B
    at('segment_map', L + 100 * MiB, 20 * MiB), at('alloc', L + 80 * MiB, 40 * MiB), # d: the free 20 + 1 page; 122 MiB
    at('alloc', L, 25 * MiB),                                                      # e: best fit [0, 30), split
    *free(L + 30 * MiB, 50 * MiB),                                                 # b: [25, 80) free, pages [40, 80) whole
    # f: 60 MiB needs 3 new pages: 122 + 60 > 170, so release_cached_blocks
    # unmaps the whole free pages [40, 80) (82 MiB mapped) and the retry maps
    # [120, 180): the hole's 15 + 40 MiB of room is too small for it
    at('segment_unmap', L + 40 * MiB, 40 * MiB),
    at('segment_map', L + 120 * MiB, 60 * MiB), at('alloc', L + 120 * MiB, 60 * MiB),  # 142 MiB
    *free(L, 25 * MiB),                                                            # e: [0, 40) free, before the hole
    # g: 50 MiB from the lowest room: [0, 40) free + the hole, one page [40, 60) mapped
    at('segment_map', L + 40 * MiB, 20 * MiB), at('alloc', L, 50 * MiB),           # 162 MiB
    # h: 30 MiB: [50, 60) free + [60, 80) to map: 162 + 20 > 170; no whole free
    # page to unmap; device free 170 - 162 = 8 MiB
    {k: v for k, v in at('oom', 0, 30 * MiB, device_free=8 * MiB).items() if k != 'addr'},
    *free(L + 120 * MiB, 60 * MiB),
]
unmap_snap = {
    'segments': [
        {'device': 0, 'address': L, 'total_size': 60 * MiB, 'allocated_size': 50 * MiB, 'active_size': 50 * MiB,
         'requested_size': 50 * MiB, 'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0),
         'is_expandable': True, 'frames': [],
         'blocks': [{'address': L, 'size': 50 * MiB, 'requested_size': 50 * MiB, 'state': 'active_allocated', 'frames': user},
                    {'address': L + 50 * MiB, 'size': 10 * MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
        {'device': 0, 'address': L + 80 * MiB, 'total_size': 100 * MiB, 'allocated_size': 40 * MiB, 'active_size': 40 * MiB,
         'requested_size': 40 * MiB, 'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0),
         'is_expandable': True, 'frames': [],
         'blocks': [{'address': L + 80 * MiB, 'size': 40 * MiB, 'requested_size': 40 * MiB, 'state': 'active_allocated', 'frames': user},
                    {'address': L + 120 * MiB, 'size': 60 * MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
        {'device': 0, 'address': S, 'total_size': 2 * MiB, 'allocated_size': 1024, 'active_size': 1024,
         'requested_size': 1000, 'stream': 0, 'segment_type': 'small', 'segment_pool_id': (0, 0),
         'is_expandable': True, 'frames': [],
         'blocks': [{'address': S, 'size': 1024, 'requested_size': 1000, 'state': 'active_allocated', 'frames': user},
                    {'address': S + 1024, 'size': 2 * MiB - 1024, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
    ],
    'device_traces': [unmap],
    'allocator_settings': {'max_split_size': -1, 'expandable_segments': True, 'roundup_power2_divisions': {'1': 0}},
}
with open('expandable-unmap.pickle', 'wb') as f:
    pickle.dump(unmap_snap, f, protocol=4)

# ---- the PyTorch 1.13 layout: memory_snapshot() / _snapshot() return the
# legacy list of segments; blocks carry size, state and (with
# _record_memory_history(True)) a history of {addr, real_size, frames}, no
# address; no trace ----
Q = 0x400000000
legacy13 = [
    {'device': 0, 'address': Q, 'total_size': 20 * MiB, 'allocated_size': 6 * MiB, 'active_size': 6 * MiB,
     'stream': 0, 'segment_type': 'large',
     'blocks': [{'size': 4 * MiB, 'state': 'active_allocated', 'history': [{'addr': Q, 'real_size': 4 * MiB - 10, 'frames': frames}]},
                {'size': 2 * MiB, 'state': 'active_allocated', 'history': [{'addr': Q + 4 * MiB, 'real_size': 2 * MiB, 'frames': frames}]},
                {'size': 14 * MiB, 'state': 'inactive'}]},
    {'device': 0, 'address': Q + 32 * MiB, 'total_size': 2 * MiB, 'allocated_size': 1024, 'active_size': 1024,
     'stream': 0, 'segment_type': 'small',
     'blocks': [{'size': 1024, 'state': 'active_allocated', 'history': [{'addr': Q + 32 * MiB, 'real_size': 1000, 'frames': []}]},
                {'size': 2 * MiB - 1024, 'state': 'inactive'}]},
]
with open('legacy-1.13.pkl', 'wb') as f:
    pickle.dump(legacy13, f, protocol=2)

# ---- two streams and annotations (2.x): a request on stream S2 does not
# reuse stream 0's free block; an `annotate` entry in the trace ----
A0, B0, S2 = 0x500000000, 0x500000000 + 64 * MiB, 0x7fffe0001230
t[0] = 5000
def on(action, addr, size, stream=0, **kw):
    e = at(action, addr, size, **kw)
    e['stream'] = stream
    return e
streams = [
    on('segment_alloc', A0, 20 * MiB), on('alloc', A0, 4 * MiB),
    on('segment_alloc', B0, 20 * MiB, S2), on('alloc', B0, 4 * MiB, S2),       # not stream 0's free 16 MiB
    on('annotate', 0, 0, S2, user_metadata='phase 2'),
    on('free_requested', A0, 4 * MiB), on('free_completed', A0, 4 * MiB),
    on('alloc', B0 + 4 * MiB, 2 * MiB, S2),                                   # stream S2's own free block
]
streams_snap = {
    'segments': [
        {'device': 0, 'address': A0, 'total_size': 20 * MiB, 'allocated_size': 0, 'active_size': 0, 'requested_size': 0,
         'stream': 0, 'segment_type': 'large', 'segment_pool_id': (0, 0), 'is_expandable': False, 'frames': [],
         'blocks': [{'address': A0, 'size': 20 * MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
        {'device': 0, 'address': B0, 'total_size': 20 * MiB, 'allocated_size': 6 * MiB, 'active_size': 6 * MiB,
         'requested_size': 6 * MiB, 'stream': S2, 'segment_type': 'large', 'segment_pool_id': (0, 0), 'is_expandable': False,
         'frames': [],
         'blocks': [{'address': B0, 'size': 4 * MiB, 'requested_size': 4 * MiB, 'state': 'active_allocated', 'frames': user},
                    {'address': B0 + 4 * MiB, 'size': 2 * MiB, 'requested_size': 2 * MiB, 'state': 'active_allocated', 'frames': user},
                    {'address': B0 + 6 * MiB, 'size': 14 * MiB, 'requested_size': 0, 'state': 'inactive', 'frames': []}]},
    ],
    'device_traces': [streams],
    'allocator_settings': {'max_split_size': -1, 'expandable_segments': False},
}
with open('streams-annotate.pickle', 'wb') as f:
    pickle.dump(streams_snap, f, protocol=4)
