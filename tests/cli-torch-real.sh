#!/bin/bash
# The real PyTorch snapshots in ../shared (absent from a fresh clone: exit 77).
. "$(dirname "$0")/lib.sh"
S="$SHARED/data/torch-snapshots"
if [ ! -d "$S" ]; then
  echo "1..0 # SKIP no $S"
  exit 77
fi
for f in "$S"/*.pickle "$S"/*.pkl; do
  b=$(basename "$f")
  run stats "$f" --json; ok $rc "stats $b"
  run compare "$f" --json; ok $rc "compare $b"
  contains "$T/out" '"caching_conformance"'; ok $? "compare $b measures the caching conformance"
  contains "$T/out" '"end_segments_match":true'; ok $? "$b: emulated segments at the end match the recorded ones"
done
for b in magma27_trace bcrafton_trace; do
  run compare "$S/$b.pickle" --strategies caching --json
  contains "$T/out" '"address_conformance":1.000000'; ok $? "$b: every allocation at the real address"
done
run compare "$S/magma27_trace.pickle" --strategies caching --options roundup_power2_divisions=8
contains "$T/out" "best-fit order"; ok $? "another rounding breaks conformance and names the rule"
run stats "$S/muduard_legacy_segments.pkl"; contains "$T/out" "segment_alloc 255"; ok $? "legacy list: 255 segments"
run stats "$S/bcrafton_trace.pickle"; contains "$T/out" "Optimizer.step#AdamW.step start"; ok $? "bcrafton: annotations as marks"
run stats "$S/albi2_expandable.pickle"; contains "$T/out" "allocator settings: max_split_size_mb=128,expandable_segments=1"; ok $? "albi2: the recorded allocator settings"
run convert "$S/bcrafton_trace.pickle" "$T/b.jsonl"; ok $rc "convert bcrafton to JSON Lines"
run compare "$T/b.jsonl" --strategies caching --json
contains "$T/out" '"address_conformance":1.000000'; ok $? "the converted trace keeps the rebuilt state, stacks and epoch times (conformance 100%)"
finish
