#!/usr/bin/env python3
"""Every test skips under the protocol it is registered with.

meson's TAP protocol reads a skip from the plan ("1..0 # SKIP why", exit
status 0) and counts exit status 77 as an ERROR; the exitcode protocol
(meson's default) reads 77 as a skip. A TAP test that exits 77 when torch,
a display or ../shared is missing passes wherever they are installed and
fails on a newcomer's fresh machine (it did: cli-export).

This reads tests/meson.build and tests/fuzz/meson.build, finds the test()
calls that do not declare a protocol (exitcode), and refuses an exit or
return of 77 in any test source registered another way. A TAP program:
argv[1] = the source root."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
tests_dir = os.path.join(root, 'tests')

EXIT77 = re.compile(r'\b(exit|return)\s*\(?\s*77\b|sys\.exit\s*\(\s*77\s*\)')


def calls(text, name):
    """The argument text of every call NAME( ... ) in a meson file."""
    out = []
    for m in re.finditer(r'\b%s\s*\(' % name, text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] == '(':
                depth += 1
            elif text[i] == ')':
                depth -= 1
                if depth == 0:
                    break
            i += 1
        out.append(text[m.end():i])
    return out


exitcode_files = set()   # sources of tests under the exitcode protocol
tap_calls = 0
for build in ('meson.build', os.path.join('fuzz', 'meson.build')):
    with open(os.path.join(tests_dir, build), encoding='utf-8') as f:
        text = re.sub(r'#[^\n]*', '', f.read())
    for args in calls(text, 'test'):
        if 'protocol' in args:
            tap_calls += 1
            continue
        # the call's own file names, and those of the variables it passes
        # (vg_args = [files('valgrind.sh'), ...])
        words = [args] + [m.group(1) for v in re.findall(r'\b([a-z_]\w*)\b', args)
                          for m in re.finditer(r'^\s*%s\s*=([^\n]*)' % v, text, re.M)]
        for w in words:
            exitcode_files.update(re.findall(r"'([\w.-]+\.(?:sh|py|c))'", w))

sources = []
for d in (tests_dir, os.path.join(tests_dir, 'fuzz')):
    for name in sorted(os.listdir(d)):
        if name.endswith(('.sh', '.py', '.c', '.h')):
            sources.append(os.path.join(d, name))

checks = []
checks.append(('the meson files register TAP tests (%d calls) and exitcode ones (%s)'
               % (tap_calls, ', '.join(sorted(exitcode_files)) or 'none'),
               tap_calls > 0 and len(exitcode_files) > 0, []))
for path in sources:
    name = os.path.basename(path)
    bad = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for lineno, line in enumerate(f, 1):
            # a comment line is not code ('#' inside a line may be TAP's "# SKIP")
            if path.endswith(('.sh', '.py')) and line.lstrip().startswith('#'):
                continue
            if EXIT77.search(line) and name not in exitcode_files:
                bad.append('%s:%d: exits 77 but is not an exitcode-protocol test: %s'
                           % (os.path.relpath(path, root), lineno, line.strip()))
    checks.append(('%s skips under its own protocol' % os.path.relpath(path, root), not bad, bad))

print('1..%d' % len(checks))
failed = 0
for i, (what, good, why) in enumerate(checks, 1):
    print('%s %d - %s' % ('ok' if good else 'not ok', i, what))
    for w in why:
        print('#   ' + w)
    failed += not good
sys.exit(1 if failed else 0)
