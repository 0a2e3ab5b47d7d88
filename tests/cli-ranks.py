#!/usr/bin/env python3
"""The cross-rank view of stats|compare|diagnose FILE... --jobs N (issue 28
item 3), checked against Python's own reading of the per-rank snapshot
files it writes here (pickle): peak reserved and allocated per rank, the
imbalance (max / mean, which rank), the ranks that recorded an OOM and
when against the first, and the call site whose bytes at the allocated
peak differ most between the heaviest rank and the median one.

    cli-ranks.py MEMLENS"""
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples"))
from snaplib import ok, done, size, skip  # noqa: E402
from make_ranks import make  # noqa: E402  (the README's samples/ranks come from it too)

memlens = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="memlens-ranks-")
def site(fr):
    u = [f for f in fr if f["filename"].startswith("/home/")]
    return "%s:%d:%s" % (u[0]["filename"], u[0]["line"], u[0]["name"])


def figures(snap):
    """Python's reading of one rank: peaks, first OOM (ns), bytes per site
    at the first allocated peak (None when the peak is reached twice)."""
    tr = snap["device_traces"][0]
    dump_res = sum(s["total_size"] for s in snap["segments"])
    dump_alloc = sum(b["size"] for s in snap["segments"] for b in s["blocks"] if b["state"] == "active_allocated")
    res = dump_res - sum(e["size"] for e in tr if e["action"] == "segment_alloc") \
        + sum(e["size"] for e in tr if e["action"] == "segment_free")
    alloc = dump_alloc - sum(e["size"] for e in tr if e["action"] == "alloc") \
        + sum(e["size"] for e in tr if e["action"] == "free_completed")
    peak_res, peak_alloc, live, at_peak, times, oom = res, alloc, {}, {}, 0, None
    for e in tr:
        if e["action"] == "segment_alloc":
            res += e["size"]
        elif e["action"] == "segment_free":
            res -= e["size"]
        elif e["action"] == "alloc":
            alloc += e["size"]
            live[e["addr"]] = e
        elif e["action"] == "free_completed":
            alloc -= e["size"]
            del live[e["addr"]]
        elif e["action"] == "oom" and oom is None:
            oom = e["time_us"] * 1000
        peak_res = max(peak_res, res)
        if alloc > peak_alloc:
            peak_alloc, times = alloc, 1
            at_peak = {}
            for b in live.values():
                at_peak[site(b["frames"])] = at_peak.get(site(b["frames"]), 0) + b["size"]
        elif alloc == peak_alloc and e["action"] == "alloc":
            times += 1
    return {"res": peak_res, "alloc": peak_alloc, "oom": oom, "sites": at_peak if times == 1 else None}


files, figs = [], []
for r in range(5):
    seed = 100 + r
    while True:
        snap = make(r, seed)
        f = figures(snap)
        if f["sites"] is not None:
            break
        seed += 1000
    path = os.path.join(tmp, "trace_rank_%d.pickle" % r)
    with open(path, "wb") as fp:
        pickle.dump(snap, fp, protocol=4)
    files.append(path)
    figs.append(f)

p = subprocess.run([memlens, "stats", "--jobs", "2", "--json"] + files, capture_output=True, text=True)
ok(p.returncode == 1, "stats --jobs 2 --json of 5 ranks, two of them with an OOM: exit 1, as stats of one (%d: %s)"
   % (p.returncode, p.stderr.strip()))
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"files": [], "cross_rank": {}}
rows, cr = doc["files"], doc["cross_rank"]
ok([r["rank"] for r in rows] == [0, 1, 2, 3, 4], "the rank from each file's name (trace_rank_N)")
for r, (row, f) in enumerate(zip(rows, figs)):
    ok(row["peak_reserved"] == f["res"] and row["peak_allocated"] == f["alloc"],
       "rank %d: peak reserved %d, allocated %d = Python's %d, %d"
       % (r, row["peak_reserved"], row["peak_allocated"], f["res"], f["alloc"]))
n = len(figs)
for key, name in (("res", "peak_reserved"), ("alloc", "peak_allocated")):
    vals = [f[key] for f in figs]
    top = vals.index(max(vals))
    mean = sum(vals) / n
    got = cr.get(name, {})
    ok(got.get("max") == max(vals) and got.get("max_at", {}).get("rank") == top
       and abs(got.get("imbalance", 0) - max(vals) / mean) < 1e-4 and abs(got.get("mean", 0) - mean) < 0.1,
       "%s: max %d on rank %d, imbalance %.4f = Python's (%s)" % (name, max(vals), top, max(vals) / mean, got))
oom = [(r, f["oom"]) for r, f in enumerate(figs) if f["oom"] is not None]
first = min(t for _, t in oom)
ok([(o["rank"], o["first_oom_ns"], o["after_first_oom_ns"]) for o in cr.get("oom", [])]
   == [(r, t, t - first) for r, t in oom],
   "OOM: ranks %s, each after the first by Python's offsets (%s)" % ([r for r, _ in oom], cr.get("oom")))
order = sorted(range(n), key=lambda r: (figs[r]["alloc"], r))
heavy, median = order[-1], order[(n - 1) // 2]
hs, ms = figs[heavy]["sites"], figs[median]["sites"]
gap = sorted(set(hs) | set(ms), key=lambda s: (-abs(hs.get(s, 0) - ms.get(s, 0)), s))[0]
g = cr.get("site_gap", {})
ok(g.get("heaviest", {}).get("rank") == heavy and g.get("median", {}).get("rank") == median,
   "heaviest rank %d, median rank %d, as Python orders the peaks" % (heavy, median))
ok(g.get("site") == gap and g.get("heaviest_bytes") == hs.get(gap, 0) and g.get("median_bytes") == ms.get(gap, 0),
   "the call site that differs most: %s, %d against %d bytes (%s)" % (gap, hs.get(gap, 0), ms.get(gap, 0), g))

p = subprocess.run([memlens, "stats", "--jobs", "3"] + files, capture_output=True, text=True)
out = p.stdout
top = max(range(n), key=lambda r: (figs[r]["alloc"], -r))
mean = sum(f["alloc"] for f in figs) / n
ok(p.returncode == 1 and "== across the ranks (5 of 5 files read) ==" in out
   and ("peak allocated: max %s on rank %d, mean %s: imbalance (max / mean) %.3fx"
        % (size(figs[top]["alloc"]), top, size(int(mean + 0.5)), figs[top]["alloc"] / mean)) in out,
   "text: the allocated peak's line as Python computes it")
ok(("OOM:            rank 1 +%.3f s, rank 3 +%.3f s" % ((figs[1]["oom"] - first) / 1e9, (figs[3]["oom"] - first) / 1e9))
   in out, "text: the OOM ranks, each after the first")
ok(("%s holds %s there, %s on the median" % (gap, size(hs.get(gap, 0)), size(ms.get(gap, 0)))) in out,
   "text: the call site that differs most")

other = os.path.join(tmp, "worker-b.pickle")
os.link(files[3], other)   # rank 3 records an OOM: diagnose explains it
p = subprocess.run([memlens, "diagnose", "--jobs", "2", "--json", files[1], other], capture_output=True, text=True)
doc = json.loads(p.stdout) if p.stdout.startswith("{") else {"files": []}
ok([r.get("rank") for r in doc["files"]] == [1, None] and "cross_rank" in doc and doc["cross_rank"] is None,
   "diagnose --jobs --json: a file whose name says no rank has rank null; not ranks of one job: cross_rank null (%s)"
   % p.stdout[:200])
p = subprocess.run([memlens, "stats", "--jobs", "2", files[1], other], capture_output=True, text=True)
ok("== across the ranks: not shown ==" in p.stdout and "peak allocated:" not in p.stdout,
   "text: two files that are not ranks of one job get no view, and are told why (%s)" % p.stdout[-300:])
alike = [os.path.join(tmp, "snapshot_%d.pickle" % k) for k in (0, 1)]
os.link(files[2], alike[0])
os.link(files[4], alike[1])
p = subprocess.run([memlens, "stats", "--jobs", "2", "--json"] + alike, capture_output=True, text=True)
cr = json.loads(p.stdout).get("cross_rank") if p.returncode == 0 else None
pk = [figs[2]["alloc"], figs[4]["alloc"]]
top = 0 if pk[0] >= pk[1] else 1   # the first of equal peaks
ok(cr is not None and cr.get("peak_allocated", {}).get("max") == pk[top]
   and cr["peak_allocated"]["max_at"]["file"] == alike[top],
   "names alike but for their numbers (snapshot_0, snapshot_1): the view, max %d on %s (%s)"
   % (pk[top], os.path.basename(alike[top]), cr))
p = subprocess.run([memlens, "compare", "--jobs", "2", "-s", "best-fit", files[0], files[2]],
                   capture_output=True, text=True)
ok("== across the ranks (2 of 2 files read) ==" in p.stdout and "on rank 2" in p.stdout,
   "compare --jobs: the view after the summary")
p = subprocess.run([memlens, "stats", "--jobs", "2", files[0], os.path.join(tmp, "rank9.pickle")],
                   capture_output=True, text=True)
ok(p.returncode == 2 and "(1 of 2 files read)" in p.stdout, "a file that fails is left out of the view (%s)" % p.stdout[-200:])

# a Kineto trace names its rank itself (distributedInfo.rank, as torch.profiler writes it): it wins over the name
kin = []
for r, (name, rank) in enumerate([("host-a.json", 5), ("host-b.json", "6"), ("node_rank9.json", 2)]):
    evs = []
    for k in range(3 + r):
        evs.append({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10 + k,
                    "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096 * (k + 1), "Bytes": 512 * (r + 1),
                             "Total Allocated": 512 * (r + 1) * (k + 1), "Total Reserved": 1 << 21}})
    path = os.path.join(tmp, name)
    with open(path, "w") as fp:
        json.dump({"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 8}, "traceEvents": evs}, fp)
    kin.append(path)
p = subprocess.run([memlens, "stats", "--jobs", "2", "--json"] + kin, capture_output=True, text=True)
rows = json.loads(p.stdout)["files"] if p.returncode == 0 else []
ok([r.get("rank") for r in rows] == [5, None, 2],
   "Kineto: the rank from distributedInfo.rank (5; \"6\", a string, is none; 2 over the name's 9) (%s)"
   % [r.get("rank") for r in rows])

twin = os.path.join(tmp, "twin_rank7.pickle")
shutil.copy(files[0], twin)
p = subprocess.run([memlens, "stats", "--jobs", "2", "--json", files[0], twin], capture_output=True, text=True)
g = json.loads(p.stdout)["cross_rank"]["site_gap"] if p.returncode == 0 else {}
ok(g.get("site") == "" and g.get("heaviest_bytes") == 0 and g.get("median_bytes") == 0,
   "two equal ranks: no call site differs (%s)" % g)
p = subprocess.run([memlens, "stats", "--jobs", "2", files[0], twin], capture_output=True, text=True)
ok("no call site holds other bytes at their peaks" in p.stdout, "text: two equal ranks, no site named")

# the same view as a report: memlens report FILE... -o R.html (one figure: each rank's peaks, the OOM ranks
# marked) and -o R.json (stats --json's object), checked against Python's reading of the pickles
import html.parser
class Bars(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.bars, self.cur, self.figure = [], None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "data-ranks" in a:
            self.figure = int(a["data-ranks"])
        if tag == "data" and "data-reserved" in a:
            self.cur = [int(a["value"]), int(a["data-reserved"]), int(a["data-ooms"]), ""]
    def handle_data(self, d):
        if self.cur is not None:
            self.cur[3] += d
    def handle_endtag(self, tag):
        if tag == "data" and self.cur is not None:
            self.bars.append(tuple(self.cur))
            self.cur = None
report = os.path.join(tmp, "ranks.html")
p = subprocess.run([memlens, "report", "--jobs", "2", "-o", report] + files, capture_output=True, text=True)
want = []
for r, path in enumerate(files):
    with open(path, "rb") as fp:
        snap = pickle.load(fp)
    ooms = sum(1 for e in snap["device_traces"][0] if e["action"] == "oom")
    want.append((figs[r]["alloc"], figs[r]["res"], ooms, "rank %d" % r))
if "built without cairo" in p.stderr:   # a core build writes no HTML: .json below still runs
    for what in ("report FILE... -o R.html", "the figure's bars", "the bars in rank order", "one SVG figure"):
        skip(what + ": this memlens has no HTML report (built without cairo)")
else:
    ok(p.returncode == 1 and os.path.exists(report),
       "report FILE... -o R.html: written, exit 1 (ranks 1 and 3 recorded an OOM) (%s)" % p.stderr.strip()[-300:])
    bars = Bars()
    bars.feed(open(report).read() if os.path.exists(report) else "")
    ok(bars.figure == 5 and bars.bars == want,
       "the figure: one bar pair per rank, peak allocated, reserved and OOMs = Python's %s (%s)" % (want, bars.bars))
    p = subprocess.run([memlens, "report", "--quiet", "-o", report] + files[::-1], capture_output=True, text=True)
    again = Bars()
    again.feed(open(report).read() if p.returncode == 1 else "")
    ok(again.bars == want, "files given in another order: the bars still in rank order (%s)" % [b[3] for b in again.bars])
    svg = open(report).read() if os.path.exists(report) else ""
    ok(svg.count("<svg") == 1 and "recorded an OOM" in svg, "one SVG figure, its legend naming the OOM mark")
jr = os.path.join(tmp, "ranks.json")
p = subprocess.run([memlens, "report", "-o", jr] + files, capture_output=True, text=True)
st = subprocess.run([memlens, "stats", "--json"] + files, capture_output=True, text=True)
got = json.load(open(jr)) if os.path.exists(jr) else {}
def no_exit(doc):
    """the object without the files' exit statuses (1 where a rank recorded an OOM)"""
    return dict(doc, files=[{k: v for k, v in f.items() if k != "exit"} for f in doc.get("files", [])])
ok(p.returncode == 1 and no_exit(got) == no_exit(json.loads(st.stdout))
   and [f["exit"] for f in got.get("files", [])] == [0, 1, 0, 1, 0],
   "report FILE... -o R.json: stats --json's object (files, cross_rank), each OOM rank's exit 1")
ok([(f["peak_allocated"], f["peak_reserved"], f["ooms"]) for f in got.get("files", [])] == [w[:3] for w in want],
   "report JSON: each file's peaks and OOMs = Python's")
bad = os.path.join(tmp, "unrelated.json")   # .json: a core build refuses it too
p = subprocess.run([memlens, "report", "-o", bad, files[1], other], capture_output=True, text=True)
ok(p.returncode == 2 and not os.path.exists(bad) and "ranks of one job" in p.stderr and other in p.stderr,
   "report of files that are not ranks of one job: exit 2, named and said why, nothing written (%s)" % p.stderr.strip()[-200:])
p = subprocess.run([memlens, "report", "--sweep", "x=1,2", "-o", bad] + files[:2], capture_output=True, text=True)
ok(p.returncode == 2 and not os.path.exists(bad) and "--sweep" in p.stderr, "report FILE... --sweep is refused")

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(done())
