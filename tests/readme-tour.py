#!/usr/bin/env python3
"""Every command of the README's tour runs on files that ship.

Reads the sh block under "## A short tour" of README.md: each word of a
command that names a file (it has a '/', or a file name's extension) must
match a file of the source tree (a glob for '*'), or be one that an
earlier tour line writes (-o FILE, convert's second file). Words under
build/ are built, not shipped; `NAME=VALUE` words and option values that
are not files (`2:5`, `chunk=1M`) are not names. A failure names the line
and the word. (A tour line once named RUN/rank*.pickle, a folder no one has.)

A TAP program: argv[1] = the source root."""
import glob
import os
import re
import shlex
import sys

root = sys.argv[1]
text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
m = re.search(r"## A short tour\s*```sh\n(.*?)```", text, re.S)
n, failed = 0, 0


def ok(cond, what):
    global n, failed
    n += 1
    failed += not cond
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, " ".join(what.split())))


ok(m is not None, "README.md has a sh block under '## A short tour'")
EXT = re.compile(r"\.(pickle|pkl|jsonl|json|csv|gz|html|md|png|svg|pdf|db|py)(:\w+)?$")
written = set()
for k, line in enumerate(m.group(1).splitlines() if m else [], 1):
    words = shlex.split(line, comments=True)
    if not words or words[0].startswith("B="):
        continue
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        if "=" in w or w.startswith("-") or w.startswith("build/") or w.startswith("$"):
            continue
        if not ("/" in w or EXT.search(w)):
            continue
        if prev == "-o" or (words[1:2] == ["convert"] and i == len(words) - 1):   # -o FILE; convert IN OUT
            written.add(w)
            continue
        name = re.sub(r":\w+$", "", w)   # tools/x.py:cnn, a module and its model
        why = ("an earlier line writes it" if w in written else "it ships" if glob.glob(os.path.join(root, name))
               else "")
        ok(why, "tour line %d: %s names %s: %s" % (k, words[1] if len(words) > 1 else words[0], w,
                                                   why or "no such file ships, and no earlier line writes it"))
print("1..%d" % n)
sys.exit(1 if failed else 0)
