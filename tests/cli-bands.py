#!/usr/bin/env python3
"""Pools and streams as bands (issue 32): `render --view segments` groups
the segments by (memory pool, stream), each group a labelled band of the
packed address axis, and the state panel (--at) groups its rows alike.
Checked against Python's grouping of the raw pickle's segments
(tests/data/torch, written by tools/torch-fixtures.py): which segments
each band holds, its label, and the state panel's bytes per band.

Usage: cli-bands.py MEMLENS SRCROOT   (TAP)
"""
import os
import shutil
import sys

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "tests"))
from snaplib import (ok, done, load_pickle, run_tool, lifetimes, size, band_label, segments_ever, python_bands,  # noqa: E402
                     picture_tmp, svg_notes as notes)

D = os.path.join(src, "tests", "data", "torch")
TMP = picture_tmp(memlens, src)


def state_at(segs, bufs, tick):
    """{band label: (segments, allocated, free)} at @tick: the segments
    reserved then, the rounded bytes of the live blocks in them, the rest
    of their bytes free (cached)."""
    out = {}
    for a, (sz, pool, stream, s0, s1) in segs.items():
        if not (s0 <= tick < s1):
            continue
        al = sum(b[1] for b in bufs if b[2] <= tick < b[3] and a <= b[0] < a + sz)
        n, al0, fr0 = out.get(band_label(pool, stream), (0, 0, 0))
        out[band_label(pool, stream)] = (n + 1, al0 + al, fr0 + sz - al)
    return out


FIXTURES = ["graph-two-streams", "graph-two-streams-nopoolid", "mempool", "graph-private-reuse", "streams-64bit"]
for name in FIXTURES:
    path = os.path.join(D, name + ".pickle")
    snap = load_pickle(path)
    segs = segments_ever(snap)
    want = python_bands(segs)
    n = len(snap["device_traces"][0])
    for tick in (n // 2 + 1, n):
        svg = os.path.join(TMP, "%s-%d.svg" % (name, tick))
        rc, out, err = run_tool(memlens, "render", path, "--view", "segments", "--at", str(tick), "--quiet", "-o", svg)
        if not ok(rc == 0, "%s: render --view segments --at %d (%s)" % (name, tick, err.strip())):
            continue
        bands = notes(svg, "band")
        got = {}
        for shown, full, *_ in bands:
            got[shown] = set(int(w, 16) for w in full.split(": ", 2)[2].split())
        if tick == n:
            ok(got == want, "%s: %d bands, each with the segments of its (pool, stream) in the pickle: %s"
               % (name, len(want), sorted((k, sorted(hex(a) for a in v)) for k, v in want.items())))
            # every band's label is drawn whole, inside its band's part of the plot
            labels = notes(svg, "band-label")
            plot = [p for p in notes(svg, "plot")][0]
            ok(sorted(l[0] for l in labels) == sorted(want),
               "%s: every band's label is drawn (%s)" % (name, sorted(l[0] for l in labels)))
            inside = all(plot[2] <= l[2] and l[2] + l[4] <= plot[2] + plot[4] and plot[3] <= l[3]
                         and l[3] + l[5] <= plot[3] + plot[5] for l in labels)
            ok(inside, "%s: the labels lie inside the plot, none cut" % name)
            in_band = all(any(b[0] == l[0] and b[3] <= l[3] and l[3] + l[5] <= b[3] + b[5] for b in bands)
                          for l in labels)
            ok(in_band, "%s: each label inside its own band (the bands are tall enough here)" % name)
            # the bands do not overlap, and each segment lies in its band
            ys = sorted((b[3], b[3] + b[5]) for b in bands)
            # (the SVG writes one decimal: 0.1 px of rounding)
            ok(all(ys[k][1] <= ys[k + 1][0] + 0.11 for k in range(len(ys) - 1)), "%s: the bands do not overlap" % name)
            seg_notes = notes(svg, "segment")
            band_of = {}
            for b in bands:
                for a in got[b[0]]:
                    band_of[a] = b
            fits = True
            for shown, full, x, y, w, h in seg_notes:
                a = int(full.split(" at ")[1].split(",")[0], 16)
                b = band_of.get(a)
                fits = fits and b is not None and b[3] - 0.11 <= y and y + h <= b[3] + b[5] + 0.11
            ok(fits and len(seg_notes) == len(segs), "%s: each of the %d segments is drawn inside its band"
               % (name, len(segs)))
        # the state panel: a head per band with a segment reserved at the tick
        bufs, _ = lifetimes(snap)
        st = state_at(segs, bufs, tick)
        heads = {h[0]: h[1] for h in notes(svg, "state-band")}
        want_heads = {k: "%d segment%s: allocated %s, free (cached) %s" % (c, "" if c == 1 else "s", size(al), size(fr))
                      for k, (c, al, fr) in st.items()}
        ok(heads == want_heads, "%s at tick %d: the state panel's bands say %s" % (name, tick, want_heads))

# one group only: no bands (a snapshot of the default pool on one stream)
path = os.path.join(D, "call-sites.pickle")
svg = os.path.join(TMP, "one.svg")
rc, out, err = run_tool(memlens, "render", path, "--view", "segments", "--quiet", "-o", svg)
snap = load_pickle(path)
groups = python_bands(segments_ever(snap))
ok(rc == 0 and len(groups) == 1 and not notes(svg, "band"), "one (pool, stream) in the pickle (%s): no bands drawn"
   % sorted(groups))
# the raw address axis interleaves the groups: no bands there
path = os.path.join(D, "graph-two-streams.pickle")
svg = os.path.join(TMP, "raw.svg")
rc, out, err = run_tool(memlens, "render", path, "--view", "segments", "--address-axis", "raw", "--quiet", "-o", svg)
ok(rc == 0 and not notes(svg, "band"), "--address-axis raw: no bands")
# the emulation keeps the pools apart too: caching's segments fall into the same bands
svg = os.path.join(TMP, "caching.svg")
rc, out, err = run_tool(memlens, "render", path, "--view", "segments", "--strategy", "caching", "--quiet", "-o", svg)
want = python_bands(segments_ever(load_pickle(path)))
got = {b[0]: int(b[1].split(": ", 2)[1].split()[0]) for b in notes(svg, "band")} if rc == 0 else {}
ok(got == {k: len(v) for k, v in want.items()}, "--strategy caching: the bands and their segment counts %s" % got)

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
