#!/usr/bin/env python3
"""Writes the pickle seeds of tests/fuzz/corpus/pickle (run once by hand;
the files are committed). Small values that use every opcode the reader
knows: protocols 2 and 5, memo references, big ints, floats, bytes,
tuples of each size, nested lists and dicts."""
import pickle

shared = [{'filename': 'a.py', 'line': 1, 'name': 'f'}]
values = {
    'scalars-p2.pickle': (2, {'i': 1, 'neg': -300, 'big': 1 << 70, 'nbig': -(1 << 40), 'f': 1.5,
                              't': True, 'n': None, 's': 'héllo', 'b': b'\x00\x01'}),
    'memo-p4.pickle': (4, {'device_traces': [[{'action': 'alloc', 'frames': shared},
                                              {'action': 'free_completed', 'frames': shared}]],
                          'segments': [], 'tuples': [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)]}),
    'nested-p5.pickle': (5, [[[[{'k': [1, [2, [3]]]}]]], b'x' * 300, 'y' * 300, 65536, 2 ** 31]),
}
for name, (proto, v) in values.items():
    with open('corpus/pickle/' + name, 'wb') as f:
        pickle.dump(v, f, protocol=proto)
