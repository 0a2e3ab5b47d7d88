#!/bin/bash
# Readers bound what they allocate by what the file can justify: a length
# field of 2^60 in a pickle, sizes that add up past 2^60 bytes, a
# million-level nested JSON, a gzip bomb. Each gets exit 2 and a message
# that names the limit, without trying (max RSS stays small where
# /usr/bin/time can measure it).
. "$(dirname "$0")/lib.sh"

limit() {  # limit NAME EXPECTED-MESSAGE COMMAND ARGS...
  local name=$1 msg=$2; shift 2
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$T/rss" "$MEMLENS" "$@" >"$T/out" 2>"$T/err"; rc=$?
  else
    "$MEMLENS" "$@" >"$T/out" 2>"$T/err"; rc=$?; echo 0 >"$T/rss"
  fi
  ok $([ $rc -eq 2 ]; echo $?) "$name: exit 2 (got $rc)"
  contains "$T/err" "$msg"; ok $? "$name: says \"$msg\""
  rss=$(tail -1 "$T/rss")
  [ "${rss:-0}" -lt 600000 ]; ok $? "$name: max RSS ${rss:-?} KiB, no attempt to allocate"
}

H='{"format":"memlens-trace","version":1}'
deep() { awk -v n="$1" 'BEGIN { s = ""; for (i = 0; i < n; i++) printf "["; for (i = 0; i < n; i++) printf "]" }'; }

# pickle: BINUNICODE8 / BINBYTES8 / LONG4 claiming 2^60 bytes
printf '\x80\x04\x8d\x00\x00\x00\x00\x00\x00\x00\x10abc.' >"$T/len60.pickle"
limit "pickle string of 2^60 bytes" "len60.pickle" stats "$T/len60.pickle"
printf '\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x10abc.' >"$T/bytes60.pickle"
limit "pickle bytes of 2^60 bytes" "bytes60.pickle" stats "$T/bytes60.pickle"
printf '\x80\x04\x8b\xff\xff\xff\x7fabc.' >"$T/long4.pickle"
limit "pickle LONG4 of 2^31 bytes" "long4.pickle" stats "$T/long4.pickle"

# sizes: each fits 64 bits, the total does not fit any plan
printf 'id,lower,upper,size\n1,0,5,9223372036854775808\n2,0,5,9223372036854775808\n' >"$T/huge.csv"
limit "CSV sizes adding up past 2^60" "past 2^60 bytes" compare "$T/huge.csv"
printf 'id,lower,upper,size\n1,0,5,1000000000000000000000000000000\n' >"$T/e30.csv"
limit "CSV size 10^30" "is too large" stats "$T/e30.csv"
printf '%s\n{"kind":"alloc","id":1,"size":"18446744073709551615"}\n' "$H" >"$T/max.jsonl"
limit "JSONL size 2^64-1 at alignment 256" "overflows when aligned" stats "$T/max.jsonl"

# a million levels of nesting in every JSON reader
{ printf '%s\n{"kind":"mark","name":' "$H"; deep 1000000; echo '}'; } >"$T/deep.jsonl"
limit "JSONL nested 10^6 deep" "nested more than 16 levels deep" stats "$T/deep.jsonl"
{ printf '{"traceEvents":[{"name":"[memory]","args":{"Bytes":'; deep 1000000; echo '}}]}'; } >"$T/deep.json"
limit "Kineto JSON nested 10^6 deep" "nested more than 100 levels deep" stats "$T/deep.json"
{ printf '{"format":"memlens-graph","version":1,"tensors":'; deep 1000000; echo ',"ops":[]}'; } >"$T/deepg.json"
limit "graph JSON nested 10^6 deep" "nested more than 100 levels deep" stats "$T/deepg.json"
printf 'id,lower,upper,size\n1,0,5,4\n' >"$T/one.csv"
{ printf '{"format":"memlens-plan","version":1,"segments":'; deep 1000000; echo '}'; } >"$T/plan.json"
limit "plan JSON nested 10^6 deep" "nested more than 100 levels deep" check "$T/one.csv" "$T/plan.json"

# a gzip bomb: 300 MB of JSON whitespace in 290 KB (the Kineto reader
# streams: it is time, not memory, that the limit bounds here)
{ printf '{"traceEvents":['; head -c 300000000 /dev/zero | tr '\0' ' '; echo ']}'; } | gzip -9 >"$T/bomb.json.gz"
limit "gzip bomb" "more than such a file can justify" stats "$T/bomb.json.gz"

# half-written input: two events glued on one line (a lost newline) is an
# error, not one event silently dropped
printf '%s\n{"kind":"alloc","id":1,"size":4}{"kind":"alloc","id":2,"size":4}\n' "$H" >"$T/glued.jsonl"
limit "JSONL events glued on one line" "glued.jsonl:2: text after the JSON object" stats "$T/glued.jsonl"
finish
