#!/usr/bin/env python3
"""The graph-compiler constraints of a memlens graph (docs/formats.md,
"Constraints"), checked here on a plan file from the JSON alone, for the
tests to hold `memlens plan` and `memlens check` against:
  graph-constraints.py GRAPH.json PLAN.json           prints "ok" or the first broken one (exit 1)
  graph-constraints.py GRAPH.json PLAN.json break KIND OUT.json
                                                       writes PLAN with one constraint broken
KIND: zero_copy, fixed, no_reuse, contiguous, max_block. Buffer ids are
the tensors' positions + 1 (the graph reader's); sizes are rounded to the
arena alignment or, for zero-copy tensors, the zero-copy one. Graphs
without in-place pairs, branches or symbolic dimensions only."""
import json, sys

DT = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i8": 1, "u8": 1, "bool": 1}


def load(gpath, ppath):
    g, p = json.load(open(gpath)), json.load(open(ppath))
    al = g.get("alignment", 256)
    arena_al, zc_al = (al.get("default", 256), al.get("zero_copy", al.get("default", 256))) if isinstance(al, dict) else (al, al)
    t = {}
    for i, x in enumerate(g["tensors"]):
        b = x.get("bytes")
        if b is None:
            b = DT[x["dtype"]]
            for d in x["shape"]:
                b *= d
        a = zc_al if x.get("zero_copy") else arena_al
        t[i + 1] = dict(x, rsize=-(-b // a) * a, align=a)
    place = {b["id"]: (b["segment"], b["offset"]) for b in p["buffers"]}
    return g, p, t, place


def check(g, p, t, place):
    name = {i: x["name"] for i, x in t.items()}
    ids = {x["name"]: i for i, x in t.items()}
    per_seg = {}
    for i, (s, o) in place.items():
        per_seg.setdefault(s, []).append(i)
    for i, x in t.items():
        s, o = place[i]
        if x.get("zero_copy"):
            if len(per_seg[s]) > 1:
                return "zero_copy %s shares segment %d" % (name[i], s)
            if o % x["align"]:
                return "zero_copy %s misaligned" % name[i]
        if "fixed" in x and (s, o) != (0, x["fixed"]):
            return "fixed %s at %s" % (name[i], (s, o))
        if x.get("no_reuse") or "fixed" in x:
            for j in per_seg[s]:
                if j != i and place[j][1] < o + x["rsize"] and o < place[j][1] + t[j]["rsize"]:
                    return "%s shares bytes of %s" % (name[j], name[i])
    for grp in g.get("contiguous", []):
        for a, b in zip(grp, grp[1:]):
            sa, oa = place[ids[a]]
            sb, ob = place[ids[b]]
            if sa != sb or ob != oa + t[ids[a]]["rsize"]:
                return "contiguous %s %s" % (a, b)
    mb = g.get("max_block")
    if mb:
        for s, members in per_seg.items():
            if not all(t[i].get("zero_copy") for i in members) and p["segments"][s]["size"] > mb:
                return "segment %d over max_block" % s
    return "ok"


def breaks(g, p, t, place, kind):
    ids = {x["name"]: i for i, x in t.items()}
    bufs = {b["id"]: b for b in p["buffers"]}
    if kind == "zero_copy":      # the zero-copy input into the arena's segment
        i = next(i for i, x in t.items() if x.get("zero_copy"))
        bufs[i]["segment"] = 0
    elif kind == "fixed":        # the fixed tensor one alignment up
        i = next(i for i, x in t.items() if "fixed" in x)
        bufs[i]["offset"] += g["alignment"]["default"] if isinstance(g["alignment"], dict) else g["alignment"]
    elif kind == "no_reuse":     # a tensor that is never live with the workspace, into its bytes
        i = next(i for i, x in t.items() if x.get("no_reuse"))
        j = ids["h3"]
        bufs[j]["segment"], bufs[j]["offset"] = bufs[i]["segment"], bufs[i]["offset"]
    elif kind == "contiguous":   # the group's second member one alignment further
        a, b = g["contiguous"][0][:2]
        bufs[ids[b]]["offset"] += 512
        p["segments"][bufs[ids[b]]["segment"]]["size"] += 512
    elif kind == "max_block":    # two blocks merged into one over the limit
        s0 = p["segments"][0]["size"]
        for b in p["buffers"]:
            if b["segment"] == 1:
                b["segment"], b["offset"] = 0, b["offset"] + s0
            elif b["segment"] > 1:
                b["segment"] -= 1
        p["segments"][0]["size"] += p["segments"][1]["size"]
        del p["segments"][1]
    return p


if __name__ == "__main__":
    g, p, t, place = load(sys.argv[1], sys.argv[2])
    if len(sys.argv) > 3:
        json.dump(breaks(g, p, t, place, sys.argv[4]), open(sys.argv[5], "w"))
        sys.exit(0)
    r = check(g, p, t, place)
    print(r)
    sys.exit(0 if r == "ok" else 1)
