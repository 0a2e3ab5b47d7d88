#!/usr/bin/env python3
"""bench/ilp-windows.py — up to what size GLPK proves each ilp model.

    ilp-windows.py MEMLENS CHALLENGING_DIR [--sizes 10,20,30] [--windows 3]
                   [--time-limit 60] [--models bigm,order,time] [--whole C,K]

Cuts windows of k consecutive buffers (by lower) out of MiniMalloc's
challenging instances (A.1048576.csv ... K), at evenly spread positions,
and keeps those where hybrid's plan lies above the live-bytes bound (else
ilp stops at once with the greedy plan: nothing to prove). Each kept
window is planned by `ilp --options model=M --time-limit S` for each
model M and by `exact --options mode=minimize --time-limit S`; prints one
Markdown row per window (per model: its peak over exact's, ✓ when GLPK
proved it, its seconds, binaries/rows from its note; exact's peak and
seconds) and a summary row per size and model. --whole adds the whole
instances named. Run it under the suite lock (docs/performance.md).
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile


USAGE = "usage: ilp-windows.py MEMLENS DIR [--sizes a,b] [--windows N] [--time-limit S] [--models m,n] [--whole A,B]"


def args():
    a = {"sizes": [10, 15, 20, 25, 30, 40], "windows": 3, "limit": 60.0, "models": ["bigm", "order", "time"], "whole": []}
    rest = sys.argv[3:]
    while rest:
        k, v = rest[0], rest[1]
        rest = rest[2:]
        if k == "--sizes":
            a["sizes"] = [int(x) for x in v.split(",")]
        elif k == "--windows":
            a["windows"] = int(v)
        elif k == "--time-limit":
            a["limit"] = float(v)
        elif k == "--models":
            a["models"] = v.split(",")
        elif k == "--whole":
            a["whole"] = v.split(",")
        else:
            sys.exit(USAGE)
    return a


def plan(memlens, path, strategy, limit, *extra):
    out = path[:-4] + "." + strategy + ".json"
    r = subprocess.run([memlens, "plan", path, "-s", strategy, "--time-limit", str(limit), "--json", "-o", out] + list(extra),
                       capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit("%s %s: %s" % (path, strategy, r.stderr.strip()))
    return json.loads(r.stdout)


def main():
    if len(sys.argv) < 3:
        sys.exit(USAGE)
    memlens, folder, a = sys.argv[1], sys.argv[2], args()
    tmp = tempfile.mkdtemp(prefix="ilp-windows-")
    instances = []
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        with open(path) as f:
            rows = sorted(csv.DictReader(f), key=lambda r: int(r["lower"]))
        instances.append((os.path.basename(path).split(".")[0], rows))
    models = a["models"]
    print("| buffers | window | live-bytes bound | hybrid | exact peak | exact s | "
          + " | ".join("%s peak / optimum | %s s | %s binaries / rows" % (m, m, m) for m in models) + " |")
    print("|---:|---|---:|---:|---:|---:|" + "---:|---:|---:|" * len(models))
    for k in a["sizes"]:
        kept, tried = 0, 0
        proven = {m: 0 for m in models}
        worst = {m: 1.0 for m in models}
        for pos in [j / 20 for j in (10, 5, 15, 2, 18, 8, 12, 3, 17, 6, 14, 1, 19, 9, 11, 4, 16, 7, 13)]:
            for name, rows in instances:
                if kept == a["windows"] or len(rows) < k:
                    continue
                at = int((len(rows) - k) * pos)
                tried += 1
                if window(memlens, tmp, name, k, at, rows, a, proven, worst):
                    kept += 1
        for m in models:
            print("| %d | **%s: %d of %d proven** (worst plan %.3f × the optimum; %d windows cut, %d with greedy at the bound) |%s" % (
                k, m, proven[m], kept, worst[m], tried, tried - kept, " |" * (4 + 3 * len(models))), flush=True)
    for name, rows in instances:
        if name in a["whole"]:
            window(memlens, tmp, name, len(rows), 0, rows, a, {}, {})


def window(memlens, tmp, name, k, at, rows, a, proven, worst):
    """Plans one window (if hybrid is above the bound) with exact and each
    model; prints its row; counts the proofs. False when skipped."""
    path = os.path.join(tmp, "%s-%d-%d.csv" % (name, k, at))
    with open(path, "w") as f:
        f.write("id,lower,upper,size\n")
        for r in rows[at:at + k]:
            f.write("%s,%s,%s,%s\n" % (r["id"], r["lower"], r["upper"], r["size"]))
    h = plan(memlens, path, "hybrid", a["limit"])
    if h["peak"] <= h["lower_bound"]:
        return False
    e = plan(memlens, path, "exact", a["limit"], "--options", "mode=minimize")
    cells = []
    for m in a["models"]:
        i = plan(memlens, path, "ilp", a["limit"], "--options", "model=" + m)
        note = re.match(r"model \w+: (\d+) binaries \((\d+) fixed by symmetry\), (\d+) rows", i.get("note", ""))
        size = "%s (%s fixed) / %s" % note.groups() if note else i.get("note", "–")
        ratio = i["peak"] / e["peak"]
        if m in proven:
            proven[m] += bool(i["optimal"])
            worst[m] = max(worst[m], ratio)
        cells.append("%.3f%s | %.3f | %s" % (ratio, " ✓" if i["optimal"] else "", i["seconds"], size))
    label = "%s from buffer %d" % (name, at) if k < len(rows) else "all of %s" % name
    print("| %d | %s | %d | %d | %d%s | %.3f | %s |" % (
        k, label, h["lower_bound"], h["peak"], e["peak"], " ✓" if e["optimal"] else "", e["seconds"], " | ".join(cells)), flush=True)
    return True


if __name__ == "__main__":
    main()
