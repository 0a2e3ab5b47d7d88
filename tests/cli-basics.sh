#!/bin/bash
# The command end to end on small files made here.
. "$(dirname "$0")/lib.sh"

cat >"$T/ex.12.csv" <<'CSV'
id,lower,upper,size
b1,0,3,4
b2,3,9,4
b3,0,9,4
b4,9,21,4
b5,0,21,4
CSV

run --help; ok $rc "memlens --help exits 0"
contains "$T/out" "compare"; ok $? "help lists compare"
for c in stats compare plan check convert; do
  run $c --help; ok $rc "$c --help exits 0"
  contains "$T/out" "Usage: memlens $c"; ok $? "$c --help shows its usage"
done

run stats "$T/ex.12.csv"; ok $rc "stats on the MiniMalloc example"
contains "$T/out" "lower bound  12"; ok $? "stats prints the lower bound"
contains "$T/out" "capacity     12"; ok $? "stats reads the capacity from the file name"

run compare "$T/ex.12.csv" --strategies first-fit,best-fit --json; ok $rc "compare --json exits 0 (everything fits in 12)"
contains "$T/out" '"lower_bound":12'; ok $? "compare --json has the lower bound"
[ "$(grep -o '"strategy"' "$T/out" | wc -l)" -eq 2 ]; ok $? "one result per strategy"

run compare "$T/ex.12.csv" --strategies linear; ok $([ $rc -eq 1 ]; echo $?) "compare exits 1 when a strategy runs out of the capacity"
contains "$T/out" "@"; ok $? "the OOM column names the tick"

run compare "$T/ex.12.csv" --capacity 1K --strategies linear; ok $rc "--capacity 1K overrides the file name"

run plan "$T/ex.12.csv" --strategy best-fit -o "$T/plan.json"; ok $rc "plan writes JSON"
[ -s "$T/plan.json" ]; ok $? "the plan file exists"
contains "$T/plan.json" '"format":"memlens-plan"'; ok $? "it is a memlens plan"
run check "$T/ex.12.csv" "$T/plan.json"; ok $rc "check accepts the plan"
contains "$T/out" "is valid"; ok $? "check says valid"

# plan --json: the summary's numbers against the plan file, computed in Python
run plan "$T/ex.12.csv" --strategy best-fit -o "$T/plan2.json" --json; ok $rc "plan --json"
python3 - "$T/out" "$T/plan2.json" "$T/ex.12.csv" <<'PY'; ok $? "plan --json: peak, lower bound, segments and output agree with the plan file and the CSV"
import csv, json, sys
s = json.loads(open(sys.argv[1]).read())
p = json.load(open(sys.argv[2]))
rows = list(csv.DictReader(open(sys.argv[3])))
assert len(p["buffers"]) == len(rows)
size = [int(r["size"]) for r in rows]   # plan buffers are indexed in CSV row order
peak = max(b["offset"] + size[b["index"]] for b in p["buffers"])
# the lower bound from the CSV alone: the most bytes live at one moment
ticks = sorted({int(r["lower"]) for r in rows})
lb = max(sum(int(r["size"]) for r in rows if int(r["lower"]) <= t < int(r["upper"])) for t in ticks)
assert s["peak"] == peak, (s["peak"], peak)
assert s["lower_bound"] == lb == p["lower_bound"], (s["lower_bound"], lb)
assert s["segments"] == len(p["segments"]) and s["oom"] is False and s["output"] == sys.argv[2]
assert abs(s["overhead"] - (peak - lb) / lb) < 1e-6
PY
for c in "render -o $T/j.png" "report -o $T/j.md"; do
  run $c "$T/ex.12.csv" --json
  ok $([ $rc -eq 2 ] && grep -q -- "--json does not apply" "$T/err" && [ ! -e "$T/j.png" ] && [ ! -e "$T/j.md" ]; echo $?) "${c%% *} --json is refused, not ignored"
done
run convert "$T/ex.12.csv" "$T/j.jsonl" --json
ok $([ $rc -eq 2 ] && [ ! -e "$T/j.jsonl" ]; echo $?) "convert --json is refused"

run plan "$T/ex.12.csv" --strategy first-fit -o "$T/sol.csv"; ok $rc "plan writes a CSV solution"
head -1 "$T/sol.csv" | grep -q "id,lower,upper,size,offset"; ok $? "with an offset column"
run check "$T/sol.csv"; ok $rc "check validates the recorded offsets of the solution"

# check TRACE PLAN.csv: the plan CSV that 'plan -o x.csv' writes, matched by id
# and cross-checked against the trace (issue 25, item 1)
run check "$T/ex.12.csv" "$T/sol.csv" --json; ok $rc "check TRACE PLAN.csv accepts the CSV plan (exit $rc: $(head -c 200 "$T/err"))"
python3 - "$T/out" "$T/sol.csv" <<'PY'; ok $? "check TRACE PLAN.csv: valid, as the rectangles of the CSV say (Python)"
import csv, json, sys
r = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
box = [(int(x["lower"]), int(x["upper"]), int(x["offset"]), int(x["offset"]) + int(x["size"])) for x in rows]
clash = sum(1 for i in range(len(box)) for j in range(i) if box[i][0] < box[j][1] and box[j][0] < box[i][1]
            and box[i][2] < box[j][3] and box[j][2] < box[i][3])
assert r["valid"] is (clash == 0) and r["counts"]["conflict"] == clash and r["plan"] == "sol.csv", (r["counts"], clash)
PY
# b3 moved onto b1's bytes: a conflict, the one Python finds
awk -F, 'BEGIN{OFS=","} $1=="b3"{$5=0} $1=="b1"{$5=0} {print}' "$T/sol.csv" >"$T/clash.csv"
run check "$T/ex.12.csv" "$T/clash.csv" --json
python3 - "$T/out" "$T/clash.csv" "$rc" <<'PY'; ok $? "check TRACE PLAN.csv: a conflicting CSV plan exits 1 with the conflicts Python finds"
import csv, json, sys
r = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
box = [(int(x["lower"]), int(x["upper"]), int(x["offset"]), int(x["offset"]) + int(x["size"])) for x in rows]
clash = sum(1 for i in range(len(box)) for j in range(i) if box[i][0] < box[j][1] and box[j][0] < box[i][1]
            and box[i][2] < box[j][3] and box[j][2] < box[i][3])
assert clash > 0 and r["valid"] is False and r["counts"]["conflict"] == clash and sys.argv[3] == "1", (r["counts"], clash)
PY
# a row that does not describe the trace's buffer: exit 2 naming the line, the id and both values
awk -F, 'BEGIN{OFS=","} $1=="b2"{$3=$3+1} {print}' "$T/sol.csv" >"$T/other.csv"
line=$(grep -n '^b2,' "$T/other.csv" | cut -d: -f1)
run check "$T/ex.12.csv" "$T/other.csv"
ok $([ $rc -eq 2 ] && contains "$T/err" "other.csv:$line: buffer b2: upper 10, but in the trace it ends at tick 9"; echo $?) "a CSV plan of another trace is refused naming the line and the values ($(cat "$T/err"))"
grep -v '^b4,' "$T/sol.csv" >"$T/short.csv"
run check "$T/ex.12.csv" "$T/short.csv"
ok $([ $rc -eq 2 ] && contains "$T/err" "buffer b4 of the trace has no row"; echo $?) "a CSV plan missing a buffer is refused, naming it"
sed 's/^b5,/b9,/' "$T/sol.csv" >"$T/unknown.csv"
run check "$T/ex.12.csv" "$T/unknown.csv"
ok $([ $rc -eq 2 ] && contains "$T/err" "buffer b9: the trace has no buffer with this id"; echo $?) "a CSV plan row naming no buffer is refused"
# a trace that reuses an id after its free: the CSV plan numbers its rows by buffer index, and reads back
printf '%s\n' '{"format":"memlens-trace","version":1,"alignment":1}' '{"kind":"alloc","id":7,"size":8}' \
  '{"kind":"free","id":7}' '{"kind":"alloc","id":7,"size":16}' '{"kind":"free","id":7}' >"$T/reuse.jsonl"
run plan "$T/reuse.jsonl" --strategy best-fit -o "$T/reuse.csv" && run check "$T/reuse.jsonl" "$T/reuse.csv"
ok $([ $rc -eq 0 ] && contains "$T/out" "plan is valid (2 buffers"; echo $?) "check TRACE PLAN.csv on a trace that reuses an id"

# a conflicting plan: put b1 and b3 at the same offset
grep -q '"offset":4}' "$T/plan.json"; ok $? "best-fit put a buffer at offset 4"
sed 's/"offset":4}/"offset":0}/' "$T/plan.json" >"$T/bad.json"
run check "$T/ex.12.csv" "$T/bad.json"; ok $([ $rc -eq 1 ]; echo $?) "check exits 1 on a conflicting plan"
contains "$T/out" "conflict"; ok $? "and names the conflict"
run check "$T/ex.12.csv" "$T/bad.json" --json
contains "$T/out" '"valid":false'; ok $? "check --json says invalid"

run convert "$T/ex.12.csv" "$T/ex.jsonl"; ok $rc "convert CSV to JSONL"
run convert "$T/ex.jsonl" "$T/back.csv"; ok $rc "and back to CSV"
diff -q <(sort "$T/ex.12.csv") <(sort "$T/back.csv") >/dev/null; ok $? "the round trip gives the same rows (in allocation order)"
run compare "$T/ex.jsonl" --align 1 --json --strategies best-fit
contains "$T/out" '"lower_bound":12'; ok $? "the JSONL trace has the same lower bound"

run strategies; ok $rc "strategies lists"
contains "$T/out" "best-fit"; ok $? "best-fit is listed"

if [ -f "$SRC/samples/train-step.jsonl" ]; then
  run compare "$SRC/samples/train-step.jsonl" --strategies all; ok $rc "compare on the bundled sample"
  contains "$T/out" "recorded"; ok $? "the sample's recorded layout is compared too"
  run stats "$SRC/samples/train-step.jsonl"; ok $rc "stats on the bundled sample"
fi
finish
