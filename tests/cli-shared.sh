#!/bin/bash
# The command on the public benchmark instances in ../shared (skipped when
# a fresh clone has no ../shared): every file loads, compare prints the
# lower bound and one row per strategy, and every plan passes check.
. "$(dirname "$0")/lib.sh"
S="$SHARED/benchmarks"
if [ ! -d "$S/minimalloc/challenging" ]; then
  skip_all "../shared/benchmarks is absent"
fi
declare -A LB=([A]=1048576 [B]=1048576 [C]=1039360 [D]=986112 [E]=1048576 [F]=1048576
               [G]=1048576 [H]=1048576 [I]=1048576 [J]=989184 [K]=1048576)
for f in "$S"/minimalloc/challenging/*.csv; do
  name=$(basename "$f"); key=${name%%.*}
  run compare "$f" --json --quiet
  ok $([ $rc -le 1 ]; echo $?) "$name: compare runs (exit $rc)"
  contains "$T/out" "\"lower_bound\":${LB[$key]}"; ok $? "$name: lower bound ${LB[$key]} as published"
  cnt=$(grep -o '"strategy"' "$T/out" | wc -l)
  [ "$cnt" -ge 4 ]; ok $? "$name: a row per strategy ($cnt)"
done
# every default strategy's plan on A and on a compiler instance passes check
for f in "$S/minimalloc/challenging/A.1048576.csv" "$S/compiler-plans/tiny_bert.csv"; do
  for s in $("$MEMLENS" strategies | awk '$2 != "trace" {print $1}'); do
    case $s in ilp|exact|anneal|genetic) continue;; esac   # slow planners have their own benchmark
    run plan "$f" --strategy "$s" -o "$T/p.json" --quiet
    ok $([ $rc -le 1 ]; echo $?) "$(basename "$f"): plan --strategy $s"
    run check "$f" "$T/p.json"
    ok $rc "$(basename "$f"): the $s plan passes check"
  done
done
for f in "$S"/compiler-plans/*.csv "$S"/minimalloc/examples/*.csv; do
  run stats "$f"; ok $rc "$(basename "$f"): stats"
done
finish
