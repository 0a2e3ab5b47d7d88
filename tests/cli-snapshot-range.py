#!/usr/bin/env python3
"""--range T0:T1 on a snapshot against Python's own pickle.

A snapshot is written here with pickle.dumps as torch lays it out
(snaplib.make: buffers allocated and freed along the trace, some live at
dump time); for each window the numbers memlens
prints (events by kind, buffers cut at the window's edges, the peak live
bytes in the window, its ticks) are computed again from the Python
objects by replaying the trace. Then the ranges memlens must refuse.
argv: memlens binary, source root. TAP output.
"""
import json, os, pickle, subprocess, sys, tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, make  # noqa: E402

memlens = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="memlens-range-")


def window(trace, lo, hi):
    """The entries [lo, hi) of the trace (nothing is live before entry 0
    in these files): what memlens must show for them."""
    live = {}
    for e in trace[:lo]:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    carried = set(live)
    cur = sum(live.values())
    peak = cur
    allocs = frees = 0
    for e in trace[lo:hi]:
        if e["action"] == "alloc":
            live[e["addr"]] = e["size"]
            cur += e["size"]
            allocs += 1
        elif e["action"] == "free_completed":
            cur -= live.pop(e["addr"])
            frees += 1
        peak = max(peak, cur)
    # live at the end of the window and freed later: cut there
    later = set()
    for e in trace[hi:]:
        if e["action"] == "free_completed" and e["addr"] in live:
            later.add(e["addr"])
    carried_alive = len(carried)
    return {"alloc": allocs + carried_alive, "free": frees + len(later), "clipped": len(carried | later),
            "free_requested": sum(e["action"] == "free_requested" for e in trace[lo:hi]),
            "peak": peak, "carried": carried_alive, "cut_end": len(later),
            "never_freed": len([a for a in live if a not in later])}


def stats(path, *args):
    p = subprocess.run([memlens, "stats", "--json", path] + list(args), capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0 else p.stderr)


snap = make(7, [6000], step=(1, 4))
trace = snap["device_traces"][0]
path = os.path.join(tmp, "w.pickle")
with open(path, "wb") as f:
    f.write(pickle.dumps(snap, protocol=4))
t0 = trace[0]["time_us"]


def by_time(a_us, b_us):
    lo = next((i for i, e in enumerate(trace) if e["time_us"] - t0 >= a_us), len(trace))
    hi = next((i for i in range(lo, len(trace)) if trace[i]["time_us"] - t0 > b_us), len(trace))
    return lo, hi


cases = [("1000:2000", 999, 2000), (":1500", 0, 1500), ("4000:", 3999, len(trace)), ("2500:2500", 2499, 2500)]
span = trace[-1]["time_us"] - t0
a, b = span // 4, span // 2
cases.append(("%dms:%dms" % (a // 1000, b // 1000),) + by_time(a // 1000 * 1000, b // 1000 * 1000))
cases.append(("%gs:" % (a / 1e6),) + by_time(a, span + 1))
cases.append((":%dus" % b,) + by_time(0, b))
for spec, lo, hi in cases:
    rc, out = stats(path, "--range", spec)
    ok(rc == 0, "--range %s loads" % spec)
    if rc:
        print("# " + out)
        continue
    w = window(trace, lo, hi)
    k = out["event_kinds"]
    ok(k.get("alloc", 0) == w["alloc"] and k.get("free", 0) == w["free"]
       and k.get("free_requested", 0) == w["free_requested"],
       "--range %s: entries %d..%d: %d allocs (%d carried in), %d frees (%d cut at the end), %d free_requested, as Python"
       % (spec, lo, hi - 1, w["alloc"], w["carried"], w["free"], w["cut_end"], w["free_requested"]))
    ok(out["lower_bound"] == w["peak"], "--range %s: peak live in the window %d (Python %d)" % (spec, out["lower_bound"], w["peak"]))
    ok(out["window"]["clipped"] == w["clipped"],
       "--range %s: %d buffers cut at the edges (Python %d)" % (spec, out["window"]["clipped"], w["clipped"]))
    ok(out["never_freed"] == w["never_freed"], "--range %s: %d never freed (live at dump time)" % (spec, w["never_freed"]))
    ok(out["window"]["last_tick"] == hi and out["window"]["state_tick"] == lo,
       "--range %s: the window's ticks %d .. %d are the file's" % (spec, out["window"]["state_tick"], out["window"]["last_tick"]))
    ok(out["devices"][0]["entries"] == len(trace), "--range %s: the device table still counts every entry" % spec)

# the whole range is the whole file
rc0, whole = stats(path)
rc1, all_ = stats(path, "--range", "0:")
ok(rc0 == 0 and rc1 == 0 and all_.pop("window")["clipped"] == 0 and all_ == whole,
   "--range 0: is the whole load, nothing clipped")

# refused, the value named, exit 2
for spec, word in [("5:3", "after the end"), ("abc", "abc"), ("1s:200", "the same way"), ("1x:2", "1x"),
                   (":", "give a start"), ("1000", "T0:T1"), ("-5:10", "-5"), ("1:2:3", "1:2:3"),
                   ("99999999999999999999999:", "too large"), ("9000:", "no trace entry")]:
    p = subprocess.run([memlens, "stats", path, "--range", spec], capture_output=True, text=True)
    ok(p.returncode == 2 and word in p.stderr and not p.stdout,
       "--range %s: refused, exit 2 (%s)" % (spec, p.stderr.strip()))
csv = os.path.join(os.sys.argv[2], "samples")
samples = [os.path.join(csv, f) for f in sorted(os.listdir(csv)) if f.endswith(".jsonl")] if os.path.isdir(csv) else []
if samples:
    p = subprocess.run([memlens, "stats", samples[0], "--range", "1:10"], capture_output=True, text=True)
    ok(p.returncode == 2 and "--range" in p.stderr and "snapshot" in p.stderr,
       "--range on a JSONL trace: refused, exit 2 (%s)" % p.stderr.strip())
for cmd in (["compare", "-s", "caching"], ["diagnose", "--capacity", "1G"], ["report", "-o", os.path.join(tmp, "r.md")],
            ["plan", "-s", "best-fit", "-o", os.path.join(tmp, "p.csv")], ["check"]):
    p = subprocess.run([memlens] + cmd + [path, "--range", "1000:2000"], capture_output=True, text=True)
    ok(p.returncode in (0, 1) and "Traceback" not in p.stderr, "%s --range 1000:2000 runs (exit %d)" % (cmd[0], p.returncode))
p = subprocess.run([memlens, "diagnose", path, "--range", "2:1"], capture_output=True, text=True)
ok(p.returncode == 2 and "2:1" in p.stderr, "diagnose refuses a bad range too")

import shutil
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(done())
