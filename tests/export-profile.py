#!/usr/bin/env python3
"""Runs a model of tests/export-models.py for one step on the CPU under
torch.profiler (profile_memory) and prints what the real run held:
  export-profile.py MODELS.py FACTORY D,D,... [--train]
prints "PEAK RESIDENT": PEAK = (the median of five profiled steps) the most bytes the step's ops held at once
above what existed before it (the ops' own allocations minus frees, leaf
ops in time order: torch 1.13 records memory per op, so a buffer an op
allocates and frees inside itself is not seen), RESIDENT = the bytes that
existed before it (parameters, buffers, the input, and with --train
AdamW's state from a first step). Their sum is comparable with the
exported graph's lower bound."""
import importlib.util, sys
import torch


path, fn, shape = sys.argv[1], sys.argv[2], sys.argv[3]
train = "--train" in sys.argv
s = importlib.util.spec_from_file_location("models", path)
m = importlib.util.module_from_spec(s)
s.loader.exec_module(m)
model = getattr(m, fn)()
x = torch.zeros([int(d) for d in shape.split(",")])
model.train(train)
opt = torch.optim.AdamW(model.parameters(), foreach=False) if train else None


def step():
    if train:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    else:
        with torch.no_grad():
            model(x)


step()   # the optimizer's state exists after a first step, as in the graph
nbytes = lambda t: t.numel() * t.element_size()
resident = nbytes(x) + sum(nbytes(p) for p in model.parameters()) + sum(nbytes(b) for b in model.buffers())
if opt:
    resident += sum(nbytes(v) for st in opt.state.values() for v in st.values() if torch.is_tensor(v))


def profiled_peak():
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    events = [e for e in prof.profiler.function_events if not e.cpu_children]
    events.sort(key=lambda e: e.time_range.start)
    live = peak = 0
    for e in events:
        live += e.self_cpu_memory_usage
        peak = max(peak, live)
    return peak


# torch 1.13's per-op memory records vary between runs of the same step:
# twenty runs of the CNN gave peaks from 262,528 to 918,144 bytes, half of
# them 524,416-524,928, and one test run 1,048,960 (twice the graph's lower
# bound, a failed check); the median of five runs is that middle value
peaks = sorted(profiled_peak() for _ in range(5))
print(peaks[2], resident)
