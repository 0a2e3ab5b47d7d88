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

finish
