#!/usr/bin/env python3
"""Progress on long reads and exports (issue 28 item 5): on stderr when it
is a terminal (a pseudo-terminal here), none with --quiet, none when
stderr is not a terminal; the command's output is the same either way.

    cli-progress.py MEMLENS"""
import os
import pickle
import pty
import select
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, make  # noqa: E402

memlens = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="memlens-progress-")
snap = os.path.join(tmp, "big.pickle")
with open(snap, "wb") as f:
    pickle.dump(make(7, [15000]), f, protocol=4)   # ~7,500 allocs 64 KiB apart: inside the 1 GiB segment


def on_tty(args):
    """Runs memlens with stderr on a pseudo-terminal: (exit, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([memlens] + args, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    got = b""
    while True:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            got += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read()
    p.wait()
    os.close(master)
    return p.returncode, out, got.decode(errors="replace")


rc, out, term = on_tty(["stats", snap])
ok(rc == 0 and "reading" in term and "%" in term, "stats on a terminal: the read's progress (%r)" % term[:80])
rc, out_q, term = on_tty(["stats", "--quiet", snap])
ok(rc == 0 and "%" not in term and out_q == out, "stats --quiet: none, the same output (%r)" % term[:80])
p = subprocess.run([memlens, "stats", snap], capture_output=True)
ok(p.returncode == 0 and b"%" not in p.stderr and b"\r" not in p.stderr and p.stdout == out,
   "stats with stderr not a terminal: none (%r)" % p.stderr[:80])
db = os.path.join(tmp, "x.db")
rc, out, term = on_tty(["convert", snap, "-o", db])
ok(rc == 0 and "writing " in term, "convert -o x.db on a terminal: the export's progress (%r)" % term[-120:])
rc, out, term = on_tty(["convert", "--quiet", snap, "-o", db])
ok(rc == 0 and "%" not in term and "writing" not in term, "convert -o x.db --quiet: none (%r)" % term[:80])
for ext, what in (("jsonl", "writing events"), ("csv", "writing buffers")):
    shown, plain, hushed = (os.path.join(tmp, "x%d.%s" % (k, ext)) for k in range(3))
    rc, out, term = on_tty(["convert", snap, shown])
    ok(rc == 0 and "reading" in term and what in term,
       "convert IN OUT.%s on a terminal: the read's progress, then the writing's (%r)" % (ext, term[-120:]))
    rc_q, out, term = on_tty(["convert", "--quiet", snap, hushed])
    ok(rc_q == 0 and "%" not in term and "writing" not in term, "convert IN OUT.%s --quiet: none (%r)" % (ext, term[:80]))
    p = subprocess.run([memlens, "convert", snap, plain], capture_output=True)
    ok(p.returncode == 0 and b"%" not in p.stderr and b"\r" not in p.stderr,
       "convert IN OUT.%s with stderr not a terminal: none (%r)" % (ext, p.stderr[:80]))
    same = [open(f, "rb").read() for f in (shown, plain, hushed)] if rc == rc_q == p.returncode == 0 else [1, 2]
    ok(same[0] == same[1] == same[2] and len(same[0]) > 1000, "the same %s written in all three ways" % ext)

import shutil
shutil.rmtree(tmp, ignore_errors=True)
sys.exit(done())
