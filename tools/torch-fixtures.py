#!/usr/bin/env python3
"""Writes PyTorch memory snapshots of what current PyTorch records, from
PyTorch's rules, with Python's pickle: tests/data/torch/*.pickle.

Not from a GPU: each file is laid out by hand as PyTorch's writer lays
out a snapshot (torch/csrc/cuda/Module.cpp, THCPModule_memorySnapshot;
torch/csrc/cuda/memory_snapshot.cpp, _memory_snapshot_pickled: the
segment, block and trace-entry keys in its order) and as its caching
allocator would have acted (c10/cuda/CUDACachingAllocator.cpp: round_size,
get_pool, get_allocation_size, get_free_block, should_split;
c10/cuda/MemPool.cpp for pool ids), following what PyTorch's own tests in
test/test_cuda.py assert. The sizes and addresses are worked in the
comments. tools/record-torch-snapshots.py records the same scenarios on a
GPU when one is available.

Run by hand (python3 tools/torch-fixtures.py); the files are committed and
nothing runs Python at build time. Every file here is read by
tests/cli-snapshot-today.py, which checks memlens's figures against a
Python reading of the same pickle.
"""
import os
import pickle
import sys

MiB = 1 << 20
KiB = 1 << 10
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "torch")

USER = [{"filename": "/home/u/train.py", "line": 42, "name": "step"},
        {"filename": "/home/u/train.py", "line": 90, "name": "main"}]
T0 = 1_700_000_000_000_000   # time_us: microseconds since the epoch, as PyTorch writes them


def frames(*sites):
    """Frame dicts as PyTorch symbolizes them (name, filename, line)."""
    return [{"name": n, "filename": f, "line": l} for f, l, n in sites] + USER


class Trace:
    """One device's trace entries in PyTorch's key order (action, addr or
    device_free, size, stream, compile_context, user_metadata, frames,
    time_us; pool_id where the writer is new enough)."""

    def __init__(self, pool_ids=False, extra=True):
        self.e, self.t, self.pool_ids, self.extra = [], T0, pool_ids, extra

    def add(self, action, addr, size, stream=0, pool=(0, 0), fr=None, cc="", um="", **kw):
        self.t += 10
        e = {"action": action}
        e["device_free" if action == "oom" else "addr"] = addr
        e["size"] = size
        e["stream"] = stream
        if self.extra:
            e["compile_context"] = cc
            e["user_metadata"] = um
        e["frames"] = list(fr) if fr is not None else list(USER)
        e["time_us"] = self.t
        if self.pool_ids:
            e["pool_id"] = tuple(pool)
        e.update(kw)
        self.e.append(e)
        return e

    def free(self, addr, size, stream=0, pool=(0, 0), **kw):
        self.add("free_requested", addr, size, stream, pool, **kw)
        self.add("free_completed", addr, size, stream, pool, **kw)


def block(size, state="inactive", requested=0, fr=None):
    return {"size": size, "requested_size": requested, "state": state, "frames": list(fr) if fr else []}


def segment(address, blocks, stream=0, pool=(0, 0), device=0, expandable=False, fr=None, large=None):
    """A segment dict as SegmentInfo is written: its totals from its blocks
    (allocated: active_allocated; active: allocated or pending, with their
    requested bytes), the blocks' addresses from the segment's."""
    total = sum(b["size"] for b in blocks)
    seg = {"device": device, "address": address, "total_size": total,
           "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
           "active_size": sum(b["size"] for b in blocks if b["state"] != "inactive"),
           "requested_size": sum(b["requested_size"] for b in blocks if b["state"] != "inactive"),
           "stream": stream,
           "segment_type": ("large" if (total > 2 * MiB if large is None else large) else "small"),
           "segment_pool_id": tuple(pool), "is_expandable": expandable,
           "frames": list(fr) if fr else [], "blocks": []}
    a = address
    for b in blocks:
        d = {"address": a}
        d.update(b)
        seg["blocks"].append(d)
        a += b["size"]
    return seg


def settings(conf="", max_split=-1, expandable=False, divisions=None, gc=0.0, **kw):
    """allocator_settings as the writer fills it from
    snapshot.config_metadata (roundup_power2_divisions: {"1": d, "2": d,
    "4": d, ...}, one per interval, keyed by the interval's MiB)."""
    divisions = divisions or [0] * 16
    s = {"PYTORCH_CUDA_ALLOC_CONF": conf, "max_split_size": max_split, "garbage_collection_threshold": gc,
         "expandable_segments": expandable, "pinned_num_register_threads": 1, "release_lock_on_cudamalloc": False,
         "pinned_use_cuda_host_register": False, "graph_capture_record_stream_reuse": False,
         "roundup_power2_divisions": {str(1 << k): d for k, d in enumerate(divisions)}}
    s.update(kw)
    return s


def write(name, snap):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, name), "wb") as f:
        pickle.dump(snap, f, protocol=4)   # what PyTorch's Pickler writes is protocol 2; Python's dump: 4


# ---- 64-bit streams: two streams that differ only above bit 32 ----
# cudaStream_t values are pointers (48 bits used); the writer casts them to
# int64. Per-stream reuse (get_free_block compares block->stream): the 1 MiB
# request on S2 cannot take S1's free small segment, so it gets a segment of
# its own; were the streams merged it would reuse A.
def streams_64bit():
    S1, S2 = 0x00005A1200000E10, 0x00005A1300000E10
    A, B = 0x7F4000000000, 0x7F4000200000
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, S1)
    t.add("alloc", A, MiB, S1)                      # small pool: <= 1 MiB, 2 MiB segment
    t.free(A, MiB, S1)
    t.add("segment_alloc", B, 2 * MiB, S2)
    t.add("alloc", B, MiB, S2)                      # S2 has no free block: a segment of its own
    t.add("alloc", A, 4 * KiB, S1)                  # S1's free 2 MiB block, split (small pool)
    segs = [segment(A, [block(4 * KiB, "active_allocated", 4 * KiB, USER), block(2 * MiB - 4 * KiB)], S1),
            segment(B, [block(MiB, "active_allocated", MiB, USER), block(MiB)], S2)]
    write("streams-64bit.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                   "external_annotations": []})


# ---- a free waiting on another stream: active_pending_free ----
# x was used on side stream S2 (x.record_stream(S2)); `del x` records
# free_requested, and the block stays active (event_count > 0) until the
# event completes: at dump time its state is active_pending_free
# (Module.cpp: allocated ? active_allocated : active ? active_pending_free
# : inactive). y, asked for after the free, cannot take x's block.
def pending_free():
    S2 = 0x00005A1400000200
    A = 0x7F5000000000
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, 0)
    t.add("alloc", A, 512 * KiB, 0)                 # x
    t.add("free_requested", A, 512 * KiB, 0)        # del x; the free waits on S2's event
    t.add("alloc", A + 512 * KiB, 512 * KiB, 0)     # y: after x's block
    segs = [segment(A, [block(512 * KiB, "active_pending_free", 512 * KiB, USER),
                        block(512 * KiB, "active_allocated", 512 * KiB, USER), block(MiB)], 0)]
    _ = S2
    write("pending-free.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                  "external_annotations": []})
    # the same state with no trace (recording off): only the dump says so
    write("pending-free-notrace.pickle", {"segments": segs, "device_traces": [[]], "allocator_settings": settings(),
                                          "external_annotations": []})


# ---- a CUDA graph captured across two streams (test_cuda.py,
# test_cuda_graph_allocator_propagates_stream): x, y = 10240000 floats
# each (40960000 B: a segment of 40 MiB, get_allocation_size rounds to
# 2 MiB) in the default pool; capture_begin on s0 without a pool gives
# the graph its own pool, id (1, 0) (MemPool(is_user_created=false):
# {uuid_++, 0}); z = x + y on s0 and w = z + y on s1 (s1 waits on s0, so
# it is captured too and allocates to the same pool): exactly two new
# segments, one per stream, one new pool id. ----
def graph_two_streams(pool_ids):
    S0, S1 = 0x00005A2000000100, 0x00005A2100000100
    N, SEG = 40960000, 42 * MiB - 2 * MiB          # 40 MiB segments
    assert SEG == (N + 2 * MiB - 1) // (2 * MiB) * (2 * MiB)
    X, Y, Z, W = 0x7F6000000000, 0x7F6002800000, 0x7F6005000000, 0x7F6007800000
    G = (1, 0)
    t = Trace(pool_ids=pool_ids)
    t.add("segment_alloc", X, SEG, 0)
    t.add("alloc", X, N, 0)
    t.add("segment_alloc", Y, SEG, 0)
    t.add("alloc", Y, N, 0)
    t.add("segment_alloc", Z, SEG, S0, G)
    t.add("alloc", Z, N, S0, G)
    t.add("segment_alloc", W, SEG, S1, G)
    t.add("alloc", W, N, S1, G)
    segs = [segment(a, [block(N, "active_allocated", N, USER), block(SEG - N)], s, p)
            for a, s, p in ((X, 0, (0, 0)), (Y, 0, (0, 0)), (Z, S0, G), (W, S1, G))]
    name = "graph-two-streams.pickle" if pool_ids else "graph-two-streams-nopoolid.pickle"
    write(name, {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                 "external_annotations": []})


# ---- a graph's private pool keeps its free blocks: during capture (pool
# (2, 0), stream s0) a temporary t (8 MiB: a 20 MiB segment, kLargeBuffer
# under kMinLargeAlloc) is freed and the output o (4 MiB) reuses its
# block inside the pool; after capture_end an 8 MiB tensor on the same
# stream, in the default pool, cannot take the pool's free 16 MiB: a new
# segment (were pools ignored, best fit would put it at G + 4 MiB). ----
def graph_private_reuse():
    S0 = 0x00005A3000000100
    G, D = 0x7F7000000000, 0x7F7001400000
    P = (2, 0)
    t = Trace(pool_ids=True)
    t.add("segment_alloc", G, 20 * MiB, S0, P)
    t.add("alloc", G, 8 * MiB, S0, P)               # t
    t.free(G, 8 * MiB, S0, P)                       # freed during capture: back to the pool
    t.add("alloc", G, 4 * MiB, S0, P)               # o: best fit in the pool, split (16 MiB > 1 MiB left)
    t.add("segment_alloc", D, 20 * MiB, S0)
    t.add("alloc", D, 8 * MiB, S0)                  # after the capture, default pool
    segs = [segment(G, [block(4 * MiB, "active_allocated", 4 * MiB, USER), block(16 * MiB)], S0, P),
            segment(D, [block(8 * MiB, "active_allocated", 8 * MiB, USER), block(12 * MiB)], S0)]
    write("graph-private-reuse.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                         "external_annotations": []})


# ---- torch.cuda.MemPool (test_mempool_empty_cache, test_pool_id_in_snapshot):
# user pools get ids (0, 1), (0, 2) (MemPool(is_user_created=true): {0,
# uid_++}). x (12 MiB) has a segment of its own in the default pool; y
# (4 MiB) under use_mem_pool(p1) gets a 20 MiB segment in p1; after `del
# y` the default-pool z (4 MiB) cannot use p1's free block: a new default
# segment. w (4 MiB) goes to p2; `del p2` while w lives releases nothing
# (emptyCache(p2) frees only wholly free segments), so p2's segment stays
# listed with its pool id; `del p1` empties p1's cache: segment_free. ----
def mempool():
    X, P1, Z, P2 = 0x7F8000000000, 0x7F8000C00000, 0x7F8002000000, 0x7F8003400000
    p1, p2 = (0, 1), (0, 2)
    t = Trace(pool_ids=True)
    t.add("segment_alloc", X, 12 * MiB, 0)
    t.add("alloc", X, 12 * MiB, 0)
    t.add("segment_alloc", P1, 20 * MiB, 0, p1)
    t.add("alloc", P1, 4 * MiB, 0, p1)
    t.free(P1, 4 * MiB, 0, p1)
    t.add("segment_alloc", Z, 20 * MiB, 0)
    t.add("alloc", Z, 4 * MiB, 0)
    t.add("segment_alloc", P2, 20 * MiB, 0, p2)
    t.add("alloc", P2, 4 * MiB, 0, p2)
    t.add("segment_free", P1, 20 * MiB, 0, p1)     # del p1: its cache emptied
    segs = [segment(X, [block(12 * MiB, "active_allocated", 12 * MiB, USER)], 0),
            segment(Z, [block(4 * MiB, "active_allocated", 4 * MiB, USER), block(16 * MiB)], 0),
            segment(P2, [block(4 * MiB, "active_allocated", 4 * MiB, USER), block(16 * MiB)], 0, p2)]
    write("mempool.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                             "external_annotations": []})


# ---- allocator settings only PYTORCH_CUDA_ALLOC_CONF records:
# max_split_size_mb:64, max_non_split_rounding_mb:40,
# roundup_power2_divisions:[256:2,>:4] (intervals below 256 MiB: 2; from
# 256 MiB: 4, '>' filling from the last index named).
#   a = 100 MiB: interval 6 (64..128 MiB), 2 divisions: 128 MiB; a
#       segment of 128 MiB;
#   b = 70 MiB after `del a`: 96 MiB, >= max_split_size: a block at most
#       40 MiB larger may serve it: 128 < 96 + 40, a's block (with the
#       default 20 MiB, 128 >= 116: a new segment);
#   c = 300 MiB: interval 8, 4 divisions: 320 MiB, a segment of 320 MiB;
#   d = 310 MiB after `del c`: 320 MiB: c's block (without the rounding
#       310 MiB would not fit a 300 MiB segment). ----
def settings_conf():
    A, C = 0x7F9000000000, 0x7F9008000000
    t = Trace()
    t.add("segment_alloc", A, 128 * MiB, 0)
    t.add("alloc", A, 100 * MiB, 0)
    t.free(A, 100 * MiB, 0)
    t.add("alloc", A, 70 * MiB, 0)
    t.add("segment_alloc", C, 320 * MiB, 0)
    t.add("alloc", C, 300 * MiB, 0)
    t.free(C, 300 * MiB, 0)
    t.add("alloc", C, 310 * MiB, 0)
    segs = [segment(A, [block(128 * MiB, "active_allocated", 70 * MiB, USER)], 0),
            segment(C, [block(320 * MiB, "active_allocated", 310 * MiB, USER)], 0)]
    conf = "max_split_size_mb:64,max_non_split_rounding_mb:40,roundup_power2_divisions:[256:2,>:4]"
    s = settings(conf, max_split=64 * MiB, divisions=[2] * 8 + [4] * 8, trace_alloc_max_entries=1000,
                 trace_alloc_overflowed=False)
    write("settings-conf.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": s,
                                   "external_annotations": []})


# ---- the ring buffer wrapped (trace_alloc_overflowed, trace_alloc_max_entries,
# PR 179276; memory_viz reads them from allocator_settings): max_entries 4,
# the 4 newest entries kept; the block freed first was allocated before
# them. ----
def ring_wrapped():
    A = 0x7FA000000000
    t = Trace()
    t.free(A, 256 * KiB, 0)                         # allocated before the kept entries
    t.add("alloc", A, 128 * KiB, 0)
    t.add("alloc", A + 128 * KiB, 128 * KiB, 0)
    segs = [segment(A, [block(128 * KiB, "active_allocated", 128 * KiB, USER),
                        block(128 * KiB, "active_allocated", 128 * KiB, USER), block(2 * MiB - 256 * KiB)], 0)]
    s = settings(trace_alloc_max_entries=4, trace_alloc_overflowed=True)
    write("ring-wrapped.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": s,
                                  "external_annotations": []})


# ---- _record_memory_history(skip_actions=[...]): entries of those
# actions are not recorded. Without free_requested: every free is its
# free_completed alone; without alloc: the trace frees blocks it never
# saw allocated. ----
def skip_actions():
    A = 0x7FB000000000
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, 0)
    t.add("alloc", A, 256 * KiB, 0)
    t.add("alloc", A + 256 * KiB, 256 * KiB, 0)
    t.add("free_completed", A, 256 * KiB, 0)
    t.add("alloc", A, 128 * KiB, 0)
    segs = [segment(A, [block(128 * KiB, "active_allocated", 128 * KiB, USER), block(128 * KiB),
                        block(256 * KiB, "active_allocated", 256 * KiB, USER), block(2 * MiB - 512 * KiB)], 0)]
    write("skip-free-requested.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                         "external_annotations": []})
    t = Trace()
    for k in range(3):
        t.free(A + k * 256 * KiB, 256 * KiB, 0)
    segs = [segment(A, [block(2 * MiB)], 0)]
    write("skip-alloc.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                "external_annotations": []})


# ---- per entry: compile_context (torch.compile regions: "Torch-Compiled
# Region: 0/1", pushed while a compiled region runs) and user_metadata
# (torch.cuda.memory._set_memory_metadata: stamped on every entry until
# changed); a group's bytes at the peak are a sum over the live blocks. ----
def compile_context():
    A = 0x7FC000000000
    t = Trace()
    t.add("segment_alloc", A, 20 * MiB, 0)
    plan = [(0, 2 * MiB, "", "phase=load"), (2, 3 * MiB, "Torch-Compiled Region: 0/0", "phase=fwd"),
            (5, 4 * MiB, "Torch-Compiled Region: 0/0", "phase=fwd"), (9, 1 * MiB, "Torch-Compiled Region: 1/0", "phase=bwd")]
    for off, size, cc, um in plan:
        t.add("alloc", A + off * MiB, size, 0, cc=cc, um=um)
    t.free(A + 2 * MiB, 3 * MiB, 0, cc="Torch-Compiled Region: 1/0", um="phase=bwd")
    t.add("alloc", A + 2 * MiB, 2 * MiB, 0, cc="Torch-Compiled Region: 1/0", um="phase=bwd")
    segs = [segment(A, [block(2 * MiB, "active_allocated", 2 * MiB, USER), block(2 * MiB, "active_allocated", 2 * MiB, USER),
                        block(1 * MiB), block(4 * MiB, "active_allocated", 4 * MiB, USER),
                        block(1 * MiB, "active_allocated", 1 * MiB, USER), block(10 * MiB)], 0)]
    write("compile-context.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                     "external_annotations": []})


# ---- groups and search (stats --group-by, --find): each entry with its
# compile_context, user_metadata and a stack of its own; a block live
# before the trace (no entry: group "(none)"); three peaks, 10 MiB at the
# third alloc, 7 MiB at the backward's and 8 MiB at the end; addresses
# held by two buffers in turn (A + 4 MiB, A + 8 MiB). ----
def groups():
    A = 0x7FC100000000
    enc = frames(("/home/u/model.py", 10, "encoder"))
    dec = frames(("/home/u/model.py", 20, "decoder"))
    load = frames(("/home/u/data.py", 5, "load"))
    bwd = frames(("/home/u/model.py", 30, "decoder_bwd"))
    loss = frames(("/home/u/model.py", 31, "loss"))
    fwd, back = "Torch-Compiled Region: 0/0", "Torch-Compiled Region: 1/0"
    t = Trace()
    t.add("alloc", A + 1 * MiB, 3 * MiB, 0, fr=enc, cc=fwd, um="phase=fwd")
    t.add("alloc", A + 4 * MiB, 4 * MiB, 0, fr=dec, cc=fwd, um="phase=fwd")
    t.add("alloc", A + 8 * MiB, 2 * MiB, 0, fr=load, um="phase=fwd")
    t.free(A + 4 * MiB, 4 * MiB, 0, fr=dec, cc=back, um="phase=bwd")
    t.add("alloc", A + 4 * MiB, 1 * MiB, 0, fr=bwd, cc=back, um="phase=bwd")
    t.free(A + 8 * MiB, 2 * MiB, 0, fr=load, cc=back, um="phase=bwd")
    t.add("alloc", A + 8 * MiB, 3 * MiB, 0, fr=loss, cc=back, um="phase=bwd")
    segs = [segment(A, [block(1 * MiB, "active_allocated", 1 * MiB, USER), block(3 * MiB, "active_allocated", 3 * MiB, enc),
                        block(1 * MiB, "active_allocated", 1 * MiB, bwd), block(3 * MiB),
                        block(3 * MiB, "active_allocated", 3 * MiB, loss), block(9 * MiB)], 0)]
    write("groups.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                            "external_annotations": []})


# ---- external_annotations stages (record_function ranges recorded with
# the memory history: {name, stage START / END, time_us, device}): two
# iterations of forward and backward, each a stage; the annotations fall
# between entries (entries every 10 us, annotations 5 us after one).
# --range forward#2 is the second forward. ----
def stages():
    A = 0x7FC200000000
    t = Trace()
    anns = []

    def stage(name, what):
        anns.append({"device": 0, "name": name, "stage": what, "time_us": t.t + 5})
    t.add("segment_alloc", A, 20 * MiB, 0)
    for k in range(2):
        stage("forward", "START")
        t.add("alloc", A, (2 + k) * MiB, 0, fr=frames(("/home/u/model.py", 10, "forward")))
        t.add("alloc", A + 4 * MiB, 3 * MiB, 0, fr=frames(("/home/u/model.py", 11, "forward")))
        stage("forward", "END")
        stage("backward", "START")
        t.free(A + 4 * MiB, 3 * MiB, 0)
        t.add("alloc", A + 8 * MiB, (5 - k) * MiB, 0, fr=frames(("/home/u/model.py", 20, "backward")))
        t.free(A, (2 + k) * MiB, 0)
        t.free(A + 8 * MiB, (5 - k) * MiB, 0)
        stage("backward", "END")
    segs = [segment(A, [block(20 * MiB)], 0)]
    write("stages.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                            "external_annotations": anns})


# ---- annotate (torch.cuda.memory._annotate_memory(data_ptr, metadata),
# PyTorch PR 190575): a trace entry at the live block's base address,
# with the metadata, some time after the alloc. ----
def annotate():
    A = 0x7FD000000000
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, 0)
    t.add("alloc", A, 256 * KiB, 0)
    t.add("alloc", A + 256 * KiB, 512 * KiB, 0)
    t.add("annotate", A + 256 * KiB, 0, 0, um="saved for backward")
    t.free(A, 256 * KiB, 0)
    segs = [segment(A, [block(256 * KiB), block(512 * KiB, "active_allocated", 512 * KiB, USER), block(MiB + 256 * KiB)], 0)]
    write("annotate.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                              "external_annotations": []})


# ---- annotate, many: two texts on one block, blocks annotated in a
# second segment, an address annotated again after its block was freed and
# another allocated there (the texts go with the block live at the
# annotate entry), more annotated blocks than a picture lists. ----
def annotate_many():
    A, B = 0x7FD100000000, 0x7FD100200000
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, 0)
    t.add("alloc", A, 256 * KiB, 0)
    t.add("alloc", A + 256 * KiB, 512 * KiB, 0)
    t.add("annotate", A + 256 * KiB, 0, 0, um="saved for backward")
    t.add("annotate", A + 256 * KiB, 0, 0, um="activation checkpoint")
    t.add("segment_alloc", B, 2 * MiB, 0)
    t.add("alloc", B, MiB, 0)
    t.add("annotate", B, 0, 0, um="kv cache, layer 3")
    t.add("annotate", A, 0, 0, um="input batch")
    t.free(A, 256 * KiB, 0)
    t.add("alloc", A, 128 * KiB, 0)
    t.add("annotate", A, 0, 0, um="grad bucket 0")
    for k in range(7):
        t.add("alloc", B + MiB + k * 128 * KiB, 128 * KiB, 0)
        t.add("annotate", B + MiB + k * 128 * KiB, 0, 0, um="shard %d" % k)
    t.free(A + 256 * KiB, 512 * KiB, 0)
    segs = [segment(A, [block(128 * KiB, "active_allocated", 128 * KiB, USER), block(2 * MiB - 128 * KiB)], 0),
            segment(B, [block(MiB, "active_allocated", MiB, USER)]
                    + [block(128 * KiB, "active_allocated", 128 * KiB, USER) for _ in range(7)]
                    + [block(128 * KiB)], 0)]
    write("annotate-many.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                   "external_annotations": []})


# ---- compiled code: frames of Inductor's generated file carry the FX
# node they run (fx_node_op / fx_node_name / fx_node_target and the
# original model code, fx_original_trace; memory_viz's format_frames
# shows them); a backward allocation carries forward_frames, the forward
# stack of the tensor it is for. The other frames are torch's. ----
def fx_frames():
    A = 0x7FE000000000
    gen = {"name": "call", "filename": "/tmp/torchinductor_u/ab/cabxyz.py", "line": 120,
           "fx_node_op": "call_function", "fx_node_name": "mm_default", "fx_node_target": "aten.mm.default",
           "fx_original_trace": '  File "/home/u/model.py", line 31, in forward\n    h = self.fc(x)\n'}
    torchf = [{"name": "__call__", "filename": "/usr/lib/python3/dist-packages/torch/_inductor/codecache.py", "line": 900},
              {"name": "_fn", "filename": "/usr/lib/python3/dist-packages/torch/_dynamo/eval_frame.py", "line": 600}]
    bwd = [{"name": "backward", "filename": "/usr/lib/python3/dist-packages/torch/autograd/__init__.py", "line": 251}]
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, 0)
    t.add("alloc", A, 256 * KiB, 0, fr=[gen] + torchf)
    t.add("alloc", A + 256 * KiB, 256 * KiB, 0, fr=bwd,
          forward_frames=['  File "/home/u/model.py", line 40, in forward\n', '    y = torch.relu(h)\n'])
    segs = [segment(A, [block(256 * KiB, "active_allocated", 256 * KiB, [gen] + torchf),
                        block(256 * KiB, "active_allocated", 256 * KiB, bwd), block(MiB + 512 * KiB)], 0)]
    write("fx-frames.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                               "external_annotations": []})


# ---- issue 25 item 6: call sites a user recognises. Blocks whose stacks
# start in library code (site-packages, the standard library, torch), a
# C++-only stack, and a block allocated before recording began (no
# frames, no alloc in the trace). ----
def call_sites():
    A = 0x7FF000000000
    lib = [{"name": "rearrange", "filename": "/usr/lib/python3/site-packages/einops/einops.py", "line": 480},
           {"name": "run", "filename": "/usr/lib/python3.11/threading.py", "line": 975},
           {"name": "forward", "filename": "/home/u/net.py", "line": 17}]
    alllib = [{"name": "run", "filename": "/usr/lib/python3.11/threading.py", "line": 975},
              {"name": "_bootstrap", "filename": "/usr/lib/python3.11/threading.py", "line": 995}]
    cpp = [{"name": "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc", "filename": "", "line": 0},
           {"name": "at::native::empty_cuda", "filename": "/pytorch/aten/src/ATen/native/cuda/EmptyTensor.cpp", "line": 28},
           {"name": "at::native::mm_out_cuda", "filename": "/pytorch/aten/src/ATen/native/cuda/Blas.cpp", "line": 310}]
    t = Trace()
    t.add("alloc", A + 512 * KiB, 256 * KiB, 0, fr=lib)
    t.add("alloc", A + 768 * KiB, 256 * KiB, 0, fr=alllib)
    t.add("alloc", A + MiB, 256 * KiB, 0, fr=cpp)
    segs = [segment(A, [block(512 * KiB, "active_allocated", 512 * KiB, []),
                        block(256 * KiB, "active_allocated", 256 * KiB, lib),
                        block(256 * KiB, "active_allocated", 256 * KiB, alllib),
                        block(256 * KiB, "active_allocated", 256 * KiB, cpp), block(MiB - 256 * KiB)], 0)]
    write("call-sites.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                "external_annotations": []})


# ---- a segment whose own totals disagree with its blocks (a hand-edited
# or glued file): allocated_size says 1 MiB, its blocks 512 KiB; the
# segment's frames (the stack at cudaMalloc) are kept. ----
def segment_totals():
    A = 0x7F0100000000
    seg = segment(A, [block(512 * KiB, "active_allocated", 512 * KiB, USER), block(MiB + 512 * KiB)], 0,
                  fr=frames(("/home/u/data.py", 7, "load")))
    seg["allocated_size"] = MiB
    write("segment-totals.pickle", {"segments": [seg], "device_traces": [[]], "allocator_settings": settings(),
                                    "external_annotations": []})


# ---- pinned host memory (PyTorch PR 182407, _record_memory_history(...,
# record_host=True)): host_segments and host_traces beside the device's,
# laid out as CachingHostAllocator mimics the device allocator (blocks of
# a power-of-two size). ----
def host_pinned():
    A, H = 0x7F0200000000, 0x7F3000000000
    t = Trace()
    t.add("segment_alloc", A, 2 * MiB, 0)
    t.add("alloc", A, MiB, 0)
    h = Trace()
    h.add("segment_alloc", H, 4 * MiB, 0)
    h.add("alloc", H, 4 * MiB, 0)
    h.add("segment_alloc", H + 4 * MiB, 8 * MiB, 0)
    h.add("alloc", H + 4 * MiB, 8 * MiB, 0)
    h.free(H, 4 * MiB, 0)
    segs = [segment(A, [block(MiB, "active_allocated", MiB, USER), block(MiB)], 0)]
    hsegs = [segment(H, [block(4 * MiB)], 0, large=True), segment(H + 4 * MiB, [block(8 * MiB, "active_allocated", 8 * MiB, USER)], 0)]
    for s_ in hsegs:
        s_["device"] = -1
    write("host-pinned.pickle", {"segments": segs, "device_traces": [t.e], "allocator_settings": settings(),
                                 "external_annotations": [], "host_segments": hsegs, "host_traces": h.e})


def main():
    streams_64bit()
    pending_free()
    graph_two_streams(True)
    graph_two_streams(False)
    graph_private_reuse()
    mempool()
    settings_conf()
    ring_wrapped()
    skip_actions()
    compile_context()
    groups()
    stages()
    annotate()
    annotate_many()
    fx_frames()
    call_sites()
    segment_totals()
    host_pinned()
    print("wrote %s" % ", ".join(sorted(os.listdir(OUT))), file=sys.stderr)


if __name__ == "__main__":
    main()
