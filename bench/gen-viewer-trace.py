#!/usr/bin/env python3
"""Writes a large MiniMalloc-style CSV for bench/viewer.sh: N buffers
(default 1,000,000) in "steps" like a training loop (short activations
inside each step, a few long-lived ones), named so that colouring by name
has many classes. Deterministic (seeded)."""
import random, sys

path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
rng = random.Random(42)
names = ["attn.qkv", "attn.out", "mlp.up", "mlp.down", "ln", "grad", "adam.m", "adam.v", "embed", "logits", "tmp"]
with open(path, "w") as f:
    f.write("id,lower,upper,size\n")
    t = 0
    step = 0
    for i in range(n):
        if i % 5000 == 0:
            step += 1
        t += rng.randint(0, 3)
        if rng.random() < 0.002:
            life = rng.randint(20000, 400000)          # long-lived
        else:
            life = rng.randint(1, 400)                  # activations and temporaries
        size = rng.choice([256, 1024, 4096, 65536, 262144, 1 << 20, 4 << 20]) * rng.randint(1, 4)
        f.write("%s.%d.%d,%d,%d,%d\n" % (names[i % len(names)], step, i, t, t + life, size))
