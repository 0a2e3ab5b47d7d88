#!/bin/bash
# The offline planners through the command: plan, compare --strategies all,
# fixed capacity, the ilp model writer.
. "$(dirname "$0")/lib.sh"

# live 3 at ticks 1 and 2; a and c share offset 0, b on top: optimum 3
cat >"$T/three.csv" <<'CSV'
id,lower,upper,size
a,0,2,2
b,1,3,1
c,2,4,2
CSV

for s in greedy-size greedy-breadth greedy-conflict hybrid exact anneal genetic; do
  run plan "$T/three.csv" --strategy $s -o "$T/$s.json"; ok $rc "plan --strategy $s"
  contains "$T/err" "peak 3 "; ok $? "$s reaches the optimum 3"
done
run compare "$T/three.csv" --strategies all --time-limit 2s --json; ok $rc "compare --strategies all"
contains "$T/out" '"exact"'; ok $? "all includes exact"
contains "$T/out" '"anneal"'; ok $? "all includes anneal"
contains "$T/out" '"genetic"'; ok $? "all includes genetic"
run plan "$T/three.csv" --strategy genetic --options threads=4 -o "$T/x.json"; [ $rc -eq 2 ]; ok $? "genetic: threads=4 exits 2"
contains "$T/err" 'threads "4"'; ok $? "and names the value"

run plan "$T/three.csv" --strategy exact --capacity 2 -o "$T/x.json"; [ $rc -eq 2 ]; ok $? "exact under a capacity below the bound exits 2"
contains "$T/err" "no plan fits in capacity 2"; ok $? "and says no plan fits"
[ ! -e "$T/x.json" ]; ok $? "and writes no plan"
run plan "$T/three.csv" --strategy exact --capacity 3 -o "$T/x.json"; ok $rc "exact fits capacity 3"
run plan "$T/three.csv" --strategy exact --options mode=sideways -o "$T/x.json"; [ $rc -eq 2 ]; ok $? "a bad exact mode exits 2"

run plan "$T/three.csv" --strategy greedy-size --write-model "$T/m.lp" -o "$T/x.json"; [ $rc -eq 2 ]; ok $? "--write-model needs ilp"
if "$MEMLENS" strategies | grep -q '^ilp '; then
  run plan "$T/three.csv" --strategy ilp --write-model "$T/m.lp" -o "$T/x.json"; ok $rc "ilp --write-model FILE.lp"
  contains "$T/m.lp" "Minimize"; ok $? "the LP file has an objective"
  run plan "$T/three.csv" --strategy ilp --write-model "$T/m.mps" -o "$T/x.json"; ok $rc "ilp --write-model FILE.mps"
  contains "$T/m.mps" "ROWS"; ok $? "the MPS file has its sections"
  run plan "$T/three.csv" --strategy ilp --write-model "$T/m.txt" -o "$T/x.json"; [ $rc -eq 2 ]; ok $? "a model name that is not .lp/.mps exits 2"
else
  ok 0 "# SKIP ilp not built (no GLPK)"
fi
finish
