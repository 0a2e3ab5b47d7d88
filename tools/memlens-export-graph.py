#!/usr/bin/env python3
"""memlens-export-graph: a PyTorch model as a memlens graph (docs/formats.md,
"Graph JSON"), for planning its memory before it runs.

  memlens-export-graph.py MODULE:FACTORY --input-shape 8,3,224,224 [--train] -o model.json

MODULE is an importable module or a path to a .py file; FACTORY() returns the
torch.nn.Module. Each --input-shape is one input (dims comma-separated, an
optional ":dtype" such as 8,128:i64). The model is traced with torch.fx
(make_fx: the ATen-level symbolic trace, shapes propagated through the
trace's tensors), so every op is one ATen op in execution order and every
tensor gets its shape, dtype and kind:
  input       the --input-shape tensors
  weight      parameters and buffers (batch-norm statistics)
  activation  what ops write
  output      what the model returns (with --train: the loss)
  gradient    --train: what the backward pass writes
  optimizer_state  --train: AdamW's two moments per parameter
Views (an ATen return that aliases an argument, e.g. view, t, expand,
detach) allocate nothing: readers of a view read its base. In-place ops (a
return the schema marks as written, e.g. relu_, add_, out= arguments) become
in-place pairs. With --train the trace covers forward, the loss (the sum of
the outputs, a stand-in: a real loss is one scalar too) and the backward
pass (torch.autograd.grad); an AdamW step then updates each parameter in
place from its gradient and its moments.

The first dimension of every input is the batch: the model is traced at
two batch sizes, and each dimension that scales with it is written as "B"
or "k*B" ("dims":{"B":N} holds the batch given), so `memlens fit` can
search it; --no-symbolic writes plain numbers. The model runs on fake
tensors where this torch has them (no compute), else on CPU zeros.

A user-side helper: memlens itself never runs Python.
"""
import argparse
import importlib
import importlib.util
import json
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

DTYPES = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
          torch.int64: "i64", torch.int32: "i32", torch.int16: "i32", torch.int8: "i8", torch.uint8: "u8",
          torch.bool: "bool"}
PARSE_DTYPE = {"f64": torch.float64, "f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
               "i64": torch.int64, "i32": torch.int32, "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}


def fail(msg):
    print("memlens-export-graph: " + msg, file=sys.stderr)
    sys.exit(2)


def load_factory(spec):
    if ":" not in spec:
        fail("%s: write MODULE:FACTORY (e.g. mymodels:make_cnn)" % spec)
    mod, fn = spec.rsplit(":", 1)
    try:
        if mod.endswith(".py") or os.sep in mod:
            s = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(mod))[0], mod)
            if s is None:
                fail("%s: not a Python file" % mod)
            m = importlib.util.module_from_spec(s)
            s.loader.exec_module(m)
        else:
            m = importlib.import_module(mod)
    except (ImportError, OSError, SyntaxError) as e:
        fail("%s: cannot import: %s" % (mod, e))
    if not hasattr(m, fn):
        fail("%s has no %s" % (mod, fn))
    model = getattr(m, fn)()
    if not isinstance(model, torch.nn.Module):
        fail("%s:%s() returned %s, not a torch.nn.Module" % (mod, fn, type(model).__name__))
    return model


def parse_shape(text):
    shape, _, dt = text.partition(":")
    try:
        dims = [int(d) for d in shape.split(",") if d.strip()]
    except ValueError:
        fail("--input-shape %s: dimensions are integers, e.g. 8,3,224,224" % text)
    if not dims or any(d <= 0 for d in dims):
        fail("--input-shape %s: at least one dimension, each at least 1" % text)
    if dt and dt not in PARSE_DTYPE:
        fail("--input-shape %s: dtype %s is not one of %s" % (text, dt, " ".join(PARSE_DTYPE)))
    return dims, PARSE_DTYPE[dt or "f32"]


def functional_call(model, params, args):
    try:
        from torch.func import functional_call as fc   # torch >= 2.0
    except ImportError:
        from torch.nn.utils.stateless import functional_call as fc
    return fc(model, params, args)


def trace(model, shapes, batch, train):
    """The fx graph of one step at @batch, and the names of the placeholders."""
    names = [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]
    state = [t.detach() for _, t in model.named_parameters()] + [t.detach() for _, t in model.named_buffers()]
    n_params = len(list(model.named_parameters()))
    inputs = [torch.zeros([batch] + dims[1:], dtype=dt) for dims, dt in shapes]
    model = model.train() if train else model.eval()
    has_grad = []   # per parameter: whether the backward pass gives it a gradient

    def step(*args):
        xs, ps = args[:len(inputs)], args[len(inputs):]
        out = functional_call(model, dict(zip(names, ps)), tuple(xs))
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
        if not train:
            return tuple(outs)
        loss = sum(o.float().sum() for o in outs)
        grads = torch.autograd.grad(loss, [p for p in ps[:n_params]], allow_unused=True)
        has_grad[:] = [g is not None for g in grads]
        return (loss,) + tuple(g for g in grads if g is not None)

    args = inputs + [s.requires_grad_(train and i < n_params) if s.is_floating_point() else s
                     for i, s in enumerate(t.clone() for t in state)]
    ctx = torch.enable_grad() if train else torch.no_grad()
    with ctx:
        try:
            gm = make_fx(step, tracing_mode="fake")(*args)
        except Exception:   # older torch: no fake mode for this model; real CPU tensors
            gm = make_fx(step)(*args)
    return gm, ["input%d" % i for i in range(len(inputs))] + names, has_grad


def meta(node):
    v = node.meta.get("val", node.meta.get("tensor_meta"))
    return v


def tensor_info(v):
    if isinstance(v, torch.Tensor) or hasattr(v, "shape") and hasattr(v, "dtype"):
        return [int(d) for d in v.shape], v.dtype
    return None


# ops whose schema does not say that they return a view of their input
UNSAFE_VIEWS = {"aten::_unsafe_view"}


def schema_aliases(target):
    """For an ATen op: per return, (aliased argument index, written) or None."""
    sch = getattr(target, "_schema", None)
    if sch is None:
        return None
    out = []
    for r in sch.returns:
        ai = r.alias_info
        if ai is None:
            out.append(None)
            continue
        sets = set(ai.before_set)
        # a Tensor(a)[] return keeps its set on the elements, which this
        # binding does not show: it aliases the annotated argument
        idx = next((i for i, a in enumerate(sch.arguments)
                    if a.alias_info is not None and (not sets or sets & set(a.alias_info.before_set))), None)
        out.append((idx, bool(ai.is_write), sch.arguments[idx].name if idx is not None else None))
    return out


def build(gm, placeholder_names, n_inputs, has_grad, train):
    tensors, ops = [], []
    names = {}        # fx value (node name, or node name + ".i") -> tensor name
    info = {}         # tensor name -> (shape, dtype)
    kinds = {}

    def new_tensor(name, shape, dtype, kind):
        tensors.append({"name": name, "shape": shape, "dtype": DTYPES.get(dtype, "f32"), "kind": kind})
        info[name] = (shape, dtype)
        kinds[name] = len(tensors) - 1
        return name

    def value_tensors(arg):
        """Tensor names an fx argument reads (nested lists too)."""
        if isinstance(arg, torch.fx.Node):
            t = names.get(arg.name)
            return [t] if isinstance(t, str) else (list(t) if isinstance(t, tuple) else [])
        if isinstance(arg, (list, tuple)):
            return [t for a in arg for t in value_tensors(a)]
        if isinstance(arg, dict):
            return [t for a in arg.values() for t in value_tensors(a)]
        return []

    ph = 0
    output_node = None
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            ti = tensor_info(meta(node))
            nm = placeholder_names[ph]
            kind = "input" if ph < n_inputs else "weight"
            ph += 1
            if ti:
                names[node.name] = new_tensor(nm, ti[0], ti[1], kind)
            continue
        if node.op == "output":
            output_node = node
            continue
        if node.op != "call_function":
            continue
        target = node.target
        v = meta(node)
        if target.__name__ == "getitem" if hasattr(target, "__name__") else False:
            src, i = node.args
            t = names.get(src.name)
            if isinstance(t, tuple) and isinstance(i, int) and i < len(t):
                names[node.name] = t[i]
            continue
        reads = []
        for a in list(node.args) + list(node.kwargs.values()):
            for t in value_tensors(a):
                if t and t not in reads:
                    reads.append(t)
        aliases = schema_aliases(target)
        if v is None and getattr(target, "_schema", None) is not None:
            # a tuple or list result: its shapes are on the getitem nodes
            # that take it apart
            items = [u for u in node.users if u.op == "call_function"
                     and getattr(u.target, "__name__", "") == "getitem" and isinstance(u.args[1], int)]
            n_ret = len(target._schema.returns)
            if n_ret == 1 and items:
                n_ret = max(u.args[1] for u in items) + 1
            if n_ret > 1 or items:
                vals = [None] * n_ret
                for u in items:
                    if u.args[1] < n_ret:
                        vals[u.args[1]] = meta(u)
                v = tuple(vals)
        vals = list(v) if isinstance(v, (tuple, list)) else [v]
        outs, inplace, results = [], [], []
        for k, val in enumerate(vals):
            ti = tensor_info(val) if val is not None else None
            if ti is None:
                results.append(None)
                continue
            # one Tensor(a)[] return (split, chunk, unbind): each element aliases
            al = aliases[k] if aliases and k < len(aliases) else (aliases[0] if aliases and len(aliases) == 1 else None)
            if al is None and getattr(target, "_schema", None) is not None and target._schema.name in UNSAFE_VIEWS:
                al = (0, False, None)
            base = None
            if al and al[0] is not None:
                arg = node.args[al[0]] if al[0] < len(node.args) else node.kwargs.get(al[2])
                bt = value_tensors(arg)
                base = bt[0] if bt else None
            if al and base and not al[1]:
                results.append(base)          # a view: no memory of its own
                continue
            nm = new_tensor(node.name if len(vals) == 1 else "%s.%d" % (node.name, k), ti[0], ti[1],
                            "activation")
            outs.append(nm)
            if al and base and al[1]:
                inplace.append([base, nm])    # written in place over its argument
                if base not in reads:
                    reads.append(base)
            results.append(nm)
        names[node.name] = results[0] if len(vals) == 1 and not isinstance(v, (tuple, list)) else tuple(results)
        if not outs:
            continue                          # a view, or nothing a tensor
        op = {"name": node.name, "type": str(target).replace("aten.", ""), "inputs": reads, "outputs": outs}
        if inplace:
            op["inplace"] = inplace
        ops.append(op)

    # what the step returns: outputs (inference), or the loss and the gradients
    returned = value_tensors(output_node.args[0]) if output_node is not None else []
    grads = []
    for k, t in enumerate(returned):
        if train and k > 0:
            grads.append(t)
            continue
        if tensors[kinds[t]]["kind"] == "activation":
            tensors[kinds[t]]["kind"] = "output"
    if train:
        # every tensor the backward pass writes is a gradient: the ones made
        # after the loss
        loss = returned[0] if returned else None
        after = False
        for t in tensors:
            if after and t["kind"] == "activation":
                t["kind"] = "gradient"
            if t["name"] == loss:
                after = True
        # AdamW: each parameter updated in place from its gradient and moments
        params = [t for t in tensors if t["kind"] == "weight"][:len(has_grad)]
        grad_of = dict(zip([p["name"] for p, h in zip(params, has_grad) if h], grads))
        for p in params:
            g = grad_of.get(p["name"])
            if g is None:
                continue
            m = new_tensor(p["name"] + ".exp_avg", p["shape"], info[p["name"]][1], "optimizer_state")
            s = new_tensor(p["name"] + ".exp_avg_sq", p["shape"], info[p["name"]][1], "optimizer_state")
            upd = new_tensor(p["name"] + ".updated", p["shape"], info[p["name"]][1], "activation")
            ops.append({"name": "adamw." + p["name"], "type": "adamw_", "inputs": [p["name"], g, m, s],
                        "outputs": [upd], "inplace": [[p["name"], upd]]})
    # tensors nobody reads or writes (an unused buffer) stay: they are resident
    return tensors, ops


def symbolic(t1, t2, b1, b2):
    """Shapes of the trace at batch b1, with dims that scale to b2 written "k*B";
    False (t1 unchanged) when the two traces do not match."""
    if len(t1) != len(t2) or any(a["name"] != b["name"] or len(a["shape"]) != len(b["shape"]) for a, b in zip(t1, t2)):
        return False
    new = []
    for a, b in zip(t1, t2):
        shape = []
        for d1, d2 in zip(a["shape"], b["shape"]):
            if d1 == d2:
                shape.append(d1)
            elif d1 % b1 == 0 and d2 == d1 // b1 * b2:
                k = d1 // b1
                shape.append("B" if k == 1 else "%d*B" % k)
            else:
                return False
        new.append(shape)
    for a, shape in zip(t1, new):
        a["shape"] = shape
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("factory", metavar="MODULE:FACTORY")
    ap.add_argument("--input-shape", action="append", required=True, metavar="D,D,...[:DTYPE]",
                    help="one model input; the first dimension is the batch (repeatable)")
    ap.add_argument("--train", action="store_true", help="a training step: forward, backward, AdamW")
    ap.add_argument("--no-symbolic", action="store_true", help="plain numbers, no \"B\" dimension")
    ap.add_argument("--alignment", type=int, default=512, help="the graph's alignment (default 512)")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if a.alignment <= 0 or a.alignment & (a.alignment - 1):
        fail("--alignment %d is not a power of two" % a.alignment)
    sys.path.insert(0, os.getcwd())
    model = load_factory(a.factory)
    shapes = [parse_shape(s) for s in a.input_shape]
    batch = shapes[0][0][0]
    gm, ph_names, has_grad = trace(model, shapes, batch, a.train)
    tensors, ops = build(gm, ph_names, len(shapes), has_grad, a.train)
    doc = {"format": "memlens-graph", "version": 1, "name": a.factory.rsplit(":", 1)[1],
           "description": "exported by memlens-export-graph from %s (torch %s, %s, inputs %s)"
                          % (a.factory, torch.__version__, "training step" if a.train else "inference",
                             " ".join(a.input_shape)),
           "alignment": a.alignment}
    if not a.no_symbolic:
        gm2, _, has_grad2 = trace(model, shapes, batch + 1, a.train)
        t2, _ = build(gm2, ph_names, len(shapes), has_grad2, a.train)
        if symbolic(tensors, t2, batch, batch + 1):
            doc["dims"] = {"B": batch}
        else:
            print("memlens-export-graph: the graph differs between batch %d and %d; wrote plain numbers"
                  % (batch, batch + 1), file=sys.stderr)
    doc["tensors"], doc["ops"] = tensors, ops
    tmp = a.output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    os.replace(tmp, a.output)
    print("%s: %d tensors, %d ops%s" % (a.output, len(tensors), len(ops),
                                         ", batch dimension B" if "dims" in doc else ""), file=sys.stderr)


if __name__ == "__main__":
    main()
