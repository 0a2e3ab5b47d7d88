#!/usr/bin/env python3
"""tools/memlens_capture.py: the OOM-capture helper without a GPU.

What needs no torch runs always: file names by rank and time, the dump
(atomic, a pickle that memlens reads), keeping the last N, the observer
driven by calling it as PyTorch would (device, request, allocated, free)
with the snapshot it writes read back by `memlens diagnose`. What needs
torch (start() against this torch's own _record_memory_history signature,
the observer attached through torch._C) runs with Debian's CPU torch when
it is importable, and is a TAP skip otherwise.

Usage: cli-capture.py MEMLENS SRCROOT   (TAP)
"""
import contextlib
import datetime
import inspect
import io
import os
import pickle
import subprocess
import sys
import tempfile

memlens, src = sys.argv[1], sys.argv[2]

# Debian's CPU torch is installed for /usr/bin/python3 (tools/deps.sh
# --torch); meson may have found another python3 first (a pyenv), where the
# torch checks would always skip. Run under the one that has torch.
SYSTEM_PY = "/usr/bin/python3"
if (os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PY) and os.access(SYSTEM_PY, os.X_OK)
        and subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode != 0
        and subprocess.run([SYSTEM_PY, "-c", "import torch"], capture_output=True).returncode == 0):
    os.execv(SYSTEM_PY, [SYSTEM_PY] + sys.argv)
sys.path.insert(0, os.path.join(src, "tools"))
sys.path.insert(0, os.path.join(src, "tests"))
import memlens_capture as mc  # noqa: E402
from snaplib import ok, done  # noqa: E402

n_skip = 0


def skip(what, why):
    global n_skip
    import snaplib
    snaplib._n += 1
    print("ok %d # SKIP %s: %s" % (snaplib._n, what, why))


MiB = 1 << 20
# a snapshot as torch.cuda.memory._snapshot() returns one at an OOM: a
# 20 MiB segment holding one live 12 MiB block, and the refused request
SNAP = {
    "segments": [{"device": 0, "address": 0x7f0000000000, "total_size": 20 * MiB, "allocated_size": 12 * MiB,
                  "active_size": 12 * MiB, "requested_size": 12 * MiB, "stream": 0, "segment_type": "large",
                  "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
                  "blocks": [{"address": 0x7f0000000000, "size": 12 * MiB, "requested_size": 12 * MiB,
                              "state": "active_allocated", "frames": []},
                             {"address": 0x7f0000000000 + 12 * MiB, "size": 8 * MiB, "requested_size": 0,
                              "state": "inactive", "frames": []}]}],
    "device_traces": [[
        {"action": "segment_alloc", "addr": 0x7f0000000000, "size": 20 * MiB, "stream": 0, "time_us": 1, "frames": []},
        {"action": "alloc", "addr": 0x7f0000000000, "size": 12 * MiB, "stream": 0, "time_us": 2, "frames": []},
        {"action": "oom", "device_free": 3 * MiB, "size": 64 * MiB, "stream": 0, "time_us": 3, "frames": []},
    ]],
    "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1, "expandable_segments": False},
}

tmp = tempfile.mkdtemp(prefix="memlens-capture-")
os.environ.pop("LOCAL_RANK", None)
os.environ.pop("SLURM_PROCID", None)

# ---- names ----
os.environ["RANK"] = "3"
when = datetime.datetime(2025, 1, 2, 3, 4, 5)
p = mc.snapshot_path("d", when=when, pid=42)
ok(p == os.path.join("d", "memlens-oom-rank3-20250102-030405-42.pickle"), "a dump is named by reason, rank, time and pid: %s" % p)
os.environ["RANK"] = "x"
os.environ["LOCAL_RANK"] = "5"
ok(mc.rank() == 5, "rank: LOCAL_RANK when RANK is not a number")
del os.environ["LOCAL_RANK"]
ok(mc.rank() == 0, "rank 0 without a launcher")
os.environ["RANK"] = "1"

# ---- the observer, called as PyTorch calls it ----
import types  # noqa: E402
fake = types.ModuleType("torch")
fake.cuda = types.SimpleNamespace(memory=types.SimpleNamespace(_snapshot=lambda: SNAP))
real_torch = sys.modules.get("torch")
sys.modules["torch"] = fake
mc._state.update(dir=os.path.join(tmp, "snaps"), keep=2)
err = io.StringIO()
with contextlib.redirect_stderr(err):
    mc._observer(0, 64 * MiB, 12 * MiB, 3 * MiB)
written = sorted(os.listdir(os.path.join(tmp, "snaps")))
ok(len(written) == 1 and written[0].startswith("memlens-oom-rank1-") and written[0].endswith(".pickle"),
   "the observer wrote one snapshot named for rank 1: %s" % written)
path = os.path.join(tmp, "snaps", written[0]) if written else ""
with open(path, "rb") as f:
    ok(pickle.load(f) == SNAP, "the file is the snapshot, pickled as _dump_snapshot writes it")
msg = err.getvalue()
ok("CUDA out of memory on device 0 (request 64.00 MiB, 3.00 MiB free)" in msg, "stderr names the device, request and free bytes")
ok(("memlens diagnose %s --device 0" % path) in msg, "and prints the memlens command for the file")
r = subprocess.run([memlens, "diagnose", path, "--device", "0"], capture_output=True, text=True)
ok(r.returncode in (0, 1) and "64.00 MiB" in r.stdout, "the printed command runs on the file: memlens diagnose reads the OOM (exit %d)" % r.returncode)
ok(not [n for n in os.listdir(os.path.join(tmp, "snaps")) if n.endswith(".tmp")], "no temporary file is left behind")

# a failing dump never raises out of the observer (an OOM must stay an OOM)
fake.cuda.memory._snapshot = lambda: (_ for _ in ()).throw(RuntimeError("boom"))
err = io.StringIO()
with contextlib.redirect_stderr(err):
    mc._observer(0, 1, 1, 1)
ok("could not be written: boom" in err.getvalue(), "a snapshot that cannot be taken is reported, not raised")
fake.cuda.memory._snapshot = lambda: SNAP

# ---- keep the last N of this rank ----
d = os.path.join(tmp, "rot")
os.makedirs(d)
other = os.path.join(d, "memlens-oom-rank7-20200101-000000-1.pickle")
open(other, "wb").close()
for stamp in ("20250101-000001", "20250101-000002", "20250101-000003"):
    open(os.path.join(d, "memlens-oom-rank1-%s-9.pickle" % stamp), "wb").close()
mc._state.update(dir=d, keep=2)
newest = mc.dump(reason="oom", snapshot=SNAP)
left = sorted(os.listdir(d))
ok(len([n for n in left if "-rank1-" in n]) == 2 and newest in [os.path.join(d, n) for n in left],
   "keep=2: this rank's two newest remain, the new one among them: %s" % left)
ok(os.path.exists(other), "another rank's snapshot is never deleted")
same = mc.dump(reason="oom", snapshot=SNAP)
ok(same != newest and os.path.exists(same) and os.path.exists(newest),
   "two dumps in one second get two names, both kept: %s" % sorted(os.listdir(d)))

if real_torch is not None:
    sys.modules["torch"] = real_torch
else:
    del sys.modules["torch"]

# ---- start() against the real torch ----
try:
    import torch
except Exception as e:  # noqa: BLE001
    torch = None
    why = "torch is not importable (%s)" % type(e).__name__
if torch is None:
    for what in ("start() passes this torch's _record_memory_history only arguments its signature takes",
                 "start() attaches the observer through torch._C",
                 "start() refuses a torch without the OOM observer, by name",
                 "start() checks its own arguments"):
        skip(what, why)
else:
    real = torch.cuda.memory._record_memory_history
    sig = inspect.signature(real)
    calls = []

    def record(*a, **kw):
        sig.bind(*a, **kw)   # TypeError when this torch would refuse them
        calls.append(kw)

    torch.cuda.memory._record_memory_history = record
    had = hasattr(torch._C, "_cuda_attach_out_of_memory_observer")
    if not had:
        with contextlib.suppress(RuntimeError):
            mc.start(os.path.join(tmp, "s0"))
        ok(not calls, "start() refuses a torch without the OOM observer, by name, before recording anything")
    attached = []
    torch._C._cuda_attach_out_of_memory_observer = attached.append
    try:
        kw = mc.start(os.path.join(tmp, "s1"), keep=3, max_entries=1000)
        ok(calls and calls[-1] == kw, "start() passes torch %s's _record_memory_history only arguments its signature "
           "takes: %s" % (torch.__version__, kw))
        ok(attached == [mc._observer], "start() attaches the observer through torch._C")
    finally:
        if not had:
            del torch._C._cuda_attach_out_of_memory_observer
        torch.cuda.memory._record_memory_history = real
    if had:
        skip("start() refuses a torch without the OOM observer", "this torch has one")
    try:
        mc.start(os.path.join(tmp, "s2"), keep=0)
        ok(False, "start() checks its own arguments")
    except ValueError as e:
        ok("keep" in str(e), "start() checks its own arguments: %s" % e)

# the current signature (torch 2.1+), whatever torch is installed
def modern(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None,
           clear_history=False, compile_context=False, global_record_annotations=False):
    pass
kw = mc._record_kwargs(modern, 5000, "python", "all")
ok(kw == {"enabled": "all", "max_entries": 5000, "context": "all", "stacks": "python"},
   "the current _record_memory_history gets enabled='all', context, stacks and max_entries: %s" % kw)
def legacy(enabled, record_context=True, trace_alloc_max_entries=1, trace_alloc_record_context=False, device=None):
    pass
kw = mc._record_kwargs(legacy, 5000, "python", "all")
ok(kw == {"enabled": True, "record_context": True, "trace_alloc_max_entries": 5000, "trace_alloc_record_context": True},
   "the 2.0 form gets enabled=True and trace_alloc_max_entries: %s" % kw)

# the GPU recording script: compiles, and without a GPU says what is missing
rec = os.path.join(src, "tools", "record-torch-snapshots.py")
r = subprocess.run([sys.executable, rec, os.path.join(tmp, "rec")], capture_output=True, text=True)
ok(r.returncode == 2 and ("not importable" in r.stderr or "no CUDA GPU" in r.stderr),
   "record-torch-snapshots.py without a GPU exits 2 naming what is missing: %s" % r.stderr.strip())

sys.exit(done())
