#!/usr/bin/env python3
"""The include graph of memlens, by folder, against the layers that
CONTRIBUTING.md names. Each folder may include only itself and the folders
below it; sim/, strategies/ and render/report/ include no GTK, GLib, cairo or
CUDA header.
No module reaches itself again through what it includes (a circle): a
module is a header with the file of the same name (foo.h, foo.c); a family's
private header (caching-private.h) belongs to the family's module (caching)
and the family's files (caching-*.c) include it without an arrow.
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


def module_of(path):
    """'strategies/caching-private.h' -> 'strategies/caching'"""
    mod = os.path.splitext(path)[0]
    return mod[:-len('-private')] if mod.endswith('-private') else mod


def include_graph():
    """module -> {module: 'file:line includes "x"'} over every folder"""
    graph = {}
    for folder in ALLOWED:
        d = os.path.join(root, folder)
        for name in sorted(os.listdir(d)):
            if not name.endswith(('.c', '.h', '.cu')):
                continue
            src = folder + '/' + name
            mod = module_of(src)
            edges = graph.setdefault(mod, {})
            with open(os.path.join(d, name), encoding='utf-8', errors='replace') as f:
                for lineno, line in enumerate(f, 1):
                    m = INCLUDE.search(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    if not os.path.exists(os.path.join(root, inc)):
                        inc = os.path.normpath(os.path.join(folder, inc))
                    target = module_of(inc)
                    family_private = os.path.splitext(inc)[0].endswith('-private') and \
                        os.path.splitext(src)[0].startswith(target)
                    if target != mod and not family_private:
                        edges.setdefault(target, '%s:%d includes "%s"' % (src, lineno, m.group(1)))
    return graph


def circles(graph):
    """the strongly connected components of more than one module (Tarjan)"""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


graph = include_graph()
found = circles(graph)
for folder in ALLOWED:
    bad = []
    for comp in found:
        if any(os.path.dirname(m) == folder for m in comp):
            bad.append('a circle: ' + ' -> '.join(comp))
            bad += ['  ' + graph[a][b] for a in comp for b in comp if b in graph[a]]
    tests.append(('no include circle through %s/' % folder, bad))

print('1..%d' % len(tests))
for i, (name, bad) in enumerate(tests, 1):
    if bad:
        print('not ok %d - %s' % (i, name))
        for b in bad:
            print('# ' + b)
    else:
        print('ok %d - %s' % (i, name))
sys.exit(1 if any(b for _, b in tests) else 0)
