#!/usr/bin/env python3
"""Writes the graph samples from published architectures (run by hand; the
JSON files are committed and nothing runs Python at test time):

  resnet50-inference-b32.json  ResNet-50 (He et al. 2015, torchvision layout:
                               bottleneck blocks [3, 4, 6, 3], stride on the
                               3x3 conv), inference, batch B (default 32:
                               "dims", --dim B=N), 224x224, f32,
                               batch norm and ReLU in place as in eager PyTorch.
  transformer-train-step.json  a small GPT-style decoder (2 layers, d_model 256,
                               4 heads, FFN 1024, sequence 128, batch B
                               (default 16),
                               vocabulary 8192, f32): forward, backward with
                               the activations each gradient needs, and an
                               AdamW step that updates the weights in place.
"""
import json


class Graph:
    def __init__(self, name, dims=None):
        self.name, self.tensors, self.ops, self.known = name, [], [], set()
        self.dims = dims or {}

    def t(self, name, shape, kind="activation", dtype="f32"):
        assert name not in self.known, name
        self.known.add(name)
        self.tensors.append({"name": name, "shape": list(shape), "dtype": dtype, "kind": kind})
        return name

    def op(self, name, type_, inputs, outputs, inplace=None):
        o = {"name": name, "type": type_, "inputs": inputs, "outputs": outputs}
        if inplace:
            o["inplace"] = inplace
        self.ops.append(o)

    def dump(self, path, doc):
        with open(path, "w") as f:
            json.dump({"format": "memlens-graph", "version": 1, "name": self.name, "description": doc,
                       "alignment": 512, "dims": self.dims, "tensors": self.tensors, "ops": self.ops},
                      f, indent=None, separators=(",", ":"))
            f.write("\n")


def resnet50(default_batch=32):
    # the batch is the symbolic dimension "B" (bound by "dims", or --dim B=N)
    batch = "B"
    g = Graph("resnet50-inference-b32", {"B": default_batch})
    x = g.t("input", (batch, 3, 224, 224), "input")
    n = [0]

    def conv(x, cin, cout, k, stride, hw):
        n[0] += 1
        i = n[0]
        w = g.t(f"conv{i}.weight", (cout, cin, k, k), "weight")
        hw2 = hw // stride
        y = g.t(f"conv{i}.out", (batch, cout, hw2, hw2))
        g.op(f"conv{i}", "conv2d", [x, w], [y])
        # batch norm (inference: scale and shift) in place, as torch does with fused BN? no: a new tensor
        s = g.t(f"bn{i}.weight", (cout,), "weight")
        b = g.t(f"bn{i}.bias", (cout,), "weight")
        m = g.t(f"bn{i}.running_mean", (cout,), "weight")
        v = g.t(f"bn{i}.running_var", (cout,), "weight")
        z = g.t(f"bn{i}.out", (batch, cout, hw2, hw2))
        g.op(f"bn{i}", "batch_norm", [y, s, b, m, v], [z])
        return z, hw2

    def relu_(x, shape):
        r = g.t(x + ".relu", shape)
        g.op("relu_" + x, "relu_", [x], [r], [[x, r]])
        return r

    y, hw = conv(x, 3, 64, 7, 2, 224)
    y = relu_(y, (batch, 64, hw, hw))
    p = g.t("maxpool.out", (batch, 64, hw // 2, hw // 2))
    g.op("maxpool", "max_pool2d", [y], [p])
    y, hw, cin = p, hw // 2, 64
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3], [64, 128, 256, 512])):
        for blk in range(blocks):
            stride = 2 if blk == 0 and stage > 0 else 1
            identity = y
            a, hw1 = conv(y, cin, width, 1, 1, hw)
            a = relu_(a, (batch, width, hw1, hw1))
            b, hw2 = conv(a, width, width, 3, stride, hw1)
            b = relu_(b, (batch, width, hw2, hw2))
            c, hw3 = conv(b, width, width * 4, 1, 1, hw2)
            if blk == 0:
                identity, _ = conv(y, cin, width * 4, 1, stride, hw)
            s = g.t(f"layer{stage + 1}.{blk}.add", (batch, width * 4, hw3, hw3))
            g.op(f"layer{stage + 1}.{blk}.add_", "add_", [c, identity], [s], [[c, s]])
            y = relu_(s, (batch, width * 4, hw3, hw3))
            hw, cin = hw3, width * 4
    pooled = g.t("avgpool.out", (batch, 2048))
    g.op("avgpool", "adaptive_avg_pool2d", [y], [pooled])
    w = g.t("fc.weight", (1000, 2048), "weight")
    bias = g.t("fc.bias", (1000,), "weight")
    logits = g.t("logits", (batch, 1000), "output")
    g.op("fc", "linear", [pooled, w, bias], [logits])
    g.dump("resnet50-inference-b32.json", resnet50.__doc__)


resnet50.__doc__ = "ResNet-50 inference, batch 32, 224x224, f32 (torchvision layout), in-place ReLU and residual add"


def transformer(default_batch=16, seq=128, d=256, heads=4, ffn=1024, layers=2, vocab=8192):
    batch = "B"
    g = Graph("transformer-train-step", {"B": default_batch})
    toks = g.t("tokens", (batch, seq), "input", "i64")
    targets = g.t("targets", (batch, seq), "input", "i64")
    weights = []

    def W(name, shape):
        weights.append((name, shape))
        return g.t(name, shape, "weight")

    fwd = []   # (name, type, inputs, outputs, saved inputs for backward, grads wanted for inputs)

    def f(name, type_, inputs, out_shape, saved, dtype="f32"):
        out = g.t(name + ".out", out_shape, "activation", dtype)
        g.op(name, type_, inputs, [out])
        fwd.append((name, inputs, out, saved))
        return out

    emb = W("wte", (vocab, d))
    pos = W("wpe", (seq, d))
    x = f("embed", "embedding", [toks, emb, pos], (batch, seq, d), [toks])
    for L in range(layers):
        p = f"h{L}"
        h = f(p + ".ln1", "layer_norm", [x, W(p + ".ln1.w", (d,))], (batch, seq, d), [x])
        qkv = f(p + ".qkv", "linear", [h, W(p + ".qkv.w", (3 * d, d))], (batch, seq, 3 * d), [h])
        sc = f(p + ".scores", "bmm", [qkv], (batch, heads, seq, seq), [qkv])
        pr = f(p + ".softmax", "softmax", [sc], (batch, heads, seq, seq), [])
        at = f(p + ".attn", "bmm", [pr, qkv], (batch, seq, d), [pr, qkv])
        o = f(p + ".proj", "linear", [at, W(p + ".proj.w", (d, d))], (batch, seq, d), [at])
        x = f(p + ".res1", "add", [x, o], (batch, seq, d), [])
        h2 = f(p + ".ln2", "layer_norm", [x, W(p + ".ln2.w", (d,))], (batch, seq, d), [x])
        u = f(p + ".fc1", "linear", [h2, W(p + ".fc1.w", (ffn, d))], (batch, seq, ffn), [h2])
        a = f(p + ".gelu", "gelu", [u], (batch, seq, ffn), [u])
        v = f(p + ".fc2", "linear", [a, W(p + ".fc2.w", (d, ffn))], (batch, seq, d), [a])
        x = f(p + ".res2", "add", [x, v], (batch, seq, d), [])
    hf = f("lnf", "layer_norm", [x, W("lnf.w", (d,))], (batch, seq, d), [x])
    logits = f("lm_head", "linear", [hf, emb], (batch, seq, vocab), [hf])
    loss = g.t("loss", (), "output")
    g.op("cross_entropy", "cross_entropy", [logits, targets], [loss])

    # backward: the loss gradient, then each op in reverse
    grads = {}     # tensor -> list of partial gradient tensors
    gl = g.t("loss.grad_logits", (batch, seq, vocab))
    g.op("cross_entropy.backward", "cross_entropy_backward", [logits, targets], [gl])
    grads[logits] = [gl]
    shape = {t["name"]: t["shape"] for t in g.tensors}
    for name, inputs, out, saved in reversed(fwd):
        parts = grads.get(out, [])
        if not parts:
            continue
        if len(parts) > 1:
            acc = g.t(out + ".grad", shape[out])
            g.op(out + ".grad_sum", "add", parts, [acc])
            gout = acc
        else:
            gout = parts[0]
        outs = []
        for i, t in enumerate(inputs):
            if t in (toks, targets):
                continue
            k = len(grads.get(t, []))
            gt = g.t(f"{t}.grad.{name}", shape[t])
            grads.setdefault(t, []).append(gt)
            outs.append(gt)
        g.op(name + ".backward", "backward", [gout] + saved, outs)
    # AdamW: each weight updated in place from its (summed) gradient and its moments
    for wname, wshape in weights:
        parts = grads[wname]
        if len(parts) > 1:
            acc = g.t(wname + ".grad", wshape)
            g.op(wname + ".grad_sum", "add", parts, [acc])
            gw = acc
        else:
            gw = parts[0]
        m = g.t(wname + ".exp_avg", wshape, "weight")
        v = g.t(wname + ".exp_avg_sq", wshape, "weight")
        new = g.t(wname + ".updated", wshape)
        g.op("adamw." + wname, "adamw_", [wname, gw, m, v], [new], [[wname, new]])
    g.dump("transformer-train-step.json", transformer.__doc__)


transformer.__doc__ = ("a small GPT-style decoder training step: 2 layers, d_model 256, 4 heads, FFN 1024, "
                       "sequence 128, batch 16, vocabulary 8192, f32; forward, backward, AdamW in place")

resnet50()
transformer()
