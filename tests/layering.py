#!/usr/bin/env python3
"""The include graph of memlens, by folder, against the layers that
CONTRIBUTING.md names. Each folder may include only itself and the folders
below it; sim/, strategies/ and render/report/ include no GTK, GLib, cairo or
CUDA header.
A TAP program: argv[1] = the source root."""
import os, re, sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'

# folder -> the folders its files may include (besides itself)
ALLOWED = {
    'sim/base':     [],
    'sim':          ['sim/base'],
    'sim/formats':  ['sim', 'sim/base'],
    'sim/analysis': ['sim', 'sim/base'],
    'strategies':   ['sim', 'sim/base'],
    'trace':        ['sim', 'sim/base', 'sim/formats', 'sim/analysis', 'strategies'],
    'render/report': ['sim', 'sim/base', 'sim/formats', 'sim/analysis', 'strategies'],
    'render':       ['sim', 'sim/base', 'sim/formats', 'sim/analysis', 'strategies', 'render/report'],
    'gui':          ['sim', 'sim/base', 'sim/formats', 'sim/analysis', 'strategies', 'render/report', 'render'],
    'cli':          ['sim', 'sim/base', 'sim/formats', 'sim/analysis', 'strategies', 'render/report', 'render',
                     'trace'],
}
# Floors that build without GTK, GLib, cairo or CUDA (the core configuration,
# -Dgui=disabled -Dcuda=disabled): the model, the strategies and the report
# with its text writers (render/report); the pictures (render/) need cairo.
CORE = ('sim', 'sim/base', 'sim/formats', 'sim/analysis', 'strategies', 'render/report')
FORBIDDEN_SYSTEM = re.compile(r'#\s*include\s*<(gtk/|glib|gio/|gdk/|cairo|pango|cuda|cupti|cudart)')
INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')

tests = []
for folder, allowed in ALLOWED.items():
    d = os.path.join(root, folder)
    for name in sorted(os.listdir(d)):
        if not name.endswith(('.c', '.h', '.cu')):
            continue
        path = os.path.join(d, name)
        bad = []
        with open(path, encoding='utf-8', errors='replace') as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.search(line)
                if m:
                    inc = m.group(1)
                    target = os.path.dirname(inc)
                    if target != folder and target not in allowed:
                        bad.append('%s:%d includes "%s" (%s may include %s)'
                                   % (folder + '/' + name, lineno, inc, folder,
                                      ', '.join([folder] + allowed)))
                if folder in CORE:
                    if FORBIDDEN_SYSTEM.search(line):
                        bad.append('%s:%d: %s includes a GUI or CUDA header: %s'
                                   % (folder + '/' + name, lineno, folder, line.strip()))
        tests.append((folder + '/' + name, bad))

print('1..%d' % len(tests))
for i, (name, bad) in enumerate(tests, 1):
    if bad:
        print('not ok %d - %s' % (i, name))
        for b in bad:
            print('# ' + b)
    else:
        print('ok %d - %s' % (i, name))
sys.exit(1 if any(b for _, b in tests) else 0)
