#!/usr/bin/env python3
"""A plan of a graph with branches, checked here against each alternative
on its own (docs/formats.md, "Control flow"):
  graph-branch.py GRAPH.json PLAN.json
For each alternative k the graph is inlined (the branch op, then only
alternative k's ops; a write of a branch output is a read of it), its
lifetimes computed as tests/graph-lb.py does, and every two buffers live
at once must have disjoint bytes in the plan. Prints the largest lower
bound over the alternatives (the worst case) and exits 1 on a clash."""
import importlib.util, json, os, sys

s = importlib.util.spec_from_file_location("lb", os.path.join(os.path.dirname(__file__), "graph-lb.py"))
lb = importlib.util.module_from_spec(s)
s.loader.exec_module(lb)

g, p = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
idx = {t["name"]: i + 1 for i, t in enumerate(g["tensors"])}
place = {b["id"]: (b["segment"], b["offset"]) for b in p["buffers"]}
n_alt = max([len(o.get("branch", [])) for o in g["ops"]] + [1])
worst = 0
for k in range(n_alt):
    ops = []
    for o in g["ops"]:
        ops.append({x: o[x] for x in ("name", "inputs", "outputs", "inplace") if x in o})
        if "branch" in o and k < len(o["branch"]):
            for a in o["branch"][k]:
                outs = [t for t in a["outputs"] if t not in o["outputs"]]
                ins = a["inputs"] + [t for t in a["outputs"] if t in o["outputs"]]
                ops.append({"name": a["name"], "inputs": ins, "outputs": outs})
    used = {t for o in ops for t in o["inputs"] + o["outputs"]}
    gk = dict(g, ops=ops, tensors=[t for t in g["tensors"] if t["name"] in used or t.get("kind") in ("input", "weight")])
    live, spans, root = lb.live_curve(gk, {})
    worst = max(worst, max(live))
    items = list(spans.items())
    for i, (a, (s0, e0, b0)) in enumerate(items):
        for c, (s1, e1, b1) in items[i + 1:]:
            (ga, oa), (gc, oc) = place[idx[a]], place[idx[c]]
            if s0 < e1 and s1 < e0 and ga == gc and oa < oc + b1 and oc < oa + b0:
                print("alternative %d: %s and %s are live together and share bytes" % (k, a, c))
                sys.exit(1)
print(worst)
