#!/bin/bash
# Hostile input (issue 13): each reproduction of the issue, as an attacker
# would feed it. A value memlens cannot hold is an error naming file,
# entry and value (exit 2), never a silent 0; nothing crashes.
. "$(dirname "$0")/lib.sh"

# pk NAME PYTHON-EXPR: pickles the expression into $T/NAME
pk() { python3 -c "import pickle,sys; pickle.dump($2, open(sys.argv[1], 'wb'), protocol=4)" "$T/$1"; }

# ---- 1. a long annotation name (was a stack overflow of a 512-byte buffer)
for n in 600 100000; do
  pk ann$n.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':4096,'size':512,'stream':0,'time_us':5}]],
    'external_annotations':[{'name':'A'*$n,'stage':'START','device':0,'time_us':1}]}"
  run convert "$T/ann$n.pickle" "$T/ann$n.jsonl"; ok $rc "a $n-byte annotation name loads (exit 0)"
  # the mark's text, from the file itself: the name, a space, the stage lowercased
  python3 - "$T/ann$n.jsonl" "$n" <<'PY'
import json, sys
want = 'A' * int(sys.argv[2]) + ' start'
names = [e.get('name') for e in map(json.loads, open(sys.argv[1])) if e.get('kind') == 'mark']
sys.exit(0 if want in names else 1)
PY
  ok $? "its mark holds the whole name and the stage ($n bytes)"
done
run stats "$T/ann100000.pickle"; ok $rc "stats on the 100000-byte name exits 0 (it crashed with SIGSEGV)"

# ---- 2. an annotation time whose nanoseconds overflow int64
pk ann-time.pickle "{'segments':[],'device_traces':[[]],'external_annotations':[{'name':'x','device':0,'time_us':2**62}]}"
run stats "$T/ann-time.pickle"; ok $([ $rc -eq 2 ]; echo $?) "time_us 2^62 in an annotation exits 2"
contains "$T/err" "ann-time.pickle: external annotation 0: \"time_us\" is 4611686018427387904"; ok $? "naming file, annotation and value"
pk entry-time.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':0,'size':512,'stream':0,'time_us':2**62}]]}"
run stats "$T/entry-time.pickle"; ok $([ $rc -eq 2 ]; echo $?) "time_us 2^62 in a trace entry exits 2"
contains "$T/err" "entry-time.pickle: device_traces[0][0]: \"time_us\" is 4611686018427387904"; ok $? "naming file, entry and value"

# ---- 3. sizes and addresses the reader cannot hold: never a silent 0
i=0
for v in "-1|-1" "2**63|9223372036854775808" "2**64|18446744073709551616" "2**4000|an integer of 4001 bits" \
         "'4096'|the string \"4096\"" "1.5|the float 1.5" "None|None" "True|True" "-2**70|-1180591620717411303424"; do
  py=${v%%|*}; say=${v#*|}
  for key in size addr; do
    i=$((i + 1))
    if [ $key = size ]; then e="{'action':'alloc','addr':4096,'size':$py,'stream':0}"
    else e="{'action':'alloc','addr':$py,'size':512,'stream':0}"; fi
    pk v$i.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':8192,'size':512,'stream':0},$e]]}"
    run convert "$T/v$i.pickle" "$T/v$i.jsonl"
    ok $([ $rc -eq 2 ]; echo $?) "$key = $py: exit 2"
    contains "$T/err" "v$i.pickle: device_traces[0][1]: \"$key\" is $say"; ok $? "$key = $py: names file, entry and value"
    [ ! -e "$T/v$i.jsonl" ]; ok $? "$key = $py: no output written"
  done
done
# the segments and blocks at dump time
pk seg.pickle "{'segments':[{'device':0,'address':-4096,'total_size':2097152,'stream':0,'blocks':[]}]}"
run stats "$T/seg.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a negative segment address exits 2"
contains "$T/err" "seg.pickle: segment 0: \"address\" is -4096"; ok $? "and names the value"
pk seg2.pickle "{'segments':[{'device':0,'address':0,'total_size':'big','stream':0,'blocks':[]}]}"
run stats "$T/seg2.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a string segment size exits 2"
contains "$T/err" "seg2.pickle: segment 0: \"total_size\" is the string \"big\""; ok $? "and names the value"
pk seg3.pickle "{'segments':[{'device':0,'total_size':4096,'stream':0,'blocks':[]}]}"
run stats "$T/seg3.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a segment without an address exits 2"
contains "$T/err" "seg3.pickle: segment 0 has no \"address\""; ok $? "and says which key"
pk blk.pickle "{'segments':[{'device':0,'address':0,'total_size':4096,'stream':0,'blocks':[{'address':0,'size':2**64,'state':'active_allocated'}]}]}"
run stats "$T/blk.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a block size of 2^64 exits 2"
contains "$T/err" "blk.pickle: segment 0 block 0: \"size\" is 18446744073709551616"; ok $? "and names block and value"
# a plain valid file still loads, with the sizes Python sees
pk good.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':2**62,'size':2**40,'stream':7,'time_us':9223372036854775}]]}"
run convert "$T/good.pickle" "$T/good.jsonl"; ok $rc "the largest values the reader takes load"
python3 - "$T/good.jsonl" <<'PY'
import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e.get('kind') == 'alloc']
sys.exit(0 if len(ev) == 1 and int(ev[0]['size']) == 2**40 and int(ev[0]['addr'], 16) == 2**62 else 1)
PY
ok $? "size and address as in the pickle"
# ---- 5. the output is the input: refused, the input kept
S=$SRC/samples/train-step.jsonl
cp "$S" "$T/in.jsonl"; ln "$T/in.jsonl" "$T/in-link.jsonl" 2>/dev/null || cp "$S" "$T/in-link.jsonl"
sum=$(cksum <"$T/in.jsonl")
run convert "$T/in.jsonl" "$T/in.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "convert IN IN exits 2"
contains "$T/err" "in.jsonl: this is an input of the command; refusing to replace it"; ok $? "and says the output is the input"
[ "$(cksum <"$T/in.jsonl")" = "$sum" ]; ok $? "the input is unchanged"
run plan "$T/in.jsonl" -s best-fit -o "$T/in-link.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "plan -o the input by another name (a hard link) exits 2"
[ "$(cksum <"$T/in.jsonl")" = "$sum" ]; ok $? "the input is unchanged"
run plan "$T/in.jsonl" -s best-fit -o "$T/p.json"; ok $rc "a plan elsewhere is written"
cp "$T/p.json" "$T/p0.json"
ln -s p.json "$T/p-link.svg"
run render "$T/in.jsonl" --plan "$T/p.json" -o "$T/p-link.svg"
ok $([ $rc -eq 2 ]; echo $?) "render -o a symlink to the --plan it reads exits 2"
cmp -s "$T/p.json" "$T/p0.json"; ok $? "the plan is unchanged"

# ---- 6. stdout write errors
if [ -w /dev/full ]; then
  for cmd in "compare $S --json" "stats $S" "check $S"; do
    "$MEMLENS" $cmd >/dev/full 2>"$T/err"; rc=$?
    ok $([ $rc -eq 2 ]; echo $?) "$cmd > /dev/full exits 2"
    contains "$T/err" "cannot write to standard output: No space left on device"; ok $? "$cmd > /dev/full says why"
  done
else
  ok 0 "# SKIP no /dev/full"
fi
# ---- 7. what the output path is: followed, refused or kept as it was
S=$SRC/samples/train-step.jsonl
mkdir -p "$T/o7/elsewhere"
cp "$S" "$T/o7/elsewhere/target.jsonl"; chmod 600 "$T/o7/elsewhere/target.jsonl"
ln -s elsewhere/target.jsonl "$T/o7/link.jsonl"
run convert "$SRC/samples/tiny.16.csv" "$T/o7/link.jsonl"; ok $rc "convert -o a symlink exits 0"
[ -L "$T/o7/link.jsonl" ]; ok $? "the symlink is still a symlink (it became a regular file)"
contains "$T/o7/elsewhere/target.jsonl" '"source":"csv"'; ok $? "its target holds the new output"
[ "$(stat -c %a "$T/o7/elsewhere/target.jsonl")" = 600 ]; ok $? "the target keeps its mode 600"
[ -z "$(ls -A "$T/o7" | grep memlens-tmp)$(ls -A "$T/o7/elsewhere" | grep memlens-tmp)" ]; ok $? "no temporary is left in either folder"
cp "$S" "$T/o7/private.jsonl"; chmod 640 "$T/o7/private.jsonl"
run convert "$SRC/samples/tiny.16.csv" "$T/o7/private.jsonl"; ok $rc "replacing a file exits 0"
[ "$(stat -c %a "$T/o7/private.jsonl")" = 640 ]; ok $? "the replaced file keeps its mode 640 (it became 644)"
mkfifo "$T/o7/fifo.jsonl"
timeout 10 "$MEMLENS" convert "$S" "$T/o7/fifo.jsonl" >"$T/out" 2>"$T/err"; rc=$?
ok $([ $rc -eq 2 ]; echo $?) "-o a FIFO exits 2"
contains "$T/err" "fifo.jsonl: is a FIFO; memlens writes regular files only"; ok $? "and says it is a FIFO"
[ -p "$T/o7/fifo.jsonl" ]; ok $? "the FIFO is still a FIFO"
ln -s /dev/null "$T/o7/null.jsonl"
run convert "$S" "$T/o7/null.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "-o a symlink to /dev/null exits 2"
contains "$T/err" "null.jsonl: the symbolic link's target /dev/null is a character device"; ok $? "and names the device"
[ -L "$T/o7/null.jsonl" ] && [ -c /dev/null ]; ok $? "the link and the device are untouched"
mkdir "$T/o7/dir.jsonl"
run convert "$S" "$T/o7/dir.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "-o a directory exits 2"
contains "$T/err" "dir.jsonl: is a directory; memlens writes regular files only"; ok $? "and says it is a directory"
cp "$S" "$T/o7/a.jsonl"; ln "$T/o7/a.jsonl" "$T/o7/b.jsonl"; sum=$(cksum <"$S")
run convert "$SRC/samples/tiny.16.csv" "$T/o7/b.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "-o a file with two hard links exits 2"
contains "$T/err" "b.jsonl: it has 2 hard links; replacing it would cut it from the other names"; ok $? "and says why"
[ "$(cksum <"$T/o7/a.jsonl")" = "$sum" ] && [ "$(cksum <"$T/o7/b.jsonl")" = "$sum" ] && [ "$(stat -c %h "$T/o7/a.jsonl")" = 2 ]
ok $? "both names keep the old contents and stay linked"
ln -s missing.jsonl "$T/o7/dangling.jsonl"
run convert "$SRC/samples/tiny.16.csv" "$T/o7/dangling.jsonl"; ok $rc "-o a dangling symlink creates its target (as > does)"
[ -L "$T/o7/dangling.jsonl" ] && contains "$T/o7/missing.jsonl" '"source":"csv"'; ok $? "the link stays, the target is the output"

# ---- 11. --time-limit stops every strategy (100 000 buffers, 1,000 live:
# greedy-size alone takes 1.1 s on a 2-core machine, 19 s before the
# bucketed placer); `timeout` only guards against a hang
awk 'BEGIN { print "{\"format\":\"memlens-trace\",\"version\":1}"; srand(7)
  for (i = 0; i < 100000; i++) { printf "{\"kind\":\"alloc\",\"id\":%d,\"size\":%d}\n", i, 256 + int(rand() * 100000)
    if (i >= 1000) printf "{\"kind\":\"free\",\"id\":%d}\n", i - 1000 } }' >"$T/tl.jsonl"
for s in greedy-size greedy-conflict hybrid genetic anneal exact; do
  timeout 120 "$MEMLENS" compare "$T/tl.jsonl" -s $s --time-limit 0.3s >"$T/out" 2>"$T/err"; rc=$?
  ok $([ $rc -ne 124 ]; echo $?) "compare -s $s --time-limit 0.3s ends"
  grep -qE "^$s +stopped at the time limit \(0.3 s\) after placing [0-9]+ of 100000 buffers" "$T/out"; ok $? "its row says it stopped at the time limit"
  ! contains "$T/err" "does not apply"; ok $? "no note that --time-limit does not apply to $s"
done
# one pass each, over 100 000 buffers in a few milliseconds: a limit of a
# microsecond stops them at their first clock check after it
for s in ge-block linear; do
  timeout 120 "$MEMLENS" compare "$T/tl.jsonl" -s $s --time-limit 1us >"$T/out" 2>"$T/err"; rc=$?
  ok $([ $rc -ne 124 ]; echo $?) "compare -s $s --time-limit 1us ends"
  grep -qE "^$s +stopped at the time limit \(1e-06 s\) after placing [0-9]+ of 100000 buffers" "$T/out"; ok $? "its row says it stopped at the time limit"
  ! contains "$T/err" "does not apply"; ok $? "no note that --time-limit does not apply to $s"
done
timeout 120 "$MEMLENS" compare "$T/tl.jsonl" -s first-fit,caching --time-limit 0.001s --json >"$T/out" 2>"$T/err"
python3 - "$T/out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))['results']
sys.exit(0 if len(rows) == 2 and all(r.get('stopped') == 'time limit' and 'after' in r['error'] for r in rows) else 1)
PY
ok $? "online strategies stop at the limit too, and --json says \"stopped\": \"time limit\""

# ---- 12. offsets and addresses that wrap past 2^64
for v in 18446744073709551608 18446744073709551615; do
  printf 'id,lower,upper,size,offset\nb0,0,2,16,0\nb1,0,3,16,%s\nb2,1,4,16,32\n' $v >"$T/wrap-$v.csv"
  run check "$T/wrap-$v.csv"; ok $([ $rc -eq 2 ]; echo $?) "CSV offset $v: check exits 2 (it said \"valid\")"
  contains "$T/err" "wrap-$v.csv:3: buffer b1: offset $v + size 16 ends past 2^60 bytes"; ok $? "offset $v: names file, line and value"
done
printf '{"format":"memlens-trace","version":1}\n{"kind":"alloc","id":1,"addr":"0xfffffffffffffff8","size":16}\n' >"$T/wrap.jsonl"
run stats "$T/wrap.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "a JSONL address 2^64-8 of 16 bytes exits 2"
contains "$T/err" "wrap.jsonl: line 2: address 0xfffffffffffffff8 + size 256 wraps past 2^64"; ok $? "and names line and value"

# ---- 13. messages
# lifetime errors name the line (cli-bad-input checks JSONL); a CSV's repeated numeric id names both lines
printf 'id,lower,upper,size\n1,0,3,4\n2,0,3,4\n01,1,2,4\n' >"$T/dup.csv"
run stats "$T/dup.csv"; ok $([ $rc -eq 2 ]; echo $?) "CSV ids 1 and 01: exit 2"
contains "$T/err" "dup.csv:4: duplicate id 1 (first on line 2)"; ok $? "names both lines"
# snapshot and Kineto lifetime errors name the entry as the file has it
# (they said "event N", memlens's own 0-based index): the entry, its
# action and address, and the value; checked against the file by Python
E=2**59
pk life.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':i*2**61,'size':$E,'stream':0,'time_us':i} for i in range(3)]]}"
pk life-dev1.pickle "{'segments':[],'device_traces':[[],[{'action':'alloc','addr':0x100000,'size':512,'stream':0},
    {'action':'free_completed','addr':0x100000,'size':512,'stream':0}]+[{'action':'alloc','addr':i*2**61,'size':$E,'stream':0} for i in range(3)]]}"
pk life-seg.pickle "{'segments':[{'device':0,'address':i*2**61,'total_size':$E,'stream':0,
    'blocks':[{'size':$E,'state':'active_allocated'}]} for i in range(3)],'device_traces':[[]]}"
pk life-before.pickle "{'segments':[],'device_traces':[[{'action':'free_completed','addr':i*2**61,'size':$E,'stream':0} for i in range(3)]]}"
python3 - "$T" <<'PY'
import json, sys
d = sys.argv[1]
def m(b, a, **kw):
    return {'ph': 'i', 'name': '[memory]', 'ts': kw.pop('ts', 1), 'args': dict({'Bytes': b, 'Addr': a, 'Device Id': 0, 'Device Type': 1}, **kw)}
k = {'ph': 'X', 'name': 'kernel', 'ts': 0, 'dur': 1}
json.dump({'traceEvents': [k, m(2**59, 0, ts=1), k, m(2**59, 2**61, ts=2), m(2**59, 2**62, ts=3)]}, open(d + '/life-kin.json', 'w'))
json.dump({'traceEvents': [k, m(-2**59, 0, ts=1), m(-2**59, 2**61, ts=2), m(-2**59, 2**62, ts=3)]}, open(d + '/life-kin-before.json', 'w'))
json.dump({'traceEvents': [m(-2**59, 0, ts=1, **{'Total Allocated': 2**61}), m(-2**59, 2**61, ts=2)]}, open(d + '/life-kin-total.json', 'w'))
PY
# life_check FILE EXPECTED-FORM...: the error names FILE and one of the forms; Python finds the entry it names in the file
life_check() {
  local f=$1; shift
  run stats "$T/$f" "$@"; ok $([ $rc -eq 2 ]; echo $?) "$f: the buffers past 2^60 bytes exit 2"
  ! contains "$T/err" "event "; ok $? "$f: no \"event N\" in the message: $(head -c 300 "$T/err")"
  python3 - "$T/$f" "$T/err" <<'PY'
import json, pickle, re, sys
path, msg = sys.argv[1], open(sys.argv[2]).read()
size = int(re.search(r': size (\d+) brings the buffers\' total past 2\^60', msg).group(1))
ok = False
if path.endswith('.pickle'):
    s = pickle.load(open(path, 'rb'))
    m = re.search(r'device_traces\[(\d+)\]\[(\d+)\] \((\w+) at 0x([0-9a-f]+)\)', msg)
    b = re.search(r'the block at 0x([0-9a-f]+) from before the trace, freed by device_traces\[(\d+)\]\[(\d+)\] \((\w+)\)', msg)
    g = re.search(r'segments\[(\d+)\]\["blocks"\]\[(\d+)\] \(at 0x([0-9a-f]+)\)', msg)
    if m:
        e = s['device_traces'][int(m.group(1))][int(m.group(2))]
        ok = e['action'] == m.group(3) == 'alloc' and e['addr'] == int(m.group(4), 16) and e['size'] == size
    elif b:
        e = s['device_traces'][int(b.group(2))][int(b.group(3))]
        ok = e['action'] == b.group(4) == 'free_completed' and e['addr'] == int(b.group(1), 16) and e['size'] == size
    elif g:
        seg = s['segments'][int(g.group(1))]
        blk = seg['blocks'][int(g.group(2))]
        at = seg['address'] + sum(x['size'] for x in seg['blocks'][:int(g.group(2))])
        ok = at == int(g.group(3), 16) and blk['size'] == size
else:
    ev = json.load(open(path))['traceEvents']
    m = re.search(r'traceEvents\[(\d+)\] \(\[memory\] at Addr 0x([0-9a-f]+)\)', msg)
    b = re.search(r'the block at 0x([0-9a-f]+) from before the trace, freed by traceEvents\[(\d+)\]', msg)
    t = re.search(r'the bytes allocated before the trace \("Total Allocated" of traceEvents\[(\d+)\]\)', msg)
    if m:
        a = ev[int(m.group(1))]['args']
        ok = ev[int(m.group(1))]['name'] == '[memory]' and a['Addr'] == int(m.group(2), 16) and a['Bytes'] == size
    elif b:
        a = ev[int(b.group(2))]['args']
        ok = a['Addr'] == int(b.group(1), 16) and a['Bytes'] == -size
    elif t:
        i = int(t.group(1))
        a = ev[i]['args']
        # the bytes live before the first event that the trace never frees
        before = a['Total Allocated'] - a['Bytes'] - sum(-e['args']['Bytes'] for e in ev if e['args']['Bytes'] < 0)
        ok = i == 0 and before == size
sys.exit(0 if ok else 1)
PY
  ok $? "$f: the entry named holds that action, address and size (Python)"
}
life_check life.pickle
contains "$T/err" "life.pickle: device_traces[0][2] (alloc at 0x4000000000000000): size 576460752303423488"; ok $? "life.pickle: the whole message"
life_check life-dev1.pickle --device 1
contains "$T/err" "device_traces[1][3] (alloc at 0x2000000000000000)"; ok $? "life-dev1.pickle: device 1's list and index (512 B + 2^59 + 2^59 passes 2^60)"
life_check life-seg.pickle
contains "$T/err" 'segments[2]["blocks"][0] (at 0x4000000000000000)'; ok $? "life-seg.pickle: a dump-time block"
life_check life-before.pickle
life_check life-kin.json
contains "$T/err" "traceEvents[4] ([memory] at Addr 0x4000000000000000)"; ok $? "life-kin.json: the traceEvents index, kernels counted"
life_check life-kin-before.json
life_check life-kin-total.json
# a double free in a snapshot (a free_completed of a block already freed,
# no alloc between) or an alloc over a live block: entries missing inside
# the trace; read on, with a warning naming the first and the count
pk dfree.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':0x1000,'size':512,'stream':0},
    {'action':'free_completed','addr':0x1000,'size':512,'stream':0},{'action':'alloc','addr':0x3000,'size':1024,'stream':0},
    {'action':'free_completed','addr':0x1000,'size':512,'stream':0},
    {'action':'free_requested','addr':0x1000,'size':512,'stream':0},{'action':'free_completed','addr':0x1000,'size':512,'stream':0},
    {'action':'alloc','addr':0x2000,'size':512,'stream':0},{'action':'alloc','addr':0x2000,'size':2048,'stream':0}]]}"
run convert "$T/dfree.pickle" "$T/dfree.jsonl"; ok $rc "a snapshot with a double free loads"
contains "$T/err" "warning: $T/dfree.pickle: device_traces[0][3] (free_completed at 0x1000): the block there is already free, with no alloc since its last free"
ok $? "warns, naming the first second free"
contains "$T/err" "the entry is ignored (3 such entries in all)"; ok $? "and counts them (free_completed, free_requested, free_completed)"
contains "$T/err" "device_traces[0][7] (alloc at 0x2000): the block there is still allocated, with no free since"; ok $? "warns of the alloc over a live block"
python3 - "$T/dfree.pickle" "$T/dfree.jsonl" <<'PY'
import json, pickle, sys
tr = pickle.load(open(sys.argv[1], 'rb'))['device_traces'][0]
# Python's reading: a free ends the block live at its address, if any; an
# alloc over a live block ends it first
live, frees = {}, 0
for e in tr:
    if e['action'] == 'alloc':
        frees += e['addr'] in live
        live[e['addr']] = e['size']
    elif e['action'] == 'free_completed' and e['addr'] in live:
        del live[e['addr']]
        frees += 1
ev = [json.loads(l) for l in open(sys.argv[2])][1:]
got_allocs = [(e['addr'], e['size']) for e in ev if e['kind'] == 'alloc']
want_allocs = [(hex(e['addr']), e['size']) for e in tr if e['action'] == 'alloc']
got_frees = sum(e['kind'] == 'free' for e in ev)
sys.exit(0 if got_allocs == want_allocs and got_frees == frees else 1)
PY
ok $? "its allocations and frees are the trace's, as Python pairs them (no block from before the trace invented)"
pk nodfree.pickle "{'segments':[],'device_traces':[[{'action':'alloc','addr':0x1000,'size':512,'stream':0},
    {'action':'free_requested','addr':0x1000,'size':512,'stream':0},{'action':'free_completed','addr':0x1000,'size':512,'stream':0},
    {'action':'free_completed','addr':0x2000,'size':512,'stream':0}]]}"
run stats "$T/nodfree.pickle"; ok $rc "free_requested then free_completed, and a block from before the trace, load"
! contains "$T/err" "warning"; ok $? "without a warning"
# the same in a Kineto trace: a second free made a second block from before the trace at the same address
python3 - "$T" <<'PY'
import json, sys
def m(ts, b, a):
    return {'ph': 'i', 'name': '[memory]', 'ts': ts, 'args': {'Bytes': b, 'Addr': a, 'Device Id': 0, 'Device Type': 1}}
json.dump({'traceEvents': [m(1, -4096, 0x1000), m(2, -4096, 0x1000), m(3, 4096, 0x3000), m(4, 4096, 0x3000)]},
          open(sys.argv[1] + '/dfree.json', 'w'))
PY
run stats "$T/dfree.json" --json; ok $rc "a Kineto trace with a double free loads"
contains "$T/err" "warning: $T/dfree.json: traceEvents[1] ([memory] Bytes -4096 at Addr 0x1000): the block there is already free"; ok $? "warns, naming the event"
contains "$T/err" "traceEvents[3] ([memory] Bytes 4096 at Addr 0x3000): the block there is still allocated"; ok $? "warns of the allocation over a live block"
python3 - "$T/dfree.json" "$T/out" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))['traceEvents']
# Python's reading: an address whose first event is a free held a block
# from before the trace (one, however often it is freed); a free ends the
# block live there, if any; an allocation over a live block ends it first
first = {}
for e in ev:
    first.setdefault(e['args']['Addr'], e['args']['Bytes'])
live = {a: -b for a, b in first.items() if b < 0}
buffers = len(live) + sum(e['args']['Bytes'] > 0 for e in ev)
cur = peak = sum(live.values())
for e in ev:
    a, b = e['args']['Addr'], e['args']['Bytes']
    if b > 0:
        cur += b - live.pop(a, 0)
        live[a] = b
    elif a in live:
        cur -= live.pop(a)
    peak = max(peak, cur)
got = json.load(open(sys.argv[2]))
sys.exit(0 if got['lower_bound'] == peak and got['buffers'] == buffers else 1)
PY
ok $? "its lower bound and buffers are Python's (one block from before the trace, not two)"
# device traces written as tuples (Python reads a tuple as it reads a
# list): read, the same as the list form; protocols 2 and 4, tuples of 0
# to 5 entries (EMPTY_TUPLE, TUPLE1..3, MARK ... TUPLE), beside lists
for proto in 2 4; do
  python3 - "$T" $proto <<'PY'
import pickle, sys
d, p = sys.argv[1], int(sys.argv[2])
fr = [{'filename': 'train.py', 'line': 7, 'name': 'step'}]
def dev(k, n):
    out = []
    for i in range(n):
        out.append({'action': 'alloc', 'addr': 0x100000 * (k + 1) + 4096 * i, 'size': 512 * (i + 1), 'stream': 0, 'frames': fr})
        if i % 2:
            out.append({'action': 'free_completed', 'addr': 0x100000 * (k + 1) + 4096 * i, 'size': 512 * (i + 1), 'stream': 0, 'frames': fr})
    return out
lists = [dev(k, n) for k, n in enumerate([3, 1, 0, 2, 4, 5])]
mixed = [tuple(l) if k % 2 == 0 else l for k, l in enumerate(lists)]
pickle.dump({'segments': [], 'device_traces': lists}, open(d + '/tl-list.pickle', 'wb'), protocol=p)
pickle.dump({'segments': [], 'device_traces': mixed}, open(d + '/tl-mixed.pickle', 'wb'), protocol=p)
pickle.dump({'segments': [], 'device_traces': [tuple(l) for l in lists]}, open(d + '/tl-tuples.pickle', 'wb'), protocol=p)
pickle.dump({'segments': [], 'device_traces': tuple(tuple(l) for l in lists)}, open(d + '/tl-outer.pickle', 'wb'), protocol=p)
PY
  bad=0
  # device 2 holds nothing (an empty trace): every form refuses it alike (issue 25, item 2)
  for f in list mixed tuples outer; do
    "$MEMLENS" convert "$T/tl-$f.pickle" "$T/tl-got.jsonl" --device 2 >/dev/null 2>"$T/err"
    [ $? -eq 2 ] && grep -q "device 2 holds no memory" "$T/err" || { bad=$((bad + 1)); echo "# $f device 2: $(cat "$T/err")"; }
  done
  for dv in 0 1 3 4 5; do
    "$MEMLENS" convert "$T/tl-list.pickle" "$T/tl-want.jsonl" --device $dv >/dev/null 2>&1 || bad=$((bad + 1))
    for f in mixed tuples outer; do
      "$MEMLENS" convert "$T/tl-$f.pickle" "$T/tl-got.jsonl" --device $dv >/dev/null 2>"$T/err" || { bad=$((bad + 1)); echo "# $f device $dv: $(cat "$T/err")"; continue; }
      cmp -s "$T/tl-want.jsonl" "$T/tl-got.jsonl" || { bad=$((bad + 1)); echo "# $f device $dv differs from the list form"; }
    done
  done
  ok $bad "protocol $proto: device traces as tuples read as the same lists do (6 devices, 3 layouts)"
  "$MEMLENS" convert "$T/tl-mixed.pickle" "$T/tl-got.jsonl" --device 4 >/dev/null 2>&1
  python3 - "$T/tl-mixed.pickle" "$T/tl-got.jsonl" <<'PY'
import json, pickle, sys
tr = pickle.load(open(sys.argv[1], 'rb'))['device_traces'][4]
ev = [json.loads(l) for l in open(sys.argv[2])][1:]
want = [(hex(e['addr']), e['size']) for e in tr if e['action'] == 'alloc']
sys.exit(0 if [(e['addr'], e['size']) for e in ev if e['kind'] == 'alloc'] == want and type(tr) is tuple else 1)
PY
  ok $? "protocol $proto: device 4, a tuple of 6 entries, holds the file's allocations (Python)"
done
# a long path in a message is kept whole (MlError held 512 bytes, a
# strategy's error in a comparison row 256)
L1=$(printf 'd%.0s' $(seq 200)); L2=$(printf 'e%.0s' $(seq 200)); L3=$(printf 'f%.0s' $(seq 200))
LONG="$T/$L1/$L2/$L3/$L1/$L2"
run stats "$LONG/x.csv"; ok $([ $rc -eq 2 ]; echo $?) "a missing file under a 1000-byte path exits 2"
contains "$T/err" "$LONG/x.csv: cannot open: No such file or directory"; ok $? "the message holds the whole path and the reason"
printf 'id,lower,upper,size\nb1,0,4,100\nb2,1,5,100\n' >"$T/two.csv"
if "$MEMLENS" strategies 2>/dev/null | grep -q '^ *ilp\b'; then
  # the only strategy failing is an error (issue 26 item 14): exit 2, the reason on stderr, no table
  run compare "$T/two.csv" -s ilp --options write-model="$LONG/m.lp"
  [ $rc -eq 2 ] && [ ! -s "$T/out" ] && contains "$T/err" "ilp: cannot write the model to $LONG/m.lp: No such file or directory"
  ok $? "a strategy's error holds the whole path (was cut at 256 bytes) and the reason"
  run compare "$T/two.csv" -s ilp --options write-model="$LONG/m.lp" --json
  [ $rc -eq 2 ] && [ ! -s "$T/out" ] && contains "$T/err" "ilp: cannot write the model to $LONG/m.lp: No such file or directory"
  ok $? "and so with --json"
else
  skip "a strategy's error row holds the whole path" "no ilp strategy in this build"
  skip "and so does its --json \"error\"" "no ilp strategy in this build"
fi
# a key given twice in a snapshot's dict: the last one counts, as in
# Python (the lookups took the first); here a segment's total_size
python3 - "$T/dupkey.pickle" <<'PY'
import pickle, struct, sys
def s(x):
    b = x.encode()
    return b'\x8c' + bytes([len(b)]) + b
def i(v):
    return b'J' + struct.pack('<i', v)
seg = (b'}(' + s('device') + b'K\x00' + s('address') + i(0x100000) + s('total_size') + i(1 << 20)
       + s('stream') + b'K\x00' + s('total_size') + i(3 << 20) + s('blocks') + b']' + b'u')
body = b'\x80\x02}(' + s('segments') + b'](' + seg + b'e' + s('device_traces') + b']]au.'
open(sys.argv[1], 'wb').write(body)
assert pickle.loads(body)['segments'][0]['total_size'] == 3 << 20
PY
run stats "$T/dupkey.pickle"; ok $rc "a snapshot with a segment's total_size twice loads"
contains "$T/out" "1 segment, reserved 3.00 MiB at the end"; ok $? "the segment's size is the last total_size, as Python reads it (3 MiB, not 1): $(grep devices "$T/out")"
# a segment's or an annotation's "device" that is not an integer (it read
# as device 0): exit 2 naming the entry and the value
for v in "'0':the string \"0\"" "1.0:the float 1" "None:None" "True:True"; do
  py=${v%%:*} say=${v#*:}
  pk dev-seg.pickle "{'segments':[{'device':$py,'address':0x100000,'total_size':2<<20,'stream':0,'blocks':[]}],'device_traces':[[]]}"
  run stats "$T/dev-seg.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a segment's device $py exits 2"
  contains "$T/err" "dev-seg.pickle: segment 0: \"device\" is $say; expected a device number (0 .. 4095)"; ok $? "naming segment and value ($py)"
  pk dev-ann.pickle "{'segments':[],'device_traces':[[]],'external_annotations':[{'device':$py,'name':'x','stage':'START','time_us':1}]}"
  run stats "$T/dev-ann.pickle"; ok $([ $rc -eq 2 ]; echo $?) "an annotation's device $py exits 2"
  contains "$T/err" "dev-ann.pickle: external annotation 0: \"device\" is $say"; ok $? "naming annotation and value ($py)"
done
# a JSON string or key with \u0000 inside: a reader of C strings takes
# "Bytes\u0000x" for "Bytes" (it would replace the allocation's 4096 bytes
# by 5). The Kineto reader streams (yajl) and compares keys whole, with
# their length, as Python does: it reads Bytes 4096
printf '{"traceEvents":[\n{"ph":"i","name":"[memory]","ts":1,"args":{"Bytes\\u0000x":5,"Bytes":4096,"Addr":4096,"Device Id":0,"Device Type":1}}]}\n' >"$T/knul.json"
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['traceEvents'][0]['args']; sys.exit(0 if a['Bytes'] == 4096 and a['Bytes\0x'] == 5 else 1)" "$T/knul.json"
ok $? "Python reads two keys, Bytes (4096) and Bytes\\0x (5)"
run convert "$T/knul.json" "$T/knul.jsonl"; ok $rc "a Kineto key with \\u0000 loads"
python3 -c "import json,sys; e=[json.loads(l) for l in open(sys.argv[1])][1:]; sys.exit(0 if [x['size'] for x in e if x['kind'] == 'alloc'] == [4096] else 1)" "$T/knul.jsonl"
ok $? "memlens reads Bytes 4096, as Python does"
printf '{"format":"memlens-trace","version":1}\n{"kind":"alloc","id":1,"size":4,"name":"a\\u0000b"}\n' >"$T/nul.jsonl"
run stats "$T/nul.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "a JSONL string with \\u0000 exits 2"
contains "$T/err" 'nul.jsonl:2: a string holds \u0000'; ok $? "naming the line"
"$MEMLENS" plan "$SRC/samples/train-step.jsonl" -s first-fit -o "$T/nul-base-plan.json" >/dev/null 2>&1
sed '0,/"strategy"/s//"strat\\u0000egy"/' "$T/nul-base-plan.json" >"$T/nul-plan.json"
run check "$SRC/samples/train-step.jsonl" "$T/nul-plan.json"; ok $([ $rc -eq 2 ]; echo $?) "a plan key with \\u0000 exits 2"
contains "$T/err" "nul-plan.json: line $(grep -n 'strat.u0000egy' "$T/nul-plan.json" | cut -d: -f1): a string holds"; ok $? "naming the file and the line: $(cat "$T/err")"
printf '{"traceEvents":[{"ph":"i","name":"a\\\\u0000","ts":1},{"ph":"i","name":"[memory]","ts":2,"args":{"Bytes":64,"Addr":64}}]}' >"$T/kesc.json"
python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['traceEvents'][0]['name'] == 'a\\\\u0000' else 1)" "$T/kesc.json"; ok $? "Python reads an escaped backslash, then u0000"
run stats "$T/kesc.json"; ok $rc "so does memlens: it loads"
# a UTF-8 byte-order mark before the header
printf '\xef\xbb\xbfid,lower,upper,size\nb1,0,3,4096\nb2,1,5,8192\nb3,4,6,512\n' >"$T/bom.csv"
run stats "$T/bom.csv" --json; ok $rc "a CSV with a UTF-8 BOM loads"
python3 - "$T/bom.csv" "$T/out" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding='utf-8-sig')))
live = max(sum(int(r['size']) for r in rows if int(r['lower']) <= t < int(r['upper'])) for t in range(10))
got = json.load(open(sys.argv[2]))
sys.exit(0 if got['buffers'] == len(rows) and got['lower_bound'] == live else 1)
PY
ok $? "its buffers and lower bound are the file's (Python's csv, utf-8-sig)"
# a write error names the file and the reason; SIGXFSZ does not kill the writer
S=$SRC/samples/train-step.jsonl
for out in r.md r.json; do
  (ulimit -f 1; exec "$MEMLENS" report "$S" --strategies first-fit,best-fit -o "$T/$out") >"$T/out" 2>"$T/err"; rc=$?
  ok $([ $rc -eq 2 ]; echo $?) "report -o $out past ulimit -f exits 2 (SIGXFSZ killed it: 153)"
  contains "$T/err" "memlens report: $T/$out: write error: File too large"; ok $? "report -o $out names the file and the reason"
  [ -z "$(ls "$T" | grep -F "$out")" ]; ok $? "no $out and no temporary of it is left"
done
(ulimit -f 1; exec "$MEMLENS" convert "$S" "$T/c.jsonl") >"$T/out" 2>"$T/err"; rc=$?
ok $([ $rc -eq 2 ]; echo $?) "convert past ulimit -f exits 2"
contains "$T/err" "c.jsonl: write failed: File too large"; ok $? "and says why"
[ -z "$(ls "$T" | grep -F c.jsonl)" ]; ok $? "no c.jsonl and no temporary of it is left"
# a directory given as the trace
mkdir -p "$T/a-dir"
for cmd in compare stats check; do
  run $cmd "$T/a-dir"; ok $([ $rc -eq 2 ]; echo $?) "$cmd DIR exits 2"
  contains "$T/err" "a-dir: is a directory, not a trace"; ok $? "$cmd DIR says it is a directory (it said \"empty file\")"
done
# plan JSON: text after the document, a key given twice
run plan "$S" -s first-fit -o "$T/good-plan.json"; ok $rc "a plan to tamper with"
{ cat "$T/good-plan.json"; echo '{"format":"memlens-plan"}'; } >"$T/trail-plan.json"
run check "$S" "$T/trail-plan.json"; ok $([ $rc -eq 2 ]; echo $?) "a plan with a second document after it exits 2"
contains "$T/err" "trail-plan.json:$(($(wc -l <"$T/good-plan.json") + 1)): text after the JSON document"; ok $? "and names the line"
sed '0,/"strategy":"first-fit"/s//"strategy":"first-fit","strategy":"x"/' "$T/good-plan.json" >"$T/dup-plan.json"
run check "$S" "$T/dup-plan.json"; ok $([ $rc -eq 2 ]; echo $?) "a plan with \"strategy\" twice exits 2"
contains "$T/err" ": strategy: the key appears twice in one object"; ok $? "and names the key"
python3 - "$T/good-plan.json" "$T/dup2-plan.json" <<'PY'
import sys
t = open(sys.argv[1]).read()
i = t.index('"offset":', t.index('"buffers"'))   # the first buffer's offset, given again
j = t.index('}', i)
open(sys.argv[2], 'w').write(t[:j] + ',"offset":0' + t[j:])
PY
run check "$S" "$T/dup2-plan.json"; ok $([ $rc -eq 2 ]; echo $?) "a buffer with \"offset\" twice exits 2"
contains "$T/err" ": buffers[0].offset: the key appears twice in one object"; ok $? "and says where (cli-garbage checks the byte)"
# overlapping segments and blocks in a snapshot: read, with a warning naming both
pk ov.pickle "{'segments':[{'device':0,'address':0x100000,'total_size':2<<20,'stream':0,'blocks':[
    {'address':0x100000,'size':4096,'state':'active_allocated'},{'address':0x100800,'size':4096,'state':'active_allocated'}]},
  {'device':0,'address':0x200000,'total_size':2<<20,'stream':0,'blocks':[]}],'device_traces':[[]]}"
run stats "$T/ov.pickle"; ok $rc "a snapshot with overlaps still loads"
contains "$T/err" "warning: $T/ov.pickle: segment 1 [0x200000, +2097152) overlaps segment 0, which ends at 0x300000"; ok $? "warns, naming both segments"
contains "$T/err" "segment 0: block 1 at 0x100800 starts before block 0 ends at 0x101000"; ok $? "warns, naming both blocks"
run stats "$T/good.pickle"; ! contains "$T/err" "warning"; ok $? "no warning on a snapshot without overlaps"

# ---- 4. out of memory is said as such, at any address-space limit
# oom_sweep NAME CMD...: runs memlens CMD under `ulimit -v` from the least
# that runs a tiny file up in $oom_step KiB steps until it succeeds; each run that
# fails must exit 2 saying "out of memory" (never "not valid JSON", a
# crash or a silent short read), and the run that succeeds must print what
# the unlimited run prints.
oom_base=
for v in $(seq 16384 8192 262144); do
  # in a sanitizer build this probe never starts (ASan reserves terabytes
  # of shadow memory): its refusals go to stderr, not to the report files
  # CI counts (log_path), since they say nothing of memlens
  if runs_under_vlimit $v; then oom_base=$v; break; fi
done
oom_sweep() {
  local name=$1; shift
  "$MEMLENS" "$@" --quiet >"$T/oom-want" 2>/dev/null || { ok 1 "$name: runs without a limit"; return; }
  local v=$oom_base said=0 bad=0 done=0
  while [ $v -lt $((oom_base + 4194304)) ]; do
    (ulimit -v $v; exec "$MEMLENS" "$@" --quiet) >"$T/oom-out" 2>"$T/oom-err"; local r=$?
    if [ $r -eq 0 ]; then done=1; break; fi
    if [ $r -eq 2 ] && contains "$T/oom-err" "out of memory"; then said=$((said + 1))
    else bad=$((bad + 1)); echo "# $name at ulimit -v $v: exit $r: $(head -c 200 "$T/oom-err")"; fi
    v=$((v + oom_step))
  done
  ok $bad "$name: every limited run that fails exits 2 with \"out of memory\""
  ok $([ $said -gt 0 ]; echo $?) "$name: some limit is below what it needs ($said runs said so)"
  ok $([ $done -eq 1 ] && cmp -s "$T/oom-out" "$T/oom-want"; echo $?) "$name: with enough memory the output is the unlimited one"
}
if [ -z "$oom_base" ]; then
  skip "out of memory under ulimit -v" "memlens does not run under a 256 MiB address-space limit (a sanitizer build)"
else
  python3 - "$T" <<'PY'
import pickle, sys
d = sys.argv[1]
n = 40000
# a Kineto trace: n allocations and their frees, each with an address
with open(d + '/kin.json', 'w') as f:
    f.write('{"schemaVersion":1,"traceEvents":[\n')
    for i in range(2 * n):
        a, sign = 0x7f0000000000 + (i // 2) * 8192, 1 if i % 2 == 0 else -1
        f.write('%s{"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":100,"ts":%d,'
                '"args":{"Total Reserved":20971520,"Total Allocated":1048576,"Bytes":%d,"Addr":%d,"Device Id":0,"Device Type":1}}\n'
                % ("," if i else "", i + 1, sign * 4096, a))
    f.write(']}\n')
# a MiniMalloc CSV of n buffers, planned below into a large plan
with open(d + '/big.csv', 'w') as f:
    f.write('id,lower,upper,size\n')
    for i in range(n):
        f.write('b%d,%d,%d,%d\n' % (i, i, i + 1 + i % 97, 64 + i % 1000))
# a PyTorch snapshot of n allocations and frees
ev = []
for i in range(n):
    ev.append({'action': 'alloc', 'addr': 4096 * i, 'size': 512, 'stream': 0, 'time_us': 2 * i})
    ev.append({'action': 'free_completed', 'addr': 4096 * i, 'size': 512, 'stream': 0, 'time_us': 2 * i + 1})
pickle.dump({'segments': [], 'device_traces': [ev]}, open(d + '/big.pickle', 'wb'), protocol=4)
PY
  run plan "$T/big.csv" -s first-fit -o "$T/big-plan.json"; ok $rc "a plan of the large CSV is written"
  run convert "$T/kin.json" "$T/kin.jsonl"; ok $rc "the Kineto trace converts to JSONL"
  oom_step=4096
  oom_sweep "Kineto trace" stats "$T/kin.json"
  oom_sweep "plan JSON" check "$T/big.csv" "$T/big-plan.json"
  oom_sweep "snapshot pickle" stats "$T/big.pickle"
  oom_step=512   # the line readers stream: they need a few MiB
  oom_sweep "JSONL trace" stats "$T/kin.jsonl"
  oom_sweep "CSV" stats "$T/big.csv"

  # the lowest limits, where memlens's main barely runs: opening the input
  # allocates (fopen's FILE, gzopen's state), and that failure is out of
  # memory too, not "cannot open: Cannot allocate memory". A build without
  # GLib (the core) reaches main with no heap yet; with GLib the
  # constructors have made one, and the window may be empty there.
  reaches_main() {  # reaches_main LIMIT: memlens itself ran (exit 0, or 2 with its own message)
    (ulimit -v $1; exec "$MEMLENS" stats "$SRC/samples/tiny.16.csv" --quiet) >/dev/null 2>"$T/rm-err"; local r=$?
    [ $r -eq 0 ] || { [ $r -eq 2 ] && head -c 8 "$T/rm-err" | grep -q '^memlens '; }
  }
  lo=1024 hi=$oom_base
  while [ $((hi - lo)) -gt 8 ]; do
    mid=$(((lo + hi) / 2))
    if reaches_main $mid; then hi=$mid; else lo=$mid; fi
  done
  cp "$T/kin.jsonl" "$T/noext"   # no extension: the sniffer opens it
  head -c 4000 "$T/kin.json" | sed '$d' >"$T/small-kin.json"; echo ']}' >>"$T/small-kin.json"
  said=0 bad=0
  for f in "$SRC/samples/tiny.16.csv" "$SRC/samples/train-step.jsonl" "$T/small-kin.json" "$T/good.pickle" "$T/noext"; do
    "$MEMLENS" stats "$f" --quiet >/dev/null 2>&1 || { bad=$((bad + 1)); echo "# $f does not load without a limit"; }
    for v in $(seq $hi 8 $((hi + 512))); do
      (ulimit -v $v; exec "$MEMLENS" stats "$f" --quiet) >/dev/null 2>"$T/oom-err"; r=$?
      [ $r -eq 0 ] && break
      head -c 8 "$T/oom-err" | grep -q '^memlens ' || continue   # died before main (the loader, GLib)
      if [ $r -eq 2 ] && contains "$T/oom-err" "out of memory"; then said=$((said + 1))
      else bad=$((bad + 1)); echo "# $f at ulimit -v $v: exit $r: $(head -c 200 "$T/oom-err")"; fi
    done
  done
  ok $bad "opening an input at the least memory memlens starts with ($hi KiB): every failure says \"out of memory\""
  ok $([ $said -gt 0 ]; echo $?) "some of those runs ran out ($said)"
fi
finish
