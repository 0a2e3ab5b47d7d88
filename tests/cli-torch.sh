#!/bin/bash
# PyTorch snapshots end to end: the hand-made fixtures always, the real
# snapshots in ../shared when present (skipped with 77 otherwise).
. "$(dirname "$0")/lib.sh"
D="$SRC/tests/data"

run stats "$D/tiny-snapshot.pickle"; ok $rc "stats reads a snapshot by its extension"
contains "$T/out" "pytorch-snapshot"; ok $? "stats names the format"
cp "$D/tiny-snapshot.pickle" "$T/noext"
run stats "$T/noext"; ok $rc "stats sniffs a pickle without extension"
run convert "$D/tiny-snapshot.pickle" "$T/tiny.jsonl"; ok $rc "convert snapshot -> jsonl"
contains "$T/tiny.jsonl" '"free_requested"'; ok $? "convert keeps free_requested"
contains "$T/tiny.jsonl" 'train.py'; ok $? "convert keeps the stack frames"
contains "$T/tiny.jsonl" '"oom"'; ok $? "convert keeps the oom"
run stats "$T/tiny.jsonl"; ok $rc "the converted trace loads"
head -c 200 "$D/tiny-snapshot.pickle" >"$T/cut.pickle"
run stats "$T/cut.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a truncated pickle exits 2"
contains "$T/err" "truncated"; ok $? "and says truncated"
run compare "$D/tiny-snapshot.pickle" --strategies caching --json; ok $rc "compare --json on a snapshot"
contains "$T/out" '"address_conformance":1.000000'; ok $? "compare --json reports conformance"

finish
