#!/usr/bin/env python3
"""Writes the small Kineto / Chrome trace fixtures the tests read, with
Python's json (run once by hand in tests/data; the files are committed).
Each covers a shape of the [memory] events the reader maps: see the
comment above each. kineto-two-threads.json is written by make-fixtures.py."""
import gzip
import json
import random

MiB = 1 << 20


def mem(ts, addr, nbytes, dev=0, typ=1, total_alloc=None, total_reserved=None, tid=1, **extra):
    args = {}
    if total_reserved is not None:
        args['Total Reserved'] = total_reserved
    if total_alloc is not None:
        args['Total Allocated'] = total_alloc
    args.update({'Bytes': nbytes, 'Addr': addr, 'Device Id': dev, 'Device Type': typ})
    args.update(extra)
    return {'ph': 'i', 'cat': 'cpu_instant_event', 's': 't', 'name': '[memory]', 'pid': 7, 'tid': tid, 'ts': ts,
            'args': args}


def op(ts, name='aten::mm', tid=1):
    return {'ph': 'X', 'cat': 'cpu_op', 'name': name, 'pid': 7, 'tid': tid, 'ts': ts, 'dur': 2,
            'args': {'External id': 1, 'Ev Idx': 0}}


def kernel(ts, stream=7):
    return {'ph': 'X', 'cat': 'kernel', 'name': 'void gemm<float>(int)', 'pid': 0, 'tid': stream, 'ts': ts, 'dur': 3,
            'args': {'External id': 1, 'device': 0, 'stream': stream, 'correlation': 5, 'grid': [1, 1, 1],
                     'block': [128, 1, 1]}}


def write(name, doc, indent=None):
    text = json.dumps(doc, indent=indent)
    if name.endswith('.gz'):
        with gzip.open(name, 'wt') as f:
            f.write(text)
    else:
        with open(name, 'w') as f:
            f.write(text)


# ---- two CUDA devices and the CPU, deviceProperties for both GPUs; a
# device id and a time that only the last events have ----
A = 0x7f2000000000
events = [op(1), kernel(2)]
for i in range(12):
    events.append(mem(10 + i, A + i * MiB, (i + 1) * 4096, dev=i % 2, total_alloc=(i + 1) * 8192,
                      total_reserved=(2 + i // 4) * 2 * MiB))
    if i % 3 == 2:
        events.append(mem(10.5 + i, A + (i - 1) * MiB, -i * 4096, dev=(i - 1) % 2))
events += [mem(30, 0x1000, 64, dev=-1, typ=0), mem(31, 0x1000, -64, dev=-1, typ=0)]
write('kineto-devices.json', {
    'schemaVersion': 1,
    'deviceProperties': [{'id': 0, 'name': 'A100', 'totalGlobalMem': 40 << 30},
                         {'id': 1, 'name': 'A100', 'totalGlobalMem': 80 << 30}],
    'traceEvents': events}, indent=1)

# ---- frees of blocks allocated before profiling began, memory before the
# trace (Total Allocated), a double free and an allocation over a live
# block (lost events: notes), ties in ts kept in file order ----
events = [mem(5, 0x2000, -1024, total_alloc=10 * MiB, total_reserved=20 * MiB),
          mem(6, 0x3000, 2048, total_alloc=10 * MiB + 1024, total_reserved=20 * MiB),
          mem(6, 0x4000, 4096, total_alloc=10 * MiB + 5120, total_reserved=22 * MiB),
          mem(7, 0x3000, 512, total_alloc=10 * MiB + 5632, total_reserved=22 * MiB),
          mem(8, 0x2000, -1024), mem(9, 0x5000, -256),
          mem(10, 0x4000, -4096, total_alloc=10 * MiB + 1536, total_reserved=24 * MiB)]
write('kineto-lost.json', {'traceEvents': events})

# ---- Chrome's bare-array form, numbers as strings (hex addresses), ts as
# strings and fractions, a Stream arg, events out of ts order ----
events = [mem('3.25', '0x7f0000001000', '8192', Stream=13), op(1),
          mem(2.5, '0x7f0000002000', 1024, Stream=7),
          mem('4', '0x7f0000001000', -8192, Stream=13),
          mem(1.125, 0x7f0000003000, 300)]
write('kineto-array.json', events)

# ---- a profile as torch.profiler writes it, gzip: ops, kernels on two
# streams, three threads, CPU and CUDA [memory] events, metadata ----
rng = random.Random(5)
events = [{'ph': 'M', 'name': 'process_name', 'pid': 7, 'tid': 0, 'args': {'name': 'python3'}},
          {'ph': 'M', 'name': 'thread_name', 'pid': 7, 'tid': 1, 'args': {'name': 'thread 1 (python3)'}}]
live, total, ts = [], 0, 100.0
for i in range(400):
    ts += rng.randint(1, 9) + rng.randint(0, 999) / 1000
    r = rng.random()
    if r < 0.3:
        events.append(op(round(ts, 3), tid=1 + i % 3))
    elif r < 0.6:
        events.append(kernel(round(ts, 3), stream=7 if i % 2 else 13))
    elif r < 0.7:
        events.append(mem(round(ts, 3), 0x600000 + i * 64, rng.choice([64, 128, -64]), dev=-1, typ=0, tid=1 + i % 3))
    elif live and rng.random() < 0.45:
        a, b = live.pop(rng.randrange(len(live)))
        total -= b
        events.append(mem(round(ts, 3), a, -b, total_alloc=total, total_reserved=64 * MiB, tid=1 + i % 3))
    else:
        a, b = 0x7f3000000000 + i * MiB, rng.choice([512, 4096, MiB, 3 * MiB])
        live.append((a, b))
        total += b
        events.append(mem(round(ts, 3), a, b, total_alloc=total, total_reserved=64 * MiB, tid=1 + i % 3))
write('kineto-profile.json.gz', {'schemaVersion': 1, 'deviceProperties': [{'id': 0, 'totalGlobalMem': 16 << 30}],
                                 'traceEvents': events, 'traceName': 'x'}, indent=1)

# ---- epoch-scale ts (µs since 1970, ns in three decimals) that a double
# cannot keep to the nanosecond ----
T0 = 1700000000123456
events = [op(T0), mem(f'{T0 + 1}.001', 0x9000, 4096), mem(T0 + 2, 0xa000, 1024),
          mem(f'{T0 + 3}.999', 0x9000, -4096), mem(T0 + 10, 0xa000, -1024)]
with open('kineto-epoch.json', 'w') as f:
    # the decimals as the profiler writes them (json would round a float)
    text = json.dumps({'traceEvents': events}, indent=1)
    for s in (f'"{T0 + 1}.001"', f'"{T0 + 3}.999"'):
        text = text.replace(s, s.strip('"'))
    f.write(text)
