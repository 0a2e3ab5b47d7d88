#!/bin/bash
# memlens tune end to end: the answer on the snapshots of
# tests/data/make-tune-fixtures.py, every number checked against Python's
# own reading of the pickle (tests/tune-oracle.py), the real snapshots'
# recorded rows against their recorded reserved peaks, sweeps and errors.
. "$(dirname "$0")/lib.sh"
D="$SRC/tests/data"
ORACLE="python3 $SRC/tests/tune-oracle.py"

# ---- a fragmentation OOM: expandable segments fit ----
F="$D/tune-fragmentation.pickle"
run tune "$F"; ok $rc "tune on a fragmentation OOM exits 0 (a setting fits)"
contains "$T/out" "answer: set expandable_segments:True: it fits under 150.00 MiB"; ok $? "the answer: expandable_segments:True"
run tune "$F" --json --jobs 2; ok $rc "tune --json --jobs 2"
cp "$T/out" "$T/frag.json"
$ORACLE "$F" "$T/frag.json" >"$T/oracle" 2>&1; ok $? "the recorded row, the capacity and the strands agree with the pickle: $(tail -1 "$T/oracle")"
python3 - "$T/frag.json" <<'EOF'; ok $? "expandable_segments:True fits at 120 MiB; max_split_size_mb:32 at 140 MiB, 8 cudaMalloc, 4 cudaFree"
import json, sys
t = json.load(open(sys.argv[1]))['tune']
rows = {r['change']: r for r in t['rows']}
MiB = 1 << 20
e, m = rows['expandable_segments:True'], rows['max_split_size_mb:32']
assert t['answer']['change'] == 'expandable_segments:True' and t['answer']['verdict'] == 'fix', t['answer']
assert e['oom'] is None and e['reserved_peak'] == 120 * MiB, e
assert m['oom'] is None and m['reserved_peak'] == 140 * MiB and m['cuda_malloc'] == 8 and m['cuda_free'] == 4, m
assert all(r['settings'] != t['rows'][0]['settings'] for r in t['rows'][2:]), 'a setting already on was tried'
EOF
run tune "$F" --json --jobs 1
python3 -c "
import json, sys
a, b = (json.load(open(p))['tune'] for p in sys.argv[1:])
for r in a['rows'] + b['rows']:
    r.pop('seconds', None)
assert a == b
" "$T/frag.json" "$T/out"; ok $? "--jobs 2 and --jobs 1 give the same rows"

# ---- a capacity OOM: no setting fits, 30 MiB short ----
C="$D/tune-capacity.pickle"
run tune "$C"; ok $([ $rc -eq 1 ]; echo $?) "tune exits 1 when no setting fits"
contains "$T/out" "no allocator setting can fit: the bytes live at the OOM and its request need 180.00 MiB, 30.00 MiB more than the 150.00 MiB"
ok $? "and says so with the shortfall"
contains "$T/out" "memlens diagnose $C"; ok $? "and points to diagnose"
run tune "$C" --json
$ORACLE "$C" "$T/out" >"$T/oracle" 2>&1; ok $? "the need and the shortfall agree with the pickle: $(tail -1 "$T/oracle")"

# ---- sweeps, cold, errors ----
run tune "$F" --sweep expandable_segments=True,False --sweep 'roundup_power2_divisions=4,[256:1,>:4]' --json
ok $rc "two sweeps"
python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))['tune']
ch = sorted(r['change'] for r in t['rows'][2:])
want = sorted(f'expandable_segments:{e},roundup_power2_divisions:{r}' for e in ('True', 'False') for r in ('4', '[256:1,>:4]'))
assert ch == want, ch
" "$T/out"; ok $? "their product, 4 rows"
run tune "$F" --cold; ok $rc "--cold"
contains "$T/out" "rows replayed from an empty device"; ok $? "says the rows start empty"
run tune "$F" --sweep max_split_size_mb=8; ok $([ $rc -eq 2 ]; echo $?) "a value PyTorch refuses: exit 2"
contains "$T/err" "below 20"; ok $? "naming why"
run tune "$F" --sweep nonsense; ok $([ $rc -eq 2 ]; echo $?) "a sweep without values: exit 2"
run tune "$F" --sweep future_knob=1; ok $([ $rc -eq 2 ]; echo $?) "an unknown setting: exit 2"
run tune "$SRC/samples/train-step.jsonl" --capacity 2700M; ok $rc "a trace without a recorded state: rows from an empty device"
contains "$T/out" "rows replayed from an empty device"; ok $? "and says so"

# ---- the real snapshots: the recorded row is the recording ----
S="$SHARED/data/torch-snapshots"
if [ -d "$S" ]; then
  for f in "$S"/*.pickle "$S"/*.pkl; do
    run tune "$f" --json; ok $rc "tune $(basename "$f")"
    $ORACLE "$f" "$T/out" >"$T/oracle" 2>&1; ok $? "$(basename "$f"): the recorded row's reserved peak is the recording's: $(tail -1 "$T/oracle")"
  done
else
  skip "the real snapshots" "no $S"
fi
finish
