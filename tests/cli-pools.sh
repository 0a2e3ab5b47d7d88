#!/bin/bash
# pool and buddy through the command: listed, --chunk and --retries change
# what they should (and --retries nothing for first-fit), their peaks
# against a model written here in Python from the headers' rules, and
# compare --sweep rows against separate runs.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }

run strategies
contains "$T/out" "pool "; ok $? "strategies lists pool"
contains "$T/out" "buddy "; ok $? "strategies lists buddy"

# a random trace: 3000 allocations, sizes 1 B .. 8 MiB (log-uniform), alignment 256
python3 - "$T/r.jsonl" <<'PY'
import json, random, sys
random.seed(5)
out = open(sys.argv[1], "w")
out.write('{"format":"memlens-trace","version":1,"alignment":256}\n')
live, nid = [], 1
for _ in range(3000):
    while live and random.random() < 0.45:
        out.write(json.dumps({"kind": "free", "id": live.pop(random.randrange(len(live)))}) + "\n")
    size = 0 if random.random() < 0.02 else int(2 ** random.uniform(0, 23))
    out.write(json.dumps({"kind": "alloc", "id": nid, "size": size}) + "\n")
    live.append(nid); nid += 1
PY

# the models: replay the events in order, the peak of the reserved bytes
cat >"$T/model.py" <<'PY'
import json, sys
def events(path):
    lines = [json.loads(l) for l in open(path)]
    align = lines[0]["alignment"]
    return align, [(e["kind"], e["id"], -(-e.get("size", 0) // align) * align) for e in lines[1:]]

def pool(path, chunk, large=None, release=False):
    a, evs = events(path)
    large = (large or chunk) // a * a
    cls, v = [], a
    while v < large:
        cls.append(v)
        step = 1 << (v.bit_length() - 3) if v >= 4 else 1
        v += max(step, a)
    cls.append(large)
    nonfull = {c: [] for c in cls}   # chunks with a free slot, last = most recent
    empty, chunks, where, reserved, peak = [], {}, {}, 0, 0
    seq = 0
    for kind, i, n in evs:
        if kind == "alloc":
            n = n or 1
            if n > large:
                where[i] = ("own", n); reserved += n
            else:
                c = next(x for x in cls if x >= n)
                if not nonfull[c]:
                    if empty: ch = empty.pop()
                    else:
                        ch = seq; seq += 1; reserved += chunk
                    chunks[ch] = {"cls": c, "used": 0, "bump": 0, "free": []}
                    nonfull[c].append(ch)
                ch = nonfull[c][-1]; h = chunks[ch]
                if h["free"]:
                    off = h["free"].pop()
                else:
                    off = h["bump"] * c; h["bump"] += 1
                h["used"] += 1
                if h["used"] == chunk // c: nonfull[c].remove(ch)
                where[i] = (ch, off, n)
        else:
            w = where.pop(i)
            if w[0] == "own":
                reserved -= w[1]
            else:
                ch, off, n = w; h = chunks[ch]; c = h["cls"]
                if h["used"] == chunk // c: nonfull[c].append(ch)
                h["used"] -= 1
                if h["used"] == 0:
                    nonfull[c].remove(ch)
                    if release: reserved -= chunk
                    else: empty.append(ch)
                else:
                    h["free"].append(off)
        peak = max(peak, reserved)
    return peak

def buddy(path, chunk, release=False):
    a, evs = events(path)
    mino = (a - 1).bit_length(); so = max((chunk - 1).bit_length(), mino)
    free = [[] for _ in range(64)]   # per order: (seg, off), last = most recent
    order = {}                       # free (seg, off) -> order
    where, nseg, reserved, peak = {}, 0, 0, 0
    def push(s, o, k): free[k].append((s, o)); order[(s, o)] = k
    for kind, i, n in evs:
        if kind == "alloc":
            k = (max(n, 1 << mino) - 1).bit_length()
            j = next((x for x in range(k, 64) if free[x]), None)
            if j is None and k > so:
                where[i] = ("own", n); reserved += n; peak = max(peak, reserved); continue
            if j is None:
                push(nseg, 0, so); nseg += 1; reserved += 1 << so; j = so
            s, o = free[j].pop(); del order[(s, o)]
            while j > k:
                j -= 1; push(s, o + (1 << j), j)
            where[i] = (s, o, k)
        else:
            w = where.pop(i)
            if w[0] == "own":
                reserved -= w[1]; continue
            s, o, k = w
            while k < so and order.get((s, o ^ (1 << k))) == k:
                b = (s, o ^ (1 << k)); free[k].remove(b); del order[b]
                o &= ~(1 << k); k += 1
            if k == so and release: reserved -= 1 << so
            else: push(s, o, k)
        peak = max(peak, reserved)
    return peak

kind, path, chunk = sys.argv[1], sys.argv[2], int(sys.argv[3])
opts = dict(x.split("=") for x in sys.argv[4:])
if kind == "pool":
    print(pool(path, chunk, int(opts["large"]) if "large" in opts else None, opts.get("release") == "1"))
else:
    print(buddy(path, chunk, opts.get("release") == "1"))
PY

peak_of() {  # peak_of STRATEGY ARGS...: the peak compare --json reports
  "$MEMLENS" compare "$T/r.jsonl" -s "$1" --json "${@:2}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["peak"])'
}
for s in pool buddy; do
  for c in 65536 1048576 4194304 16777216; do
    for o in "" release=1; do
      want=$(python3 "$T/model.py" $s "$T/r.jsonl" $c $o)
      got=$(peak_of $s --chunk $c ${o:+--options $o})
      [ -n "$want" ] && [ "$got" = "$want" ]; ok $? "$s --chunk $c ${o:-(cached)}: peak $got = the model's $want"
    done
  done
done
want=$(python3 "$T/model.py" pool "$T/r.jsonl" 4194304 large=65536)
got=$(peak_of pool --options large=64K)
[ "$got" = "$want" ]; ok $? "pool large=64K: peak $got = the model's $want"
a=$(peak_of pool --chunk 1M); b=$(peak_of pool --chunk 16M)
[ "$a" != "$b" ]; ok $? "--chunk changes pool's peak ($a vs $b)"
a=$(peak_of first-fit --chunk 1M); b=$(peak_of first-fit --chunk 16M)
[ "$a" = "$b" ]; ok $? "--chunk does not change first-fit's peak"

# retries: a cached 4 KiB chunk must go back for 6 KiB to fit in 8 KiB
printf '%s\n' '{"format":"memlens-trace","version":1,"alignment":256}' '{"kind":"alloc","id":1,"size":256}' \
  '{"kind":"free","id":1}' '{"kind":"alloc","id":2,"size":6000}' >"$T/retry.jsonl"
for s in pool buddy; do
  run compare "$T/retry.jsonl" -s $s --chunk 4K --capacity 8K --retries 0 --json
  [ $rc -eq 1 ]; ok $? "$s --retries 0: out of memory (exit 1)"
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["results"][0]["oom"]; sys.exit(not (o["retries"]==0 and o["released"]==0 and o["request"]==6144))' "$T/out"
  ok $? "$s --retries 0: the OOM record says no retry ran, nothing released"
  run compare "$T/retry.jsonl" -s $s --chunk 4K --capacity 8K --retries 1 --json; ok $rc "$s --retries 1: it fits (exit 0)"
  run compare "$T/retry.jsonl" -s $s --chunk 4K --capacity 6000 --retries 3 --json
  python3 -c 'import json,sys; o=json.load(open(sys.argv[1]))["results"][0]["oom"]; sys.exit(not (o["retries"]==1 and o["released"]==4096))' "$T/out"
  ok $? "$s capacity 6000: the OOM record says one retry ran and released 4096 bytes"
done

# --sweep: every row is the run compare makes with that value alone
check_sweep() {  # check_sweep SPEC STRATEGIES FLAG-FOR-ONE-VALUE [ARGS...]
  local spec=$1 strategies=$2 flag=$3; shift 3
  run compare "$T/r.jsonl" -s "$strategies" --sweep "$spec" --json "$@"
  [ $rc -le 1 ] || { ok 1 "--sweep $spec runs"; return; }
  cp "$T/out" "$T/sweep.json"
  local values=${spec#*=} good=0 v
  for v in ${values//,/ }; do
    if [ "$flag" = options ]; then one=(--options "${spec%%=*}=$v"); else one=(--$flag "$v"); fi
    "$MEMLENS" compare "$T/r.jsonl" -s "$strategies" --json "$@" "${one[@]}" >"$T/one.json" 2>/dev/null
    python3 - "$T/sweep.json" "$T/one.json" "$v" <<'PY' || good=1
import json, sys
sw = [r for r in json.load(open(sys.argv[1]))["sweep"]["rows"] if r["value"] == sys.argv[3]]
one = [r for r in json.load(open(sys.argv[2]))["results"] if r["strategy"] != "recorded"]
keys = ["peak", "overhead", "frag_max", "frag_at_peak", "oom"]
assert len(sw) == len(one) > 0, (len(sw), len(one))
for a, b in zip(sw, one):
    assert a["strategy"] == b["strategy"]
    for k in keys:
        assert a[k] == b[k], (sys.argv[3], a["strategy"], k, a[k], b[k])
PY
  done
  ok $good "--sweep $spec ($strategies): every row equals its own run"
}
check_sweep chunk=64K,1M,4M,16M pool,buddy chunk
check_sweep align=256,4096,65536 pool,first-fit,caching align
check_sweep large=4K,256K,4M pool options
check_sweep retries=0,1,3 pool,buddy,caching retries --capacity 60M
check_sweep capacity=40M,80M,1G first-fit,pool capacity
run compare "$T/r.jsonl" -s pool --sweep chunk=1M,oops
[ $rc -eq 2 ]; ok $? "a bad sweep value exits 2"
contains "$T/err" "oops"; ok $? "and names it"
run compare "$T/r.jsonl" -s pool --sweep chunk
[ $rc -eq 2 ]; ok $? "a sweep without values exits 2"
run compare "$T/r.jsonl" -s pool --sweep chunk=1M,4M
contains "$T/out" "sweep        chunk over 2 values"; ok $? "the text output names the sweep"
[ "$(grep -c '^[14]M  *pool' "$T/out")" = 2 ]; ok $? "one text row per value"

# the report carries the sweep: the same rows as compare --sweep
run compare "$T/r.jsonl" -s pool,buddy --sweep chunk=1M,4M --json; cp "$T/out" "$T/cmp.json"
run report "$T/r.jsonl" -s pool,buddy --sweep chunk=1M,4M -o "$T/rep.json"; ok $rc "report --sweep writes a JSON report"
python3 - "$T/cmp.json" "$T/rep.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["sweep"]; b = json.load(open(sys.argv[2]))["sweep"]
strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]
sys.exit(not (a["knob"] == b["knob"] == "chunk" and len(a["rows"]) == 4 and strip(a["rows"]) == strip(b["rows"])))
PY
ok $? "the report's sweep rows are compare's"
run report "$T/r.jsonl" -s pool --sweep large=64K,1M -o "$T/rep.md"; ok $rc "report --sweep writes Markdown"
contains "$T/rep.md" "## Sweep of the option large"; ok $? "with a sweep section"
[ "$(grep -c '^| 64K | pool\|^| 1M | pool' "$T/rep.md")" = 2 ]; ok $? "one Markdown row per value"
run report "$T/r.jsonl" -s pool --sweep chunk=1M,4M -o "$T/rep.csv"
[ $rc -eq 2 ] && [ ! -e "$T/rep.csv" ]; ok $? "a CSV report refuses --sweep and writes nothing"
run compare "$T/r.jsonl" -s first-fit --sweep chunk=1M,4M
contains "$T/err" "--sweep chunk does not apply to first-fit"; ok $? "a swept knob no chosen strategy reads gets a note"
finish
