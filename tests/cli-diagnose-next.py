"""diagnose answers the next question (issue 25, item 5): the shortfall in
one line, the live buffers whose freeing closes it, how the other devices
compare; each blame table once; the two "largest" figures named apart;
a device's trace actions by PyTorch's names.

Every number is computed here from the pickle. argv: memlens, the source root."""
import collections
import json
import os
import pickle
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, size  # noqa: E402

MEMLENS, SRC = sys.argv[1:3]
PATH = os.path.join(SRC, "tests/data/oom-expandable-3dev.pickle")
MIB = 1 << 20


def run(*args):
    p = subprocess.run([MEMLENS, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr



def up(n):
    return (n + 511) // 512 * 512


snap = pickle.load(open(PATH, "rb"))
add = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
dev = next(d for d, tr in enumerate(snap["device_traces"]) if any(e["action"] == "oom" for e in tr))
trace = snap["device_traces"][dev]
k = next(i for i, e in enumerate(trace) if e["action"] == "oom")
oom_tick = k + 1                                    # entry i is tick i + 1
# buffers: [start, end) ticks of the trace's allocations (this fixture starts empty)
bufs, open_at = [], {}
for i, e in enumerate(trace):
    if e["action"] == "alloc":
        open_at[e["addr"]] = (i + 1, e["size"], len(bufs))
        bufs.append([i + 1, len(trace) + 1, up(e["size"])])
    elif e["action"] == "free_completed":
        bufs[open_at.pop(e["addr"])[2]][1] = i + 1
bufs.append([oom_tick, oom_tick + 1, up(trace[k]["size"])])   # the refused request, replayed
needs = max(sum(b[2] for b in bufs if b[0] <= t < b[1]) for t in range(len(trace) + 2))
end = {d: sum(s["total_size"] for s in snap["segments"] if s["device"] == d) for d in range(len(snap["device_traces"]))}
reserved_at_oom = end[dev] - sum(add.get(e["action"], 0) * e.get("size", 0) for e in trace[k:])
has = reserved_at_oom + trace[k]["device_free"]

rc, out, err = run("diagnose", PATH, "--strategies", "best-fit")
lines = out.splitlines()
want = "  shortfall: the trace needs at least %s (its lower bound), the device has %s: free at least %s" % (
    size(needs), size(has), size(needs - has))
ok(rc == 1 and want in lines[:12], "the shortfall near the top, as Python computes it (%s)" % want.strip())
live = sorted((b for b in bufs if b[0] <= oom_tick < b[1]), key=lambda b: -b[2] * (b[1] - b[0]))
first = live[0]
row = next((l for l in lines if l.startswith("    ") and "held [" in l), "")
ok(row.split()[0:2] == size(first[2]).split() and ("held [%d, %d)" % (first[0], first[1])) in row
   and (row.rstrip().endswith("closes it") == (first[2] >= needs - has)),
   "the first buffer to free: the largest held longest across the OOM (%s)" % row.strip())
rc, js_out, _ = run("diagnose", PATH, "--strategies", "best-fit", "--json")
sf = json.loads(js_out)["shortfall"]
ok((sf["needs"], sf["device_has"], sf["free_at_least"], sf["tick"]) == (needs, has, needs - has, oom_tick)
   and (sf["free_first"][0]["bytes"], sf["free_first"][0]["start"], sf["free_first"][0]["end"]) == (first[2], first[0], first[1]),
   "--json \"shortfall\": the same numbers (%s)" % sf)

# the devices: reserved at the end (at most), and the imbalance
top = {}
for d, tr in enumerate(snap["device_traces"]):
    cur = end[d] - sum(add.get(e["action"], 0) * e.get("size", 0) for e in tr)
    top[d] = cur
    for e in tr:
        cur += add.get(e["action"], 0) * e.get("size", 0)
        top[d] = max(top[d], cur)
devline = next((l for l in lines if l.startswith("  devices:")), "")
parts = ["device %d%s %s (%s)" % (d, " (read)" if d == dev else "", size(end[d]), size(top[d])) for d in sorted(end)]
nz = [v for v in top.values() if v]
ok(devline.startswith("  devices: reserved at the end (at most): " + ", ".join(parts))
   and ("the most is %.1fx the least" % (max(nz) / min(nz))) in devline, "the devices compared: %s" % devline.strip())

ok(out.count("blame: live at the OOM by call site") == 1 and "blame: as at the recorded OOM above" in out,
   "the blame table once (the replay's is the recorded one)")
ok("largest free block in the cache" in out and "largest free range on the device" in out and "(largest block" not in out,
   "the two largest figures named apart")

rc, out, _ = run("stats", PATH, "--json")
acts = {str(d["device"]): d["actions"] for d in json.loads(out)["devices"]}
pyt = {str(d): dict(collections.Counter({"user_defined": "annotate"}.get(e["action"], e["action"]) for e in tr))
       for d, tr in enumerate(snap["device_traces"])}
ok(acts == pyt, "stats --json: each device's actions by PyTorch's names, counted as Python counts (%s)" % acts)
sys.exit(done())
