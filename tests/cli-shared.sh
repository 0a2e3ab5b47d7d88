#!/bin/bash
# The command on the public benchmark instances in ../shared (skipped when
# a fresh clone has no ../shared): every file loads, compare prints the
# lower bound and one row per strategy, and every plan passes check.
. "$(dirname "$0")/lib.sh"
S="$SHARED/benchmarks"
if [ ! -d "$S/minimalloc/challenging" ]; then
  skip_all "../shared/benchmarks is absent"
fi
declare -A LB=([A]=1048576 [B]=1048576 [C]=1039360 [D]=986112 [E]=1048576 [F]=1048576
               [G]=1048576 [H]=1048576 [I]=1048576 [J]=989184 [K]=1048576)
for f in "$S"/minimalloc/challenging/*.csv; do
  name=$(basename "$f"); key=${name%%.*}
  run compare "$f" --json --quiet
  ok $([ $rc -le 1 ]; echo $?) "$name: compare runs (exit $rc)"
  contains "$T/out" "\"lower_bound\":${LB[$key]}"; ok $? "$name: lower bound ${LB[$key]} as published"
  cnt=$(grep -o '"strategy"' "$T/out" | wc -l)
  [ "$cnt" -ge 4 ]; ok $? "$name: a row per strategy ($cnt)"
done
# issue 30: minimise probes the bound first in every round of its
# bisection, so F's optimum (the live-bytes peak) is proven within a node
# budget that left it at 1107968 before; the plan is checked from its CSV:
# no two buffers share bytes and time, and its peak is the live-bytes peak
F="$S/minimalloc/challenging/F.1048576.csv"
run plan "$F" --strategy exact --options mode=minimize,nodes=20000000 --time-limit 300 -o "$T/f.csv" --json --quiet
ok $rc "F: exact mode=minimize with 20M nodes (exit $rc)"
contains "$T/out" '"optimal":true'; ok $? "F: minimise proves its plan optimal"
python3 - "$F" "$T/f.csv" <<'PY'; ok $? "F: the plan has no overlap and its peak is the live-bytes peak (1048576)"
import csv, sys
inst = list(csv.DictReader(open(sys.argv[1])))
plan = {r["id"]: r for r in csv.DictReader(open(sys.argv[2]))}
ev = sorted([(int(r["lower"]), int(r["size"])) for r in inst] + [(int(r["upper"]), -int(r["size"])) for r in inst],
            key=lambda e: (e[0], e[1]))
live = peak = 0
for _, d in ev:
    live += d
    peak = max(peak, live)
b = [(int(r["lower"]), int(r["upper"]), int(plan[r["id"]]["offset"]), int(r["size"])) for r in inst]
clash = any(x[0] < y[1] and y[0] < x[1] and x[2] < y[2] + y[3] and y[2] < x[2] + x[3]
            for i, x in enumerate(b) for y in b[i + 1:])
top = max(o + s for _, _, o, s in b)
sys.exit(0 if not clash and top == peak == 1048576 else 1)
PY
# issue 30: genetic seeds with the peak-first orders (strategies/peak-order.h)
# and plans S_1 and pangu_2.6B at their live-bytes peak (before: 1.0029 and
# 1.0038 above it); the plans are checked from their CSVs: no two buffers
# share bytes and time, and the peak is the live-bytes peak
for x in S_1 pangu_2.6B; do
  f="$S/compiler-plans/$x.csv"
  run plan "$f" --strategy genetic --options generations=10 -o "$T/g.csv" --json --quiet
  ok $rc "$x: genetic with 10 generations (exit $rc)"
  python3 - "$f" "$T/g.csv" <<'PY'; ok $? "$x: the genetic plan has no overlap and its peak is the live-bytes peak"
import bisect, csv, sys
inst = list(csv.DictReader(open(sys.argv[1])))
plan = {r["id"]: int(r["offset"]) for r in csv.DictReader(open(sys.argv[2]))}
b = [(int(r["lower"]), int(r["upper"]), plan[r["id"]], int(r["size"])) for r in inst if int(r["size"])]
# frees before allocations at a tick (lifetimes are half-open)
ev = sorted([(lo, 1, i) for i, (lo, hi, o, s) in enumerate(b)] + [(hi, 0, i) for i, (lo, hi, o, s) in enumerate(b)])
live = peak = 0
held = []   # (offset, end) of the live buffers, disjoint, by offset
clash = False
for _, alloc, i in ev:
    lo, hi, o, s = b[i]
    if not alloc:
        held.remove((o, o + s))
        live -= s
        continue
    k = bisect.bisect_left(held, (o, o + s))
    clash |= (k > 0 and held[k - 1][1] > o) or (k < len(held) and held[k][0] < o + s)
    held.insert(k, (o, o + s))
    live += s
    peak = max(peak, live)
top = max(o + s for _, _, o, s in b)
print("# peak %d, live-bytes peak %d, clash %s" % (top, peak, clash))
sys.exit(0 if not clash and top == peak else 1)
PY
done
# every default strategy's plan on A and on a compiler instance passes check
for f in "$S/minimalloc/challenging/A.1048576.csv" "$S/compiler-plans/tiny_bert.csv"; do
  for s in $("$MEMLENS" strategies | awk '$2 != "trace" {print $1}'); do
    case $s in ilp|exact|anneal|genetic) continue;; esac   # slow planners have their own benchmark
    run plan "$f" --strategy "$s" -o "$T/p.json" --quiet
    ok $([ $rc -le 1 ]; echo $?) "$(basename "$f"): plan --strategy $s"
    run check "$f" "$T/p.json"
    ok $rc "$(basename "$f"): the $s plan passes check"
  done
done
for f in "$S"/compiler-plans/*.csv "$S"/minimalloc/examples/*.csv; do
  run stats "$f"; ok $rc "$(basename "$f"): stats"
done
# issue 30 target 1: the best plans docs/performance.md names for D and J
# (bench/plans/) pass check and, read by Python from the instance and the
# plan, keep every buffer's lifetime and size, share no bytes while two are
# live, and peak exactly at the capacity in their names
for p in "$SRC"/bench/plans/[DJ]-*.csv; do
  name=$(basename "$p" .csv); key=${name%%-*}; want=${name#*-}
  f="$S/minimalloc/challenging/$key.1048576.csv"
  run check "$f" "$p"; ok $rc "$name: memlens check passes (exit $rc)"
  python3 - "$f" "$p" "$want" <<'PY'; ok $? "$name: Python: same buffers, no overlap, peak $want"
import csv, sys
inst = {r["id"]: r for r in csv.DictReader(open(sys.argv[1]))}
plan = list(csv.DictReader(open(sys.argv[2])))
same = sorted(r["id"] for r in plan) == sorted(inst) and all(
    (r["lower"], r["upper"], r["size"]) == (inst[r["id"]]["lower"], inst[r["id"]]["upper"], inst[r["id"]]["size"])
    for r in plan)
b = [(int(r["lower"]), int(r["upper"]), int(r["offset"]), int(r["size"])) for r in plan]
clash = any(x[0] < y[1] and y[0] < x[1] and x[2] < y[2] + y[3] and y[2] < x[2] + x[3]
            for i, x in enumerate(b) for y in b[i + 1:])
top = max(o + s for _, _, o, s in b)
print("# same %s, clash %s, peak %d" % (same, clash, top))
sys.exit(0 if same and not clash and top == int(sys.argv[3]) else 1)
PY
done
finish
