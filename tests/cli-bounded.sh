#!/bin/bash
# Bounded by the input, strict in what it accepts (issue 26): inputs that
# once made memlens grow until the kernel killed it, or read garbage as
# data. The memory cases run under ulimit -v (a run that tried would be
# killed or fail with "out of memory" instead of the message checked).
. "$(dirname "$0")/lib.sh"

# refused NAME LIMIT-KiB EXPECTED-MESSAGE ARGS...: exit 2, the message,
# within the memory limit
# a sanitizer build runs under no ulimit -v (ASan reserves terabytes of
# address space): there the limit is left out, the message still checked
if runs_under_vlimit 1000000; then vmax=; else vmax=unlimited; fi
refused() {
  local name=$1 kib=${vmax:-$2} msg=$3; shift 3
  ( ulimit -v "$kib"; exec "$MEMLENS" "$@" ) >"$T/out" 2>"$T/err"; rc=$?
  ok $([ $rc -eq 2 ]; echo $?) "$name: exit 2 (got $rc)"
  contains "$T/err" "$msg"; ok $? "$name: says \"$msg\" ($(head -c 200 "$T/err"))"
}

# 1. no newline: a line reader stops at 64 MiB, /dev/zero or not
refused "JSONL from /dev/zero" 1000000 "a line longer than 67108864 bytes" stats /dev/zero --format jsonl
refused "CSV from /dev/zero" 1000000 "a line longer than 67108864 bytes" stats /dev/zero --format csv
mkfifo "$T/zeros.fifo"
( head -c 200000000 /dev/zero >"$T/zeros.fifo" 2>/dev/null & )
refused "JSONL from a FIFO of zeros" 1000000 "a line longer than" stats "$T/zeros.fifo" --format jsonl
# a regular file over the 64 GiB limit is refused from its size (sparse: no disk)
if truncate -s 70G "$T/huge.jsonl" 2>/dev/null; then
  refused "a 70 GB JSONL file" 1000000 "larger than the limit of 68719476736 bytes" stats "$T/huge.jsonl"
  rm -f "$T/huge.jsonl"
else
  skip "a 70 GB JSONL file" "no sparse files here"; skip "a 70 GB JSONL file: message" "no sparse files here"
fi
# whole-document readers: a NUL byte is never JSON, a pickle starts with an opcode
printf 'id,lower,upper,size\n1,0,5,4\n' >"$T/one.csv"
refused "plan from /dev/zero" 1000000 "byte 0: a NUL byte (binary data, not JSON text)" check "$T/one.csv" /dev/zero
refused "graph from /dev/zero" 1000000 "byte 0: a NUL byte" stats /dev/zero --format graph
refused "snapshot from /dev/zero" 1000000 "byte 0: 0x00 is no pickle opcode" stats /dev/zero --format pytorch-snapshot

# 2. a JSON tree bounded by the input: values counted before cJSON builds
# them (it takes ~80 bytes a value): 20 MB of gzip holding 60M numbers
python3 - "$T/bomb.json.gz" <<'PY'
import gzip, random, sys
random.seed(1)
parts = [b'0,', b'0, ', b'0,\n', b'1,']
with gzip.open(sys.argv[1], 'wb', 6) as f:
    f.write(b'{"format":"memlens-graph","version":1,"ops":[],"tensors":[')
    s = b''.join(random.choice(parts) for _ in range(1000000))   # 2.5 MB, repeated past gzip's 32 KiB window
    for _ in range(60):
        f.write(s)
    f.write(b'0]}')
PY
refused "a gzip graph of 60M numbers" 1500000 "more than such a file can justify (at most one per 4 bytes of text and 8 per stored byte)" stats "$T/bomb.json.gz"
# the same bound on plain text: 4 MB of "0," (2M values, over 1M and text / 4)
{ printf '{"format":"memlens-graph","version":1,"ops":[],"tensors":['; head -c 4000000 /dev/zero | tr '\0' '0' | sed 's/0/0,/g'; echo '0]}'; } >"$T/dense.json"
refused "a graph of 2M numbers in 4 MB" 1000000 "values in" stats "$T/dense.json" --format graph
# a real graph is far from it
"$MEMLENS" stats "$SRC/samples/resnet50-inference-b32.json" --quiet >/dev/null; ok $? "a real graph loads"

# 11. a NUL byte in a text trace is refused, not the end of a field
printf 'id,lower,upper,size\n1,0,5,4\0 9999\n' >"$T/nul.csv"
refused "CSV size 4\\0 9999" 1000000 "nul.csv:2: column 8: a NUL byte" stats "$T/nul.csv"
printf '{"format":"memlens-trace","version":1}\n{"kind":"alloc","id":1,"size":4}\0{"x":1}\n' >"$T/nul.jsonl"
refused "JSONL with a NUL byte" 1000000 "nul.jsonl:2: column 33: a NUL byte" stats "$T/nul.jsonl"

# 18. a pipe or FIFO without an extension: no sniffing that eats its bytes
"$MEMLENS" stats <(cat "$SRC/samples/train-step.jsonl") >"$T/out" 2>"$T/err"; rc=$?
ok $([ $rc -eq 2 ]; echo $?) "a pipe without --format: exit 2 (got $rc)"
contains "$T/err" "its first bytes cannot be read twice; give --format"; ok $? "a pipe: says to give --format"
mkfifo "$T/t.fifo"
timeout 10 "$MEMLENS" stats "$T/t.fifo" >"$T/out" 2>"$T/err"; rc=$?
ok $([ $rc -eq 2 ]; echo $?) "a FIFO without a writer and --format: exit 2 at once, no wait (got $rc)"
"$MEMLENS" stats --format jsonl <(cat "$SRC/samples/train-step.jsonl") --json >"$T/out" 2>"$T/err"; rc=$?
ok $rc "a pipe with --format jsonl reads"
python3 - "$T/out" "$SRC/samples/train-step.jsonl" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2]) if l.strip()][1:]
events = sum(1 for o in lines if o["kind"] not in ("stack", "inplace"))
sys.exit(0 if got["events"] == events else 1)
PY
ok $? "a pipe with --format jsonl: every event read"

finish
