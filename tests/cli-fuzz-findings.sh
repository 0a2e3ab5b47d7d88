#!/bin/bash
# The findings of the structure-aware fuzzers (docs/reliability.md,
# "Fuzzing"), each on the document its generator wrote
# (tests/fuzz/regress/{snapshot,kineto,plan}/gen-*), through the CLI as a
# person would meet it: the outcome the fix gives, checked against Python's
# own reading of the file where a number is involved.
. "$(dirname "$0")/lib.sh"
R="$SRC/tests/fuzz/regress"

# 1. segment sizes that add up past 2^63: an error, not a signed overflow
f=$R/snapshot/gen-reserved-bytes-overflow.pickle
run stats "$f"
ok $(( rc != 2 )) "reserved bytes past 2^63: exit 2 (got $rc)"
contains "$T/err" "$f: device_traces[0][" && contains "$T/err" "past 2^63"
ok $? "reserved bytes past 2^63: the message names the file, the entry and the limit"

# 2. a key "size\0x" is not "size": the entry's size is absent (0), as
# Python's pickle reads the dict; memlens read it as the size
f=$R/snapshot/gen-key-with-nul-is-not-size.pickle
run convert "$f" "$T/nul.jsonl"
ok $rc "key with a NUL: the snapshot loads (rc $rc)"
python3 - "$f" "$T/nul.jsonl" <<'EOF'
import json, pickle, sys
snap = pickle.load(open(sys.argv[1], 'rb'))
want = [e.get('size', 0) for e in snap['device_traces'][0] if isinstance(e, dict) and e.get('action') == 'alloc']
got = [e.get('size', 0) for e in map(json.loads, open(sys.argv[2])) if e.get('kind') == 'alloc' and e.get('tick', 0) > 0]
sys.exit(0 if want == got and any('size\0x' in e for e in snap['device_traces'][0] if isinstance(e, dict)) else 1)
EOF
ok $? "key with a NUL: the allocations after tick 0 have the sizes Python reads"

# 3. a Kineto [memory] event with Addr 0.5: refused (it was read as 0)
f=$R/kineto/gen-fractional-addr.json
run stats "$f"
ok $(( rc != 2 )) "Kineto Addr 0.5: exit 2 (got $rc)"
contains "$T/err" "$f:1: byte 512: traceEvents[2]: Addr 0.5 is not an integer"
ok $? "Kineto Addr 0.5: the message names the file, the line, the byte offset of the value, the event and the value"
python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); sys.exit(0 if d[512:515] == b'0.5' else 1)" "$f"
ok $? "byte 512 of the file is where 0.5 starts"

# 4. a plan segment with stream 2^32 + 1: refused (it was read as stream 1)
cat >"$T/six.jsonl" <<'EOF'
{"format":"memlens-trace","version":1,"alignment":256}
{"kind":"alloc","id":1,"size":1024}
{"kind":"alloc","id":2,"size":512,"stream":1}
{"kind":"alloc","id":3,"size":100}
{"kind":"free","id":1}
{"kind":"alloc","id":4,"size":2048}
{"kind":"free","id":3}
{"kind":"alloc","id":3,"size":300}
{"kind":"free","id":2}
{"kind":"alloc","id":5,"size":0}
{"kind":"free","id":4}
{"kind":"alloc","id":6,"size":4096}
EOF
f=$R/plan/gen-segment-stream-past-2-32.json
run check "$T/six.jsonl" "$f"
ok $(( rc != 2 )) "plan stream 2^32 + 1: exit 2 (got $rc)"
contains "$T/err" "$f: segment 0: stream 4294967297 is past 2^32 - 1"
ok $? "plan stream 2^32 + 1: the message names the file, the segment and the value"

# 5. device traces written as tuples: their entries did not outlive the
# parse (a use after free under ASan); tuples are read as lists now, and
# this one's entries are no dicts (a tuple of ints, a list ...)
f=$R/snapshot/gen-tuple-device-list-use-after-free.pickle
run stats "$f"
ok $(( rc != 2 )) "device trace as a tuple: exit 2 (got $rc)"
contains "$T/err" "$f: device_traces[" && contains "$T/err" "][0] is a "
ok $? "device trace as a tuple: the message names the file and the entry that is no dict"

finish
