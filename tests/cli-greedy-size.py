#!/usr/bin/env python3
"""greedy-size's offsets against the rule itself (issue 30, target 3).

The placer behind greedy-size indexes the placed buffers by time in
buckets, trees per bucket and a full-cover tree (strategies/placer.c);
a wrong index gives another offset somewhere, still a valid plan. Here
the rule is written out in Python, with no index: the buffers largest
first (ties: longer lifetime, then input order), each at the lowest
offset where it shares no byte with a buffer placed before it that is
live at one of its ticks. Random instances shaped like a training run
(many buffers of a few ticks, some of hundreds to thousands that cross
buckets, a few that live throughout, sizes multiples of 512 with
repeats) are planned by `memlens plan -s greedy-size`, and every offset
must be the rule's, as must the JSON's peak.

    cli-greedy-size.py MEMLENS
"""
import csv
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, run_tool  # noqa: E402

MEMLENS = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="memlens-greedy-size-")


def instance(seed, n):
    """(id, lower, upper, size) rows: a training run's mix of lifetimes."""
    rng = random.Random(seed)
    rows, t = [], 0
    sizes = [512 * rng.randint(1, 64) for _ in range(40)]   # repeats: ties
    for i in range(n):
        t += rng.choice((0, 1, 1, 2))
        kind = rng.random()
        if kind < 0.01:
            lo, life = rng.randint(0, 5), 10 ** 6   # lives throughout
        elif kind < 0.2:
            lo, life = t, rng.randint(100, 3000)
        else:
            lo, life = t, rng.randint(1, 6)
        size = rng.choice(sizes) if rng.random() < 0.5 else 512 * rng.randint(1, 4096)
        rows.append((i + 1, lo, lo + life, size))
    end = max(r[2] for r in rows if r[2] < 10 ** 6) + 1
    return [(i, lo, min(up, end), size) for i, lo, up, size in rows]


def greedy_size(rows):
    """The rule: {id: offset} and the peak."""
    order = sorted(range(len(rows)), key=lambda k: (-rows[k][3], -(rows[k][2] - rows[k][1]), k))
    placed, off = [], {}
    for k in order:
        _, lo, up, size = rows[k]
        near = sorted((off[j], off[j] + rows[j][3]) for j in placed
                      if rows[j][1] < up and lo < rows[j][2])
        at = 0
        for o, top in near:
            if o >= at + size:
                break
            at = max(at, top)
        off[k] = at
        placed.append(k)
    return {rows[k][0]: off[k] for k in off}, max(off[k] + rows[k][3] for k in off)


def main():
    for seed, n in ((1, 1500), (2, 3000), (3, 3000)):
        rows = instance(seed, n)
        path = os.path.join(TMP, "t%d.csv" % seed)
        with open(path, "w") as f:
            f.write("id,lower,upper,size\n")
            for r in rows:
                f.write("%d,%d,%d,%d\n" % r)
        plan = os.path.join(TMP, "p%d.csv" % seed)
        rc, out, err = run_tool(MEMLENS, "plan", path, "-s", "greedy-size", "-o", plan, "--json")
        if not ok(rc == 0, "seed %d: plan exits 0 (%d; %s)" % (seed, rc, err.strip()[:200])):
            continue
        want, peak = greedy_size(rows)
        with open(plan) as f:
            got = {int(g["id"]): int(g["offset"]) for g in csv.DictReader(f)}
        differ = [i for i in want if got.get(i) != want[i]]
        ok(len(got) == len(rows) and not differ,
           "seed %d: %d buffers, every offset is the rule's (%d differ%s)"
           % (seed, len(rows), len(differ),
              "; first: id %d at %s, the rule %d" % (differ[0], got.get(differ[0]), want[differ[0]]) if differ else ""))
        ok(json.loads(out)["peak"] == peak, "seed %d: the JSON's peak is the rule's %d (%s)"
           % (seed, peak, json.loads(out)["peak"]))
    shutil.rmtree(TMP, ignore_errors=True)
    return done()


sys.exit(main())
