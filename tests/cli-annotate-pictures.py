#!/usr/bin/env python3
"""Annotate texts in pictures (issue 32): a PyTorch snapshot's `annotate`
entries (torch.cuda.memory._annotate_memory) tie a text to the block live
at their address; `render --at TICK` lists the annotated blocks live at
the tick under the state panel's rows (segment, offset, size, texts), and
the address view writes the texts after a buffer's name where they fit.
Checked against Python's reading of the raw pickles (tests/data/torch,
written by tools/torch-fixtures.py; tests/data/streams-annotate.pickle):
the blocks' lifetimes rebuilt from the trace, each annotate entry tied to
the block at its address while live, texts in time order.

Usage: cli-annotate-pictures.py MEMLENS SRCROOT   (TAP)
"""
import json
import os
import shutil
import sys

memlens, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "tests"))
from snaplib import ok, done, load_pickle, run_tool, lifetimes, picture_tmp, svg_notes  # noqa: E402

TMP = picture_tmp(memlens, src)


def notes(path, kind):
    return [n[:2] for n in svg_notes(path, kind)]


def annotated(snap):
    """[(addr, bytes, start, end, "text; text")] of the blocks with annotate
    entries: an entry at tick i + 1 goes with the block at its address then."""
    bufs, end_tick = lifetimes(snap)
    out = []
    for b in bufs:
        texts = [e["user_metadata"] for i, e in enumerate(snap["device_traces"][0])
                 if e["action"] == "annotate" and e["addr"] == b[0] and b[2] <= i + 1 < b[3] and e.get("user_metadata")]
        if texts and b[1] > 0:
            out.append((b[0], b[1], b[2], b[3], "; ".join(texts)))
    return out, end_tick


FILES = [os.path.join(src, "tests", "data", "torch", "annotate.pickle"),
         os.path.join(src, "tests", "data", "torch", "annotate-many.pickle"),
         os.path.join(src, "tests", "data", "streams-annotate.pickle")]
for path in FILES:
    name = os.path.basename(path)
    snap = load_pickle(path)
    blocks, end_tick = annotated(snap)
    svg = os.path.join(TMP, "a.svg")
    listed_any = 0
    for tick in range(end_tick):
        rc, out, err = run_tool(memlens, "render", path, "--view", "address", "--at", str(tick), "--quiet", "-o", svg)
        if not ok(rc == 0, "%s --at %d: renders (%s)" % (name, tick, err.strip())):
            continue
        seg_addr = {}
        for shown, full in notes(svg, "segment"):
            # "segment 0 at 0x7fd100000000, 2.00 MiB"
            seg_addr[int(full.split()[1])] = int(full.split(" at ")[1].split(",")[0], 16)
        got = []
        for shown, full in notes(svg, "state-annotation"):
            # "segment G + OFFSET bytes, SIZE bytes: TEXTS"
            head, _, texts = full.partition(": ")
            w = head.replace(",", "").split()
            got.append((seg_addr.get(int(w[1]), -1) + int(w[3]), int(w[5]), texts))
        want = sorted((a, n, t) for a, n, s, e, t in blocks if s <= tick < e)
        more = notes(svg, "state-annotation-more")
        if len(want) <= 6:
            ok(sorted(got) == want and not more,
               "%s --at %d: the state panel lists the %d annotated blocks live then: %s (got %s)"
               % (name, tick, len(want), want, sorted(got)))
        else:
            ok(len(got) == 6 and set(got) <= set(want) and [m[0] for m in more] == ["\u2026 and %d more" % (len(want) - 6)],
               "%s --at %d: 6 of the %d annotated blocks listed, each as Python reads it, and '\u2026 and %d more' (%s)"
               % (name, tick, len(want), len(want) - 6, [m[0] for m in more]))
        listed_any += len(got)
    ok(listed_any > 0 or not blocks, "%s: some tick lists annotated blocks (%d in all)" % (name, listed_any))
    # the address view: a label's texts are the buffer's own
    rc, out, err = run_tool(memlens, "render", path, "--view", "address", "--quiet", "-o", svg)
    labels = notes(svg, "annotation") if rc == 0 else []
    texts = set(t for *_, t in blocks)
    ok(all(full in texts and shown.endswith("\u201c%s\u201d" % full) for shown, full in labels),
       "%s: the address view's annotated labels quote their buffer's texts: %s" % (name, [l[0] for l in labels]))
    biggest = sorted(blocks, key=lambda b: -b[1] * (b[3] - b[2]))[:2]
    ok(all(any(full == b[4] for _, full in labels) for b in biggest),
       "%s: the largest annotated buffers are labelled with their texts (%s)" % (name, [b[4] for b in biggest]))
    # the report: each peak's blame names a buffer's annotate texts (JSON
    # "annotations", in time order) and the table writes them after its name
    js, md = os.path.join(TMP, "r.json"), os.path.join(TMP, "r.md")
    rc, out, err = run_tool(memlens, "report", path, "-s", "first-fit", "--quiet", "-o", js)
    rc2, out2, err2 = run_tool(memlens, "report", path, "-s", "first-fit", "--quiet", "-o", md)
    blamed = [b for p in (json.load(open(js))["peaks"] if rc in (0, 1) else []) for b in p["blame"]]
    by_life = {(b[2], b[3], b[1]): b[4] for b in blocks}
    wrong = [(b["start"], b["end"], b["annotations"]) for b in blamed
             if "; ".join(b["annotations"]) != by_life.get((b["start"], b["end"], b["requested"]), "")]
    shown = [b for b in blamed if b["annotations"]]
    ok(blamed and not wrong and (shown or not any(k in by_life for k in
                                                   ((b["start"], b["end"], b["requested"]) for b in blamed))),
       "%s: report JSON: %d blamed buffers, %d with annotate texts, each Python's (wrong: %s)"
       % (name, len(blamed), len(shown), wrong))
    table = open(md).read() if rc2 in (0, 1) else ""
    ok(all(" ".join('"%s"' % t for t in b["annotations"]).replace('" "', '"; "') in table for b in shown),
       "%s: the report's table writes each blamed buffer's texts after its name" % name)

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
