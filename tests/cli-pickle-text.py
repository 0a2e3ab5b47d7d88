#!/usr/bin/env python3
"""Pickle protocols 0 and 1 (issue 26, item 12): the text opcodes (INT,
LONG, FLOAT, STRING, UNICODE, PUT, GET, DICT) and Python 2's byte strings
(BINSTRING, SHORT_BINSTRING), each read as Python's pickle.loads reads the
same bytes. Snapshots are assembled here opcode by opcode; memlens's
reading is seen through `convert` (a mark's name is an annotate entry's
"name") and through its messages, which name the value they refuse.
argv: memlens binary, source root. TAP output."""
import json, os, pickle, struct, subprocess, sys, tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done  # noqa: E402

memlens = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="memlens-ptext-")


def v(s):
    """UNICODE as protocol 0 writes it (Python's own bytes for @s)."""
    return pickle.dumps(s, protocol=0)[:-1]   # V...\np0\n (the PUT is harmless)


def entry(*pairs):
    """A dict built empty, then SETITEM per pair (protocol 0's way)."""
    return b"(d" + b"".join(k + val + b"s" for k, val in pairs)


def snapshot(entries):
    """{'segments': [], 'device_traces': [[entries...]]} in protocol 0."""
    return (b"(d" + v("segments") + b"(ls" + v("device_traces") + b"(l(l"
            + b"".join(e + b"a" for e in entries) + b"as.")


def run(data, *args):
    path = os.path.join(tmp, "t.pickle")
    with open(path, "wb") as f:
        f.write(data)
    out = os.path.join(tmp, "t.jsonl")
    p = subprocess.run([memlens, "convert", path, out, "--quiet"] + list(args), capture_output=True, text=True)
    marks = []
    if p.returncode == 0:
        marks = [o["name"] for o in map(json.loads, open(out)) if o.get("kind") == "mark" and "name" in o]
    return p.returncode, p.stderr, marks


def mark(name_ops):
    return entry((v("action"), v("annotate")), (v("name"), name_ops))


# strings: each opcode's bytes beside what Python makes of them
strings = [
    ("UNICODE, Latin-1 and escapes", v("é€ a\\b\nc \U0001f600")),
    ("STRING with escapes", b"S'a\\x41\\101\\n\\'q\\\\'\n"),
    ("STRING in double quotes", b'S"it\'s"\n'),
    ("BINSTRING", b"T" + struct.pack("<i", 5) + b"hello"),
    ("SHORT_BINSTRING", b"U\x03abc"),
]
for what, ops in strings:
    data = snapshot([mark(ops)])
    want = pickle.loads(data)["device_traces"][0][0]["name"]
    rc, err, marks = run(data)
    ok(rc == 0 and want in marks, "%s: %r as Python reads it (memlens: %s)" % (what, want, marks if rc == 0 else err.strip()))

# a dict from MARK key value ... DICT, memo PUT / GET of a string
data = snapshot([b"(" + v("action") + v("annotate") + v("name") + b"Vshared\np900\nd", mark(b"g900\n")])
want = [e["name"] for e in pickle.loads(data)["device_traces"][0]]
rc, err, marks = run(data)
ok(rc == 0 and marks[-2:] == want, "DICT from a mark, PUT and GET by a text index: %s (memlens: %s)" % (want, marks or err.strip()))

# integers and floats: INT, LONG (with Python 2's L), bools; a value the
# reader refuses is named in its message as Python's str() writes it
alloc = lambda size: entry((v("action"), v("alloc")), (v("addr"), b"I4096\n"), (v("size"), size))
rc, err, _ = run(snapshot([alloc(b"I512\n")]))
ok(rc == 0, "INT 512 as a size")
for what, ops in [("LONG 2^70", b"L1180591620717411303424L\n"), ("LONG -2^70", b"L-1180591620717411303424\n"),
                  ("INT -5", b"I-5\n"), ("INT 01 (True)", b"I01\n"), ("FLOAT 1.5", b"F1.5\n")]:
    data = snapshot([alloc(ops)])
    val = pickle.loads(data)["device_traces"][0][0]["size"]
    said = ("the float %r" % val) if isinstance(val, float) else str(val)
    rc, err, _ = run(data)
    ok(rc == 2 and ('"size" is %s' % said) in err, "%s: refused, naming %s as Python reads it (%s)" % (what, said, err.strip()))

# protocol 1 bools are INT 01 / 00; big ints LONG text
data = pickle.dumps({"segments": [], "device_traces": [[{"action": "annotate", "name": "x"}]],
                     "allocator_settings": {"expandable_segments": True}}, protocol=1)
ok(b"I01\n" in data, "protocol 1 writes True as INT 01")
rc, err, marks = run(data)
ok(rc == 0 and any("expandable_segments=1" in m for m in marks),
   "protocol 1: expandable_segments True (INT 01) is read as true (%s)" % (err.strip() or marks))

# what Python refuses too, and a cut file
for what, data, msg in [
        ("STRING with a byte above 0x7f", snapshot([mark(b"S'\xe9'\n")]), "reads it as ASCII"),
        ("STRING without quotes", snapshot([mark(b"Sabc\n")]), "is not quoted"),
        ("a text argument cut off", b"(dVsegm", "has no end of line"),
        ("GET of an index never PUT", snapshot([mark(b"g77\n")]), "memo reference 77 was never stored"),
        ("INT that is no number", snapshot([alloc(b"I12ab\n")]), '"12ab" is not a decimal integer'),
        ("GLOBAL (code)", b"cbuiltins\nlen\n(Vab\ntR.", "opcode 0x63 is not supported")]:
    if data.startswith(b"c"):
        py = "Python would run it"   # never unpickled here
    else:
        try:
            pickle.loads(data)
            py = "Python reads it"
        except Exception as e:
            py = "Python: %s" % type(e).__name__
    rc, err, _ = run(data)
    ok(rc == 2 and msg in err, "%s: exit 2, \"%s\" (%s; memlens: %s)" % (what, msg, py, err.strip()[:160]))

sys.exit(done())
