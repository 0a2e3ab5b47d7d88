#!/usr/bin/env python3
"""The ilp planner's three models (issue 30, target 4): on small random
instances whose greedy plan lies above the live-bytes bound, `plan -s ilp
--options model=bigm|order|time` proves the optimum `exact --options
mode=minimize` proves; each plan CSV is checked here (every row kept, no
two buffers share bytes while both live, its peak is the JSON's); and the
model sizes the note prints (binaries, those fixed by symmetry, rows) are
Python's own count from the rows.

    cli-ilp-models.py MEMLENS
"""
import csv
import json
import math
import os
import random
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, run_tool, live_peak  # noqa: E402

MEMLENS = sys.argv[1]


def instance(rnd):
    """8-11 buffers, sizes 1-8 KiB, some twins (same size and lifetime)."""
    rows = []
    for i in range(rnd.randint(8, 11)):
        if rows and rnd.random() < 0.2:
            _, lo, up, size = rows[rnd.randrange(len(rows))]
        else:
            lo = rnd.randrange(10)
            up = lo + rnd.randint(1, 6)
            size = rnd.randint(1, 8) * 1024
        rows.append((i, lo, up, size))
    return rows


def plan(path, out, strategy, *extra):
    rc, so, se = run_tool(MEMLENS, "plan", path, "-s", strategy, "--time-limit", "60", "--json", "-o", out, *extra)
    return rc, (json.loads(so) if rc in (0, 1) and so.strip() else {"error": se.strip()})


def check_csv(label, rows, out, peak):
    with open(out) as f:
        got = {r["id"]: r for r in csv.DictReader(f)}
    same = sorted(got) == sorted(str(r[0]) for r in rows) and all(
        (int(got[str(i)]["lower"]), int(got[str(i)]["upper"]), int(got[str(i)]["size"])) == (lo, up, s)
        for i, lo, up, s in rows)
    ok(same, "%s: the plan keeps every row's lower, upper and size" % label)
    place = [(lo, up, int(got[str(i)]["offset"]), s) for i, lo, up, s in rows] if same else []
    clash = [(a, b) for k, a in enumerate(place) for b in place[k + 1:]
             if a[0] < b[1] and b[0] < a[1] and a[2] < b[2] + b[3] and b[2] < a[2] + a[3]]
    ok(same and not clash, "%s: no two buffers share bytes while both live (%s)" % (label, clash[:1]))
    ok(same and max(p[2] + p[3] for p in place) == peak, "%s: the CSV's peak is the JSON's %d" % (label, peak))


def model_counts(rows, g, M):
    """(pairs, twin-fixed + mirror, order rows, time binaries, time rows)
    as ilp-model.c builds them, from the rows: buffers by start, pairs that
    overlap, maximal sets live at one start, triples live at one time."""
    bufs = sorted([(lo, up, s // g) for _, lo, up, s in rows if s and up > lo], key=lambda b: b[0])
    m = len(bufs)
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m) if bufs[b][0] < bufs[a][1]]
    twin = [bufs[a] == bufs[b] for a, b in pairs]
    has_twin = [any(bufs[k] == bufs[a] for k in range(m) if k != a) for a in range(m)]
    mirror = any(not has_twin[a] and not has_twin[b] for a, b in pairs)
    cliques = []
    starts = sorted(set(b[0] for b in bufs))
    for k, t in enumerate(starts):
        live = [a for a in range(m) if bufs[a][0] <= t < bufs[a][1]]
        nxt = starts[k + 1] if k + 1 < len(starts) else None
        if nxt is None or any(bufs[a][1] <= nxt for a in live):
            cliques.append(live)
    triples = sum(1 for a, b in pairs for c in range(b + 1, m) if bufs[c][0] < min(bufs[a][1], bufs[b][1]))
    order_rows = m + 2 * len(pairs) + 2 * sum(len(c) for c in cliques) + triples
    time_bin = sum(M - s for _, _, s in bufs)
    time_rows = 2 * m + sum(max(0, M - s - 1) for _, _, s in bufs) + 1 + (M - 1) + len(cliques) * M
    return len(pairs), sum(twin) + mirror, m + 2 * len(pairs), order_rows, time_bin, time_rows


def main():
    rc, so, _ = run_tool(MEMLENS, "strategies")
    if not re.search(r"^ilp ", so, re.M):
        print("1..0 # SKIP ilp not built (no GLPK)")
        return 0
    tmp = tempfile.mkdtemp(prefix="memlens-ilp-models-")
    rnd = random.Random(30)
    kept = tries = 0
    while kept < 6 and tries < 400:
        tries += 1
        rows = instance(rnd)
        path = os.path.join(tmp, "i%d.csv" % tries)
        with open(path, "w") as f:
            f.write("id,lower,upper,size\n" + "".join("%d,%d,%d,%d\n" % r for r in rows))
        _, h = plan(path, os.path.join(tmp, "h.json"), "hybrid")
        if h["peak"] <= live_peak(rows):
            continue   # ilp stops at greedy's plan: no model to check
        kept += 1
        _, e = plan(path, os.path.join(tmp, "e.json"), "exact", "--options", "mode=minimize")
        ok(e.get("optimal"), "instance %d: exact proves %s" % (tries, e.get("peak")))
        g = 0
        for r in rows:
            g = math.gcd(g, r[3])
        pairs, fixed, bigm_rows, order_rows, time_bin, time_rows = model_counts(rows, g, h["peak"] // g)
        want = {"bigm": (pairs, 0, bigm_rows), "order": (pairs, fixed, order_rows), "time": (time_bin, 0, time_rows)}
        for model in ("bigm", "order", "time"):
            label = "instance %d (%d buffers, live peak %d), model %s" % (tries, len(rows), live_peak(rows), model)
            out = os.path.join(tmp, "%d-%s.csv" % (tries, model))
            rc, p = plan(path, out, "ilp", "--options", "model=" + model)
            ok(rc == 0 and p.get("optimal") and p.get("peak") == e.get("peak"),
               "%s: proves exact's optimum %s (got %s)" % (label, e.get("peak"), p.get("peak") or p))
            if rc == 0:
                check_csv(label, rows, out, p["peak"])
            got = re.match(r"model %s: (\d+) binaries \((\d+) fixed by symmetry\), (\d+) rows" % model, p.get("note", ""))
            ok(got and tuple(int(v) for v in got.groups()) == want[model],
               "%s: binaries, fixed, rows %s as counted from the rows %s" % (label, got and got.groups(), want[model]))
    ok(kept == 6, "6 instances with greedy above the bound (of %d drawn)" % tries)
    # an order model whose clique rows outgrow 100 x max-pairs entries is
    # not built: the note says so and the plan is greedy's
    rows = [(i, i, i + 100, 1024 * (1 + i % 7)) for i in range(200)]
    path = os.path.join(tmp, "wide.csv")
    with open(path, "w") as f:
        f.write("id,lower,upper,size\n" + "".join("%d,%d,%d,%d\n" % r for r in rows))
    pairs = sum(1 for a in rows for b in rows if a[0] < b[0] and b[1] < a[2])
    cliques = [[r for r in rows if r[1] <= t < r[2]] for t in range(99, 200)]   # one per start from 99 on
    entries = sum(2 * len(c) ** 2 for c in cliques)
    _, h = plan(path, os.path.join(tmp, "h.json"), "hybrid")
    _, p = plan(path, os.path.join(tmp, "w.json"), "ilp", "--options", "model=order,max-pairs=%d" % pairs)
    ok(entries > 100 * pairs and p.get("peak") == h["peak"] and not p.get("optimal")
       and "the order model has over %d matrix entries" % (100 * pairs) in p.get("note", ""),
       "order model with %d clique-row entries > 100 x %d pairs: not built, greedy's plan (%s)" % (entries, pairs, p))
    rc, _, se = run_tool(MEMLENS, "plan", path, "-s", "ilp", "--options", "model=cubic", "-o", os.path.join(tmp, "x.json"))
    ok(rc == 2 and "bigm, order or time" in se and not os.path.exists(os.path.join(tmp, "x.json")),
       "an unknown model exits 2, names the known ones, writes nothing")
    shutil.rmtree(tmp)
    return done()


if __name__ == "__main__":
    sys.exit(main())
