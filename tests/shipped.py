#!/usr/bin/env python3
"""What meson installs holds no test code.

For every installed target of the build (meson-info/intro-targets.json),
ninja lists everything it is made from, recursively (`ninja -t inputs`:
its sources, the static libraries it links and theirs, generated files);
none of it may come from tests/ or bench/ (of the source tree or the
build tree): the scripted window test and the viewer benchmark link the
viewer's library themselves, the viewer does not link them.

And a shipped program has no hidden options but aliases: a GOptionEntry
marked G_OPTION_FLAG_HIDDEN in a source of an installed target must say
"Same as --NAME" of an option of the same table (the viewer once had
hidden --self-test and --bench that ran test code).

A TAP program: argv[1] = the build root, argv[2] = the source root;
skips when the build has no introspection data or ninja is missing."""
import json
import os
import re
import shutil
import subprocess
import sys

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else 'build')
root = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else '.')
TEST_DIRS = ('tests', 'bench')

intro = os.path.join(build, 'meson-info', 'intro-targets.json')
ninja = shutil.which('ninja') or shutil.which('samu')
if not os.path.exists(intro) or not ninja:
    print('1..0 # SKIP %s' % ('no ninja' if not ninja else 'no meson-info in ' + build))
    sys.exit(0)

with open(intro, encoding='utf-8') as f:
    installed = [t for t in json.load(f) if t.get('installed')]


def test_dir_of(path):
    """tests/ or bench/ when PATH (absolute) lies under one of them, in the
    source tree or the build tree; else None."""
    for top in (root, build):
        rel = os.path.relpath(path, top)
        if not rel.startswith('..'):
            first = rel.split(os.sep)[0]
            if first in TEST_DIRS:
                return first
    return None


def inputs(target_file):
    """Everything ninja builds TARGET_FILE from, as absolute paths."""
    rel = os.path.relpath(target_file, build)
    out = subprocess.run([ninja, '-C', build, '-t', 'inputs', rel], capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    return [os.path.normpath(os.path.join(build, p)) for p in out.stdout.split()], None


HIDDEN = re.compile(r'\{\s*"([\w-]+)"\s*,[^,]*,[^,]*G_OPTION_FLAG_HIDDEN[^,]*,[^,]*,[^,]*,\s*"([^"]*)"')
ENTRY = re.compile(r'\{\s*"([\w-]+)"\s*,\s*(?:\'.\'|0)\s*,')


def hidden_options(sources):
    """(file, name, description) of every hidden GOptionEntry that is not
    an alias of another entry in its file."""
    bad = []
    for src in sources:
        if not src.endswith('.c') or not os.path.exists(src):
            continue
        with open(src, encoding='utf-8', errors='replace') as f:
            text = f.read()
        names = set(ENTRY.findall(text))
        for name, desc in HIDDEN.findall(text):
            m = re.fullmatch(r'Same as --([\w-]+)', desc)
            if not m or m.group(1) not in names or m.group(1) == name:
                bad.append((os.path.relpath(src, root), name, desc))
    return bad


checks = []
for t in sorted(installed, key=lambda t: t['name']):
    for fn in t['filename']:
        srcs, err = inputs(fn)
        label = os.path.relpath(fn, build)
        if srcs is None:
            checks.append(('%s: ninja lists what it is made from' % label, ['# ' + err]))
            continue
        from_tests = sorted(set(os.path.relpath(p, root) if not os.path.relpath(p, root).startswith('..')
                                else os.path.relpath(p, build) for p in srcs if test_dir_of(p)))
        checks.append(('%s: nothing of %s among its %d inputs' % (label, ' or '.join(d + '/' for d in TEST_DIRS), len(srcs)),
                       ['# made from ' + p for p in from_tests]))
        bad = hidden_options(srcs)
        checks.append(('%s: its hidden options are aliases ("Same as --NAME")' % label,
                       ['# %s: hidden --%s: "%s"' % b for b in bad]))

print('1..%d' % len(checks))
for i, (name, problems) in enumerate(checks, 1):
    print('%s %d - %s' % ('not ok' if problems else 'ok', i, name))
    for p in problems:
        print(p)
sys.exit(1 if any(p for _, p in checks) else 0)
