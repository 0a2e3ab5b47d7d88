#!/usr/bin/env python3
"""bench/ilp-windows.py — up to what size GLPK proves the big-M model.

    ilp-windows.py MEMLENS CHALLENGING_DIR [--sizes 10,20,30] [--windows 3]
                   [--time-limit 60]

Cuts windows of k consecutive buffers (by lower) out of MiniMalloc's
challenging instances (A.1048576.csv ... K), at evenly spread positions,
and keeps those where hybrid's plan lies above the live-bytes bound (else
ilp stops at once with the greedy plan: nothing to prove). Each kept
window is planned by `ilp --time-limit S` and by `exact --options
mode=minimize --time-limit S`; prints one Markdown row per window (ilp's
peak, whether it proved it optimal, its seconds; exact's) and a summary
row per size. Run it under the suite lock (docs/performance.md).
"""
import csv
import glob
import json
import os
import subprocess
import sys
import tempfile


def args():
    a = {"sizes": [10, 15, 20, 25, 30, 40], "windows": 3, "limit": 60.0}
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
        else:
            sys.exit("usage: ilp-windows.py MEMLENS DIR [--sizes a,b] [--windows N] [--time-limit S]")
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
        sys.exit("usage: ilp-windows.py MEMLENS DIR [--sizes a,b] [--windows N] [--time-limit S]")
    memlens, folder, a = sys.argv[1], sys.argv[2], args()
    tmp = tempfile.mkdtemp(prefix="ilp-windows-")
    instances = []
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        with open(path) as f:
            rows = sorted(csv.DictReader(f), key=lambda r: int(r["lower"]))
        instances.append((os.path.basename(path).split(".")[0], rows))
    print("| buffers | window | live-bytes bound | hybrid | ilp peak | ilp optimal | ilp s | exact peak | exact optimal | exact s |")
    print("|---:|---|---:|---:|---:|---|---:|---:|---|---:|")
    for k in a["sizes"]:
        kept, proven, tried = 0, 0, 0
        for pos in [j / 20 for j in (10, 5, 15, 2, 18, 8, 12, 3, 17, 6, 14, 1, 19, 9, 11, 4, 16, 7, 13)]:
            for name, rows in instances:
                if kept == a["windows"] or len(rows) < k:
                    continue
                at = int((len(rows) - k) * pos)
                path = os.path.join(tmp, "%s-%d-%d.csv" % (name, k, at))
                with open(path, "w") as f:
                    f.write("id,lower,upper,size\n")
                    for r in rows[at:at + k]:
                        f.write("%s,%s,%s,%s\n" % (r["id"], r["lower"], r["upper"], r["size"]))
                tried += 1
                h = plan(memlens, path, "hybrid", a["limit"])
                if h["peak"] <= h["lower_bound"]:
                    continue
                kept += 1
                i = plan(memlens, path, "ilp", a["limit"])
                e = plan(memlens, path, "exact", a["limit"], "--options", "mode=minimize")
                proven += bool(i["optimal"])
                print("| %d | %s from buffer %d | %d | %d | %d | %s | %.3f | %d | %s | %.3f |" % (
                    k, name, at, h["lower_bound"], h["peak"], i["peak"], "yes" if i["optimal"] else "no", i["seconds"],
                    e["peak"], "yes" if e["optimal"] else "no", e["seconds"]), flush=True)
        print("| %d | **%d of %d proven by ilp** (%d windows cut, %d with greedy at the bound) | | | | | | | | |" % (
            k, proven, kept, tried, tried - kept), flush=True)


if __name__ == "__main__":
    main()
