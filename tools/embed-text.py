#!/usr/bin/env python3
"""Embeds text files in C as one NUL-terminated char array, their texts
one after the other (the build step that puts render/page.js and
render/page-panels.js into memlens; memlens itself needs no Python).
usage: embed-text.py OUTPUT.h NAME INPUT...
The text may not hold ']]>' or '</script' (it goes inside a CDATA
section of a <script> element)."""
import sys

out, name, srcs = sys.argv[1], sys.argv[2], sys.argv[3:]
data = b''
for src in srcs:
    text = open(src, 'rb').read()
    for bad in (b']]>', b'</script'):
        if bad in text.lower():
            sys.exit('%s: holds %r, which would end its <script> early' % (src, bad.decode()))
    data += text if text.endswith(b'\n') else text + b'\n'
lines = ['/* generated from %s by tools/embed-text.py: do not edit */' % ', '.join(s.split('/')[-1] for s in srcs),
         'static const char %s[] = {' % name]
for i in range(0, len(data), 16):
    lines.append('  ' + ','.join(str(b) for b in data[i:i + 16]) + ',')
lines.append('  0\n};\n')
with open(out, 'w') as f:
    f.write('\n'.join(lines))
