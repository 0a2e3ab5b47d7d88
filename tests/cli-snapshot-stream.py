#!/usr/bin/env python3
"""The streaming snapshot reader against Python's own pickle.

Snapshots are written here with pickle.dumps the way
torch.cuda.memory._dump_snapshot lays them out (frame dicts shared, one
frames list per traceback shared by free_requested / free_completed and by
the dump-time block of a live allocation, several APPENDS batches, several
devices, protocols 2 and 4); the numbers memlens prints are computed again
from the Python objects. argv: memlens binary, source root. TAP output.
"""
import json, os, pickle, subprocess, sys, tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, make  # noqa: E402

memlens = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="memlens-stream-")


def stats(path, dev):
    p = subprocess.run([memlens, "stats", "--json", "--device", str(dev), path], capture_output=True, text=True)
    return p.returncode, (json.loads(p.stdout) if p.returncode == 0 else p.stderr)


for proto in (4, 2, 1, 0):   # 0 and 1: the text opcodes (MARK DICT, PUT, INT, UNICODE ...)
    snap = make(proto, [4000, 2500, 0])
    path = os.path.join(tmp, "s%d.pickle" % proto)
    with open(path, "wb") as f:
        f.write(pickle.dumps(snap, protocol=proto))
    for dev, trace in enumerate(snap["device_traces"]):
        rc, out = stats(path, dev)
        ok(rc == 0, "protocol %d device %d loads" % (proto, dev))
        if rc:
            print("# " + out)
            continue
        allocs = [e for e in trace if e["action"] == "alloc"]
        k = out["event_kinds"]
        ok(k.get("alloc", 0) == len(allocs), "protocol %d device %d: %d allocs as Python counts" % (proto, dev, len(allocs)))
        ok(k.get("free_requested", 0) == sum(e["action"] == "free_requested" for e in trace)
           and k.get("free", 0) == sum(e["action"] == "free_completed" for e in trace),
           "protocol %d device %d: the frees as Python counts" % (proto, dev))
        ok(out["requested_bytes"] == sum(e["size"] for e in allocs),
           "protocol %d device %d: requested bytes %d" % (proto, dev, sum(e["size"] for e in allocs)))
        ok(out["end_tick"] == len(trace) + 1, "protocol %d device %d: one tick per entry (%d)" % (proto, dev, len(trace)))
        ok(out["never_freed"] == len(snap["segments"][dev]["blocks"]),
           "protocol %d device %d: the blocks live at dump time are never freed" % (proto, dev))
    # the default device (the longest trace): one stack per distinct content
    conv = os.path.join(tmp, "s%d.jsonl" % proto)
    p = subprocess.run([memlens, "convert", path, conv], capture_output=True, text=True)
    ok(p.returncode == 0, "protocol %d: convert (default device)" % proto)
    if p.returncode == 0:
        lines = [json.loads(l) for l in open(conv)]
        stacks = sum(1 for l in lines if l.get("kind") == "stack")
        want = len({tuple((f["filename"], f["line"], f["name"]) for f in e["frames"])
                    for e in snap["device_traces"][0] if e["frames"]})
        ok(stacks == want, "protocol %d: %d stacks, one per distinct frame list content (Python: %d)" % (proto, stacks, want))

# a memo reference to a streamed entry from a later batch: the reader
# does not keep entries, so it must refuse, naming the byte
entry = {"action": "alloc", "addr": 4096, "size": 512, "frames": []}
trace = [dict(entry, addr=4096 + 512 * i) for i in range(1500)]
trace.append(trace[0])   # the same dict object again, 1500 entries later
path = os.path.join(tmp, "again.pickle")
with open(path, "wb") as f:
    f.write(pickle.dumps({"segments": [], "device_traces": [trace]}, protocol=4))
p = subprocess.run([memlens, "stats", path], capture_output=True, text=True)
ok(p.returncode == 2 and "streamed" in p.stderr and path in p.stderr,
   "an entry referenced again after it streamed: exit 2, named (%s)" % p.stderr.strip())

# many ranks: stats / compare / diagnose FILE... --jobs N, one summary each
ranks = []
for r in range(3):
    snap = make(10 + r, [1500 + 300 * r])
    if r == 1:
        snap["device_traces"][0].append({"action": "oom", "addr": 0, "size": 1 << 30, "stream": 0,
                                         "device_free": 1 << 20, "time_us": 1800000000000000, "frames": []})
    path = os.path.join(tmp, "rank%d.pickle" % r)
    with open(path, "wb") as f:
        f.write(pickle.dumps(snap, protocol=4))
    live = peak = 0
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            live += (e["size"] + 511) // 512 * 512
            peak = max(peak, live)
        elif e["action"] == "free_completed":
            live -= (e["size"] + 511) // 512 * 512
    sites = {"%s:%d:%s" % (f["filename"], f["line"], f["name"]) for e in snap["device_traces"][0] for f in e["frames"]}
    ranks.append((path, snap, peak, sites))
files = [r[0] for r in ranks]
p = subprocess.run([memlens, "stats", "--jobs", "2", "--json"] + files, capture_output=True, text=True)
ok(p.returncode == 1, "stats --jobs 2 of 3 ranks: exit 1, rank1 records an OOM (%d: %s)" % (p.returncode, p.stderr.strip()))
rows = json.loads(p.stdout)["files"] if p.stdout.startswith("{") else []
ok([r.get("file") for r in rows] == files, "one summary per file, in the order given")
for (path, snap, peak, sites), row in zip(ranks, rows):
    name = os.path.basename(path)
    ok(row["device"] == 0 and row["peak_reserved"] == snap["segments"][0]["total_size"],
       "%s: device 0, peak reserved = the segment (%d)" % (name, row["peak_reserved"]))
    ok(row["peak_allocated"] == peak, "%s: peak allocated %d = Python's %d" % (name, row["peak_allocated"], peak))
    ok(row["ooms"] == (1 if name == "rank1.pickle" else 0), "%s: OOMs as recorded (%d)" % (name, row["ooms"]))
    ok(row["top_site"] in sites and 0 < row["top_site_bytes"] <= peak,
       "%s: the top call site is one of the trace's frames (%s)" % (name, row["top_site"]))
p = subprocess.run([memlens, "stats", "--jobs", "3"] + files, capture_output=True, text=True)
ok(p.returncode == 1 and p.stdout.split("== across the ranks")[0].count("\n") == 4 and "rank1.pickle" in p.stdout
   and " yes " in p.stdout, "stats --jobs: a header and one line per file, rank1 with its OOM, then the view across the ranks")
p = subprocess.run([memlens, "compare", "--jobs", "2", "-s", "best-fit"] + files[:2], capture_output=True, text=True)
ok(p.returncode == 1 and p.stdout.split("== across the ranks")[0].count("== ") == 3 and p.stdout.index("rank0") < p.stdout.index("rank1")
   and "== summary ==" in p.stdout, "compare --jobs: each file's comparison in order, then the summary (exit 1: rank1 records an OOM)")
p = subprocess.run([memlens, "diagnose", "--jobs", "2"] + files[:2], capture_output=True, text=True)
ok("== summary ==" in p.stdout and p.stdout.split("== across the ranks")[0].count("== ") == 3, "diagnose --jobs: each file's diagnosis, then the summary")
p = subprocess.run([memlens, "stats", "--jobs", "2", files[0], os.path.join(tmp, "missing.pickle")],
                   capture_output=True, text=True)
ok(p.returncode == 2 and "missing.pickle" in p.stderr and "failed" in p.stdout,
   "a file that fails: its message, its row says so, exit 2")
p = subprocess.run([memlens, "stats", "--jobs", "0", files[0]], capture_output=True, text=True)
ok(p.returncode == 2 and "--jobs" in p.stderr, "--jobs 0 is refused")

import shutil
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(done())
