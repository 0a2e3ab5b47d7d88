#!/usr/bin/env python3
"""memlens convert FILE... -o OUT.db (issue 28 item 4): the database read
back with Python's sqlite3 against Python's own reading of the snapshot
files it writes (pickle): counts and sums per table, each buffer's frames,
call sites, the rank column; the five questions of docs/export.md run as
written there. Skips when this memlens was built without SQLite.

    cli-export-sqlite.py MEMLENS SOURCE_ROOT"""
import os
import pickle
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, make  # noqa: E402

memlens, root = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="memlens-sqlite-")
db = os.path.join(tmp, "runs.db")

snaps, files = [], []
for k, name in enumerate(["rank0.pickle", "rank1.pickle", "rank2.pickle", "worker.pickle"]):
    snap = make(40 + k, [400 + 150 * k])
    if k == 1:
        snap["device_traces"][0].append({"action": "oom", "addr": 0, "size": 1 << 30, "stream": 0,
                                         "device_free": 1 << 20, "time_us": 1800000000000000, "frames": []})
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        pickle.dump(snap, f, protocol=4)
    snaps.append(snap)
    files.append(path)

p = subprocess.run([memlens, "convert", "-o", db] + files, capture_output=True, text=True)
if "built without SQLite" in p.stderr:
    print("1..0 # SKIP this memlens was built without SQLite (libsqlite3-dev)")
    sys.exit(0)
ok(p.returncode == 0 and os.path.exists(db), "convert 4 files -o runs.db (%s)" % p.stderr.strip())
con = sqlite3.connect(db)
q = lambda sql, *a: con.execute(sql, a).fetchall()  # noqa: E731

ok(q("SELECT path, rank FROM files ORDER BY file_id") == [(f, r) for f, r in zip(files, [0, 1, 2, None])],
   "files: one row per file in order, rank from the name (NULL for worker.pickle)")


def site_of(frames):
    u = [f for f in frames if f["filename"].startswith("/home/")]
    return "%s:%d:%s" % (u[0]["filename"], u[0]["line"], u[0]["name"]) if u else None


for fid, snap in enumerate(snaps, 1):
    tr = snap["device_traces"][0]
    allocs = [e for e in tr if e["action"] == "alloc"]
    n = lambda a: sum(1 for e in tr if e["action"] == a)  # noqa: E731
    live = peak = 0
    for e in tr:
        live += e["size"] if e["action"] == "alloc" else -e["size"] if e["action"] == "free_completed" else 0
        peak = max(peak, live)
    name = os.path.basename(files[fid - 1])
    ok(q("SELECT COUNT(*), SUM(size), SUM(rsize) FROM buffers WHERE file_id = ?", fid)
       == [(len(allocs), sum(e["size"] for e in allocs), sum(e["size"] for e in allocs))],
       "%s: buffers = the %d alloc entries, their bytes summed" % (name, len(allocs)))
    got = dict(q("SELECT kind, COUNT(*) FROM events WHERE file_id = ? GROUP BY kind", fid))
    ok(got.get("alloc") == len(allocs) and got.get("free_requested") == n("free_requested")
       and got.get("free") == n("free_completed") and got.get("oom", 0) == n("oom")
       and got.get("segment_alloc") == len(snap["segments"]),
       "%s: events by kind = the entries by action, a segment_alloc per dump-time segment (%s)" % (name, got))
    ok(q("SELECT SUM(size) FROM events WHERE file_id = ? AND kind = 'alloc'", fid)[0][0]
       == sum(e["size"] for e in allocs), "%s: the alloc events' bytes" % name)
    ok(q("SELECT COUNT(*), SUM(size), COUNT(end_tick) FROM segments WHERE file_id = ?", fid)
       == [(len(snap["segments"]), sum(s["total_size"] for s in snap["segments"]), 0)],
       "%s: segments as the dump lists them, mapped at the end" % name)
    ok(q("SELECT peak_allocated FROM files WHERE file_id = ?", fid)[0][0] == peak,
       "%s: peak_allocated %d = Python's running peak" % (name, peak))
    # every buffer's frames and call site, in the order of the allocations
    rows = q("SELECT b.buffer_id, b.addr, b.size, s.site, f.filename, f.line, f.function FROM buffers b"
             " JOIN frames f ON f.file_id = b.file_id AND f.stack_id = b.stack_id"
             " LEFT JOIN call_sites s ON s.file_id = b.file_id AND s.site_id = b.site_id"
             " WHERE b.file_id = ? ORDER BY b.start_tick, f.depth", fid)
    bufs = {}
    for bid, addr, size, site, fn, line, func in rows:
        bufs.setdefault(bid, [addr, size, site, []])[3].append((fn, line, func))
    mine = [[e["addr"], e["size"], site_of(e["frames"]), [(f["filename"], f["line"], f["name"]) for f in e["frames"]]]
            for e in allocs if e["frames"]]
    got = list(bufs.values())
    for g, m in zip(got, mine):   # a stack of library frames alone: its site is memlens's rule, not checked here
        if m[2] is None:
            g[2] = None
    ok(got == mine, "%s: each buffer's frames (innermost first) and call site = its alloc entry's"
       % name)
    ok(q("SELECT COUNT(*) FROM devices WHERE file_id = ? AND is_read = 1", fid) == [(1,)],
       "%s: one device row, the one read" % name)

ok(q("SELECT COUNT(*) FROM buffers") == [(sum(sum(1 for e in s["device_traces"][0] if e["action"] == "alloc")
                                              for s in snaps),)], "all files in one database")
idx = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")}
ok({"buffers_site", "buffers_ticks", "events_kind", "frames_file", "call_sites_site", "files_rank"} <= idx,
   "the indexes of docs/export.md (%s)" % sorted(idx))

# the questions of docs/export.md, as written there
doc = open(os.path.join(root, "docs", "export.md")).read()
queries = re.findall(r"```sql\n(.*?)```", doc, re.S)
ok(len(queries) >= 5, "docs/export.md shows %d SQL questions" % len(queries))
results = []
for k, sql in enumerate(queries):
    try:
        results.append(con.execute(sql).fetchall())
        ok(True, "question %d runs" % (k + 1))
    except sqlite3.Error as e:
        results.append(None)
        ok(False, "question %d runs (%s)" % (k + 1, e))
# question 3: buffers live across the OOM (rank 1): Python's own
tr = snaps[1]["device_traces"][0]
live = {}
for e in tr:
    if e["action"] == "alloc":
        live[e["addr"]] = e["size"]
    elif e["action"] == "free_completed":
        live.pop(e["addr"], None)
    elif e["action"] == "oom":
        break
ok(results[2] is not None and sorted(r[2] for r in results[2]) == sorted(live.values()),
   "question 3: the buffers live at rank 1's OOM = Python's (%d)" % len(live))
con.close()

# refusals and failures: a clear message, exit 2, no partial database
before = open(db, "rb").read()
p = subprocess.run([memlens, "convert", "-o", db, files[0], os.path.join(tmp, "missing.pickle")],
                   capture_output=True, text=True)
ok(p.returncode == 2 and "missing.pickle" in p.stderr and open(db, "rb").read() == before
   and not [f for f in os.listdir(tmp) if f.startswith(".") or "tmp" in f],
   "a file that fails: exit 2, named, the old database kept, no temporary file left")
p = subprocess.run([memlens, "convert", "-o", os.path.join(tmp, "x.csv"), files[0]], capture_output=True, text=True)
ok(p.returncode == 2 and "SQLite" in p.stderr, "-o x.csv is refused (%s)" % p.stderr.strip())
shutil.copy(files[0], os.path.join(tmp, "in.db"))
p = subprocess.run([memlens, "convert", "--format", "pytorch-snapshot", "-o", os.path.join(tmp, "in.db"),
                    os.path.join(tmp, "in.db")], capture_output=True, text=True)
ok(p.returncode == 2 and "input" in p.stderr, "-o onto an input is refused (%s)" % p.stderr.strip())
p = subprocess.run([memlens, "convert", files[2], os.path.join(tmp, "one.db")], capture_output=True, text=True)
one = sqlite3.connect(os.path.join(tmp, "one.db")) if p.returncode == 0 else None
ok(one is not None and one.execute("SELECT rank, buffers FROM files").fetchall()
   == [(2, sum(1 for e in snaps[2]["device_traces"][0] if e["action"] == "alloc"))], "convert IN OUT.db: one file")

shutil.rmtree(tmp, ignore_errors=True)
sys.exit(done())
