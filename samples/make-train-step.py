#!/usr/bin/env python3
"""Writes samples/train-step.jsonl: one training step of a small GPT-style
transformer (6 layers, d_model 768, 12 heads, sequence 512, batch 8, bf16
activations, fp32 master weights and Adam states), as a PyTorch program
would allocate it on one GPU: weights and optimizer states first, a
host-to-device copy of the batch on a side stream ordered by an event,
the forward pass saving activations for backward, the backward pass
freeing them in reverse and allocating gradients, then the optimizer step.

Addresses come from a plain first-fit over one arena with 512-byte
rounding, so the trace also carries a "recorded" layout. A fixture
generator only: memlens never runs Python. Deterministic.
"""
import json
import sys

LAYERS, D, HEADS, SEQ, BATCH, VOCAB = 6, 768, 12, 512, 8, 32000
BF16, FP32 = 2, 4
BASE = 0x7F0000000000
COMPUTE, COPY = 7, 13

events = []
stacks = {}
live = []          # (offset, size, id)
next_id = [1]
ids = {}
t_ns = [1_000_000]


def site_id(site):
    if site not in stacks:
        stacks[site] = len(stacks) + 1
        f, line, fn = site.split(":")
        events.append({"kind": "stack", "sid": stacks[site], "site": site,
                       "frames": [[f, int(line), fn], ["torch/nn/modules/module.py", 1518, "_call_impl"]]})
    return stacks[site]


def place(size):
    size = (size + 511) // 512 * 512
    prev = 0
    for off, sz, _ in sorted(live):
        if off - prev >= size:
            return prev, size
        prev = off + sz
    return prev, size


def tick(ns=2000):
    t_ns[0] += ns
    return t_ns[0]


def alloc(name, nbytes, site, kind, stream=COMPUTE):
    off, size = place(nbytes)
    i = next_id[0]
    next_id[0] += 1
    live.append((off, size, i))
    ids[name] = i
    events.append({"kind": "alloc", "id": i, "addr": hex(BASE + off), "size": nbytes,
                   "stream": stream, "time_ns": tick(), "name": name,
                   "stack": site_id(site), "flags": [kind]})
    return i


def free(name, stream=COMPUTE):
    i = ids.pop(name)
    for k, (off, sz, j) in enumerate(live):
        if j == i:
            del live[k]
            break
    events.append({"kind": "free", "id": i, "stream": stream, "time_ns": tick()})


def kernel(name, us, stream=COMPUTE):
    start = tick(500)
    end = start + us * 1000
    t_ns[0] = end
    events.append({"kind": "kernel", "name": name, "stream": stream, "time_ns": start, "end_ns": end})


def mark(text):
    events.append({"kind": "mark", "name": text, "time_ns": tick(100)})


def sync(kind, **kw):
    e = {"kind": "sync", "sync": kind, "time_ns": tick(100)}
    e.update(kw)
    events.append(e)


# parameters: fp32 master weights, Adam m and v
params = [("wte", VOCAB * D)]
for l in range(LAYERS):
    params += [(f"h{l}.ln1", 2 * D), (f"h{l}.attn.qkv", D * 3 * D), (f"h{l}.attn.proj", D * D),
               (f"h{l}.ln2", 2 * D), (f"h{l}.mlp.fc", D * 4 * D), (f"h{l}.mlp.proj", 4 * D * D)]
params += [("ln_f", 2 * D)]
mark("model.to(cuda)")
for name, n in params:
    alloc(f"{name}.weight", n * FP32, "train.py:41:build_model", "weight")
mark("optimizer.init")
for name, n in params:
    alloc(f"{name}.exp_avg", n * FP32, "torch/optim/adam.py:84:_init_group", "weight")
    alloc(f"{name}.exp_avg_sq", n * FP32, "torch/optim/adam.py:86:_init_group", "weight")

# the batch arrives on the copy stream
mark("data.to(cuda)")
alloc("tokens", BATCH * SEQ * 8, "train.py:77:main", "input", stream=COPY)
alloc("targets", BATCH * SEQ * 8, "train.py:78:main", "input", stream=COPY)
kernel("memcpy HtoD", 40, stream=COPY)
sync("event_record", stream=COPY, id=1)
sync("stream_wait", stream=COMPUTE, stream2=COPY, id=1)

act = BATCH * SEQ * D * BF16
mark("forward")
alloc("x0", act, "model.py:112:forward", "activation")
kernel("embedding_fwd", 30)
x = "x0"
saved = []
for l in range(LAYERS):
    p = f"h{l}"
    alloc(f"{p}.ln1.out", act, "model.py:64:forward", "activation"); kernel("layer_norm_fwd", 20)
    alloc(f"{p}.qkv", 3 * act, "model.py:71:forward", "activation"); kernel("gemm_qkv", 180)
    alloc(f"{p}.scores", BATCH * HEADS * SEQ * SEQ * BF16, "model.py:74:forward", "activation"); kernel("gemm_qk", 90)
    alloc(f"{p}.probs", BATCH * HEADS * SEQ * SEQ * BF16, "model.py:75:forward", "activation"); kernel("softmax_fwd", 60)
    free(f"{p}.scores")
    alloc(f"{p}.attn", act, "model.py:76:forward", "activation"); kernel("gemm_pv", 90)
    alloc(f"{p}.attn.out", act, "model.py:77:forward", "activation"); kernel("gemm_proj", 60)
    alloc(f"{p}.res1", act, "model.py:78:forward", "activation"); kernel("add", 10)
    alloc(f"{p}.ln2.out", act, "model.py:80:forward", "activation"); kernel("layer_norm_fwd", 20)
    alloc(f"{p}.fc", 4 * act, "model.py:81:forward", "activation"); kernel("gemm_fc", 240)
    alloc(f"{p}.gelu", 4 * act, "model.py:82:forward", "activation"); kernel("gelu_fwd", 40)
    alloc(f"{p}.mlp.out", act, "model.py:83:forward", "activation"); kernel("gemm_mlp_proj", 240)
    alloc(f"{p}.res2", act, "model.py:84:forward", "activation"); kernel("add", 10)
    free(f"{p}.attn.out")
    free(f"{p}.mlp.out")
    saved.append(p)
    x = f"{p}.res2"
alloc("ln_f.out", act, "model.py:120:forward", "activation"); kernel("layer_norm_fwd", 20)
alloc("logits", BATCH * SEQ * VOCAB * BF16, "model.py:121:forward", "activation"); kernel("gemm_lm_head", 900)
alloc("loss.tmp", BATCH * SEQ * VOCAB * FP32, "torch/nn/functional.py:3053:cross_entropy", "activation"); kernel("log_softmax", 300)
alloc("loss", 512, "train.py:90:main", "activation"); kernel("nll_loss", 20)

mark("backward")
alloc("grad.logits", BATCH * SEQ * VOCAB * BF16, "torch/autograd/__init__.py:251:backward", "activation"); kernel("log_softmax_bwd", 300)
free("loss.tmp"); free("loss")
for name, n in params:
    alloc(f"{name}.grad", n * FP32, "torch/autograd/__init__.py:251:backward", "activation")
alloc("grad.x", act, "torch/autograd/__init__.py:251:backward", "activation"); kernel("gemm_lm_head_bwd", 1800)
free("grad.logits"); free("logits"); free("ln_f.out")
for p in reversed(saved):
    alloc(f"{p}.grad.fc", 4 * act, "torch/autograd/__init__.py:251:backward", "activation"); kernel("gemm_bwd", 480)
    free(f"{p}.gelu"); free(f"{p}.fc")
    alloc(f"{p}.grad.ln2", act, "torch/autograd/__init__.py:251:backward", "activation"); kernel("gemm_bwd", 480)
    free(f"{p}.grad.fc"); free(f"{p}.ln2.out"); free(f"{p}.res2")
    alloc(f"{p}.grad.probs", BATCH * HEADS * SEQ * SEQ * BF16, "torch/autograd/__init__.py:251:backward", "activation"); kernel("gemm_bwd", 180)
    alloc(f"{p}.grad.scores", BATCH * HEADS * SEQ * SEQ * BF16, "torch/autograd/__init__.py:251:backward", "activation"); kernel("softmax_bwd", 120)
    free(f"{p}.grad.probs"); free(f"{p}.probs")
    alloc(f"{p}.grad.qkv", 3 * act, "torch/autograd/__init__.py:251:backward", "activation"); kernel("gemm_bwd", 360)
    free(f"{p}.grad.scores"); free(f"{p}.attn"); free(f"{p}.qkv"); free(f"{p}.res1")
    free(f"{p}.grad.ln2")
    free(f"{p}.grad.qkv"); free(f"{p}.ln1.out")
free("grad.x"); free("x0")

mark("optimizer.step")
for name, n in params:
    alloc(f"{name}.adam.tmp", n * FP32, "torch/optim/adam.py:414:_multi_tensor_adam", "activation")
    kernel("adam_update", max(5, n // 200000))
    free(f"{name}.adam.tmp")
mark("zero_grad")
for name, n in params:
    free(f"{name}.grad")
free("tokens", stream=COPY); free("targets", stream=COPY)
sync("device")

out = sys.argv[1] if len(sys.argv) > 1 else "train-step.jsonl"
with open(out, "w") as fp:
    fp.write(json.dumps({"format": "memlens-trace", "version": 1, "source": "samples/make-train-step.py",
                         "device": 0, "alignment": 512, "device_total": 80 * 2**30}, separators=(",", ":")) + "\n")
    for e in events:
        fp.write(json.dumps(e, separators=(",", ":")) + "\n")
