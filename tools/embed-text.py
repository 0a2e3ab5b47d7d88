#!/usr/bin/env python3
"""Embeds a text file in C as a NUL-terminated char array (the build step
that puts render/page.js into memlens; memlens itself needs no Python).
usage: embed-text.py INPUT OUTPUT.h NAME
The text may not hold ']]>' or '</script' (it goes inside a CDATA
section of a <script> element)."""
import sys

src, out, name = sys.argv[1:4]
data = open(src, 'rb').read()
for bad in (b']]>', b'</script'):
    if bad in data.lower():
        sys.exit('%s: holds %r, which would end its <script> early' % (src, bad.decode()))
lines = ['/* generated from %s by tools/embed-text.py: do not edit */' % src.split('/')[-1],
         'static const char %s[] = {' % name]
for i in range(0, len(data), 16):
    lines.append('  ' + ','.join(str(b) for b in data[i:i + 16]) + ',')
lines.append('  0\n};\n')
with open(out, 'w') as f:
    f.write('\n'.join(lines))
