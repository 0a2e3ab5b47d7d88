"""memlens_capture: record PyTorch's CUDA memory history and dump a snapshot
when CUDA runs out of memory, named by rank and time, keeping the last N.

Three lines in a training script (docs/pytorch.md, "Capture"):

    import memlens_capture
    memlens_capture.start("oom-snapshots", keep=3)
    train()

At an out-of-memory error the CUDA caching allocator calls the observer
this module attaches (torch._C._cuda_attach_out_of_memory_observer)
before it raises, while the allocator's state is still that of the
failure; the observer writes DIR/memlens-oom-rank<R>-<YYYYmmdd-HHMMSS>-<pid>.pickle
(torch.cuda.memory._snapshot(), pickled as torch.cuda.memory._dump_snapshot
writes it), deletes this rank's older OOM snapshots beyond the last KEEP,
and prints the memlens command to read it:

    memlens: CUDA out of memory on device 0 (request 2.00 GiB, 512.00 MiB free):
    wrote oom-snapshots/memlens-oom-rank0-20250101-120000-4242.pickle
    memlens: read it with: memlens diagnose oom-snapshots/memlens-oom-rank0-20250101-120000-4242.pickle --device 0

Pure Python (the standard library, and torch at run time); importable from
the source tree (tools/) and installed beside memlens. Nothing here runs
unless start() is called; memlens itself never runs Python.
"""
import datetime
import glob
import inspect
import os
import pickle
import re
import sys
import tempfile

__all__ = ["start", "stop", "dump", "snapshot_path", "rank"]

PREFIX = "memlens-oom"
_state = {"dir": None, "keep": None, "device": None, "observer": None, "written": []}


def rank():
    """This process's rank: torch.distributed's when it is initialised,
    else the launcher's RANK, LOCAL_RANK or SLURM_PROCID, else 0."""
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:
        pass
    for var in ("RANK", "LOCAL_RANK", "SLURM_PROCID"):
        value = os.environ.get(var, "")
        if value.strip().isdigit():
            return int(value)
    return 0


def snapshot_path(directory, when=None, pid=None, reason="oom", the_rank=None):
    """The file a dump writes: DIR/memlens-<reason>-rank<R>-<YYYYmmdd-HHMMSS>-<pid>.pickle."""
    when = when or datetime.datetime.now()
    the_rank = rank() if the_rank is None else the_rank
    pid = os.getpid() if pid is None else pid
    name = "memlens-%s-rank%d-%s-%d.pickle" % (reason, the_rank, when.strftime("%Y%m%d-%H%M%S"), pid)
    return os.path.join(directory, name)


def _record_kwargs(fn, max_entries, stacks, context):
    """The arguments for torch.cuda.memory._record_memory_history that this
    torch's signature takes: the current form (enabled="all", context,
    stacks, max_entries), else the legacy one (enabled=True,
    record_context, trace_alloc_max_entries, trace_alloc_record_context)."""
    params = inspect.signature(fn).parameters
    if "max_entries" in params:
        kw = {"enabled": "all", "max_entries": max_entries}
        if "context" in params:
            kw["context"] = context
        if "stacks" in params:
            kw["stacks"] = stacks
        return kw
    kw = {"enabled": True}
    if "record_context" in params:
        kw["record_context"] = context is not None
    if "trace_alloc_max_entries" in params:
        kw["trace_alloc_max_entries"] = max_entries
    if "trace_alloc_record_context" in params:
        kw["trace_alloc_record_context"] = context in ("alloc", "all")
    if "record_context_cpp" in params:
        kw["record_context_cpp"] = stacks == "all"
    return kw


def _size(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return ("%d %s" % (n, unit)) if unit == "B" else ("%.2f %s" % (n, unit))
        n /= 1024.0
    return "%d B" % n


def _rotate(directory, keep, the_rank, reason):
    """Deletes this rank's older dumps of @reason beyond the newest @keep
    (by the time in their names, then their pid)."""
    if keep is None or keep <= 0:
        return []
    def order(path):   # the time in the name, then the pid, then the same-second counter
        m = re.search(r"-(\d{8}-\d{6})-(\d+)(?:\.(\d+))?\.pickle$", path)
        return (m.group(1), int(m.group(2)), int(m.group(3) or 0)) if m else ("", 0, 0)
    mine = sorted(glob.glob(os.path.join(directory, "memlens-%s-rank%d-*.pickle" % (reason, the_rank))), key=order)
    old = mine[:-keep]
    for path in old:
        try:
            os.remove(path)
        except OSError:
            pass
    return old


def dump(directory=None, reason="oom", snapshot=None, out=sys.stderr):
    """Writes the allocator's snapshot now (torch.cuda.memory._snapshot(),
    or @snapshot when given) to a new file in @directory (start()'s by
    default), atomically (a temporary file renamed), keeps the newest
    `keep` of this rank's dumps of @reason, and returns the path."""
    directory = directory or _state["dir"] or "."
    os.makedirs(directory, exist_ok=True)
    if snapshot is None:
        import torch
        snapshot = torch.cuda.memory._snapshot()
    path = snapshot_path(directory, reason=reason)
    if os.path.exists(path):   # two dumps within a second
        base = path[:-len(".pickle")]
        k = 1
        while os.path.exists("%s.%d.pickle" % (base, k)):
            k += 1
        path = "%s.%d.pickle" % (base, k)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".memlens-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            pickle.dump(snapshot, f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    _state["written"].append(path)
    _rotate(directory, _state["keep"], rank(), reason)
    return path


def _observer(device, alloc, device_allocated, device_free):
    """PyTorch's out-of-memory observer (device, the request, the bytes
    allocated on the device, the bytes free on it)."""
    out = sys.stderr
    try:
        path = dump(reason="oom")
    except Exception as e:   # never turn an OOM into another error
        print("memlens: CUDA out of memory on device %d, and the snapshot could not be written: %s" % (device, e),
              file=out)
        return
    print("memlens: CUDA out of memory on device %d (request %s, %s free): wrote %s"
          % (device, _size(alloc), _size(device_free), path), file=out)
    print("memlens: read it with: memlens diagnose %s --device %d" % (path, device), file=out)


def start(directory="memlens-snapshots", keep=5, max_entries=100000, stacks="python", context="all", device=None):
    """Starts recording the memory history (stacks and context of every
    allocation, the last @max_entries allocator actions) and attaches the
    out-of-memory observer that dumps the snapshot into @directory,
    keeping this rank's newest @keep. @stacks: "python" or "all" (C++
    frames too, slower); @context: "all", "alloc", "state" or None.
    Returns the arguments given to _record_memory_history."""
    import torch
    if stacks not in ("python", "all"):
        raise ValueError("stacks must be 'python' or 'all', not %r" % (stacks,))
    if context not in ("all", "alloc", "state", None):
        raise ValueError("context must be 'all', 'alloc', 'state' or None, not %r" % (context,))
    if not isinstance(keep, int) or keep < 1:
        raise ValueError("keep must be a positive number of snapshots, not %r" % (keep,))
    if not isinstance(max_entries, int) or max_entries < 1:
        raise ValueError("max_entries must be a positive number of trace entries, not %r" % (max_entries,))
    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if attach is None:
        raise RuntimeError("this torch (%s) has no CUDA out-of-memory observer: "
                           "a CUDA build of PyTorch 2.0 or newer is needed" % torch.__version__)
    record = torch.cuda.memory._record_memory_history
    kw = _record_kwargs(record, max_entries, stacks, context)
    if device is not None and "device" in inspect.signature(record).parameters:
        kw["device"] = device
    record(**kw)
    _state.update(dir=directory, keep=keep, device=device, observer=_observer)
    os.makedirs(directory, exist_ok=True)
    attach(_observer)
    return kw


def stop():
    """Stops recording the memory history (the observer stays attached:
    PyTorch has no call to detach it; it then dumps snapshots without a
    trace)."""
    import torch
    record = torch.cuda.memory._record_memory_history
    params = inspect.signature(record).parameters
    record(enabled=None if "max_entries" in params else False)


def _main(argv):
    """python3 -m memlens_capture [--dir D] [--keep N] [--max-entries N] SCRIPT [ARGS]:
    runs SCRIPT under start()."""
    import argparse
    import runpy
    ap = argparse.ArgumentParser(prog="memlens_capture", description=_main.__doc__)
    ap.add_argument("--dir", default="memlens-snapshots")
    ap.add_argument("--keep", type=int, default=5)
    ap.add_argument("--max-entries", type=int, default=100000)
    ap.add_argument("--stacks", choices=("python", "all"), default="python")
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    start(a.dir, keep=a.keep, max_entries=a.max_entries, stacks=a.stacks)
    sys.argv = [a.script] + a.args
    runpy.run_path(a.script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
