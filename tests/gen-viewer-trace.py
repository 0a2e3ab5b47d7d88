#!/usr/bin/env python3
"""Writes a small training-step trace (memlens JSON Lines) for the viewer
tests: weights that live forever, per-layer activations made in the forward
pass and freed in the backward pass, gradients, an optimizer step, two
streams, real-looking addresses from a first-fit arena, times and stacks.
Deterministic; test fixture only."""
import json, sys

out = open(sys.argv[1], "w")
layers = int(sys.argv[2]) if len(sys.argv) > 2 else 6
w = lambda o: out.write(json.dumps(o, separators=(",", ":")) + "\n")
w({"format": "memlens-trace", "version": 1, "source": "viewer-test", "alignment": 512})

sid = 0
def stack(site, frames):
    global sid
    sid += 1
    w({"kind": "stack", "sid": sid, "site": site, "frames": frames})
    return sid

s_weight = stack("model.py:21:__init__", [["torch/nn/modules/linear.py", 96, "__init__"], ["model.py", 21, "__init__"], ["train.py", 40, "main"]])
s_act = stack("model.py:34:forward", [["torch/nn/functional.py", 1500, "linear"], ["model.py", 34, "forward"], ["train.py", 52, "step"]])
s_tmp = stack("model.py:35:forward", [["torch/nn/functional.py", 1457, "gelu"], ["model.py", 35, "forward"], ["train.py", 52, "step"]])
s_grad = stack("autograd:backward", [["torch/autograd/__init__.py", 200, "backward"], ["train.py", 53, "step"]])
s_opt = stack("optim/adam.py:150:step", [["torch/optim/adam.py", 150, "step"], ["train.py", 54, "step"]])

# a first-fit arena for the "recorded" addresses
BASE = 0x7f0000000000
free = [(0, 1 << 40)]
def place(size):
    for i, (o, n) in enumerate(free):
        if n >= size:
            free[i] = (o + size, n - size)
            return o
    raise SystemExit("arena full")
def release(o, size):
    free.append((o, size))
    free.sort()
    merged = []
    for a, n in free:
        if merged and merged[-1][0] + merged[-1][1] == a:
            merged[-1] = (merged[-1][0], merged[-1][1] + n)
        else:
            merged.append((a, n))
    free[:] = merged

t = 0
bid = 0
live = {}
def alloc(size, name, st, stream=0):
    global t, bid
    bid += 1
    size_r = (size + 511) // 512 * 512
    off = place(size_r)
    live[bid] = (off, size_r)
    t += 1000
    w({"kind": "alloc", "id": bid, "addr": hex(BASE + off), "size": size, "stream": stream,
       "time_ns": t, "name": name, "stack": st})
    return bid
def free_(b, stream=0):
    global t
    off, size_r = live.pop(b)
    release(off, size_r)
    t += 1000
    w({"kind": "free", "id": b, "addr": hex(BASE + off), "stream": stream, "time_ns": t})

weights = [alloc(4 << 20, "layer%d.weight" % i, s_weight) for i in range(layers)]
w({"kind": "mark", "name": "forward", "time_ns": t})
acts = []
for i in range(layers):
    tmp = alloc(3 << 20, "layer%d.gelu_tmp" % i, s_tmp)
    acts.append(alloc((2 + i % 3) << 20, "layer%d.activation" % i, s_act))
    free_(tmp)
w({"kind": "mark", "name": "backward", "time_ns": t})
grads = []
for i in reversed(range(layers)):
    grads.append(alloc(4 << 20, "layer%d.weight.grad" % i, s_grad, stream=7))
    free_(acts[i])
w({"kind": "mark", "name": "optimizer.step", "time_ns": t})
state = [alloc(8 << 20, "adam.state%d" % i, s_opt) for i in range(2)]
for g in grads:
    free_(g, stream=7)
for s in state:
    free_(s)
out.close()
