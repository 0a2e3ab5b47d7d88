#!/usr/bin/env python3
"""Pictures coloured by group (issue 32): `render --color-by
compile_context | user_metadata | frames:REGEX` on PyTorch snapshots
(tests/data/torch, written by tools/torch-fixtures.py), checked against
Python's reading of the raw pickle: the legend names exactly the groups
Python finds ("(none)" included), with the bytes each has live at the
lower-bound tick, and every buffer's rectangle in the PNG is the colour of
its group's legend swatch. Formats that record no such field are refused.

Usage: cli-color-groups.py MEMLENS SRCROOT   (TAP)
"""
import os
import re
import shutil
import sys

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "tests"))
from snaplib import (ok, done, load_pickle, run_tool, lifetimes, live_at, size, regex_key, entry_key,  # noqa: E402
                     read_png, picture_tmp, svg_notes as notes)

D = os.path.join(src, "tests", "data", "torch")
TMP = picture_tmp(memlens, src)


def legend_label(full):
    """"phase=fwd (9.00 MiB at peak)" -> ("phase=fwd", "9.00 MiB"); no amount: None."""
    if full.endswith(" at peak)"):
        head, _, amount = full[:-len(" at peak)")].rpartition(" (")
        return head, amount
    return full, None


def lower_bound_tick(bufs, end_tick):
    lv = [live_at(bufs, k) for k in range(end_tick)]
    return lv.index(max(lv))


CASES = [
    ("groups", "compile_context", entry_key("compile_context")),
    ("groups", "user_metadata", entry_key("user_metadata")),
    ("compile-context", "compile_context", entry_key("compile_context")),
    ("compile-context", "user_metadata", entry_key("user_metadata")),
    ("groups", r"frames:model\.py:[0-9]+:([a-z_]+)", regex_key(r"model\.py:[0-9]+:([a-z_]+)")),
    ("groups", r"frames:/home/u/[a-z]+\.py", regex_key(r"/home/u/[a-z]+\.py")),
]
for name, by, key in CASES:
    path = os.path.join(D, name + ".pickle")
    bufs, end_tick = lifetimes(load_pickle(path))
    bufs = [b for b in bufs if b[1] > 0]
    group = [key(b) or "(none)" for b in bufs]
    lbt = lower_bound_tick(bufs, end_tick)
    at_peak = {}
    for b, g in zip(bufs, group):
        if b[2] <= lbt < b[3]:
            at_peak[g] = at_peak.get(g, 0) + b[1]
    what = "%s --color-by %s" % (name, by)
    svg, png = os.path.join(TMP, "c.svg"), os.path.join(TMP, "c.png")
    rc, out, err = run_tool(memlens, "render", path, "--view", "address", "--color-by", by, "--quiet", "-o", svg)
    if not ok(rc == 0, "%s: render to SVG (%s)" % (what, err.strip())):
        continue
    legend = notes(svg, "legend")
    got = {}
    for shown, full, *_ in legend:
        label, amount = legend_label(full)
        got[label] = amount
    want = {g: (size(at_peak[g]) if at_peak.get(g) else None) for g in set(group)}
    ok(got == want, "%s: the legend names the groups Python finds, each with its bytes at the lower-bound tick %d: "
       "%s (got %s)" % (what, lbt, sorted(want.items()), sorted(got.items())))
    head = "colour by %s:" % by if not by.startswith("frames:") else "colour by frames /%s/:" % by[7:]
    heads = [n[0] for n in notes(svg, "legend-head")]
    ok(heads == [head], "%s: the legend's head says %r (got %s)" % (what, head, heads))
    for view in ("active", "segments"):
        rc, out, err = run_tool(memlens, "render", path, "--view", view, "--color-by", by, "--quiet", "-o", svg)
        other = sorted(legend_label(n[1])[0] for n in notes(svg, "legend")) if rc == 0 else None
        ok(other == sorted(want), "%s: --view %s has the same legend (%s)" % (what, view, other))
    # the PNG: each buffer's rectangle is its group's swatch colour (no
    # names drawn over them)
    rc, out, err = run_tool(memlens, "render", path, "--view", "address", "--color-by", by, "--no-labels", "--quiet",
                            "-o", png)
    run_tool(memlens, "render", path, "--view", "address", "--color-by", by, "--no-labels", "--quiet", "-o", svg)
    if not ok(rc == 0, "%s: render to PNG (%s)" % (what, err.strip())):
        continue
    w, h, px = read_png(png)
    swatch = {}
    for shown, full, x, y, ww, hh in notes(svg, "legend"):
        swatch[legend_label(full)[0]] = px[int(y + hh / 2)][int(x + 5)]
    ok(len(set(swatch.values())) == len(swatch), "%s: every group has its own colour %s" % (what, swatch))
    plot = notes(svg, "plot")[0]
    segs = notes(svg, "segment")
    base = min(b[0] for b in bufs)   # the fixtures' one segment starts at their lowest block
    seg_size = int(segs[0][1].rsplit(", ", 1)[1].split()[0].replace(".00", "")) << 20 if len(segs) == 1 else None
    if not ok(seg_size is not None, "%s: one segment (%s)" % (what, [s[1] for s in segs])):
        continue
    bad = []
    for b, g in zip(bufs, group):
        # inside the rectangle, off the ticks (the lower bound's dashed line)
        cx = plot[2] + (b[2] + 0.37 * (b[3] - b[2])) / end_tick * plot[4]
        cy = segs[0][3] + segs[0][5] - (b[0] - base + b[1] / 2) / seg_size * segs[0][5]
        c = px[int(cy)][int(cx)]
        if c != swatch.get(g):
            bad.append((hex(b[0]), b[2], g, c, swatch.get(g)))
    ok(not bad, "%s: all %d buffers drawn in their group's legend colour (wrong: %s)" % (what, len(bufs), bad))

# ---- formats that record no such field: refused, saying why ----
csv = os.path.join(src, "samples", "tiny.16.csv")
kineto = os.path.join(src, "tests", "data", "kineto-profile.json.gz")
for path, fmt in ((csv, "csv"), (kineto, "kineto")):
    for by in ("compile_context", "user_metadata"):
        out_png = os.path.join(TMP, "refused.png")
        rc, out, err = run_tool(memlens, "render", path, "--color-by", by, "-o", out_png)
        ok(rc == 2 and ("a %s trace records no %s" % (fmt, by)) in err and not os.path.exists(out_png),
           "%s --color-by %s: exit 2, says the %s format records none, no picture (%d: %s)"
           % (os.path.basename(path), by, fmt, rc, err.strip()))
rc, out, err = run_tool(memlens, "render", csv, "--color-by", "frames:x", "-o", os.path.join(TMP, "r.png"))
ok(rc == 2 and "records no stacks" in err, "tiny.16.csv --color-by frames:x: exit 2, no stacks (%d: %s)"
   % (rc, err.strip()))
rc, out, err = run_tool(memlens, "stats", csv, "--group-by", "compile_context")
ok(rc == 2 and "--group-by compile_context: a csv trace records no compile_context" in err,
   "stats --group-by compile_context on a CSV: exit 2, the same reason (%d: %s)" % (rc, err.strip()))
path = os.path.join(D, "groups.pickle")
rc, out, err = run_tool(memlens, "render", path, "--color-by", "frames:(", "-o", os.path.join(TMP, "r.png"))
ok(rc == 2 and '"(" is not a regular expression' in err, "--color-by frames:( exits 2 naming it (%d: %s)"
   % (rc, err.strip()))
for bad in ("frames", "frames:", "sites"):
    rc, out, err = run_tool(memlens, "render", path, "--color-by", bad, "-o", os.path.join(TMP, "r.png"))
    ok(rc == 2 and "frames:REGEX" in err, "--color-by %s: exit 2, the choices named (%d: %s)" % (bad, rc, err.strip()))

# memlens JSONL keeps the fields: a converted snapshot colours the same
jsonl = os.path.join(TMP, "groups.jsonl")
rc, out, err = run_tool(memlens, "convert", path, jsonl)
if ok(rc == 0, "convert groups.pickle to JSONL (%s)" % err.strip()):
    svg = os.path.join(TMP, "j.svg")
    rc, out, err = run_tool(memlens, "render", jsonl, "--color-by", "user_metadata", "--quiet", "-o", svg)
    bufs, _ = lifetimes(load_pickle(path))
    want = sorted(set(entry_key("user_metadata")(b) or "(none)" for b in bufs if b[1] > 0))
    got = sorted(legend_label(n[1])[0] for n in notes(svg, "legend")) if rc == 0 else None
    ok(got == want, "the JSONL --color-by user_metadata: legend %s (Python: %s)" % (got, want))

# the static HTML report: --color-by colours its pictures as render does
# (every figure with a legend names the groups Python finds); refused where
# there are no pictures, beside --interactive, and on a CSV
path = os.path.join(D, "groups.pickle")
bufs, _ = lifetimes(load_pickle(path))
html = os.path.join(TMP, "r.html")
for by in ("compile_context", "user_metadata"):
    rc, out, err = run_tool(memlens, "report", path, "--color-by", by, "--strategies", "first-fit", "--quiet", "-o", html)
    want = sorted(set(entry_key(by)(b) or "(none)" for b in bufs if b[1] > 0))
    figs = []
    if rc == 0:
        for svg in re.findall(r"<svg\b.*?</svg>", open(html).read(), re.S):
            with open(os.path.join(TMP, "fig.svg"), "w") as f:
                f.write(svg)
            heads = [n[0] for n in notes(os.path.join(TMP, "fig.svg"), "legend-head")]
            if heads:
                figs.append((heads, sorted(legend_label(n[1])[0] for n in notes(os.path.join(TMP, "fig.svg"), "legend"))))
    ok(figs and all(h == ["colour by %s:" % by] and g == want for h, g in figs),
       "report --color-by %s: %d figures, each's legend names %s (got %s)" % (by, len(figs), want, figs))
for args, why in (((path, "-o", os.path.join(TMP, "r.md")), "only the HTML report has pictures"),
                  ((path, "--interactive", "-o", html), "the interactive page has its own colour choice"),
                  ((os.path.join(src, "samples", "tiny.16.csv"), "-o", html),
                   "a csv trace records no compile_context")):
    if os.path.exists(html):
        os.unlink(html)
    rc, out, err = run_tool(memlens, "report", "--color-by", "compile_context", *args)
    ok(rc == 2 and why in err and not os.path.exists(args[-1]),
       "report --color-by compile_context %s: exit 2, %r, no file (%d: %s)" % (" ".join(args[1:]), why, rc, err.strip()))

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
