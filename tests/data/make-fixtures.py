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
