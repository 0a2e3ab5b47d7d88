#!/usr/bin/env python3
"""stats --group-by and --find / --find-frame on PyTorch snapshots
(tests/data/torch, written by tools/torch-fixtures.py), checked against a
Python reading of the raw pickle: the blocks' lifetimes are rebuilt here
(the dump-time blocks undone backwards along the trace, as memory_viz
does), their live bytes, local maxima and groups computed from the
entries' own keys and frames, and the address searches answered from the
same lifetimes.

Usage: cli-snapshot-query.py MEMLENS SRCROOT   (TAP)
"""
import copy
import json
import os
import pickle
import sys
import tempfile

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "tests"))
from snaplib import ok, done, skip, load_pickle, run_tool, lifetimes, live_at, rnd, frame_texts, regex_key  # noqa: E402

D = os.path.join(src, "tests", "data", "torch")
def load(name):
    return load_pickle(os.path.join(D, name))


def run(*args):
    return run_tool(memlens, *args)


def local_maxima(bufs, end_tick):
    """(tick, live) of each local maximum (a plateau at its first tick)."""
    lv = [live_at(bufs, k) for k in range(end_tick + 1)]
    out = []
    for k in range(end_tick):
        if lv[k] > (lv[k - 1] if k else 0):
            nxt = k + 1
            while nxt < end_tick and lv[nxt] == lv[k]:
                nxt += 1
            if lv[nxt] < lv[k]:
                out.append((k, lv[k]))
    return out


def groups_at(bufs, tick, key):
    g = {}
    for b in bufs:
        if b[2] <= tick < b[3]:
            k = key(b) or "(none)"
            bytes_, n = g.get(k, (0, 0))
            g[k] = (bytes_ + b[1], n + 1)
    return g


# ---- --group-by ----
path = os.path.join(D, "groups.pickle")
snap = load("groups.pickle")
bufs, end_tick = lifetimes(snap)
maxima = local_maxima(bufs, end_tick)
ok(len(maxima) == 3, "the fixture: three peaks %s" % maxima)
keys = {
    "compile_context": lambda b: b[4] and b[4].get("compile_context"),
    "user_metadata": lambda b: b[4] and b[4].get("user_metadata"),
    r"model\.py:[0-9]+:([a-z_]+)": regex_key(r"model\.py:[0-9]+:([a-z_]+)"),
    r"/home/u/[a-z]+\.py": regex_key(r"/home/u/[a-z]+\.py"),
}
for by, key in keys.items():
    rc, out, err = run("stats", path, "--json", "--peaks", "0", "--group-by", by)
    j = json.loads(out) if rc == 0 else {}
    got_peaks = sorted((p["tick"], p["live"]) for p in j.get("peaks", []))
    ok(got_peaks == sorted(maxima), "--group-by %s: the peaks %s (got %s)" % (by, maxima, got_peaks))
    for p in j.get("peaks", []):
        want = groups_at(bufs, p["tick"], key)
        got = {g["group"]: (g["bytes"], g["buffers"]) for g in p.get("groups", [])}
        ok(got == want, "--group-by %s at tick %d: %s (got %s)" % (by, p["tick"], want, got))
        order = [g["bytes"] for g in p.get("groups", [])]
        ok(order == sorted(order, reverse=True), "--group-by %s at tick %d: most bytes first" % (by, p["tick"]))
    ok(j.get("group_by") == by, "--json names the grouping %s" % by)

rc, out, err = run("stats", path, "--group-by", "compile_context")
top = max(maxima, key=lambda m: m[1])
want = groups_at(bufs, top[0], keys["compile_context"])
lines = [l for l in out.splitlines() if l.startswith("    ") and "%" in l and "buffer" in l and "[" not in l]
ok(all(any(name in l for l in lines) for name in want), "text: every group at the peaks is named: %s" % sorted(want))
ok("by group:" in out, "text: the groups follow each peak's blame")

rc, out, err = run("stats", path, "--group-by", "(")
ok(rc == 2 and "not compile_context, user_metadata or a regular expression" in err,
   "--group-by with a bad expression exits 2 naming it (%d: %s)" % (rc, err.strip()))


# ---- --find ADDR[@TICK] ----
def find(addr, tick=None):
    arg = "0x%x" % addr + ("" if tick is None else "@%d" % tick)
    rc, out, err = run("stats", path, "--json", "--find", arg)
    j = json.loads(out) if out else {}
    return rc, [(b["addr"], b["bytes"], b["start"], b["end"]) for b in j.get("buffers", [])]


A = 0x7FC100000000
MiB = 1 << 20
probes = [(A + 4 * MiB + 100, 3), (A + 4 * MiB + 100, 6), (A + 4 * MiB + 100, None), (A + 5 * MiB + 1, 6),
          (A + 512, 0), (A + 512, None), (A + 8 * MiB, None), (A + 11 * MiB, 9), (A + 20 * MiB, None)]
for addr, tick in probes:
    want = [tuple(b[:4]) for b in sorted(bufs, key=lambda b: b[2])
            if b[0] <= addr < b[0] + b[1] and (tick is None or b[2] <= tick < b[3])]
    rc, got = find(addr, tick)
    ok(got == want and rc == (0 if want else 1),
       "--find 0x%x%s: %d buffer(s) %s, exit %d (got %s, exit %d)"
       % (addr, "" if tick is None else "@%d" % tick, len(want), want, 0 if want else 1, got, rc))
ok(any(len(w) > 1 for w in [[b for b in bufs if b[0] <= A + 4 * MiB + 100 < b[0] + b[1]]]),
   "the fixture: one address held by two buffers in turn")
rc, out, err = run("stats", path, "--find", "0x%x@6" % (A + 4 * MiB + 100))
ok(rc == 0 and "held by" in out and "model.py:30:decoder_bwd" in out, "text: the buffer and its call site")
for bad in ("zz", "0x10@", "@5", "0x10@x"):
    rc, out, err = run("stats", path, "--find", bad)
    ok(rc == 2 and "--find" in err and not out, "--find %s exits 2 naming the option" % bad)

# ---- --find-frame ----
for text in ("model.py:20", "decoder", "data.py", "nowhere.py"):
    want = sorted((b[0], b[2]) for b in bufs if any(text in f for f in frame_texts(b[5])))
    rc, out, err = run("stats", path, "--json", "--find-frame", text)
    j = json.loads(out) if out else {}
    got = sorted((b["addr"], b["start"]) for b in j.get("buffers", []))
    ok(got == want and j.get("bytes") == sum(b[1] for b in bufs if (b[0], b[2]) in want) and rc == (0 if want else 1),
       "--find-frame %s: %s (got %s, exit %d)" % (text, want, got, rc))

# ---- an annotated block is found with its annotation ----
asnap = load("annotate.pickle")
ann = [e for e in asnap["device_traces"][0] if e["action"] == "annotate"][0]
rc, out, err = run("stats", os.path.join(D, "annotate.pickle"), "--json", "--find", "0x%x" % (ann["addr"] + 1))
j = json.loads(out) if out else {}
got = [b.get("annotations") for b in j.get("buffers", []) if b["addr"] == ann["addr"]]
ok(got == [[ann["user_metadata"]]], "--find: the annotated block carries its annotation %r (got %s)" % (ann["user_metadata"], got))


# ---- --range STAGE[#K]: an external_annotations stage as the window ----
def merged_ticks(snap):
    """The file's ticks as a whole load numbers them: tick 0 the state,
    then the entries and the annotations by time (an annotation before
    an entry of the same time)."""
    trace = snap["device_traces"][0]
    anns = sorted(a["time_us"] for a in snap["external_annotations"] if a.get("device", 0) == 0)
    ticks, tick, k = [], 0, 0
    for e in trace:
        while k < len(anns) and anns[k] <= e["time_us"]:
            k, tick = k + 1, tick + 1
        tick += 1
        ticks.append(tick)
    return ticks


def stage_times(snap, name, nth):
    marks = sorted((a["time_us"], a["stage"]) for a in snap["external_annotations"] if a["name"] == name)
    starts = [i for i, m in enumerate(marks) if m[1] == "START"]
    i = starts[nth - 1]
    depth = 0
    for t, what in marks[i + 1:]:
        if what == "START":
            depth += 1
        elif depth == 0:
            return marks[i][0], t
        else:
            depth -= 1
    return marks[i][0], None


spath = os.path.join(D, "stages.pickle")
ssnap = load("stages.pickle")
trace = ssnap["device_traces"][0]
ticks = merged_ticks(ssnap)
# live bytes after each tick of the whole load, from the entries
live, curve = {}, {0: 0}
for e, tk in zip(trace, ticks):
    if e["action"] == "alloc":
        live[e["addr"]] = rnd(e["size"])
    elif e["action"] == "free_completed":
        live.pop(e["addr"], None)
    curve[tk] = sum(live.values())
for spec, name, nth in (("forward", "forward", 1), ("forward#2", "forward", 2), ("backward#1", "backward", 1),
                        ("backward#2", "backward", 2)):
    t0, t1 = stage_times(ssnap, name, nth)
    inside = [i for i, e in enumerate(trace) if t0 <= e["time_us"] and (t1 is None or e["time_us"] <= t1)]
    rc, out, err = run("stats", spath, "--json", "--range", spec)
    j = json.loads(out) if rc == 0 else {}
    w = j.get("window", {})
    want_state = ticks[inside[0] - 1] if inside[0] else 0
    ok(w.get("state_tick") == want_state and w.get("last_tick") == ticks[inside[-1]],
       "--range %s: entries %d..%d, the window ticks %d..%d (got %s)" % (spec, inside[0], inside[-1], want_state,
                                                                         ticks[inside[-1]], w))
    want_peak = max(v for tk, v in curve.items() if want_state <= tk <= ticks[inside[-1]])
    ok(j.get("lower_bound") == want_peak, "--range %s: the most bytes live in the stage, %d (got %s)"
       % (spec, want_peak, j.get("lower_bound")))
# a real snapshot's stage (its name holds a '#'), when ../shared is here
shared = os.path.join(src, "..", "shared")
real = os.path.join(shared if os.path.isdir(shared) else "/work/shared", "data", "torch-snapshots", "bcrafton_trace.pickle")
if os.path.exists(real):
    rsnap = load_pickle(real)
    rname = rsnap["external_annotations"][0]["name"]
    t0, t1 = stage_times(rsnap, rname, 1)
    rt = merged_ticks(rsnap)
    inside = [i for i, e in enumerate(rsnap["device_traces"][0]) if t0 <= e["time_us"] <= t1]
    rc, out, err = run("stats", real, "--json", "--range", rname)
    w = json.loads(out).get("window", {}) if rc == 0 else {}
    ok(w.get("state_tick") == rt[inside[0] - 1] and w.get("last_tick") == rt[inside[-1]],
       "bcrafton_trace: --range %s: ticks %d..%d (got %s)" % (rname, rt[inside[0] - 1], rt[inside[-1]], w))
else:
    skip("bcrafton_trace: ../shared is not here")
rc, out, err = run("stats", spath, "--range", "nope")
ok(rc == 2 and "nope" in err and "forward" in err and not out, "--range of an unknown stage: exit 2, the stages listed")
rc, out, err = run("stats", spath, "--range", "forward#3")
ok(rc == 2 and "starts 2 times" in err and not out, "--range forward#3: exit 2, the stage starts twice")
samples = os.path.join(src, "samples")
jl = [os.path.join(samples, f) for f in sorted(os.listdir(samples)) if f.endswith(".jsonl")] if os.path.isdir(samples) else []
if jl:
    rc, out, err = run("stats", jl[0], "--range", "forward")
    ok(rc == 2 and "external_annotations" in err and not out, "--range STAGE of a JSONL trace: exit 2 (%s)" % err.strip())


# ---- --device host: pinned host memory (host_segments, host_traces) ----
hpath = os.path.join(D, "host-pinned.pickle")
hsnap = load("host-pinned.pickle")
for host in (True, False):
    hb, hend = lifetimes(hsnap, host)
    rc, out, err = run("stats", hpath, "--json", *(["--device", "host"] if host else []))
    j = json.loads(out) if rc == 0 else {}
    want = {"buffers": len(hb), "lower_bound": max(live_at(hb, k) for k in range(hend)),
            "reserved_end": sum(s["total_size"] for s in hsnap["host_segments" if host else "segments"])}
    got = {"buffers": j.get("buffers"), "lower_bound": j.get("lower_bound"),
           "reserved_end": sum(p["reserved_end"] for p in j.get("pools", []))}
    ok(got == want, "%s: %s (got %s)" % ("--device host" if host else "device 0", want, got))
    ok((j.get("device") == "host") == host, "--json names the host as the device read" if host else "device 0 is not the host")
rc, out, err = run("stats", hpath, "--device", "host")
ok(rc == 0 and "pinned host memory" in err, "stderr says the pinned host memory was read")
rc, out, err = run("stats", path, "--device", "host")
ok(rc == 2 and "host_segments" in err and not out, "--device host of a file without host_segments: exit 2 (%s)" % err.strip())
rc, out, err = run("stats", hpath, "--device", "hostx")
ok(rc == 2 and "--device" in err, "--device hostx: exit 2")
# warnings about host entries name them host_traces[I] (they said
# device_traces[-1]): a free of a block already free, and time running
# backwards, written here into a copy of the fixture with Python's pickle
lost = copy.deepcopy(hsnap)
ht = lost["host_traces"]
again = dict(ht[-1])                      # free_completed of a block already free
again["time_us"] = ht[0]["time_us"] - 5   # and before the first entry
ht.append(again)
with tempfile.TemporaryDirectory() as tmp:
    lpath = os.path.join(tmp, "host-lost.pickle")
    with open(lpath, "wb") as f:
        pickle.dump(lost, f, protocol=4)
    rc, out, err = run("stats", lpath, "--device", "host")
    last = len(ht) - 1
    want_refree = "host_traces[%d] (free_completed at 0x%x): the block there is already free" % (last, again["addr"])
    want_back = "host_traces[%d] (free_completed): \"time_us\" %d is before the %d of host_traces[%d]" % (
        last, again["time_us"], ht[last - 1]["time_us"], last - 1)
    ok(rc == 0 and want_refree in err, "a lost host entry is named %s (%s)" % (want_refree, err.strip()))
    ok(want_back in err, "host time running backwards is named in host_traces (%s)" % want_back)
    ok("device_traces" not in err, "no host warning names device_traces")

sys.exit(done())
