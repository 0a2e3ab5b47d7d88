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

# ---- diagnose's section ----
run diagnose "$F"; ok $([ $rc -eq 1 ]; echo $?) "diagnose on the fragmentation OOM (exit 1: it recorded an OOM)"
contains "$T/out" "  answer: set expandable_segments:True: it fits under 150.00 MiB"; ok $? "diagnose gives tune's answer"
contains "$T/out" "why the cache held free bytes"; ok $? "and the strands"
run diagnose "$F" --json
python3 - "$T/out" "$T/frag.json" <<'EOF2'; ok $? "diagnose --json carries the same tune result"
import json, sys
r, t = json.load(open(sys.argv[1]))['tune'], json.load(open(sys.argv[2]))['tune']
strip = lambda rows: [{k: v for k, v in x.items() if k != 'seconds'} for x in rows]
assert r['answer'] == t['answer'] and strip(r['rows']) == strip(t['rows']), 'differs'
EOF2
run diagnose "$SRC/samples/train-step.jsonl" --capacity 2700M
contains "$T/out" "allocator settings (the default grid"; ok $([ $? -ne 0 ]; echo $?) "not for a trace that is not a snapshot"

# ---- the report's section ----
run report "$F" -o "$T/r.json"
python3 - "$T/r.json" "$T/frag.json" <<'EOF2'; ok $? "report --json carries the same tune result (answer and rows)"
import json, sys
r, t = json.load(open(sys.argv[1]))['tune'], json.load(open(sys.argv[2]))['tune']
strip = lambda rows: [{k: v for k, v in x.items() if k != 'seconds'} for x in rows]
assert r['answer'] == t['answer'] and strip(r['rows']) == strip(t['rows']), 'differs'
EOF2
run report "$F" -o "$T/r.md"
contains "$T/r.md" "## Allocator settings"; ok $? "the Markdown report has the section"
contains "$T/r.md" 'Set `expandable_segments:True`: it fits under 150.00 MiB'; ok $? "with the answer"
if have_html; then
  run report "$F" -o "$T/r.html"
  python3 - "$T/r.html" <<'EOF2'; ok $? "the HTML report draws the reserved bytes under the recorded and the suggested settings on one axis"
import re, sys
s = open(sys.argv[1]).read()
sec = s[s.index('<h2>Allocator settings</h2>'):]
fig = sec[sec.index('<figure data-series'):sec.index('</figure>')]
assert 'data-series="2" data-line="157286400"' in fig, fig[:200]
series = re.findall(r'<data hidden="hidden" value="(\d+)" data-points="(\d+)">([^<]*)</data>', fig)
names = [n for _, _, n in series]
assert names == ['reserved, recorded settings', 'reserved, expandable_segments:True'], names
MiB = 1 << 20
# the recorded curve peaks where serving the refused request would need (160 MiB); the answer's at 120 MiB
assert [int(v) for v, _, _ in series] == [160 * MiB, 120 * MiB], series
assert '<svg' in fig and fig.count('<path') >= 2
EOF2
else
  skip "the HTML report's figure" "built without cairo"
fi

# ---- which batch fits ----
G="$SRC/samples/transformer-train-step.json"
run tune "$G" --batch B=4,8,16 --capacity 300M --json; ok $rc "a graph at three batch sizes"
cp "$T/out" "$T/batch.json"
L=$(python3 - "$T/batch.json" <<'EOF2'
import json, sys
b = json.load(open(sys.argv[1]))['batch']
given = [p for p in b['points'] if p['given']]
assert len(given) == 3 and all(p['predicted'] == p['actual'] for p in given), given
assert b['leave_one_out_error'] == 0 and b['matched'] == b['template_allocations'], b
L = b['largest']
assert L >= 16 and any(p['batch'] == L and p['fits'] for p in b['points']), b
print(L)
EOF2
); ok $? "each run's peak predicted exactly from the others (leave one out), every allocation matched; largest $L"
run tune "$G" --batch "B=$L,$((L + 1))" --capacity 300M --json
python3 - "$T/out" "$L" <<'EOF2'; ok $? "batch $L fits under 300 MiB and $((L + 1)) does not, by the runs' own replays"
import json, sys
b, L = json.load(open(sys.argv[1]))['batch'], int(sys.argv[2])
pts = {p['batch']: p for p in b['points']}
assert pts[L]['given'] and pts[L]['fits'] and pts[L]['actual'] == pts[L]['predicted'], pts[L]
assert pts[L + 1]['given'] and not pts[L + 1]['fits'] and pts[L + 1]['actual'] > 300 << 20, pts[L + 1]
EOF2
run tune "$G" --batch B=4,8 --capacity 300M
contains "$T/out" "uncertainty: two runs give one line per allocation"; ok $? "two runs: says no error estimate"
cp "$F" "$T/run_bs8.pickle"; cp "$F" "$T/run-batch16.pickle"
run tune "$T/run_bs8.pickle" "$T/run-batch16.pickle" --json; ok $rc "batch sizes from the file names"
python3 -c "
import json, sys
b = json.load(open(sys.argv[1]))['batch']
assert sorted(p['batch'] for p in b['points'] if p['given']) == [8, 16], b
" "$T/out"; ok $? "read as 8 and 16"
cp "$F" "$T/plain.pickle"
run tune "$T/plain.pickle" "$T/run_bs8.pickle"; ok $([ $rc -eq 2 ]; echo $?) "a file name without a batch size: exit 2"
contains "$T/err" "give --batch"; ok $? "asking for --batch"
run tune "$G" --batch B=4,4; ok $([ $rc -eq 2 ]; echo $?) "two runs at one batch: exit 2"

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
