#!/usr/bin/env python3
"""A planning CSV read as buffers only (issue 30, target 3): `plan` with an
offline planner and `check` of a plan file build the buffers from the rows
without the trace's events (ml_buffers_load_csv). Checked here against
Python's own reading of the rows: every plan row keeps its input's lower,
upper and size, offsets are aligned, no two buffers share bytes while both
live, the JSON's peak and lower bound are Python's; ids are told apart as
text once one is not a plain decimal; the errors name the line; and the
memory `memlens plan` holds stays within 200 bytes a buffer.

    cli-csv-buffers.py MEMLENS
"""
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, run_tool, skip, live_peak  # noqa: E402

MEMLENS = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="memlens-csv-buffers-")


def write(name, header, rows):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(x) for x in r) + "\n")
    return path


def align_up(v, a):
    return (v + a - 1) // a * a


def check_plan(label, rows, align, plan_path, summary):
    want = {str(r[0]): r for r in rows}
    with open(plan_path) as f:
        got = list(csv.DictReader(f))
    ok(sorted(g["id"] for g in got) == sorted(want), "%s: the plan has every id once" % label)
    same = all((int(g["lower"]), int(g["upper"]), int(g["size"])) == tuple(want[g["id"]][1:4]) for g in got)
    ok(same, "%s: each row keeps its lower, upper and size" % label)
    placed = [(int(g["lower"]), int(g["upper"]), int(g["offset"]), align_up(int(g["size"]), align)) for g in got]
    ok(all(p[2] % align == 0 for p in placed), "%s: offsets are multiples of %d" % (label, align))
    clash = [(a, b) for i, a in enumerate(placed) for b in placed[i + 1:]
             if a[0] < b[1] and b[0] < a[1] and a[2] < b[2] + b[3] and b[2] < a[2] + a[3]]
    ok(not clash, "%s: no two live buffers share bytes (%s)" % (label, clash[:1]))
    peak = max((p[2] + p[3] for p in placed), default=0)
    ok(summary["peak"] == peak, "%s: peak %d is the top of the offsets (%d)" % (label, summary["peak"], peak))
    lb = live_peak(rows, align)
    ok(summary["lower_bound"] == lb, "%s: lower bound %d is the live-bytes peak (%d)" % (label, summary["lower_bound"], lb))


def plan(path, out, *extra):
    return run_tool(MEMLENS, "plan", path, "-s", "greedy-size", "-o", out, "--json", *extra)


# --- plans of random instances, rows out of order ---------------------------
rng = random.Random(30)
for case in range(6):
    n = rng.randint(20, 120)
    rows = []
    for i in range(n):
        lo = rng.randint(0, 300)
        rows.append((i + 1, lo, lo + rng.randint(1, 60), rng.randint(1, 5000)))
    rng.shuffle(rows)
    aligned = case % 2 == 1
    header = ["id", "lower", "upper", "size"] + (["alignment"] if aligned else [])
    body = [r + ((rng.choice([1, 64, 256]),) if aligned else ()) for r in rows]
    if aligned:
        body[0] = body[0][:4] + (256,)
    path = write("r%d.csv" % case, header, body)
    for extra, align in (((), 256 if aligned else 1), (("--align", "512"), 512)):
        label = "random %d (%d buffers%s)" % (case, n, ", align %d" % align if align > 1 else "")
        out = os.path.join(TMP, "p%d-%d.csv" % (case, align))
        rc, so, se = plan(path, out, *extra)
        if not ok(rc == 0, "%s: plan exits 0 (%s)" % (label, se.strip())):
            continue
        check_plan(label, rows, align, out, json.loads(so))
        rc, so, se = run_tool(MEMLENS, "check", path, out, *extra)
        ok(rc == 0 and "valid" in so + se, "%s: check finds the plan valid (%d: %s)" % (label, rc, (so + se).strip()))

# --- ids: numbers while they are plain decimals, then texts -------------------
path = write("texts.csv", ["id", "lower", "upper", "size"], [(1, 0, 4, 100), (2, 1, 5, 100), ("b", 2, 6, 100), ("01", 3, 7, 100)])
out = os.path.join(TMP, "texts-plan.csv")
rc, so, se = plan(path, out)
ok(rc == 0, "ids 1, 2, b, 01: four buffers (01 is another id once one is a text) (%s)" % se.strip())
if rc == 0:
    with open(out) as f:
        ids = sorted(r["id"] for r in csv.DictReader(f))
    ok(ids == ["01", "1", "2", "b"], "ids 1, 2, b, 01: the plan names them as the file does (%s)" % ids)
for name, ids, line, first, shown in (("numbers.csv", [5, 6, 5], 4, 2, "5"),
                                      ("leading.csv", [1, "01"], 3, 2, "1"),
                                      ("switch.csv", [7, "x", 7], 4, 2, "7")):
    rows = [(ids[k], k, k + 3, 64) for k in range(len(ids))]
    path = write(name, ["id", "lower", "upper", "size"], rows)
    out = os.path.join(TMP, "dup.csv")
    rc, so, se = plan(path, out)
    ok(rc == 2 and "%s:%d: duplicate id %s (first on line %d)" % (path, line, shown, first) in se,
       "ids %s: exit 2 naming line %d and line %d (%d: %s)" % (ids, line, first, rc, se.strip()))
    ok(not os.path.exists(out), "ids %s: no plan written" % ids)

# --- plan files: rows in any order, matched by id text ------------------------


def plan_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def write_plan(name, rows):
    return write(name, ["id", "lower", "upper", "size", "offset"],
                 [(r["id"], r["lower"], r["upper"], r["size"], r["offset"]) for r in rows])


for trace, plan_csv in ((os.path.join(TMP, "r0.csv"), os.path.join(TMP, "p0-1.csv")),
                        (os.path.join(TMP, "texts.csv"), os.path.join(TMP, "texts-plan.csv"))):
    label = os.path.basename(trace)
    rows = plan_rows(plan_csv)
    rng.shuffle(rows)
    rc, so, se = run_tool(MEMLENS, "check", trace, write_plan("shuffled.csv", rows))
    ok(rc == 0, "%s: a plan with its rows shuffled is valid (%d: %s)" % (label, rc, (so + se).strip()))
    # two rows that live together moved to one offset: Python finds them
    pair = next(((a, b) for a in rows for b in rows if a is not b and int(a["lower"]) < int(b["upper"])
                 and int(b["lower"]) < int(a["upper"])), None)
    if pair:
        moved = [dict(r, offset=pair[0]["offset"]) if r is pair[1] else r for r in rows]
        rc, so, se = run_tool(MEMLENS, "check", trace, write_plan("clash.csv", moved))
        names = [x["id"] for x in pair]   # as the file writes them
        ok(rc == 1 and all(("buffer %s " % x) in so + se for x in names),
           "%s: buffers %s and %s at one offset: exit 1 naming both (%d)" % (label, pair[0]["id"], pair[1]["id"], rc))
    first = rows[0]
    rc, so, se = run_tool(MEMLENS, "check", trace, write_plan("twice.csv", rows + [first]))
    ok(rc == 2 and "buffer %s appears twice (first on line 2)" % first["id"] in se,
       "%s: a row twice: exit 2 naming the first line (%d: %s)" % (label, rc, se.strip()))
    renamed = [dict(r, id="0" + r["id"]) if r is first else r for r in rows]
    rc, so, se = run_tool(MEMLENS, "check", trace, write_plan("renamed.csv", renamed))
    ok(rc == 2 and ":2: buffer 0%s: the trace has no buffer with this id" % first["id"] in se,
       "%s: id 0%s is not id %s: exit 2 (%d: %s)" % (label, first["id"], first["id"], rc, se.strip()))

# "01" and "1" are two buffers in texts.csv: a clash between them names both
# as the file writes them, not "buffer 1" twice
rows = plan_rows(os.path.join(TMP, "texts-plan.csv"))
one = next(r for r in rows if r["id"] == "1")
moved = [dict(r, offset=one["offset"]) if r["id"] == "01" else r for r in rows]
rc, so, se = run_tool(MEMLENS, "check", os.path.join(TMP, "texts.csv"), write_plan("clash01.csv", moved))
ok(rc == 1 and "buffer 1 [0, 4) is still live when buffer 01 is placed" in so,
   "01 over 1: the conflict names buffer 1 and buffer 01 (%d: %s)" % (rc, so.strip()))

# --- errors in the buffers name the row's line ---------------------------------
big = 2 ** 64 - 1
for label, rows, extra, text in (
        ("a size that overflows when aligned", [(1, 0, 2, 10), (2, 0, 3, big)], ("--align", "512"),
         "line 3: size %d overflows when aligned to 512" % big),
        ("an upper at 2^64-1", [(1, 0, 2, 10), (2, 1, big, 10)], (),
         "line 3: tick %d leaves no room for the end of the trace" % big),
        ("sizes past 2^60 in all", [(1, 0, 2, 2 ** 60), (2, 5, 6, 1)], (),
         "line 3: size 1 brings the buffers' total past 2^60 bytes")):
    path = write("bad.csv", ["id", "lower", "upper", "size"], rows)
    out = os.path.join(TMP, "bad-plan.csv")
    rc, so, se = plan(path, out, *extra)
    ok(rc == 2 and (path + ": " + text) in se, "%s: exit 2, the file and the line named (%d: %s)" % (label, rc, se.strip()))
    ok(not os.path.exists(out), "%s: no plan written" % label)

# --- memory: at most 200 bytes a buffer (issue 30) ----------------------------


def max_rss_kib(*args):
    """The peak resident memory of one memlens run (KiB), and its status."""
    p = subprocess.Popen([MEMLENS] + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    return usage.ru_maxrss, os.waitstatus_to_exitcode(status)


# written row by row: a child's peak counts the parent's memory at the
# fork, so this process stays small
n = 300000
path, tiny = os.path.join(TMP, "big.csv"), os.path.join(TMP, "tiny.csv")
with open(path, "w") as f, open(tiny, "w") as g:
    f.write("id,lower,upper,size\n")
    g.write("id,lower,upper,size\n")
    tick = 0
    for i in range(n):
        tick += rng.randint(0, 1)
        row = "%d,%d,%d,%d\n" % (i + 1, tick, tick + rng.choice([1, 2, 3, 5, 8, 400]), rng.choice([512, 4096, 65536, 1 << 20]))
        f.write(row)
        if i < 10:
            g.write(row)
if os.environ.get("MEMLENS_SANITIZED") == "true":
    # ASan's shadow memory and quarantine multiply what a buffer costs
    skip("plan's bytes a buffer: a sanitizer build")
else:
    base, rc0 = max_rss_kib("plan", tiny, "-s", "greedy-size", "-o", os.path.join(TMP, "tiny-plan.csv"))
    peak, rc1 = max_rss_kib("plan", path, "-s", "greedy-size", "-o", os.path.join(TMP, "big-plan.csv"))
    per = (peak - base) * 1024.0 / n
    ok(rc0 == 0 and rc1 == 0 and per <= 200, "plan of %d buffers holds %.0f bytes a buffer above a 10-buffer run "
       "(%d KiB, %d KiB; at most 200)" % (n, per, peak, base))
shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
