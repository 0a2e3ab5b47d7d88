#!/bin/bash
# Each bad input: one clear message naming file, line and value, exit 2,
# and no output file left behind.
. "$(dirname "$0")/lib.sh"

H='{"format":"memlens-trace","version":1}'
bad() {  # bad NAME CONTENT EXPECTED-MESSAGE
  printf '%b' "$2" >"$T/$1"
  run convert "$T/$1" "$T/out-$1.jsonl"
  ok $([ $rc -eq 2 ]; echo $?) "$1: exit 2"
  contains "$T/err" "$3"; ok $? "$1: says \"$3\""
  [ ! -e "$T/out-$1.jsonl" ] && [ -z "$(ls "$T" | grep "out-$1.jsonl.tmp")" ]; ok $? "$1: no output left behind"
}
bad neg.csv 'id,lower,upper,size\n0,0,4,8\n1,0,5,-4\n' "neg.csv:3: size -4 is negative"
bad big.csv 'id,lower,upper,size\n1,0,5,1000000000000000000000000000000\n' "big.csv:2: size 1000000000000000000000000000000 is too large"
bad order.csv 'id,lower,upper,size\n1,7,5,4\n' "order.csv:2: buffer 1: upper 5 <= lower 7"
bad dup.csv 'id,lower,upper,size\n1,0,5,4\n1,1,6,4\n' "dup.csv:3: duplicate id 1"
bad trunc.csv 'id,lower,upper,size\n1,0,5,4\n2,0' "trunc.csv:3: 2 fields, the header has 4 (the file looks truncated)"
bad malformed.csv 'id,lower,upper,size\n1,0,five,4\n' "malformed.csv:2: upper \"five\""
bad header.csv 'name,from,to,bytes\n1,0,5,4\n' "header.csv:1: unknown column \"name\""
bad empty.csv '' "empty.csv: empty file"
bad wrong.jsonl '{"format":"pytorch","version":1}\n' "wrong.jsonl:1: not a memlens trace"
bad neg.jsonl "$H\n{\"kind\":\"alloc\",\"id\":1,\"size\":-4}\n" "neg.jsonl:2: size -4 is negative"
bad trunc.jsonl "$H\n{\"kind\":\"alloc\",\"id\":1,\"size\":4}\n{\"kind\":\"free\",\"i" "trunc.jsonl:3: not a JSON object (the file looks truncated)"
bad empty.jsonl '' "empty.jsonl: empty file"

# lifetime errors show with compare (convert keeps events as they are)
life() {
  printf '%b' "$2" >"$T/$1"
  run plan "$T/$1" --strategy best-fit -o "$T/plan-$1.json"
  ok $([ $rc -eq 2 ]; echo $?) "$1: exit 2"
  contains "$T/err" "$3"; ok $? "$1: says \"$3\""
  [ ! -e "$T/plan-$1.json" ]; ok $? "$1: no plan left behind"
}
life unknown.jsonl "$H\n{\"kind\":\"alloc\",\"id\":1,\"size\":4}\n{\"kind\":\"free\",\"id\":9}\n" "unknown.jsonl: line 3: free of unknown id 9"
life double.jsonl "$H\n{\"kind\":\"alloc\",\"id\":1,\"size\":4}\n{\"kind\":\"free\",\"id\":1}\n{\"kind\":\"free\",\"id\":1}\n" "double.jsonl: line 4: double free of id 1 (already freed at line 3)"
life dupid.jsonl "$H\n{\"kind\":\"alloc\",\"id\":1,\"size\":4}\n{\"kind\":\"alloc\",\"id\":1,\"size\":4}\n" "dupid.jsonl: line 3: duplicate id 1 (still live since line 2)"

run stats "$T/does-not-exist.csv"
ok $([ $rc -eq 2 ]; echo $?) "missing file: exit 2"
contains "$T/err" "does-not-exist.csv: cannot open"; ok $? "missing file: message names it"

run compare "$T/x.csv" --capacity 40Q
ok $([ $rc -eq 2 ]; echo $?) "bad size: exit 2"
contains "$T/err" "unknown unit"; ok $? "bad size: message"
run compare --strategies nope "$T/neg.csv"
contains "$T/err" 'unknown strategy "nope"'; ok $? "unknown strategy named"
run frobnicate; ok $([ $rc -eq 2 ]; echo $?) "unknown command: exit 2"
run plan; ok $([ $rc -eq 2 ]; echo $?) "missing arguments: exit 2"

# a plan file that does not match the trace
printf 'id,lower,upper,size\n1,0,5,4\n' >"$T/one.csv"
printf '{"format":"memlens-plan","version":1,"segments":[{"size":4}],"buffers":[{"id":7,"offset":0}]}' >"$T/plan.json"
run check "$T/one.csv" "$T/plan.json"
ok $([ $rc -eq 2 ]; echo $?) "plan of another trace: exit 2"
contains "$T/err" "id 7 is not a buffer of this trace"; ok $? "plan of another trace: message"
finish
