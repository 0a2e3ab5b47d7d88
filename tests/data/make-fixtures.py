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
