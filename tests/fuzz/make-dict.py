#!/usr/bin/env python3
"""The libFuzzer dictionary of every key and keyword the readers look up
(tests/fuzz/memlens.dict), taken from their sources:

  - a string literal passed to a lookup: ml_pk_get*, uint_field,
    cJSON_GetObjectItem*, ml_json_u64 / i64 / str, num_arg (keys of
    snapshots, Kineto traces, plans, graphs, JSONL traces);
  - a string literal compared with strcmp / strncmp / strcasecmp (values:
    actions, "[memory]", "memlens-plan", CSV column names);
  - the key and action tables of the snapshot reader (key_of, action_kind).

Each word is written plain ("size"), as a JSON key ("\\"size\\":") and, for
the pickle readers, as SHORT_BINUNICODE ("\\x8c\\x04size"), the form torch's
pickles hold it in.

  make-dict.py SRCROOT          writes SRCROOT/tests/fuzz/memlens.dict
  make-dict.py SRCROOT --check  exits 1 (naming what is missing) when a
                                reader looks up a key the committed
                                dictionary lacks: the test fuzz-dict
"""
import os
import re
import sys

LOOKUPS = r'(?:ml_pk_get\w*|uint_field|cJSON_GetObjectItem\w*|ml_json_(?:u64|i64|str)|num_arg)'
COMPARES = r'(?:strcmp|strncmp|strcasecmp)'
SNAPSHOT = ['sim/formats/snapshot.c', 'sim/formats/snapshot-fields.c', 'sim/formats/snapshot-entries.c',
            'sim/formats/snapshot-document.c', 'sim/formats/snapshot-state.c', 'sim/formats/snapshot-replay.c',
            'sim/formats/snapshot-stacks.c']
# every reader's file (a reader split into several files keeps its keys)
READERS = sorted(set(SNAPSHOT) | {'sim/formats/' + f for f in os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                                       '..', '..', 'sim', 'formats'))
                                  if f.endswith('.c')} | {'sim/plan.c'})
PICKLE = set(SNAPSHOT) | {'sim/formats/pickle.c'}


def words(root):
    """{word: set of readers} of every key and keyword the readers use."""
    found = {}
    for rel in READERS:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        text = open(path, encoding='utf-8').read()
        text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
        got = set()
        # a lookup: the literal among its arguments (up to the closing paren)
        for m in re.finditer(LOOKUPS + r'\s*\(([^;{}]*?)\)', text):
            got.update(re.findall(r'"((?:[^"\\]|\\.)+)"', m.group(1)))
        for m in re.finditer(COMPARES + r'\s*\(([^;{}]*?)\)', text):
            got.update(re.findall(r'"((?:[^"\\]|\\.)+)"', m.group(1)))
        # tables of keys and keywords: names[K__COUNT] = {...}, map[] = {...},
        # entry_fields[], flag_names[], dtype names ...
        for m in re.finditer(r'(?:\w*names\w*|map|entry_fields)\s*\[[^\]]*\]\s*=\s*\{(.*?)\};', text, flags=re.S):
            got.update(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
        for w in got:
            if '%' in w or '\\' in w or not re.search('[A-Za-z]', w):
                continue   # a format or a path, not a key
            found.setdefault(w, set()).add(rel)
    return found


def esc(b):
    """bytes as a libFuzzer dictionary string (printable ASCII but quote and
    backslash as is, the rest \\xNN)."""
    out = ''
    for c in b:
        if 0x20 <= c < 0x7f and c not in (0x22, 0x5c):
            out += chr(c)
        else:
            out += '\\x%02x' % c
    return '"' + out + '"'


def entries(found):
    lines = []
    for w in sorted(found):
        b = w.encode()
        lines.append(esc(b))
        lines.append(esc(b'"' + b + b'":'))
        if found[w] & PICKLE and len(b) < 256:
            lines.append(esc(b'\x8c' + bytes([len(b)]) + b))
    return lines


def main():
    root = sys.argv[1]
    path = os.path.join(root, 'tests/fuzz/memlens.dict')
    found = words(root)
    want = entries(found)
    if len(sys.argv) > 2 and sys.argv[2] == '--check':
        have = set()
        if os.path.exists(path):
            for line in open(path, encoding='ascii'):
                line = line.strip()
                if line and not line.startswith('#'):
                    have.add(line)
        missing = [w for w in sorted(found) if esc(w.encode()) not in have]
        print('1..1')
        if len(found) < 50:
            print('not ok 1 - only %d keys found in the readers: the patterns in make-dict.py no longer match' % len(found))
            return 1
        if missing:
            print('not ok 1 - %d keys the readers look up are not in tests/fuzz/memlens.dict: %s '
                  '(run tests/fuzz/make-dict.py .)' % (len(missing), ', '.join(missing)))
            return 1
        print('ok 1 - memlens.dict holds all %d keys the readers look up' % len(found))
        return 0
    with open(path, 'w', encoding='ascii') as f:
        f.write('# libFuzzer dictionary: every key and keyword the readers look up, plain, as a JSON\n'
                '# key and (pickle readers) as SHORT_BINUNICODE. Written by tests/fuzz/make-dict.py from\n'
                '# the sources; the test fuzz-dict fails when a reader looks up a key missing here.\n')
        for line in want:
            f.write(line + '\n')
    print('%s: %d words, %d entries' % (path, len(found), len(want)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
