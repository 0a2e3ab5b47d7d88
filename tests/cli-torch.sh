#!/bin/bash
# PyTorch snapshots end to end: the hand-made fixtures always, the real
# snapshots in ../shared when present (skipped with 77 otherwise).
. "$(dirname "$0")/lib.sh"
D="$SRC/tests/data"

# tiny-snapshot.pickle records an OOM: stats, compare, report and diagnose exit 1 (issue 25, item 4)
run stats "$D/tiny-snapshot.pickle"; ok $([ $rc -eq 1 ]; echo $?) "stats reads a snapshot by its extension (exit 1: it records an OOM)"
contains "$T/out" "pytorch-snapshot"; ok $? "stats names the format"
cp "$D/tiny-snapshot.pickle" "$T/noext"
run stats "$T/noext"; ok $([ $rc -eq 1 ]; echo $?) "stats sniffs a pickle without extension"
run convert "$D/tiny-snapshot.pickle" "$T/tiny.jsonl"; ok $rc "convert snapshot -> jsonl"
contains "$T/tiny.jsonl" '"free_requested"'; ok $? "convert keeps free_requested"
contains "$T/tiny.jsonl" 'train.py'; ok $? "convert keeps the stack frames"
contains "$T/tiny.jsonl" '"oom"'; ok $? "convert keeps the oom"
run stats "$T/tiny.jsonl"; ok $([ $rc -eq 1 ]; echo $?) "the converted trace loads (with its OOM: exit 1)"
head -c 200 "$D/tiny-snapshot.pickle" >"$T/cut.pickle"
run stats "$T/cut.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a truncated pickle exits 2"
contains "$T/err" "truncated"; ok $? "and says truncated"
run compare "$D/tiny-snapshot.pickle" --strategies caching --json; ok $([ $rc -eq 1 ]; echo $?) "compare --json on a snapshot (exit 1: it records an OOM)"
contains "$T/out" '"address_conformance":1.000000'; ok $? "compare --json reports conformance"
# allocator settings: PyTorch's syntax; what the emulation does not model is refused by name
run compare "$D/tiny-snapshot.pickle" --strategies caching --options 'max_split_size_mb:64,roundup_power2_divisions:[256:2,>:4]'
ok $([ $rc -eq 1 ]; echo $?) "compare takes PYTORCH_CUDA_ALLOC_CONF's syntax in --options"
for s in 'future_setting:1|reads the key "future_setting"' 'backend:cudaMallocAsync,max_split_size_mb:64|cudaMallocAsync ignores' \
         'per_process_memory_fraction:0.9|needs the device'; do
  run compare "$D/tiny-snapshot.pickle" --strategies caching,best-fit --options "${s%%|*}"
  ok $([ $rc -eq 2 ]; echo $?) "--options ${s%%|*}: exit 2"
  contains "$T/err" "${s#*|}" && [ ! -s "$T/out" ]; ok $? "and says why (${s#*|}), with no table (bad usage)"
done
run compare "$D/tiny-snapshot.pickle" --strategies caching --capacity 1G \
  --options 'garbage_collection_threshold:0.5,per_process_memory_fraction:0.9'
ok $([ $rc -eq 1 ]; echo $?) "garbage_collection_threshold with a fraction and --capacity runs"
run compare "$D/tiny-snapshot.pickle" --strategies caching --options 'backend:cudaMallocAsync'
ok $([ $rc -eq 1 ]; echo $?) "the cudaMallocAsync model runs"


# graph samples: they plan and validate
for g in resnet50-inference-b32 transformer-train-step; do
  run stats "$SRC/samples/$g.json"; ok $rc "stats $g"
  contains "$T/out" "(graph)"; ok $? "$g is read as a graph"
  for s in best-fit caching; do
    run plan "$SRC/samples/$g.json" -s $s -o "$T/$g.$s.plan.json"; ok $rc "plan $g with $s"
    run check "$SRC/samples/$g.json" "$T/$g.$s.plan.json"; ok $rc "the $s plan of $g validates"
  done
  run stats "$SRC/samples/$g.json" --reorder memory; ok $rc "stats --reorder memory $g"
  contains "$T/out" "reorder=memory"; ok $? "$g: the reordering reports its result"
done
run stats "$SRC/samples/resnet50-inference-b32.json" --json
contains "$T/out" '"buffers":377'; ok $? "ResNet-50: 377 buffers (161 tensors of weights and BN, activations)"
cat >"$T/hazard.json" <<'JSON'
{"format":"memlens-graph","version":1,
 "tensors":[{"name":"x","shape":[1000],"dtype":"f32","kind":"input"},
  {"name":"a","shape":[1000],"dtype":"f32"},{"name":"b","shape":[1000],"dtype":"f32"},
  {"name":"c","shape":[1000],"dtype":"f32","kind":"output"}],
 "ops":[{"name":"exp","inputs":["x"],"outputs":["a"]},
  {"name":"relu_","inputs":["a"],"outputs":["b"],"inplace":[["a","b"]]},
  {"name":"mul","inputs":["b","a"],"outputs":["c"]}]}
JSON
run stats "$T/hazard.json"; contains "$T/out" 'in-place hazard: op "relu_" writes "b" over "a", which op "mul" reads later'; ok $? "stats names the in-place hazard"
run check "$T/hazard.json" -s best-fit; ok $([ $rc -eq 1 ]; echo $?) "check exits 1 on an in-place hazard"
contains "$T/out" "in-place"; ok $? "and reports it as in-place"
run convert "$T/hazard.json" "$T/hazard.jsonl"; ok $rc "convert a graph to JSON Lines"
run check "$T/hazard.jsonl" -s best-fit; ok $([ $rc -eq 1 ]; echo $?) "the converted graph keeps its in-place write"
run stats "$D/tiny-snapshot.pickle" --reorder sideways; ok $([ $rc -eq 2 ]; echo $?) "--reorder with a bad value exits 2"
finish
