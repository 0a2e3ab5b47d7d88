#!/usr/bin/env python3
"""Every report writer's tables against their own headers, generically:
the CSV read with Python's csv module (each row as many fields as the
header names, csv.DictReader sees no extra or missing field), every
Markdown pipe table and every HTML table (cells, with colspan, against
the header cells), the JSON's issue kinds against the CSV's issue
columns. On the sample, a report with a failing strategy, one with a
capacity proven infeasible, a race and a sweep, so that error rows,
"… more" rows and spanning cells are all there. Numbers checked against
the raw input (Python): the lower bound, the one race.

argv: memlens, the source root. TAP."""
import csv
import html.parser
import json
import os
import re
import subprocess
import sys
import tempfile

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done  # noqa: E402

tmp = tempfile.mkdtemp()
sample = os.path.join(src, 'samples', 'train-step.jsonl')
race = os.path.join(tmp, 'race.jsonl')
with open(race, 'w') as f:
    # stream 1 frees 100 bytes, stream 0 reuses them unsynchronised: one race
    f.write('{"format":"memlens-trace","version":1,"alignment":1}\n'
            '{"kind":"alloc","id":1,"size":100,"stream":1}\n{"kind":"free","id":1}\n'
            '{"kind":"alloc","id":2,"size":100,"stream":0}\n{"kind":"free","id":2}\n')

CASES = {
    'sample': [sample],
    'failing': [sample, '--strategies', 'exact,best-fit', '--capacity', '2.5G'],
    'infeasible': [os.path.join(src, 'samples', 'tiny.16.csv'), '--strategies', 'exact,best-fit', '--capacity', '13'],
    'race': [race, '--strategies', 'first-fit'],
    'sweep': [sample, '--strategies', 'pool,best-fit', '--sweep', 'chunk=1M,4M'],
}


def report(case, ext):
    out = os.path.join(tmp, '%s.%s' % (case, ext))
    p = subprocess.run([memlens, 'report'] + CASES[case] + ['-o', out, '--quiet'], capture_output=True, text=True)
    return out if p.returncode in (0, 1) and os.path.exists(out) else None


def lower_bound(path):
    """The most rounded bytes live at once, from the raw JSONL."""
    lines = [json.loads(x) for x in open(path) if x.strip()]
    align = lines[0].get('alignment', 1)
    live = best = 0
    sizes = {}
    for e in lines[1:]:
        if e['kind'] == 'alloc':
            sizes[e['id']] = -(-e['size'] // align) * align
            live += sizes[e['id']]
            best = max(best, live)
        elif e['kind'] == 'free':
            live -= sizes.pop(e['id'])
    return best


# ---- CSV --------------------------------------------------------------------
for case in ('sample', 'failing', 'infeasible', 'race'):
    path = report(case, 'csv')
    if not ok(path, '%s: report writes the CSV' % case):
        continue
    rows = list(csv.reader(open(path, newline='')))
    header = rows[0]
    bad = [i for i, r in enumerate(rows[1:], 2) if len(r) != len(header)]
    ok(not bad, '%s: every CSV row has the %d fields the header names (rows off: %s)' % (case, len(header), bad))
    dicts = list(csv.DictReader(open(path, newline='')))
    ok(all(None not in d and None not in d.values() for d in dicts),
       '%s: csv.DictReader sees no extra and no missing field' % case)
    ran = [d for d in dicts if d['peak']]
    if case in ('failing', 'infeasible'):
        ok(0 < len(ran) < len(dicts), '%s: some strategies made a plan, exact could not' % case)
    ok(all(d['error'] == '' for d in ran) and all(d['error'] for d in dicts if not d['peak']),
       '%s: error is empty where a plan was made, set where none was' % case)
    doc = json.load(open(report(case, 'json')))
    kinds = [k.replace('-', '_') for k in doc['issues']['counts']]
    ok(all(k in header for k in kinds) and header[-1] == 'error',
       '%s: one CSV column per issue kind of the JSON (%s), then error' % (case, ', '.join(kinds)))
    names = [r['strategy'] for r in doc['results']]
    ok([d['strategy'] for d in dicts] == names, '%s: one CSV row per result, in order' % case)
    if case == 'sample':
        lb = lower_bound(sample)
        ok(all(int(d['lower_bound']) == lb for d in ran), 'sample: lower_bound %d as the raw trace says' % lb)
    if case == 'race':
        ok(ran and ran[-1]['cross_stream'] == '1' and ran[-1]['constraint'] == '0',
           'race: first-fit has the one cross-stream race, no broken constraint')


# ---- Markdown -----------------------------------------------------------------
def md_cells(line):
    """The cells of a pipe-table line; an escaped pipe is text."""
    return [c for c in re.split(r'(?<!\\)\|', line.strip())[1:-1]]


for case in CASES:
    path = report(case, 'md')
    if not ok(path, '%s: report writes Markdown' % case):
        continue
    tables, cur = [], None
    for line in open(path, encoding='utf-8'):
        if line.startswith('|'):
            if cur is None:
                cur = []
                tables.append(cur)
            cur.append(line)
        else:
            cur = None
    bad = []
    for t in tables:
        n = len(md_cells(t[0]))
        if not re.match(r'^\|(-{3}:?\|)+$', t[1].strip()) or len(md_cells(t[1])) != n:
            bad.append(t[1].strip())
        bad += [r.strip()[:60] for r in t[2:] if len(md_cells(r)) != n]
    ok(tables and not bad, '%s: %d Markdown tables, every row as wide as its header %s' % (case, len(tables), bad[:3]))


# ---- HTML ---------------------------------------------------------------------
class Tables(html.parser.HTMLParser):
    """Each table's header width and its rows' widths (colspan counted)."""

    def __init__(self):
        super().__init__()
        self.tables, self.stack = [], []

    def handle_starttag(self, tag, attrs):
        if tag == 'table':
            self.stack.append({'head': None, 'rows': []})
        elif tag == 'tr' and self.stack:
            self.stack[-1]['rows'].append(0)
        elif tag in ('td', 'th') and self.stack:
            self.stack[-1]['rows'][-1] += int(dict(attrs).get('colspan', 1))
        if tag == 'th' and self.stack:
            self.stack[-1]['head'] = self.stack[-1]['rows'][-1]

    def handle_endtag(self, tag):
        if tag == 'table' and self.stack:
            self.tables.append(self.stack.pop())


probe = report('race', 'html')
if not probe:
    print('# this memlens writes no HTML (built without cairo): HTML tables not checked')
for case in CASES if probe else ():
    path = report(case, 'html')
    if not ok(path, '%s: report writes HTML' % case):
        continue
    p = Tables()
    p.feed(open(path, encoding='utf-8').read())
    bad = []
    for t in p.tables:
        width = t['head'] if t['head'] is not None else t['rows'][0]
        body = t['rows'][1:] if t['head'] is not None else t['rows']
        bad += [w for w in body if w != width]
    ok(p.tables and not bad, '%s: %d HTML tables, every row as wide as its header' % (case, len(p.tables)))

sys.exit(done())
