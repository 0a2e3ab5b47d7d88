#!/usr/bin/env python3
"""Writes samples/ranks/rank0.pickle .. rank3.pickle: the memory snapshots
of four ranks of one small data-parallel job, as
torch.cuda.memory._dump_snapshot writes them (one device each): the same
layers on every rank, rank 2 holding larger activations, ranks 1 and 3
recording an out-of-memory (rank 3 first). For the README's tour
(`memlens report samples/ranks/rank*.pickle -o ranks.html`); tests/cli-ranks.py
draws its ranks with the same make(). A fixture generator only: memlens
never runs Python. Deterministic.

    python3 samples/make_ranks.py [OUTDIR]"""
import os
import pickle
import random
import sys

T0 = 1700000000000000
LIB = [{"filename": "/usr/lib/python3/dist-packages/torch/nn/modules/m%d.py" % k, "line": 40 + k, "name": "forward"}
       for k in range(4)]
USER = [{"filename": "/home/u/train.py", "line": 100 + 10 * k, "name": "layer%d" % k} for k in range(6)]


def make(rank, seed):
    """A snapshot of one rank: segment A (live at dump) holds the blocks,
    segment B is mapped and unmapped in the middle; allocations in
    batches, each traceback library frames then one user frame; an OOM
    on ranks 1 and 3 (rank 3's first)."""
    rnd = random.Random(seed)
    a_base, b_base = 0x7f0000000000, 0x7f8000000000
    a_size, b_size = (1 << 30), (64 + 32 * rank) << 20
    trace = [{"action": "segment_alloc", "addr": a_base, "size": a_size, "stream": 0, "time_us": T0, "frames": []}]
    t, addr, live = T0, a_base, {}
    scale = 3 if rank == 2 else 1
    for batch in range(6):
        for _ in range(rnd.randrange(10, 30)):
            t += 1000
            sz = rnd.randrange(1, 64) * 512 * scale * (1 + (rank == 2 and rnd.random() < 0.3) * 7)
            u = USER[rnd.randrange(6)] if rank != 2 or rnd.random() < 0.5 else USER[5]
            fr = [dict(LIB[rnd.randrange(4)]), dict(u)]
            live[addr] = (sz, fr)
            trace.append({"action": "alloc", "addr": addr, "size": sz, "stream": 0, "time_us": t, "frames": fr})
            addr += 1 << 20
        if batch == 2:
            t += 1000
            trace.append({"action": "segment_alloc", "addr": b_base, "size": b_size, "stream": 0, "time_us": t,
                          "frames": []})
        if batch == 4:
            t += 1000
            trace.append({"action": "segment_free", "addr": b_base, "size": b_size, "stream": 0, "time_us": t,
                          "frames": []})
        for a in rnd.sample(sorted(live), len(live) * 2 // 3):
            sz, fr = live.pop(a)
            t += 1000
            for action in ("free_requested", "free_completed"):
                trace.append({"action": action, "addr": a, "size": sz, "stream": 0, "time_us": t, "frames": fr})
    if rank in (1, 3):
        trace.append({"action": "oom", "addr": 0, "size": 1 << 34, "stream": 0, "device_free": 1 << 20,
                      "time_us": T0 + (2500000 if rank == 1 else 1000000) + 500000, "frames": []})
    seg = {"device": 0, "address": a_base, "total_size": a_size, "stream": 0, "segment_type": "large",
           "is_expandable": False,
           "blocks": [{"address": a, "size": sz, "requested_size": sz, "state": "active_allocated", "frames": fr}
                      for a, (sz, fr) in sorted(live.items())]}
    return {"segments": [seg], "device_traces": [trace]}



if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "ranks")
    os.makedirs(out, exist_ok=True)
    for r in range(4):
        with open(os.path.join(out, "rank%d.pickle" % r), "wb") as fp:
            pickle.dump(make(r, 100 + r), fp, protocol=4)
