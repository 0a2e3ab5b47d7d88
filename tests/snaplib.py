"""What the snapshot tests share: TAP output and a synthetic snapshot
written the way torch.cuda.memory._dump_snapshot lays it out.

Used by the snapshot and picture tests (cli-snapshot-*.py, cli-bands.py,
cli-color-groups.py, cli-annotate-pictures.py; they import it from their
own folder), and the
live-bytes peak the planning tests check against (cli-csv-buffers.py,
cli-ilp-models.py)."""
import os
import pickle
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

_n = 0
_failed = 0


def _one_line(what):
    """A description quoting memlens's output of several lines, on one TAP
    line (the rest would be lines meson cannot read as TAP)."""
    return " | ".join(line for line in str(what).splitlines() if line.strip())


def ok(cond, what):
    """One TAP line: "ok N - what" or "not ok N - what"; returns cond."""
    global _n, _failed
    _n += 1
    what = _one_line(what)
    print(("ok %d - %s" % (_n, what)) if cond else ("not ok %d - %s" % (_n, what)))
    if not cond:
        _failed += 1
    return cond


def skip(what):
    """One TAP line for a check that cannot run here: "ok N # SKIP what"."""
    global _n
    _n += 1
    print("ok %d # SKIP %s" % (_n, _one_line(what)))


def done():
    """Prints the plan and returns the exit status: 1 if any check failed."""
    print("1..%d" % _n)
    return 1 if _failed else 0


class DataOnly(pickle.Unpickler):
    """Python's pickle, refusing anything but data (no classes, no code)."""
    def find_class(self, module, name):
        raise pickle.UnpicklingError("refusing %s.%s" % (module, name))


def load_pickle(path):
    with open(path, "rb") as f:
        return DataOnly(f).load()


def run_tool(exe, *args):
    """(exit status, stdout, stderr) of EXE ARGS."""
    r = subprocess.run([exe] + list(args), capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def live_peak(bufs, align=1):
    """The most bytes live at one tick of (id, lower, upper, size) rows
    (half-open lifetimes), each size rounded up to @align."""
    ev = []
    for _, lo, up, size in bufs:
        size = (size + align - 1) // align * align
        ev.append((lo, 1, size))
        ev.append((up, 0, -size))
    ev.sort()   # at one tick the frees (0) before the allocations (1)
    live = best = 0
    for _, _, d in ev:
        live += d
        best = max(best, live)
    return best


def size(b):
    """Bytes as memlens prints them (ml_format_size): "1.50 KiB", "2.00 MiB", "12 B"."""
    for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1024)):
        if b >= n:
            return "%.2f %s" % (b / n, unit)
    return "%d B" % b


def make(seed, entries_per_dev, step=(1, 1)):
    """A snapshot dict with one trace per device, len(entries_per_dev)
    devices, entries_per_dev[d] entries on device d.

    Frame dicts come from a pool of 300 shared by 40 call paths of 20-60
    frames; every traceback is a new list (as torch writes them), shared by
    the free_requested / free_completed pair of one free and by the
    dump-time block of a buffer still live at the end. Buffers are
    512 B..32 KiB, at most ~50 live at once, 64 KiB apart in one 1 GiB
    segment per device. Time advances by randrange(*step) microseconds per
    step (by step[0] without drawing when the two are equal)."""
    rnd = random.Random(seed)
    pool = [{"filename": ("/home/u/train.py" if k % 5 == 0 else "/usr/lib/python3/torch/nn/m%d.py" % k),
             "line": 10 + k, "name": "fn%d" % k} for k in range(300)]
    paths = [[pool[rnd.randrange(300)] for _ in range(rnd.randrange(20, 61))] for _ in range(40)]
    segments, traces = [], []
    for dev, count in enumerate(entries_per_dev):
        base = 0x7f0000000000 + dev * (1 << 36)
        seg = {"device": dev, "address": base, "total_size": 1 << 30, "stream": 0,
               "segment_type": "large", "is_expandable": False, "blocks": []}
        segments.append(seg)
        trace, live, t = [], {}, 1700000000000000
        addr = base
        while len(trace) < count:
            t += step[0] if step[0] == step[1] else rnd.randrange(*step)
            if live and (rnd.random() < 0.5 or len(live) > 50):
                a = rnd.choice(sorted(live))
                size, _ = live.pop(a)
                fr = list(rnd.choice(paths))   # a new list per traceback ...
                for action in ("free_requested", "free_completed"):   # ... shared by both
                    trace.append({"action": action, "addr": a, "size": size, "stream": 0, "time_us": t, "frames": fr})
            else:
                size = rnd.randrange(1, 64) * 512
                fr = list(rnd.choice(paths))
                live[addr] = (size, fr)
                trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": fr})
                addr += 1 << 16
        for a, (size, fr) in sorted(live.items()):   # dump time: the live blocks share the alloc's frames
            seg["blocks"].append({"address": a, "size": size, "requested_size": size, "state": "active_allocated",
                                  "frames": fr})
        traces.append(trace)
    return {"segments": segments, "device_traces": traces}


ALIGN = 512


def rnd(n):
    """Bytes rounded to memlens's alignment of a snapshot (512)."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


def lifetimes(snap, host=False):
    """Buffers as [addr, bytes, start, end, entry or None, frames]: the
    dump-time blocks undone backwards give those live at tick 0; entry i
    is tick i + 1; a block never freed ends one past the last tick.
    host: the pinned host memory (host_segments, host_traces)."""
    trace = snap["host_traces"] if host else snap["device_traces"][0]
    live = {}
    for s in snap["host_segments" if host else "segments"]:
        for b in s["blocks"]:
            if b["state"] != "inactive":
                live[b["address"]] = (b["requested_size"], None, b["frames"])
    for e in reversed(trace):
        if e["action"] == "alloc":
            live.pop(e["addr"], None)
        elif e["action"] == "free_completed":
            live[e["addr"]] = (e["size"], None, e["frames"])
    end_tick = len(trace) + 1
    open_ = {a: [a, rnd(v[0]), 0, end_tick, v[1], v[2]] for a, v in live.items()}
    bufs = list(open_.values())
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            b = [e["addr"], rnd(e["size"]), i + 1, end_tick, e, e["frames"]]
            open_[e["addr"]] = b
            bufs.append(b)
        elif e["action"] == "free_completed":
            open_.pop(e["addr"])[3] = i + 1
    return bufs, end_tick


def live_at(bufs, tick):
    return sum(b[1] for b in bufs if b[2] <= tick < b[3])


# ---- pools and streams (cli-bands.py, test-viewer.sh) ----
def stream_text(v):
    return "%d" % v if v <= 0xFFFF else "0x%x" % v


def pool_name(pool):
    """A pool id as memlens names it: default pool, CUDA graph pool (1, 0), MemPool (0, 2)."""
    pool = tuple(pool)
    if pool == (0, 0):
        return "default pool"
    return "%s (%d, %d)" % ("CUDA graph pool" if pool[1] == 0 else "MemPool", pool[0], pool[1])


def band_label(pool, stream):
    return "%s · stream %s" % (pool_name(pool), stream_text(stream))


def segments_ever(snap):
    """{address: (size, pool, stream, start, end)} of every segment the
    file shows: the dump-time ones (live from the start unless the trace
    allocates them) and those the trace allocates and frees. An entry
    without pool_id is in the pool of the dump-time segment at its address
    (memory_viz's find_pool_id), else the default pool."""
    trace = snap["device_traces"][0]
    dump = {s["address"]: s for s in snap["segments"]}

    def pool_at(addr):
        for s in snap["segments"]:
            if s["address"] <= addr < s["address"] + s["total_size"]:
                return tuple(s.get("segment_pool_id", (0, 0)))
        return (0, 0)
    end = len(trace) + 1
    live = {a: [s["total_size"], tuple(s.get("segment_pool_id", (0, 0))), s["stream"], 0, end] for a, s in dump.items()}
    for e in reversed(trace):   # undo the trace: what was there at the start
        if e["action"] == "segment_alloc":
            live.pop(e["addr"], None)
        elif e["action"] == "segment_free":
            live[e["addr"]] = [e["size"], tuple(e.get("pool_id", pool_at(e["addr"]))), e["stream"], 0, end]
    out = {a: list(v) for a, v in live.items()}
    for i, e in enumerate(trace):
        if e["action"] == "segment_alloc":
            out[e["addr"]] = [e["size"], tuple(e.get("pool_id", pool_at(e["addr"]))), e["stream"], i + 1, end]
        elif e["action"] == "segment_free":
            out[e["addr"]][4] = i + 1
    return out


def python_bands(segs):
    g = {}
    for a, (_, pool, stream, _s, _e) in segs.items():
        g.setdefault(band_label(pool, stream), set()).add(a)
    return g


# ---- groups (stats --group-by, render --color-by) ----
def frame_texts(frames):
    return ["%s:%d:%s" % (f["filename"], f["line"], f["name"]) for f in frames]


def regex_key(rx):
    """A buffer's group under a frames expression: the first frame (innermost
    first) that matches, its first group when the expression has one."""
    def key(b):
        for text in frame_texts(b[5]):
            m = re.search(rx, text)
            if m:
                return m.group(1) if m.re.groups and m.group(1) is not None else m.group(0)
        return None
    return key


def entry_key(field):
    """A buffer's group under compile_context / user_metadata: its alloc
    entry's field (None for blocks live before the trace, or an empty one)."""
    return lambda b: (b[4] and b[4].get(field)) or None


# ---- pictures ----
def picture_tmp(exe, src):
    """A temporary folder for a picture test; without cairo (this memlens
    draws nothing) the TAP plan "1..0 # SKIP" and exit 0."""
    tmp = tempfile.mkdtemp()
    rc, _out, err = run_tool(exe, "render", os.path.join(src, "samples", "tiny.16.csv"), "--quiet",
                             "-o", os.path.join(tmp, "probe.svg"))
    if rc != 0 and "built without cairo" in err:
        shutil.rmtree(tmp, ignore_errors=True)
        print("1..0 # SKIP this memlens draws no pictures (built without cairo)")
        sys.exit(0)
    return tmp


_SVG = "{http://www.w3.org/2000/svg}"


def svg_notes(path, kind):
    """(shown, hover, x, y, w, h) of an SVG's notes of @kind (class ml-KIND)."""
    out = []
    for r in ET.parse(path).getroot().iter(_SVG + "rect"):
        if r.get("class") == "ml-" + kind:
            out.append((r.find(_SVG + "desc").text, r.find(_SVG + "title").text, float(r.get("x")),
                        float(r.get("y")), float(r.get("width")), float(r.get("height"))))
    return out


def read_png(path):
    """(width, height, rows): rows[y][x] is (r, g, b) of an 8-bit RGB or
    RGBA PNG (what cairo writes), by zlib and the five PNG filters."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "PNG colour type %d depth %d" % (ctype, depth)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows
