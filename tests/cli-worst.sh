#!/bin/bash
# Every reader's worst case (issue 26 item 4): generated adversarial input
# for each reader (CSV, JSONL, snapshot pickle, Kineto, graph, plan JSON
# and CSV), deep, wide, repetitive and compressed, run under ulimit -v.
# Each ends with a clear error naming the file (exit 2) or a bounded run
# (exit 0): its peak resident memory is at most 64 MiB + M x the input's
# text bytes (inflated, for gzip), M the reader's multiple in
# docs/reliability.md. Every input is written by Python or the shell.
. "$(dirname "$0")/lib.sh"

VLIMIT=1500000   # KiB of address space
# a sanitizer build reserves terabytes of address space and runs under no
# ulimit -v, and its shadow memory is no reader's: the limits are left out
if runs_under_vlimit $VLIMIT && [ -x /usr/bin/time ]; then
  measured=true
else
  measured=false
fi

# worst NAME READER-MULTIPLE TEXT-BYTES EXPECT ARGS...: EXPECT is "ok" (exit 0)
# or the message of exit 2, from the file's name on
worst() {
  local name=$1 mult=$2 text=$3 expect=$4; shift 4
  if $measured; then
    ( ulimit -v $VLIMIT; exec /usr/bin/time -f %M -o "$T/rss" "$MEMLENS" "$@" ) >"$T/out" 2>"$T/err"; rc=$?
    kib=$(tail -1 "$T/rss")
  else
    "$MEMLENS" "$@" >"$T/out" 2>"$T/err"; rc=$?; kib=0
  fi
  if [ "$expect" = ok ]; then
    ok $rc "$name: read (exit $rc; $(head -c 200 "$T/err"))"
  else
    ok $([ $rc -eq 2 ]; echo $?) "$name: exit 2 (got $rc)"
    contains "$T/err" "$expect"; ok $? "$name: says \"$expect\" ($(head -c 200 "$T/err"))"
  fi
  if $measured; then
    local bound=$(( (65536 + mult * text / 1024) ))
    [ "${kib:-0}" -le $bound ]
    ok $? "$name: max RSS $kib KiB <= 64 MiB + $mult x $text bytes = $bound KiB ($(python3 -c "print('%.1f' % (($kib - 0) * 1024 / max($text, 1)))") x the text)"
  else
    skip "$name: max RSS" "a sanitizer build (no ulimit -v, shadow memory) or no /usr/bin/time"
  fi
}
size() { stat -c %s "$1"; }
gunzipped() { gzip -dc "$1" | wc -c; }

python3 - "$T" <<'PY'
import gzip, json, pickle, sys
d = sys.argv[1]
def w(name, text):
    open(d + '/' + name, 'w').write(text)
# CSV: repetitive rows, a wide header, a line of one huge field
rows = ''.join('%d,%d,%d,4096\n' % (i, i, i + 10) for i in range(200000))
w('rep.csv', 'id,lower,upper,size\n' + rows)
w('wide.csv', 'id,lower,upper,size,' + ','.join('c%d' % i for i in range(100000)) + '\n1,0,5,4\n')
w('field.csv', 'id,lower,upper,size\n1,0,5,' + '9' * 5000000 + '\n')
# JSONL: repetitive events, one line of 500k keys, a deep line
H = '{"format":"memlens-trace","version":1}\n'
w('rep.jsonl', H + ''.join('{"kind":"alloc","id":%d,"size":4096,"tick":%d}\n{"kind":"free","id":%d,"tick":%d}\n'
                           % (i, 2 * i + 1, i, 2 * i + 2) for i in range(150000)))
w('wide.jsonl', H + '{"kind":"mark","name":"m","tick":1,' + ','.join('"k%d":0' % i for i in range(500000)) + '}\n')
w('deep.jsonl', H + '{"kind":"mark","name":' + '[' * 100000 + ']' * 100000 + '}\n')
# snapshot: a long trace sharing one frames list by memo, 2M empty dicts
# (one byte each: the densest pickle), 300 nested lists, 1M memo
# references to one 4 KiB string (compression by the memo)
fr = [{'filename': 'train.py', 'line': 1, 'name': 'f'}]
ents = []
for i in range(100000):
    a = 0x100000 + 512 * (i % 1000)
    ents += [{'action': 'alloc', 'addr': a, 'size': 512, 'stream': 0, 'frames': fr},
             {'action': 'free_completed', 'addr': a, 'size': 512, 'stream': 0, 'frames': fr}]
pickle.dump({'segments': [], 'device_traces': [ents]}, open(d + '/rep.pickle', 'wb'), protocol=4)
b = b'\x80\x04}(\x8c\x08segments]\x8c\x12allocator_settings}\x8c\x01x](' + b'}' * 2000000 + b'eu.'
open(d + '/dicts.pickle', 'wb').write(b)
deep = []
for _ in range(300):
    deep = [deep]
pickle.dump({'segments': [], 'device_traces': [[]], 'allocator_settings': {'x': deep}}, open(d + '/deep.pickle', 'wb'), protocol=4)
big = 'x' * 4096
pickle.dump({'segments': [], 'device_traces': [[]], 'allocator_settings': {'x': [big] * 1000000}}, open(d + '/memo.pickle', 'wb'), protocol=4)
# Kineto: repetitive events (plain and gzip), one args object of 500k keys, a deep one
ev = [{"ph": "i", "name": "[memory]", "ts": i, "args": {"Bytes": 4096 if i % 2 == 0 else -4096,
       "Addr": 0x100000 + 4096 * ((i // 2) % 100), "Device Id": 0, "Device Type": 1}} for i in range(200000)]
s = json.dumps({"traceEvents": ev})
w('rep.json', s)
with gzip.open(d + '/rep-gz.json.gz', 'wt') as f:
    f.write(s)
w('wide.json', '{"traceEvents":[{"ph":"i","name":"[memory]","ts":1,"args":{"Bytes":64,"Addr":4096,"Device Id":0,"Device Type":1,'
  + ','.join('"k%d":0' % i for i in range(500000)) + '}}]}')
w('deep.json', '{"traceEvents":[{"ph":"i","name":"[memory]","ts":1,"args":{"Bytes":64,"Addr":4096,"x":' + '[' * 1000 + ']' * 1000 + '}}]}')
# graph: a chain of 50k ops (plain and gzip), a shape of 1M dims, a deep one
ts = [{"name": "x", "shape": [4], "dtype": "f32", "kind": "input"}]
ops = []
for i in range(50000):
    ts.append({"name": "t%d" % i, "shape": [4], "dtype": "f32"})
    ops.append({"name": "o%d" % i, "type": "relu", "inputs": ["x" if i == 0 else "t%d" % (i - 1)], "outputs": ["t%d" % i]})
s = json.dumps({"format": "memlens-graph", "version": 1, "tensors": ts, "ops": ops})
w('rep-graph.json', s)
with gzip.open(d + '/rep-graph.json.gz', 'wt') as f:
    f.write(s)
w('wide-graph.json', '{"format":"memlens-graph","version":1,"tensors":[{"name":"x","shape":[' + ','.join(['1'] * 1000000)
  + '],"dtype":"f32","kind":"input"}],"ops":[]}')
w('deep-graph.json', '{"format":"memlens-graph","version":1,"tensors":' + '[' * 1000 + ']' * 1000 + ',"ops":[]}')
# plans: 100k buffers
w('p.csv', 'id,lower,upper,size\n' + ''.join('%d,%d,%d,512\n' % (i, i, i + 1) for i in range(100000)))
w('deep-plan.json', '{"format":"memlens-plan","version":1,"segments":' + '[' * 1000 + ']' * 1000 + '}')
PY
"$MEMLENS" plan "$T/p.csv" -s first-fit -o "$T/p-plan.json" >/dev/null 2>&1
"$MEMLENS" plan "$T/p.csv" -s first-fit -o "$T/p-plan.csv" >/dev/null 2>&1
# -n: no name or time in the header, whose bytes (a newline, a NUL) would move the first NUL
gzip -n -c "$T/rep.csv" >"$T/rep.csv.gz"
gzip -n -c "$T/rep.jsonl" >"$T/rep.jsonl.gz"
python3 -c "import gzip,sys; open(sys.argv[2], 'wb').write(gzip.compress(open(sys.argv[1], 'rb').read()))" "$T/p-plan.json" "$T/p-plan.json.gz"

# CSV (M = 24)
worst "CSV, 200k rows" 24 "$(size "$T/rep.csv")" ok stats "$T/rep.csv" --quiet
worst "CSV, a header of 100k columns" 24 "$(size "$T/wide.csv")" "wide.csv:1: more than 64 columns" stats "$T/wide.csv"
worst "CSV, a 5 MB field" 24 "$(size "$T/field.csv")" "field.csv:2: size 99999" stats "$T/field.csv"
worst "CSV, gzip" 24 "$(size "$T/rep.csv.gz")" "rep.csv.gz:1: column 4: a NUL byte" stats "$T/rep.csv.gz" --format csv
# JSONL (M = 16)
worst "JSONL, 300k events" 16 "$(size "$T/rep.jsonl")" ok stats "$T/rep.jsonl" --quiet
worst "JSONL, a line of 500k keys" 16 "$(size "$T/wide.jsonl")" ok stats "$T/wide.jsonl" --quiet
worst "JSONL, a line 100k deep" 16 "$(size "$T/deep.jsonl")" "deep.jsonl:2: nested more than 16 levels deep" stats "$T/deep.jsonl"
worst "JSONL, gzip" 16 "$(size "$T/rep.jsonl.gz")" "rep.jsonl.gz:1: column 4: a NUL byte" stats "$T/rep.jsonl.gz" --format jsonl
# snapshot pickles (M = 96: the densest pickle makes a value of each byte)
worst "pickle, 200k entries sharing frames" 96 "$(size "$T/rep.pickle")" ok stats "$T/rep.pickle" --quiet
worst "pickle, 2M empty dicts" 96 "$(size "$T/dicts.pickle")" ok stats "$T/dicts.pickle" --quiet
worst "pickle, 300 nested lists" 96 "$(size "$T/deep.pickle")" "deep.pickle: byte 933: opcode 0x61: containers nested deeper than 256" stats "$T/deep.pickle"
worst "pickle, 1M memo references to a 4 KiB string" 96 "$(size "$T/memo.pickle")" ok stats "$T/memo.pickle" --quiet
# Kineto (M = 4 of the text: it streams)
worst "Kineto, 200k events" 4 "$(size "$T/rep.json")" ok stats "$T/rep.json" --quiet
worst "Kineto, gzip of 200k events" 4 "$(gunzipped "$T/rep-gz.json.gz")" ok stats "$T/rep-gz.json.gz" --quiet
worst "Kineto, an args object of 500k keys" 4 "$(size "$T/wide.json")" ok stats "$T/wide.json" --quiet
worst "Kineto, 1000 levels deep" 4 "$(size "$T/deep.json")" "deep.json:1: byte 182: traceEvents[0].args: nested more than 100 levels deep" stats "$T/deep.json"
# graphs (M = 24: a cJSON tree)
worst "graph, 50k ops" 24 "$(size "$T/rep-graph.json")" ok stats "$T/rep-graph.json" --quiet
worst "graph, gzip of 50k ops" 24 "$(gunzipped "$T/rep-graph.json.gz")" ok stats "$T/rep-graph.json.gz" --quiet
worst "graph, a shape of 1M dims" 24 "$(size "$T/wide-graph.json")" ok stats "$T/wide-graph.json" --quiet
worst "graph, 1000 levels deep" 24 "$(size "$T/deep-graph.json")" "deep-graph.json: line 1: nested more than 100 levels deep" stats "$T/deep-graph.json"
# plans (M = 24), read against their 100k-buffer trace
worst "plan JSON, 100k buffers" 24 $(( $(size "$T/p-plan.json") + $(size "$T/p.csv") )) ok check "$T/p.csv" "$T/p-plan.json"
# (plans and line-based traces are read as plain text: a gzip file is binary to them)
worst "plan JSON, gzip" 24 $(( $(size "$T/p-plan.json.gz") + $(size "$T/p.csv") )) "p-plan.json.gz: byte 3: a NUL byte (binary data, not JSON text)" check "$T/p.csv" "$T/p-plan.json.gz"
worst "plan JSON, 1000 levels deep" 24 $(( $(size "$T/deep-plan.json") + $(size "$T/p.csv") )) "deep-plan.json: line 1: nested more than 100 levels deep" check "$T/p.csv" "$T/deep-plan.json"
worst "plan CSV, 100k buffers" 24 $(( $(size "$T/p-plan.csv") + $(size "$T/p.csv") )) ok check "$T/p.csv" "$T/p-plan.csv"

finish
