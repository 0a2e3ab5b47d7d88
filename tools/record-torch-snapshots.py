#!/usr/bin/env python3
"""Records on a GPU the scenarios tools/torch-fixtures.py writes from
PyTorch's rules, so that the fixtures can be checked against the real
allocator (and memlens's conformance measured on them):

  graph-two-streams   a CUDA graph captured across two streams
                      (test_cuda.py's test_cuda_graph_allocator_propagates_stream)
  graph-private-reuse a temporary freed inside a capture, reused in the
                      graph's pool; a default-pool tensor after it
  mempool             torch.cuda.MemPool: use_mem_pool, a pool deleted
                      while a tensor lives, one emptied
  streams             allocations on two side streams (their 64-bit values)
  pending-free        a tensor used on a side stream (record_stream) and
                      deleted: active_pending_free at the dump
  settings            max_split_size_mb, max_non_split_rounding_mb and a
                      roundup_power2_divisions list (a child process:
                      PYTORCH_CUDA_ALLOC_CONF is read at start)
  oom                 memlens_capture's observer writing the snapshot at a
                      real out-of-memory error (a child process)

Each file goes to OUT/NAME.pickle (torch.cuda.memory._dump_snapshot), with
OUT/manifest.json naming the torch version, the GPU and what each
scenario could record (a feature this torch lacks is skipped by name).
With --memlens BIN it then runs `BIN compare FILE --strategies caching
--json` on each and writes the conformance into the manifest.

Usage: python3 tools/record-torch-snapshots.py OUT [--memlens build/cli/memlens]
Needs a CUDA GPU and a CUDA build of PyTorch 2.1 or newer; exits 2 with a
message naming what is missing otherwise. Not run by the test suite.
"""
import argparse
import json
import os
import subprocess
import sys

MiB = 1 << 20


def fail(msg):
    print("record-torch-snapshots: " + msg, file=sys.stderr)
    sys.exit(2)


def start_history(torch, max_entries=100000):
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python", max_entries=max_entries)


def dump(torch, out, name, notes):
    path = os.path.join(out, name + ".pickle")
    torch.cuda.synchronize()
    torch.cuda.memory._dump_snapshot(path)
    torch.cuda.memory._record_memory_history(enabled=None)
    notes[name] = {"file": path}
    return path


def fresh(torch):
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(enabled=None)
    torch.cuda.empty_cache()
    start_history(torch)


def graph_two_streams(torch, out, notes):
    fresh(torch)
    x = torch.randn(10240000, device="cuda")
    y = torch.rand_like(x)
    g = torch.cuda.CUDAGraph()
    s0, s1 = torch.cuda.Stream(), torch.cuda.Stream()
    s0.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s0):
        g.capture_begin()
        z = x + y
    with torch.cuda.stream(s1):
        s1.wait_stream(s0)
        w = z + y
    s0.wait_stream(s1)
    with torch.cuda.stream(s0):
        g.capture_end()
    dump(torch, out, "graph-two-streams", notes)
    notes["graph-two-streams"]["pool"] = list(g.pool())
    del g, z, w, x, y


def graph_private_reuse(torch, out, notes):
    fresh(torch)
    s0 = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s0):
        g.capture_begin()
        t = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
        t.fill_(1)
        del t
        o = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
        o.fill_(2)
        g.capture_end()
        d = torch.empty(8 * MiB, dtype=torch.uint8, device="cuda")
    dump(torch, out, "graph-private-reuse", notes)
    del g, o, d


def mempool(torch, out, notes):
    if not hasattr(torch.cuda, "MemPool"):
        notes["mempool"] = {"skipped": "torch.cuda.MemPool is not in torch %s" % torch.__version__}
        return
    fresh(torch)
    x = torch.empty(12 * MiB, dtype=torch.uint8, device="cuda")
    p1, p2 = torch.cuda.MemPool(), torch.cuda.MemPool()
    with torch.cuda.use_mem_pool(p1):
        y = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
    del y
    z = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
    with torch.cuda.use_mem_pool(p2):
        w = torch.empty(4 * MiB, dtype=torch.uint8, device="cuda")
    ids = [list(p1.id), list(p2.id)]
    del p2
    del p1
    dump(torch, out, "mempool", notes)
    notes["mempool"]["pools"] = ids
    del x, z, w


def streams(torch, out, notes):
    fresh(torch)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    with torch.cuda.stream(s1):
        a = torch.empty(MiB, dtype=torch.uint8, device="cuda")
    del a
    with torch.cuda.stream(s2):
        b = torch.empty(MiB, dtype=torch.uint8, device="cuda")
    with torch.cuda.stream(s1):
        c = torch.empty(4096, dtype=torch.uint8, device="cuda")
    dump(torch, out, "streams", notes)
    notes["streams"]["streams"] = [s1.cuda_stream, s2.cuda_stream]
    del b, c


def pending_free(torch, out, notes):
    fresh(torch)
    s2 = torch.cuda.Stream()
    x = torch.empty(512 * 1024, dtype=torch.uint8, device="cuda")
    with torch.cuda.stream(s2):
        torch.cuda._sleep(1 << 30)   # keep s2 busy past the dump
        x.add_(1)
    x.record_stream(s2)
    del x
    y = torch.empty(512 * 1024, dtype=torch.uint8, device="cuda")
    path = os.path.join(out, "pending-free.pickle")
    torch.cuda.memory._dump_snapshot(path)   # no synchronize: the event is still pending
    torch.cuda.memory._record_memory_history(enabled=None)
    notes["pending-free"] = {"file": path}
    torch.cuda.synchronize()
    del y


CHILD_SETTINGS = r'''
import torch, sys
MiB = 1 << 20
torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks="python")
a = torch.empty(100 * MiB, dtype=torch.uint8, device="cuda"); del a
b = torch.empty(70 * MiB, dtype=torch.uint8, device="cuda")
c = torch.empty(300 * MiB, dtype=torch.uint8, device="cuda"); del c
d = torch.empty(310 * MiB, dtype=torch.uint8, device="cuda")
torch.cuda.memory._dump_snapshot(sys.argv[1])
'''

CHILD_OOM = r'''
import sys
sys.path.insert(0, sys.argv[2])
import torch, memlens_capture
memlens_capture.start(sys.argv[1], keep=2, max_entries=10000)
free, total = torch.cuda.mem_get_info()
keep = [torch.empty(free // 2, dtype=torch.uint8, device="cuda")]
try:
    keep.append(torch.empty(free, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError:
    print("oom raised")
'''


def child(code, env, *args):
    r = subprocess.run([sys.executable, "-c", code] + list(args), env=env, capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


def settings(out, notes):
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="max_split_size_mb:64,max_non_split_rounding_mb:40,"
                                                   "roundup_power2_divisions:[256:2,>:4]")
    path = os.path.join(out, "settings.pickle")
    rc, text = child(CHILD_SETTINGS, env, path)
    notes["settings"] = {"file": path} if rc == 0 else {"skipped": "the child failed: " + text[-500:]}


def oom(out, notes):
    tools = os.path.dirname(os.path.abspath(__file__))
    d = os.path.join(out, "oom")
    rc, text = child(CHILD_OOM, dict(os.environ), d, tools)
    files = sorted(os.listdir(d)) if os.path.isdir(d) else []
    notes["oom"] = {"files": [os.path.join(d, f) for f in files], "output": text[-1000:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--memlens")
    a = ap.parse_args()
    try:
        import torch
    except ImportError as e:
        fail("torch is not importable (%s)" % e)
    if not torch.cuda.is_available():
        fail("torch %s sees no CUDA GPU" % torch.__version__)
    os.makedirs(a.out, exist_ok=True)
    notes = {}
    for scenario in (graph_two_streams, graph_private_reuse, mempool, streams, pending_free):
        try:
            scenario(torch, a.out, notes)
        except Exception as e:   # a feature this torch lacks: name it, go on
            notes[scenario.__name__.replace("_", "-")] = {"skipped": "%s: %s" % (type(e).__name__, e)}
    settings(a.out, notes)
    oom(a.out, notes)
    if a.memlens:
        for name, n in notes.items():
            for f in ([n["file"]] if "file" in n else n.get("files", [])):
                r = subprocess.run([a.memlens, "compare", f, "--strategies", "caching", "--json"], capture_output=True, text=True)
                try:
                    n.setdefault("conformance", {})[f] = json.loads(r.stdout).get("caching_conformance")
                except ValueError:
                    n.setdefault("conformance", {})[f] = {"exit": r.returncode, "stderr": r.stderr[-500:]}
    manifest = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
                "scenarios": notes}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
