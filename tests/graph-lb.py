#!/usr/bin/env python3
"""The lower bound of a memlens graph (docs/formats.md, "Graph JSON"),
computed here from the JSON alone, for the tests to check memlens against:
  graph-lb.py GRAPH.json [NAME=N ...]   prints the lower bound in bytes.
Sizes are elements x dtype size rounded to the alignment; lifetimes follow
the documented rules (inputs and weights from tick 0, op i at tick i + 1,
a tensor ends after its last reader, weights and outputs live to the end,
an in-place output extends its input's buffer). No reordering, no
constraints, no branches."""
import json, sys

DT = {"f64": 8, "float64": 8, "f32": 4, "float32": 4, "f16": 2, "float16": 2, "bf16": 2, "bfloat16": 2,
      "fp8": 1, "f8": 1, "i64": 8, "int64": 8, "i32": 4, "int32": 4, "i8": 1, "int8": 1, "u8": 1, "uint8": 1, "bool": 1}


def lower_bound(g, binds):
    return max(live_curve(g, binds)[0])


def live_curve(g, binds):
    """(live bytes per tick, {root: (start, end, rounded bytes)}, {tensor: root})."""
    dims = dict(g.get("dims", {}))
    dims.update(binds)
    al = g.get("alignment", 256)
    if isinstance(al, dict):
        al = al.get("default", 256)

    def dim(d):
        if isinstance(d, int):
            return d
        v = 1
        for f in d.split("*"):
            v *= int(f) if f[0].isdigit() else dims[f]
        return v

    size, kind, root = {}, {}, {}
    for t in g["tensors"]:
        if "bytes" in t:
            b = t["bytes"]
        else:
            b = DT[t["dtype"]]
            for d in t["shape"]:
                b *= dim(d)
        size[t["name"]], kind[t["name"]], root[t["name"]] = b, t.get("kind", "activation"), t["name"]
    ops = g["ops"]
    produced = set()
    for op in ops:
        for a, b in op.get("inplace", []):
            r = root[a]
            root[b] = r
            size[r] = max(size[r], size[b])
            if kind[b] == "output":
                kind[r] = "output"
        produced.update(op["outputs"])
    n = len(ops)
    start, end = {}, {}
    for t in size:
        if t not in produced and root[t] == t:
            start[t], end[t] = 0, 1
    for p, op in enumerate(ops):
        tick = p + 1
        for t in op["outputs"]:
            r = root[t]
            start.setdefault(r, tick)
            end[r] = max(end.get(r, 0), tick + 1)
        for t in op["inputs"]:
            r = root[t]
            end[r] = max(end.get(r, 0), tick + 1)
    for t in size:
        if kind[t] in ("output", "weight"):
            end[root[t]] = n + 1
    live = [0] * (n + 2)
    spans = {}
    for r in start:
        b = -(-size[r] // al) * al
        spans[r] = (start[r], end[r], b)
        for k in range(start[r], min(end[r], n + 2)):
            live[k] += b
    return live, spans, root


if __name__ == "__main__":
    g = json.load(open(sys.argv[1]))
    binds = {a.split("=")[0]: int(a.split("=")[1]) for a in sys.argv[2:]}
    print(lower_bound(g, binds))
