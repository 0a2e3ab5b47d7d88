#!/bin/bash
# Garbage is refused, not read (issue 26 items 5, 6, 8, 10): a snapshot
# field of the wrong container type, a key given twice, blocks that
# contradict their segment, invalid UTF-8 in strings. Every fixture is
# written by Python (pickle, json), never by memlens. An error names the
# file, the field and the value, exits 2 and leaves no output behind.
. "$(dirname "$0")/lib.sh"

# pk NAME PROTOCOL PYTHON-EXPR: pickles the expression into $T/NAME
pk() { python3 -c "import pickle,sys; pickle.dump($3, open(sys.argv[1], 'wb'), protocol=$2)" "$T/$1"; }
# refused NAME MESSAGE ARGS...: exit 2, the message, no output file $T/o.*
refused() {
  local name=$1 msg=$2; shift 2
  rm -f "$T"/o.*
  run "$@"
  ok $([ $rc -eq 2 ]; echo $?) "$name: exit 2 (got $rc)"
  contains "$T/err" "$msg"; ok $? "$name: says \"$msg\" ($(head -c 300 "$T/err"))"
  [ -z "$(ls "$T"/o.* 2>/dev/null)" ]; ok $? "$name: no output written"
}

E="{'action':'alloc','addr':4096,'size':512,'stream':0,'time_us':5}"
SEG="{'device':0,'address':4096,'total_size':2097152,'stream':0,'blocks':[{'address':4096,'size':2097152,'state':'inactive'}]}"

# ---- 5. containers of the wrong type: refused with the path to the field
# (were dropped: a dict of device traces read as no trace, exit 0)
for p in 2 4; do
  pk dt-dict$p.pickle $p "{'segments':[],'device_traces':{0:[$E]}}"
  refused "p$p: device_traces a dict" "dt-dict$p.pickle: \"device_traces\" is a dict, not a list" convert "$T/dt-dict$p.pickle" "$T/o.jsonl"
  pk dt-none$p.pickle $p "{'segments':[],'device_traces':None}"
  refused "p$p: device_traces None" "dt-none$p.pickle: \"device_traces\" is None, not a list" convert "$T/dt-none$p.pickle" "$T/o.jsonl"
  pk dt-item-none$p.pickle $p "{'segments':[],'device_traces':[[$E],None]}"
  refused "p$p: None among the device traces" "dt-item-none$p.pickle: device_traces[1] is None, not a list" convert "$T/dt-item-none$p.pickle" "$T/o.jsonl"
  pk dt-item-int$p.pickle $p "{'segments':[],'device_traces':[5,[$E]]}"
  refused "p$p: a number among the device traces" "dt-item-int$p.pickle: device_traces[0] is 5, not a list" convert "$T/dt-item-int$p.pickle" "$T/o.jsonl"
  pk dt-item-dict$p.pickle $p "{'segments':[],'device_traces':[[$E],{'a':[$E]}]}"
  refused "p$p: a dict among the device traces" "dt-item-dict$p.pickle: device_traces[1] is a dict, not a list" convert "$T/dt-item-dict$p.pickle" "$T/o.jsonl"
done
pk seg-dict.pickle 4 "{'segments':{0:$SEG},'device_traces':[[$E]]}"
refused "segments a dict" "seg-dict.pickle: \"segments\" is a dict, not a list" convert "$T/seg-dict.pickle" "$T/o.jsonl"
pk blocks-dict.pickle 4 "{'segments':[$SEG,{'device':0,'address':8388608,'total_size':4096,'stream':0,'blocks':{}}],'device_traces':[[]]}"
refused "blocks a dict" "blocks-dict.pickle: segments[1][\"blocks\"] is a dict, not a list" convert "$T/blocks-dict.pickle" "$T/o.jsonl"
pk ann-dict.pickle 4 "{'segments':[],'device_traces':[[$E]],'external_annotations':{'name':'x'}}"
refused "annotations a dict" "ann-dict.pickle: \"external_annotations\" is a dict, not a list" convert "$T/ann-dict.pickle" "$T/o.jsonl"
pk ann-none.pickle 4 "{'segments':[],'device_traces':[[$E]],'external_annotations':[{'name':'x','stage':'START','device':0,'time_us':1},None]}"
refused "None among the annotations" "ann-none.pickle: external_annotations[1] is None, not a dict" convert "$T/ann-none.pickle" "$T/o.jsonl"
pk set-list.pickle 4 "{'segments':[],'device_traces':[[$E]],'allocator_settings':[('max_split_size',-1)]}"
refused "allocator settings a list" "set-list.pickle: \"allocator_settings\" is a list, not a dict" convert "$T/set-list.pickle" "$T/o.jsonl"
# the right types still load: tuples where lists are, no annotations, no settings
pk good5.pickle 2 "{'segments':[$SEG],'device_traces':([$E],()),'external_annotations':[]}"
run convert "$T/good5.pickle" "$T/o.jsonl"; ok $rc "tuples where lists are, an empty device: read ($(head -c 200 "$T/err"))"

# ---- 6. a key given twice in one JSON object: Python's json keeps the
# last, memlens read the first; refused naming the key and the byte offset
# of its second occurrence (0-based, in the JSON text), checked by Python
# at FILE OFFSET TEXT: FILE (inflated when gzip) holds TEXT at byte OFFSET
at() {
  python3 - "$@" <<'PY'
import gzip, sys
d = open(sys.argv[1], 'rb').read()
d = gzip.decompress(d) if d[:2] == b'\x1f\x8b' else d
o, want = int(sys.argv[2] or -1), sys.argv[3].encode()
sys.exit(0 if d[o:o + len(want)] == want else 1)
PY
}
# offset: the byte offset the message in $T/err names
offset() { sed -n 's/.*: byte \([0-9]*\): .*/\1/p' "$T/err" | head -1; }
# dup NAME FILE LINE KEYPATH TEXT ARGS...: refused with "FILE:LINE: byte
# N: KEYPATH: the key appears twice", N the offset of TEXT in FILE
dup() {
  local name=$1 file=$2 line=$3 key=$4 text=$5; shift 5
  refused "$name" "$(basename "$file"):$line: byte " "$@"
  contains "$T/err" ": $key: the key appears twice in one object"; ok $? "$name: names $key"
  at "$file" "$(offset)" "$text"; ok $? "$name: byte $(offset) is the second key's ($text)"
}
TS='{"name":"x","shape":[1024],"dtype":"f32","kind":"input"},{"name":"y","shape":[1024],"dtype":"f32"},{"name":"z","shape":[1024],"dtype":"f32"},{"name":"w","shape":[1024],"dtype":"f32"}'
OP='{"name":"relu","type":"relu","inputs":["x"],"outputs":["y"]}'
printf '{"format":"memlens-graph","version":1,\n"tensors":[%s],\n"ops":[%s],\n"ops":[]}\n' "$TS" "$OP" >"$T/g-ops.json"
python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['ops'] == [] else 1)" "$T/g-ops.json"
ok $? "Python reads the last ops (none)"
dup "graph: ops twice" "$T/g-ops.json" 4 ops '"ops":[]' stats "$T/g-ops.json"
printf '{"format":"memlens-graph","version":1,"tensors":[%s],\n"ops":[%s,\n{"name":"r2","type":"relu","inputs":["y"],"outputs":["z"],"outputs":["w"]}]}\n' "$TS" "$OP" >"$T/g-op.json"
dup "graph: an op's outputs twice" "$T/g-op.json" 3 'ops[1].outputs' '"outputs":["w"]' stats "$T/g-op.json"
# an escaped key is the same key to Python ("n\u0061me" is "name")
printf '{"format":"memlens-graph","version":1,"tensors":[{"name":"x","n\\u0061me":"x2","shape":[8],"dtype":"f32","kind":"input"}],"ops":[]}' >"$T/g-esc.json"
dup "graph: a key twice, once escaped" "$T/g-esc.json" 1 'tensors[0].name' '"n\u0061me"' stats "$T/g-esc.json"
# a gzip graph: the offset is in the inflated text
gzip -c "$T/g-ops.json" >"$T/g-ops.json.gz"
dup "gzip graph: ops twice" "$T/g-ops.json.gz" 4 ops '"ops":[]' stats "$T/g-ops.json.gz"
# JSONL: any field of a line, the header's too
H='{"format":"memlens-trace","version":1,"alignment":512}'
printf '%s\n{"kind":"alloc","id":1,"size":4096,"tick":1}\n{"kind":"alloc","id":2,"size":64,"size":9999,"tick":2}\n' "$H" >"$T/j-size.jsonl"
python3 -c "import json,sys; sys.exit(0 if json.loads(open(sys.argv[1]).readlines()[2])['size'] == 9999 else 1)" "$T/j-size.jsonl"
ok $? "Python reads the last size (9999)"
dup "JSONL: size twice" "$T/j-size.jsonl" 3 size '"size":9999' convert "$T/j-size.jsonl" "$T/o.jsonl"
printf '{"format":"memlens-trace","version":1,"alignment":512,"alignment":4096}\n' >"$T/j-head.jsonl"
dup "JSONL: the header's alignment twice" "$T/j-head.jsonl" 1 alignment '"alignment":4096' stats "$T/j-head.jsonl"
printf '%s\n  {"kind":"stack","sid":1,"site":"a.py:1:f","frames":[["a.py",1,"f"]],"sid":2}\n' "$H" >"$T/j-stack.jsonl"
dup "JSONL: a stack's sid twice, the line indented" "$T/j-stack.jsonl" 2 sid '"sid":2' stats "$T/j-stack.jsonl"
# plans (refused before, now with the line and the byte)
run plan "$SRC/samples/train-step.jsonl" -s first-fit -o "$T/good-plan.json"; ok $rc "a plan to tamper with"
python3 - "$T/good-plan.json" "$T/dup-plan.json" <<'PY'
import sys
t = open(sys.argv[1]).read()
i = t.index('"offset":', t.index('"buffers"'))   # the first buffer's offset, given again
j = t.index('}', i)
open(sys.argv[2], 'w').write(t[:j] + ',"offset":0' + t[j:])
PY
line=$(python3 -c "import sys; t = open(sys.argv[1]).read(); print(t[:t.index(',\"offset\":0')].count('\n') + 1)" "$T/dup-plan.json")
dup "plan: a buffer's offset twice" "$T/dup-plan.json" "$line" 'buffers[0].offset' '"offset":0' check "$SRC/samples/train-step.jsonl" "$T/dup-plan.json"
# (Kineto's streaming reader refuses the keys it reads: tests/cli-kineto.sh)
# the same files without the repeat load
printf '{"format":"memlens-graph","version":1,"tensors":[%s],"ops":[%s]}' "$TS" "$OP" >"$T/g-good.json"
run stats "$T/g-good.json"; ok $rc "a graph without repeats loads ($(head -c 200 "$T/err"))"

# ---- 8. blocks that contradict their segment: refused naming segment
# and block (they were figures: a 512-byte block requested 1 TiB read as a
# 1 TiB live buffer, and check called the plan valid with an invented
# second segment)
seg() { echo "{'device':0,'address':$1,'total_size':$2,'stream':0,'segment_type':'large','blocks':[$3]}"; }
blk() { echo "{'address':$1,'size':$2,'requested_size':$3,'state':'$4'}"; }
M2=2097152
pk req40.pickle 4 "{'segments':[$(seg 0x200000 $M2 "$(blk 0x200000 512 2**40 active_allocated),$(blk 0x200200 $((M2 - 512)) 0 inactive)")],'device_traces':[[]]}"
refused "requested_size 2^40 in a 512-byte block" \
  "req40.pickle: segments[0][\"blocks\"][0] (at 0x200000): requested_size 1099511627776 is larger than the block's size 512" \
  convert "$T/req40.pickle" "$T/o.jsonl"
refused "check: requested_size 2^40" "req40.pickle: segments[0][\"blocks\"][0]" check "$T/req40.pickle"
pk outside.pickle 4 "{'segments':[$(seg 0x200000 $M2 "$(blk 0x200000 $M2 0 inactive),$(blk 0x900000 512 512 active_allocated)")],'device_traces':[[]]}"
refused "a block outside its segment" \
  "outside.pickle: segments[0][\"blocks\"][1] (at 0x900000): [0x900000, +512) is not inside its segment [0x200000, +2097152)" \
  convert "$T/outside.pickle" "$T/o.jsonl"
pk before.pickle 4 "{'segments':[$(seg 0x200000 $M2 "$(blk 0x100000 512 512 active_allocated)")],'device_traces':[[]]}"
refused "a block before its segment" "before.pickle: segments[0][\"blocks\"][0] (at 0x100000): [0x100000, +512) is not inside its segment" \
  convert "$T/before.pickle" "$T/o.jsonl"
pk bigblock.pickle 4 "{'segments':[$(seg 0x200000 $M2 "$(blk 0x200000 $((2 * M2)) $((2 * M2)) active_allocated)")],'device_traces':[[]]}"
refused "a 4 MiB block in a 2 MiB segment" \
  "bigblock.pickle: segments[0][\"blocks\"][0] (at 0x200000): [0x200000, +4194304) is not inside its segment [0x200000, +2097152)" \
  stats "$T/bigblock.pickle"
# blocks without addresses (PyTorch 1.13) tile the segment: too many bytes of them end past it
pk tiles.pickle 4 "{'segments':[{'device':0,'address':0x200000,'total_size':$M2,'stream':0,'blocks':[{'size':$M2,'state':'inactive'},{'size':512,'state':'active_allocated'}]}],'device_traces':[[]]}"
refused "1.13 blocks past the segment's end" "tiles.pickle: segments[0][\"blocks\"][1] (at 0x400000): [0x400000, +512) is not inside its segment" \
  stats "$T/tiles.pickle"
# an alloc of the trace larger than the segment it starts in
pk bigalloc.pickle 4 "{'segments':[$(seg 0x200000 4096 "$(blk 0x200000 4096 0 inactive)")],
  'device_traces':[[{'action':'alloc','addr':0x200000,'size':2**30,'stream':0}]]}"
refused "a 1 GiB alloc in a 4 KiB segment" \
  "bigalloc.pickle: device_traces[0][0] (alloc at 0x200000): size 1073741824 ends past its segment [0x200000, +4096) (segments[0] (at 0x200000))" \
  stats "$T/bigalloc.pickle"
refused "check: a 1 GiB alloc in a 4 KiB segment" "bigalloc.pickle: device_traces[0][0]" check "$T/bigalloc.pickle"
pk segalloc.pickle 4 "{'segments':[],'device_traces':[[{'action':'segment_alloc','addr':0x200000,'size':$M2,'stream':0},
  {'action':'alloc','addr':0x300000,'size':$M2,'stream':0}]]}"
refused "an alloc past a segment of the trace" \
  "segalloc.pickle: device_traces[0][1] (alloc at 0x300000): size 2097152 ends past its segment [0x200000, +2097152) (device_traces[0][0]" \
  stats "$T/segalloc.pickle"
# consistent blocks and allocs still load, and the figures are Python's
pk fits.pickle 4 "{'segments':[$(seg 0x200000 $M2 "$(blk 0x200000 1024 1000 active_allocated),$(blk 0x200400 $((M2 - 1024)) $((M2 - 1024)) active_allocated)")],
  'device_traces':[[{'action':'alloc','addr':0x200400,'size':$((M2 - 1024)),'stream':0}]]}"
run stats "$T/fits.pickle" --json; ok $rc "blocks and allocs inside their segments load ($(head -c 200 "$T/err"))"
python3 - "$T/fits.pickle" "$T/out" <<'PY'
import json, pickle, sys
s = pickle.load(open(sys.argv[1], 'rb'))
want = sum(b['requested_size'] for g in s['segments'] for b in g['blocks'] if b['state'] == 'active_allocated')
size = sum(b['size'] for g in s['segments'] for b in g['blocks'] if b['state'] == 'active_allocated')
got = json.load(open(sys.argv[2]))
sys.exit(0 if (got['requested_bytes'], got['peaks'][0]['live']) == (want, size) else 1)
PY
ok $? "fits: the requested bytes and the peak are what Python adds up"
run check "$T/fits.pickle"; ok $rc "fits: check passes"
contains "$T/out" "(2 buffers, 1 segment)"; ok $? "fits: check counts the one recorded segment, invents none ($(cat "$T/out"))"

# ---- 10. invalid UTF-8 in snapshot strings: every writer writes valid
# UTF-8 (U+FFFD for each byte that starts no sequence), read back by
# Python's json.loads / a strict UTF-8 decode
python3 - "$T" <<'PY'
import pickle, sys
d = sys.argv[1]
# a file name decoded with surrogateescape (as os.fsdecode gives a non-UTF-8
# path): pickle writes the lone surrogate as the bytes ED B3 A9
fr = [{'filename': '/data/caf\udce9.py', 'line': 7, 'name': 'step'}, {'filename': 'train.py', 'line': 9, 'name': 'BADNAME1'}]
s = {'segments': [{'device': 0, 'address': 0x200000, 'total_size': 2 << 20, 'stream': 0, 'segment_type': 'large',
                   'blocks': [{'address': 0x200000, 'size': 2 << 20, 'state': 'inactive'}]}],
     'device_traces': [[{'action': 'segment_alloc', 'addr': 0x200000, 'size': 2 << 20, 'stream': 0, 'time_us': 1, 'frames': fr},
                        {'action': 'alloc', 'addr': 0x200000, 'size': 1 << 20, 'stream': 0, 'time_us': 2, 'frames': fr},
                        {'action': 'free_requested', 'addr': 0x200000, 'size': 1 << 20, 'stream': 0, 'time_us': 3, 'frames': fr},
                        {'action': 'free_completed', 'addr': 0x200000, 'size': 1 << 20, 'stream': 0, 'time_us': 4, 'frames': fr},
                        {'action': 'segment_free', 'addr': 0x200000, 'size': 2 << 20, 'stream': 0, 'time_us': 5, 'frames': fr}]],
     'external_annotations': [{'device': 0, 'name': 'BADMARK1', 'stage': 'START', 'time_us': 2}]}
b = pickle.dumps(s, protocol=4)
# raw bytes no decoder takes, in place of same-length ASCII (Python's pickle
# refuses these; memlens reads them)
b = b.replace(b'BADNAME1', b'f\xff\xfe\xc3(\x80\xe2x').replace(b'BADMARK1', b'm\xc0\xafark\xf0\x9f')
open(d + '/utf8.pickle', 'wb').write(b)
PY
# strict FILE...: each FILE decodes as strict UTF-8 (and is JSON / JSON
# lines where it ends so); a FILE written +FILE holds a U+FFFD (it names
# what had the bytes)
strict() {
  python3 - "$@" <<'PY'
import json, sys
bad = []
for path in sys.argv[1:]:
    named = path.startswith('+')
    path = path.lstrip('+')
    try:
        text = open(path, 'rb').read().decode('utf-8')
        if path.endswith('.jsonl'):
            [json.loads(l) for l in text.splitlines() if l.strip()]
        elif path.endswith('.json'):
            json.loads(text)
        if named and '\ufffd' not in text:
            bad.append(path + ': no U+FFFD')
    except ValueError as e:
        bad.append('%s: %s' % (path, e))
print('; '.join(bad))
sys.exit(1 if bad else 0)
PY
}
U=$T/utf8.pickle
run convert "$U" "$T/u.jsonl"; ok $rc "invalid UTF-8: convert reads it ($(head -c 200 "$T/err"))"
strict "+$T/u.jsonl" >"$T/py"; ok $? "convert: the JSONL is valid UTF-8 and JSON ($(cat "$T/py"))"
python3 -c "import json,sys; sys.exit(0 if any('caf\ufffd\ufffd\ufffd.py' in l for l in open(sys.argv[1], encoding='utf-8')) else 1)" "$T/u.jsonl"
ok $? "convert: the surrogate's three bytes are three U+FFFD"
for cmd in "+stats" "check" "+diagnose --capacity 512K" "compare -s first-fit"; do
  set -- ${cmd#+}
  "$MEMLENS" "$1" "$U" "${@:2}" --json >"$T/u-$1.json" 2>"$T/err"
  strict "${cmd%%[a-z]*}$T/u-$1.json" >"$T/py"; ok $? "${cmd#+} --json: valid UTF-8 and JSON ($(cat "$T/py"))"
done
"$MEMLENS" stats "$U" >"$T/u-stats.txt" 2>"$T/err"
strict "+$T/u-stats.txt" >"$T/py"; ok $? "stats (text): valid UTF-8 ($(cat "$T/py"))"
for ext in +json +md csv; do
  run report "$U" --strategies first-fit -o "$T/u-report.${ext#+}"
  strict "${ext%%[a-z]*}$T/u-report.${ext#+}" >"$T/py"; ok $? "report .${ext#+}: valid UTF-8 ($(cat "$T/py"); $(head -c 200 "$T/err"))"
done
if have_html; then
  run report "$U" --strategies first-fit -o "$T/u-report.html"
  strict "+$T/u-report.html" >"$T/py"; ok $? "report .html: valid UTF-8 ($(cat "$T/py"))"
else
  skip "report .html: valid UTF-8" "built without cairo"
fi
# the same text through JSONL: a name with raw invalid bytes in a JSONL trace
printf '{"format":"memlens-trace","version":1}\n{"kind":"mark","name":"m\xff\xfe","tick":1}\n{"kind":"alloc","id":1,"size":64,"tick":2}\n' >"$T/u-in.jsonl"
run convert "$T/u-in.jsonl" "$T/u-out.jsonl"; ok $rc "a JSONL name with invalid bytes: read"
strict "+$T/u-out.jsonl" >"$T/py"; ok $? "and written back as valid UTF-8 ($(cat "$T/py"))"
# a file name with such bytes (from the command line, not the trace)
cp "$U" "$T/u$(printf '\xff').pickle"
"$MEMLENS" stats "$T/u$(printf '\xff').pickle" --json >"$T/u-path.json" 2>"$T/err"
strict "+$T/u-path.json" >"$T/py"; ok $? "stats --json of a file named with a byte 0xff: valid UTF-8 and JSON ($(cat "$T/py"))"
for ext in +json +md csv +html; do
  [ $ext = +html ] && ! have_html && { skip "report .html of that file" "built without cairo"; continue; }
  "$MEMLENS" report "$T/u$(printf '\xff').pickle" --strategies first-fit -o "$T/u-path.${ext#+}" >/dev/null 2>"$T/err"
  strict "${ext%%[a-z]*}$T/u-path.${ext#+}" >"$T/py"; ok $? "report .${ext#+} of that file: valid UTF-8 ($(cat "$T/py"))"
done

finish
