#!/usr/bin/env python3
"""What current PyTorch writes, read by memlens and checked against a
Python reading of the same pickle (tests/data/torch, written from
PyTorch's rules by tools/torch-fixtures.py).

Every figure compared here is computed below from the raw fixture with
Python's pickle, not from memlens's other output; each check fails when
memlens ignores the field it is about.

Usage: cli-snapshot-today.py MEMLENS SRCROOT   (TAP)
"""
import json
import os
import pickle
import sys
import tempfile

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "tests"))
from snaplib import ok, done, load_pickle, run_tool  # noqa: E402

D = os.path.join(src, "tests", "data", "torch")
tmp = tempfile.mkdtemp(prefix="memlens-today-")


def load(name):
    return load_pickle(os.path.join(D, name))


def run(*args):
    return run_tool(memlens, *args)


def stats(path, *extra):
    rc, out, err = run("stats", path, "--json", *extra)
    return rc, (json.loads(out) if rc == 0 else {}), err


def conformance(path, *extra):
    rc, out, err = run("compare", path, "--strategies", "caching", "--json", *extra)
    return json.loads(out)["caching_conformance"] if rc in (0, 1) else {}


def live_at_end(snap, dev=0):
    """Blocks live at dump time: (address, size, requested, state, pool, stream)."""
    out = []
    for s in snap["segments"]:
        if s.get("device", 0) != dev:
            continue
        for b in s["blocks"]:
            if b["state"] != "inactive":
                out.append((b["address"], b["size"], b["requested_size"], b["state"], tuple(s["segment_pool_id"]), s["stream"]))
    return out


MiB = 1 << 20

# ---- 64-bit streams: two streams equal in their low 32 bits stay two ----
snap = load("streams-64bit.pickle")
want = sorted({e["stream"] for e in snap["device_traces"][0] if e["action"] == "alloc"})
ok(len(want) == 2 and (want[0] & 0xffffffff) == (want[1] & 0xffffffff), "the fixture: two streams equal below bit 32")
rc, j, _ = stats(os.path.join(D, "streams-64bit.pickle"))
got = sorted(int(x) for x in j.get("stream_ids", []))
ok(got == want, "stats --json: the streams are the file's 64-bit values %s (got %s)" % ([hex(x) for x in want], [hex(x) for x in got]))
ok(j.get("streams") == 2, "two allocating streams")
rc, out, _ = run("stats", os.path.join(D, "streams-64bit.pickle"))
ok(all(("%x" % s) in out for s in want), "stats names both streams by their value")
c = conformance(os.path.join(D, "streams-64bit.pickle"))
n_alloc = sum(e["action"] == "alloc" for e in snap["device_traces"][0])
ok(c.get("allocs") == n_alloc and c.get("address_matched") == n_alloc,
   "conformance: every allocation at its address (%s of %d): per-stream reuse keeps the streams apart" % (c.get("address_matched"), n_alloc))

rc, out, _ = run("diagnose", os.path.join(D, "streams-64bit.pickle"), "--capacity", "3M")
ok(all(("stream 0x%x" % v) in out for v in want), "diagnose shows each buffer's stream by its value")

# ---- active_pending_free ----
for name in ("pending-free.pickle", "pending-free-notrace.pickle"):
    snap = load(name)
    pend = [b for b in live_at_end(snap) if b[3] == "active_pending_free"]
    rc, j, _ = stats(os.path.join(D, name))
    pf = j.get("pending_free", {})
    ok(pf.get("buffers") == len(pend) and pf.get("bytes") == sum(b[2] for b in pend),
       "%s: pending at the end: %d block, %d B (got %s)" % (name, len(pend), sum(b[2] for b in pend), pf))
    live = [b for b in live_at_end(snap)]
    ok(j.get("never_freed") == len(live), "%s: a pending block is still live memory (%d live)" % (name, len(live)))

# ---- private pools: a graph's pool across two streams; MemPools ----
for name in ("graph-two-streams.pickle", "graph-two-streams-nopoolid.pickle"):
    snap = load(name)
    segs = snap["segments"]
    new = [tuple(s["segment_pool_id"]) for s in segs if tuple(s["segment_pool_id"]) != (0, 0)]
    ok(len(new) == 2 and len(set(new)) == 1, "%s: the fixture: two new segments, one new pool id %s" % (name, new[0]))
    rc, j, _ = stats(os.path.join(D, name))
    pools = {tuple(p["id"]): p for p in j.get("pools", [])}
    g = pools.get(new[0], {})
    want_res = sum(s["total_size"] for s in segs if tuple(s["segment_pool_id"]) == new[0])
    want_buf = sum(1 for b in live_at_end(snap) if b[4] == new[0])
    ok(g.get("reserved_end") == want_res and g.get("buffers") == want_buf and g.get("kind") == "CUDA graph",
       "%s: pool %s: %d B reserved, %d buffers, a CUDA graph's (got %s)" % (name, new[0], want_res, want_buf, g))
    c = conformance(os.path.join(D, name))
    ok(c.get("address_matched") == c.get("allocs") == 4 and c.get("end_segments_match"), "%s: conformance 100%%" % name)

for name in ("graph-private-reuse.pickle", "mempool.pickle"):
    snap = load(name)
    trace = snap["device_traces"][0]
    n_alloc = sum(e["action"] == "alloc" for e in trace)
    c = conformance(os.path.join(D, name))
    ok(c.get("allocs") == n_alloc and c.get("address_matched") == n_alloc and c.get("end_segments_match"),
       "%s: every allocation at its address (%s / %d), segments at the end match: a pool's free blocks serve "
       "only that pool" % (name, c.get("address_matched"), n_alloc))
    # the same file with its pools erased: the default pool would reuse the private block
    erased = dict(snap)
    erased["segments"] = [dict(s, segment_pool_id=(0, 0)) for s in snap["segments"]]
    erased["device_traces"] = [[{k: v for k, v in e.items() if k != "pool_id"} for e in trace]]
    p = os.path.join(tmp, "erased-" + name)
    with open(p, "wb") as f:
        pickle.dump(erased, f, protocol=4)
    c2 = conformance(p)
    ok(c2.get("address_matched", n_alloc) < n_alloc, "%s without its pool ids: conformance drops (%s / %d): the pools are what "
       "the emulation follows" % (name, c2.get("address_matched"), n_alloc))

snap = load("mempool.pickle")
rc, j, _ = stats(os.path.join(D, "mempool.pickle"))
pools = {tuple(p["id"]): p for p in j.get("pools", [])}
for pid in {tuple(s["segment_pool_id"]) for s in snap["segments"]}:
    want_res = sum(s["total_size"] for s in snap["segments"] if tuple(s["segment_pool_id"]) == pid)
    ok(pools.get(pid, {}).get("reserved_end") == want_res, "mempool: pool %s reserves %d B at the end (got %s)"
       % (pid, want_res, pools.get(pid, {}).get("reserved_end")))
deleted = [tuple(e["pool_id"]) for e in snap["device_traces"][0] if e["action"] == "segment_free"]
ok(pools.get(deleted[0], {}).get("reserved_end") == 0, "mempool: the emptied MemPool %s reserves nothing" % (deleted[0],))

# ---- allocator settings only PYTORCH_CUDA_ALLOC_CONF records ----
snap = load("settings-conf.pickle")
raw = snap["allocator_settings"]["PYTORCH_CUDA_ALLOC_CONF"]
rc, j, _ = stats(os.path.join(D, "settings-conf.pickle"))
conf = j.get("allocator_settings", "")
ok("max_non_split_rounding_mb:40" in conf and "max_split_size_mb:64" in conf, "the settings keep %s: %s" % (raw, conf))
c = conformance(os.path.join(D, "settings-conf.pickle"))
n_alloc = sum(e["action"] == "alloc" for e in snap["device_traces"][0])
ok(c.get("address_matched") == n_alloc and c.get("end_segments_match"), "conformance 100%% with the recorded settings (%s / %d)"
   % (c.get("address_matched"), n_alloc))
for drop, why in (("max_split_size_mb:64,roundup_power2_divisions:[128:2,256:4,>:4]", "max_non_split_rounding_mb"),
                  ("max_split_size_mb:64,max_non_split_rounding_mb:40", "the roundup list")):
    c2 = conformance(os.path.join(D, "settings-conf.pickle"), "--options", drop)
    ok(c2.get("address_matched", n_alloc) < n_alloc or not c2.get("end_segments_match", True),
       "without %s the replay disagrees (%s / %d, segments %s)" % (why, c2.get("address_matched"), n_alloc, c2.get("end_segments_match")))

# ---- the ring buffer wrapped ----
snap = load("ring-wrapped.pickle")
s = snap["allocator_settings"]
rc, j, err = stats(os.path.join(D, "ring-wrapped.pickle"))
ok(j.get("trace_alloc_overflowed") is True and j.get("trace_alloc_max_entries") == s["trace_alloc_max_entries"],
   "stats --json: the ring wrapped, %d entries" % s["trace_alloc_max_entries"])
for cmd in ("stats", "compare", "diagnose", "convert"):
    args = [cmd, os.path.join(D, "ring-wrapped.pickle")] + ([os.path.join(tmp, "r.jsonl")] if cmd == "convert" else [])
    rc, out, err = run(*args)
    ok(("last %d entries" % s["trace_alloc_max_entries"]) in err, "%s says the trace is a suffix of the run" % cmd)
rc, j, _ = stats(os.path.join(D, "streams-64bit.pickle"))
ok("trace_alloc_overflowed" not in j, "a file that does not record it says nothing about the ring")

# ---- skip_actions ----
for name, action in (("skip-free-requested.pickle", "free_requested"), ("skip-alloc.pickle", "alloc")):
    snap = load(name)
    acts = {e["action"] for e in snap["device_traces"][0]}
    ok(action not in acts, "%s: the fixture has no %s entry" % (name, action))
    rc, j, err = stats(os.path.join(D, name))
    ok(j.get("skipped_actions") == [action] and "lost entries" not in err,
       "%s: %s named as not recorded, no 'entries lost' warning (%s)" % (name, action, err.strip()))
snap = load("skip-alloc.pickle")
frees = [e for e in snap["device_traces"][0] if e["action"] == "free_completed"]
rc, j, _ = stats(os.path.join(D, "skip-alloc.pickle"))
ok(j.get("buffers") == len(frees) and j.get("never_freed") == 0, "skip-alloc: each free ends a block from before the trace (%d)" % len(frees))

# ---- segment totals against their blocks ----
snap = load("segment-totals.pickle")
s0 = snap["segments"][0]
blocks_alloc = sum(b["size"] for b in s0["blocks"] if b["state"] == "active_allocated")
rc, out, err = run("stats", os.path.join(D, "segment-totals.pickle"))
ok(("segments[0]: allocated_size is %d, its blocks add up to %d" % (s0["allocated_size"], blocks_alloc)) in err,
   "a segment whose allocated_size disagrees with its blocks is named")
for name in os.listdir(D):
    if name != "segment-totals.pickle":
        rc, out, err = run("stats", os.path.join(D, name))
        if "its blocks add up" in err:
            ok(False, "%s: no totals warning on a consistent file" % name)
            break
else:
    ok(True, "no totals warning on the consistent fixtures")

# ---- call sites a user recognises (issue 25 item 6), computed here ----
import re as _re


def framework(f):
    fn = f["filename"]
    return (not fn or fn == "??" or fn.startswith("<") or fn.endswith((".cpp", ".cc", ".h", ".hpp", ".c", ".cu"))
            or "/torch/" in fn or "torchinductor" in fn or "/triton/" in fn)


def library(f):
    fn = f["filename"]
    return "site-packages" in fn or "dist-packages" in fn or _re.search(r"/lib/python[0-9]", fn) is not None


def text(f):
    return f["name"] if not f["filename"] else "%s:%d:%s" % (f["filename"], f["line"], f["name"])


def site(frames, rule):
    if not frames:
        return "allocated before recording"
    if rule == "all":
        return text(frames[0])
    if rule not in ("user", "all"):
        for f in frames:
            if _re.search(rule, text(f)):
                return text(f)
    for f in frames:
        if not framework(f) and not library(f):
            return text(f)
    for f in frames:
        if "CachingAllocator" not in f["name"]:
            return text(f)
    return text(frames[0])


snap = load("call-sites.pickle")
blocks = sorted((b["address"], b) for s_ in snap["segments"] for b in s_["blocks"] if b["state"] == "active_allocated")
allocs = {e["addr"]: e["frames"] for e in snap["device_traces"][0] if e["action"] == "alloc"}
for rule in ("user", "all", "einops|EmptyTensor"):
    want = sorted(site(allocs.get(a, b["frames"]) if a in allocs else [], rule) for a, b in blocks)
    rc, j, _ = stats(os.path.join(D, "call-sites.pickle"), "--frames", rule, "--blame", "0")
    got = sorted(x.get("site", "") for x in j.get("peaks", [{}])[0].get("blame", []))
    ok(got == want, "--frames %s: the call sites %s (got %s)" % (rule, want, got))
ok("allocated before recording" in want, "a block live at the start without frames says it was allocated before recording")

snap = load("fx-frames.pickle")
trace = snap["device_traces"][0]
gen = trace[1]["frames"][0]
m = _re.findall(r'File "([^"]+)", line (\d+), in (\w+)', gen["fx_original_trace"])[-1]
want_fx = '%s:%s:%s [FX %s: %s]' % (m[0], m[1], m[2], gen["fx_node_name"], gen["fx_node_target"])
m = _re.findall(r'File "([^"]+)", line (\d+), in (\w+)', "".join(trace[2]["forward_frames"]))[-1]
want_fwd = '%s:%s:%s (forward of this backward)' % m
rc, j, _ = stats(os.path.join(D, "fx-frames.pickle"), "--blame", "0")
got = {x.get("site") for x in j.get("peaks", [{}])[0].get("blame", [])}
ok(want_fx in got, "compiled code: the model line with its FX node (%s)" % want_fx)
ok(want_fwd in got, "a backward allocation: the forward line it serves (%s)" % want_fwd)
rc, out, err = run("stats", os.path.join(D, "call-sites.pickle"), "--frames", "(")
ok(rc == 2 and "not a regular expression" in err, "--frames with a bad regular expression exits 2")

# ---- JSON Lines keep all of it ----
for name in ("streams-64bit.pickle", "mempool.pickle", "settings-conf.pickle", "ring-wrapped.pickle", "pending-free.pickle"):
    jl = os.path.join(tmp, name + ".jsonl")
    rc, _, _ = run("convert", os.path.join(D, name), jl)
    rc1, a, _ = stats(os.path.join(D, name))
    rc2, b, _ = stats(jl)
    keys = ("stream_ids", "pools", "pending_free", "allocator_settings", "trace_alloc_max_entries", "trace_alloc_overflowed")
    ok(rc == 0 and all(a.get(k) == b.get(k) for k in keys),
       "%s: convert to JSON Lines keeps streams, pools, pending frees, settings and the ring (%s)"
       % (name, [k for k in keys if a.get(k) != b.get(k)]))
    c1, c2 = conformance(os.path.join(D, name)), conformance(jl)
    ok(c1.get("address_matched") == c2.get("address_matched") and c1.get("end_segments_match") == c2.get("end_segments_match"),
       "%s: and the same conformance" % name)

sys.exit(done())
