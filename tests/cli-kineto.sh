#!/bin/bash
# The Kineto / Chrome trace reader (it streams the JSON with yajl): what it
# refuses and how it says so (the file, the line, the byte offset in the
# JSON text, the field), the devices, and its bounds. Each offset is
# checked against the file's bytes by Python.
. "$(dirname "$0")/lib.sh"

rss() {  # rss COMMAND...: runs memlens under /usr/bin/time; max RSS (KiB) in $kib
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$T/rss" "$MEMLENS" "$@" >"$T/out" 2>"$T/err"; rc=$?
    kib=$(tail -1 "$T/rss")
  else
    run "$@"; kib=0
  fi
}
# at FILE OFFSET TEXT: the JSON text of FILE (inflated when gzip) holds TEXT at OFFSET
at() {
  python3 - "$@" <<'PY'
import gzip, sys
path, off, want = sys.argv[1], int(sys.argv[2]), sys.argv[3].encode()
data = open(path, 'rb').read()
if data[:2] == b'\x1f\x8b':
    data = gzip.decompress(data)
sys.exit(0 if data[off:off + len(want)] == want else 1)
PY
}
# offset: the byte offset the message in $T/err names
offset() { sed -n 's/.*: byte \([0-9]*\): .*/\1/p' "$T/err" | head -1; }

M='{"ph":"i","name":"[memory]","ts":%s,"args":{"Bytes":%s,"Addr":%s,"Device Id":%s,"Device Type":1}}'
mem() { printf "$M" "$@"; }

# ---- duplicate keys: Python's json keeps the last, memlens refused ----
printf '{"traceEvents":[\n%s,\n{"ph":"i","name":"[memory]","ts":2,"args":{"Bytes":4096,"Addr":8192,"Bytes":5,"Device Id":0,"Device Type":1}}]}\n' \
  "$(mem 1 64 4096 0)" >"$T/dup-bytes.json"
python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['traceEvents'][1]['args']['Bytes'] == 5 else 1)" "$T/dup-bytes.json"
ok $? "Python reads the last Bytes (5)"
run stats "$T/dup-bytes.json"; ok $([ $rc -eq 2 ]; echo $?) "Bytes twice in one event: exit 2 (got $rc)"
contains "$T/err" "dup-bytes.json:3: byte $(offset): traceEvents[1].args.Bytes: the key appears twice in one object"
ok $? "names the line, the byte offset, the event and the key: $(cat "$T/err")"
at "$T/dup-bytes.json" "$(offset)" '"Bytes":5'; ok $? "the offset is the second key's"
for key in name ts args; do
  printf '{"traceEvents":[{"ph":"i","%s":1,"name":"[memory]","ts":1,"args":{"Bytes":64,"Addr":64}}]}' "$key" >"$T/dup-$key.json"
  run stats "$T/dup-$key.json"; ok $([ $rc -eq 2 ]; echo $?) "\"$key\" twice in one event: exit 2"
  contains "$T/err" "traceEvents[0].$key: the key appears twice"; ok $? "naming traceEvents[0].$key"
done
printf '{"traceEvents":[%s],"traceEvents":[]}' "$(mem 1 64 4096 0)" >"$T/dup-top.json"
run stats "$T/dup-top.json"; ok $([ $rc -eq 2 ]; echo $?) "traceEvents twice: exit 2"
contains "$T/err" ": traceEvents: the key appears twice"; ok $? "naming traceEvents"
at "$T/dup-top.json" "$(offset)" '"traceEvents":[]'; ok $? "at the second one"
printf '{"deviceProperties":[{"id":0,"totalGlobalMem":1000,"totalGlobalMem":2000}],"traceEvents":[%s]}' "$(mem 1 64 4096 0)" >"$T/dup-prop.json"
run stats "$T/dup-prop.json"; ok $([ $rc -eq 2 ]; echo $?) "totalGlobalMem twice: exit 2"
contains "$T/err" "deviceProperties[0].totalGlobalMem: the key appears twice"; ok $? "naming deviceProperties[0].totalGlobalMem"
# keys the reader does not read may repeat (nothing it reports depends on them)
printf '{"traceEvents":[{"ph":"i","cat":"a","cat":"b","name":"[memory]","ts":1,"args":{"Ev Idx":1,"Ev Idx":2,"Bytes":64,"Addr":64}}]}' >"$T/dup-other.json"
run stats "$T/dup-other.json"; ok $rc "keys it does not read may repeat: loads"

# ---- devices: one the file does not hold is an error naming those it does ----
for id in 100000 -1; do
  { printf '{"traceEvents":['; for i in 1 2 3; do [ $i -gt 1 ] && printf ','; mem $i 4096 $((i * 8192)) $id; done; printf ']}'; } >"$T/dev$id.json"
  run stats "$T/dev$id.json"; ok $([ $rc -eq 2 ]; echo $?) "every event on device $id: exit 2 (got $rc)"
  contains "$T/err" "no [memory] events of a device that exists (ids 0 .. 4095); the file holds CUDA device $id (3 [memory] events)"
  ok $? "says which devices the file holds: $(cat "$T/err")"
  run convert "$T/dev$id.json" "$T/dev.jsonl"; [ $rc -eq 2 ] && [ ! -e "$T/dev.jsonl" ]; ok $? "convert: exit 2, no output"
done
run stats "$SRC/tests/data/kineto-devices.json" --device 3; ok $([ $rc -eq 2 ]; echo $?) "--device 3 of a file with 0, 1 and the CPU: exit 2"
contains "$T/err" "--device 3: the trace has no [memory] events of that device; it holds CUDA device 0 (8 [memory] events), CUDA device 1 (8), the CPU (2)"
ok $? "lists the devices: $(cat "$T/err")"
python3 - "$SRC/tests/data/kineto-devices.json" <<'PY'
import json, sys
from collections import Counter
c = Counter((e['args']['Device Type'], e['args']['Device Id']) for e in json.load(open(sys.argv[1]))['traceEvents'] if e['name'] == '[memory]')
sys.exit(0 if c == Counter({(1, 0): 8, (1, 1): 8, (0, -1): 2}) else 1)
PY
ok $? "those counts are Python's"
run stats "$SRC/tests/data/kineto-devices.json"; ok $rc "the default device loads"
contains "$T/err" "reading CUDA device 0: the most [memory] events (8); --device N reads another"; ok $? "and says which and why"
printf '{"traceEvents":[{"ph":"X","name":"aten::mm","ts":1,"dur":2}]}' >"$T/nomem.json"
run stats "$T/nomem.json"; ok $([ $rc -eq 2 ]; echo $?) "no [memory] events: exit 2"
contains "$T/err" "no [memory] events in 1 trace events (the PyTorch profiler records them with profile_memory=True)"; ok $? "and says so"

# ---- garbage is refused where it is, not skipped ----
printf '{"traceEvents":[%s,\n  17]}' "$(mem 1 64 4096 0)" >"$T/num.json"
run stats "$T/num.json"; ok $([ $rc -eq 2 ]; echo $?) "an event that is a number: exit 2"
contains "$T/err" "num.json:2: byte $(offset): traceEvents[1]: an event is a number, not an object"; ok $? "$(cat "$T/err")"
at "$T/num.json" "$(offset)" "17"; ok $? "the offset is the number's"
printf '{"traceEvents":[{"name":"[memory]","ts":1,"args":"Bytes 64"}]}' >"$T/noargs.json"
run stats "$T/noargs.json"; ok $([ $rc -eq 2 ]; echo $?) "a [memory] event whose args is a string: exit 2"
contains "$T/err" 'traceEvents[0]: a [memory] event needs an "args" object'; ok $? "$(cat "$T/err")"
printf '{"traceEvents":[%s,%s]}' "$(mem 1 64 4096 0)" "$(mem 2 '"lots"' 8192 0)" >"$T/bytes.json"
run stats "$T/bytes.json"; ok $([ $rc -eq 2 ]; echo $?) "Bytes \"lots\": exit 2"
contains "$T/err" 'traceEvents[1]: a [memory] event needs numeric args "Bytes" and "Addr"'; ok $? "$(cat "$T/err")"
at "$T/bytes.json" "$(offset)" '"lots"'; ok $? "at the value"
# a syntax error deep in a gzip file: the offset counts the inflated text
python3 - "$T/late.json.gz" <<'PY'
import gzip, json, sys
ev = [{'ph': 'X', 'name': 'k%d' % i, 'ts': i, 'dur': 1, 'args': {'stream': 7}} for i in range(20000)]
text = json.dumps({'traceEvents': ev}, indent=1)
cut = text.index('"k15000"')
text = text[:cut] + '"k15000" x' + text[cut + 8:]
gzip.open(sys.argv[1], 'wt').write(text)
PY
run stats "$T/late.json.gz"; ok $([ $rc -eq 2 ]; echo $?) "a syntax error in a gzip file: exit 2"
contains "$T/err" "traceEvents[15000].name: not valid JSON"; ok $? "names the event and the field: $(cat "$T/err")"
at "$T/late.json.gz" "$(offset)" 'x'; ok $? "and the byte of the inflated text"
line=$(sed -n 's/.*late.json.gz:\([0-9]*\): .*/\1/p' "$T/err")
python3 -c "import gzip,sys; t=gzip.open(sys.argv[1],'rt').read(); sys.exit(0 if t.count(chr(10), 0, int(sys.argv[2])) + 1 == int(sys.argv[3]) else 1)" \
  "$T/late.json.gz" "$(offset)" "$line"; ok $? "and its line ($line)"

# ---- times: ts in µs since the epoch, kept to the ns from the first event ----
E="$SRC/tests/data/kineto-epoch.json"
run render "$E" --axis time -o "$T/epoch.png"
if [ $rc -ne 0 ] && contains "$T/err" "built without cairo"; then
  skip "render --axis time of epoch-scale ts" "this memlens was built without cairo"
  skip "has times" "this memlens was built without cairo"
else
  ok $rc "render --axis time of epoch-scale ts"
  ! contains "$T/err" "carry no times"; ok $? "has times (it said: its events carry no times)"
fi
run stats "$E"; ok $rc "stats"
python3 - "$E" "$T/out" <<'PY'
import decimal, json, sys
ev = [e for e in json.load(open(sys.argv[1]), parse_float=decimal.Decimal)['traceEvents'] if e['name'] == '[memory]']
ts = sorted(int(decimal.Decimal(str(e['ts'])) * 1000) for e in ev)
sys.exit(0 if 'time         %.3f ms\n' % ((ts[-1] - ts[0]) / 1e6) in open(sys.argv[2]).read() else 1)
PY
ok $? "the span of times is Python's: $(grep ^time "$T/out")"
run stats "$E" --range 1us:3us --json; ok $rc "--range 1us:3us of a Kineto trace"
python3 -c "import json,sys; w=json.load(open(sys.argv[1]))['window']; sys.exit(0 if (w['state_tick'], w['last_tick']) == (2, 3) else 1)" "$T/out"
ok $? "the window: the state at tick 2, the event at 2.998 us (tick 3)"
run stats "$E" --range 10s:; ok $([ $rc -eq 2 ]; echo $?) "--range past the last event: exit 2"
contains "$T/err" "kineto-epoch.json: --range 10s: holds no [memory] event of CUDA device 0 (4 events, ticks 1 .. 4, times 0 .. 8.999e-06s)"
ok $? "says what the trace holds: $(cat "$T/err")"
run stats "$SRC/tests/data/graph-branch.json" --range 1:2; ok $([ $rc -eq 2 ]; echo $?) "--range of a graph: exit 2"
contains "$T/err" "--range reads a window of PyTorch snapshots and Kineto traces only"; ok $? "naming what it reads"

# ---- the recorded plan's fragmentation: a Kineto trace records how many
# bytes were reserved (Total Reserved), not which: n/a, not 0.000 ----
K="$SRC/tests/data/kineto-two-threads.json"
run compare "$K" -s recorded,best-fit; ok $rc "compare"
grep -qE '^recorded +[0-9]+ +[0-9.]+ MiB +[-+][0-9.]+% +n/a +n/a ' "$T/out"; ok $? "the recorded row says n/a: $(grep ^recorded "$T/out")"
grep -qE '^best-fit +[0-9]+ +[0-9.]+ MiB +[-+][0-9.]+% +0\.[0-9]{3} +0\.[0-9]{3} ' "$T/out"; ok $? "a strategy's row has its numbers"
run compare "$K" -s recorded,best-fit --json; ok $rc "compare --json"
python3 -c "
import json, sys
r = {x['strategy']: x for x in json.load(open(sys.argv[1]))['results']}
rec, bf = r['recorded'], r['best-fit']
sys.exit(0 if all(rec[k] is None for k in ('frag_max', 'frag_mean', 'frag_at_peak', 'frag_max_tick')) and isinstance(bf['frag_max'], float) else 1)
" "$T/out"; ok $? "--json: null for the recorded plan, numbers for best-fit"
run report "$K" -s recorded,best-fit -o "$T/k.csv"; ok $rc "report .csv"
python3 -c "
import csv, sys
r = {x['strategy']: x for x in csv.DictReader(open(sys.argv[1]))}
sys.exit(0 if r['recorded']['frag_max'] == '' and float(r['best-fit']['frag_max']) >= 0 else 1)
" "$T/k.csv"; ok $? "the CSV report: empty for the recorded plan"
run compare "$SRC/tests/data/tiny-snapshot.pickle" -s recorded; ok $([ $rc -eq 1 ]; echo $?) "a snapshot's recorded plan (exit 1: it records an OOM)"
grep -qE '^recorded .* 0\.[0-9]{3} +0\.[0-9]{3} ' "$T/out"; ok $? "has its fragmentation (segments at real addresses)"

# ---- bounded by the input ----
rss stats /dev/zero --format kineto
ok $([ $rc -eq 2 ]; echo $?) "/dev/zero: exit 2 (got $rc)"
contains "$T/err" "/dev/zero:1: byte 0: not valid JSON"; ok $? "at byte 0: $(cat "$T/err")"
mkfifo "$T/fifo.json"
(head -c 100000000 /dev/zero >"$T/fifo.json" 2>/dev/null &)
rss stats "$T/fifo.json"
ok $([ $rc -eq 2 ]; echo $?) "a FIFO fed zeros: exit 2"
[ "${kib:-0}" -lt 100000 ]; ok $? "max RSS ${kib} KiB"
truncate -s 70G "$T/sparse.json"
rss stats "$T/sparse.json"
ok $([ $rc -eq 2 ]; echo $?) "a 70 GB (sparse) file: exit 2"
contains "$T/err" "sparse.json: 75161927680 bytes, larger than the limit of 68719476736 bytes"; ok $? "refused from its size: $(cat "$T/err")"
rm -f "$T/sparse.json"
# compressed JSON whose tree would explode: 1.2M events inflate 60 times
# within the 256x cap; the stream keeps nothing of them
python3 - "$T/many.json.gz" <<'PY'
import gzip, sys
with gzip.open(sys.argv[1], 'wt', compresslevel=9) as f:
    f.write('{"traceEvents":[')
    for i in range(1200000):
        f.write('{"ph":"X","ts":%d,"dur":1,"name":"k"},' % i)
    f.write('{"ph":"i","name":"[memory]","ts":0,"args":{"Bytes":64,"Addr":64,"Device Id":0,"Device Type":1}}]}')
PY
rss stats "$T/many.json.gz"
ok $rc "1.2M events in $(($(stat -c %s "$T/many.json.gz") / 1024)) KiB of gzip: loads"
[ "${kib:-0}" -lt 60000 ]; ok $? "max RSS ${kib} KiB: the events are not kept"
finish
