"""Multi-device snapshots (issue 25, item 2): every command reads the device
that recorded an OOM, else the one with the most memory (bytes reserved
at the end plus bytes allocated over the trace), says which and why, and
lists the others; --device naming an absent or empty device exits 2.

The expected device and every number are computed here from the
snapshot written with pickle. argv: memlens, the source root."""
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, size  # noqa: E402

MEMLENS, SRC = sys.argv[1:3]
TMP = tempfile.mkdtemp()
MIB = 1 << 20


def run(*args):
    p = subprocess.run([MEMLENS, *args], capture_output=True, text=True, cwd=TMP, timeout=120)
    return p.returncode, p.stdout, p.stderr


def seg(dev, addr, size, blocks):
    return {"device": dev, "address": addr, "total_size": size, "stream": 0, "segment_type": "large",
            "is_expandable": False, "blocks": blocks}


def block(addr, size):
    return {"address": addr, "size": size, "requested_size": size, "state": "active_allocated",
            "frames": [{"filename": "train.py", "line": 7, "name": "step"}]}


FR = [{"filename": "train.py", "line": 9, "name": "loop"}]


def entry(action, addr, size, t):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": FR}


# device 0: one stray trace entry, nothing else;
# device 1: full segments at the dump, no trace;
# device 2: the longest trace (the old rule read it), allocating and freeing
#   6 MiB in 2 MiB blocks, its segment released at the end;
# device 3: nothing at all
base1, base2 = 0x7f0000000000, 0x7f1000000000
segments = [seg(1, base1, 64 * MIB, [block(base1, 40 * MIB), block(base1 + 40 * MIB, 20 * MIB)])]
tr2, t = [entry("segment_alloc", base2, 8 * MIB, 1)], 2
for k in range(3):
    tr2.append(entry("alloc", base2 + k * 2 * MIB, 2 * MIB, t)); t += 1
for k in range(3):
    tr2 += [entry("free_requested", base2 + k * 2 * MIB, 2 * MIB, t), entry("free_completed", base2 + k * 2 * MIB, 2 * MIB, t + 1)]
    t += 2
tr2.append(entry("segment_free", base2, 8 * MIB, t))
traces = [[entry("snapshot", 0, 0, 1)], [], tr2, []]
snap = {"segments": segments, "device_traces": traces}
path = os.path.join(TMP, "four.pickle")
with open(path, "wb") as f:
    f.write(pickle.dumps(snap, protocol=4))

# Python's answer: reserved at the end = the segments at the dump; allocated = the alloc entries' sizes
reserved = {d: sum(s["total_size"] for s in segments if s["device"] == d) for d in range(4)}
allocated = {d: sum(e["size"] for e in traces[d] if e["action"] == "alloc") for d in range(4)}
entries = {d: len(traces[d]) for d in range(4)}
want = max(range(4), key=lambda d: (reserved[d] + allocated[d], -d))
live = sum(b["size"] for s in segments if s["device"] == want for b in s["blocks"])
ok(want == 1 and max(range(4), key=lambda d: entries[d]) == 2, "the fixture: the most memory on device 1, the longest trace on device 2")

rc, out, err = run("stats", path, "--json")
js = json.loads(out) if rc == 0 else {}
ok(rc == 0 and js.get("device") == want, "stats reads device %d (read %s, exit %d)" % (want, js.get("device"), rc))
ok(js.get("buffers") == len([b for s in segments if s["device"] == want for b in s["blocks"]]) and
   js.get("lower_bound") == live, "stats: device %d's buffers and lower bound (%s, %s; Python %d B)" %
   (want, js.get("buffers"), js.get("lower_bound"), live))
for d in js.get("devices", []):
    ok(d["reserved_end"] == reserved[d["device"]] and d["entries"] == entries[d["device"]],
       "stats --json: device %d's reserved bytes and entries as the file has them" % d["device"])



note = err.strip()
m = re.search(r"reading device (\d+) of (\d+): the most memory: (.*?) reserved at the end \+ (.*?) allocated over the trace",
              note)
ok(m and int(m.group(1)) == want and int(m.group(2)) == 4 and m.group(3) == size(reserved[want])
   and m.group(4) == size(allocated[want]), "stderr says which device and why, with its numbers (%s)" % note)
others = ["device %d (%d trace entr%s, %s reserved at the end, %s allocated over the trace)" %
          (d, entries[d], "y" if entries[d] == 1 else "ies", size(reserved[d]), size(allocated[d])) for d in range(4) if d != want]
ok(note.endswith("--device N reads another: " + ", ".join(others)), "and lists the others with their reserved bytes and "
   "entries (want %s)" % ", ".join(others))

# every command reads the same device (the note names it)
for cmd in (["compare", path, "--strategies", "best-fit"], ["report", path, "-o", "r.md", "--strategies", "best-fit"],
            ["diagnose", path, "--capacity", "1G"], ["plan", path, "--strategy", "best-fit", "-o", "p.json"],
            ["check", path], ["convert", path, "c.jsonl"]):
    rc, out, err = run(*cmd)
    ok(rc in (0, 1) and "reading device %d of 4" % want in err, "%s reads device %d (exit %d)" % (cmd[0], want, rc))
rc, out, err = run("compare", path, "--strategies", "best-fit", "--json")
ok(rc == 0 and json.loads(out)["lower_bound"] == live, "compare's lower bound is device %d's" % want)

# --device naming no device, or one without memory: exit 2 with the list
rc, out, err = run("stats", path, "--device", "7")
ok(rc == 2 and "device 7 has no segments and no trace (the file holds 4 devices: device 0 (1 trace entry" in err
   and not out, "--device 7: exit 2 with the devices listed (%s)" % err.strip())
for d in (0, 3):
    rc, out, err = run("stats", path, "--device", str(d))
    ok(rc == 2 and ("device %d holds no memory" % d) in err and "device 1 (0 trace entries, 64.00 MiB reserved at the end" in err
       and not out, "--device %d (no allocation, no segment): exit 2 with the others listed (%s)" % (d, err.strip()))
rc, out, err = run("stats", path, "--device", "2", "--json")
ok(rc == 0 and json.loads(out)["device"] == 2, "--device 2 (a trace that allocated) reads it")

# an OOM still comes first: the fixture with an OOM entry on device 3
traces[3] = [entry("oom", 0, 4 * MIB, 1)]
traces[3][0]["device_free"] = 0
with open(os.path.join(TMP, "oom.pickle"), "wb") as f:
    f.write(pickle.dumps({"segments": segments, "device_traces": traces}, protocol=4))
rc, out, err = run("stats", os.path.join(TMP, "oom.pickle"), "--json")
ok(rc in (0, 1) and json.loads(out)["device"] == 3 and "reading device 3 of 4: it recorded an OOM" in err,
   "a device that recorded an OOM is read first (%s)" % err.strip()[:120])

rc, out, err = run("stats", "--help")
ok("the device that recorded an OOM, else the one with the most memory" in " ".join(out.split()),
   "stats --help states the rule")
sys.exit(done())
