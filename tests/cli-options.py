"""Every command's --help lists exactly the options it accepts; the
manual page and the bash completion say the same; help's defaults are
the ones the code takes.

argv: memlens, the source root, memlens.1, the completion script, the
build root (for 'meson introspect --installed')."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done  # noqa: E402

MEMLENS, SRC, MAN, COMPLETION, BUILD = sys.argv[1:6]
ENV = dict(os.environ, MEMLENS_VIEW="/bin/true", LC_ALL="C")   # 'view' runs /bin/true, not a window
TMP = tempfile.mkdtemp()


def run(*args):
    p = subprocess.run([MEMLENS, *args], capture_output=True, text=True, env=ENV, cwd=TMP, timeout=120)
    return p.returncode, p.stdout, p.stderr


def commands():
    rc, out, _ = run("--help")
    sect = out.split("Commands:\n")[1].split("\n\n")[0]
    return [line.split()[0] for line in sect.splitlines() if line.strip()]


OPT_LINE = re.compile(r"^  (?:-(\w), |    )--([\w-]+)(?: (\S+))?")


def help_options(cmd):
    """{long name: (letter or None, argument or None, its text)} from CMD --help."""
    rc, out, _ = run(cmd, "--help")
    assert rc == 0, cmd
    opts, last = {}, None
    for line in out.split("\nOptions:\n")[1].splitlines():
        m = OPT_LINE.match(line)
        if m:
            last = m.group(2)
            first_text = line[28:].strip() if m.end() <= 26 else ""   # a long option: its text on the next line
            opts[last] = [m.group(1), m.group(3), first_text]
        elif line.startswith(" " * 28) and last:
            opts[last][2] += (" " if not opts[last][2].endswith(",") else "") + line.strip()
        elif not line.strip():
            last = None
            if opts:
                break
    return {k: (v[0], v[1], v[2].strip()) for k, v in opts.items()}


cmds = commands()
ok("compare" in cmds and "stats" in cmds and "sim" in cmds, "memlens --help lists the commands (%d)" % len(cmds))
helps = {c: help_options(c) for c in cmds}
names = {}
letters = {}
for c, opts in helps.items():
    for name, (letter, arg, _) in opts.items():
        names.setdefault(name, arg)
        if letter:
            letters.setdefault(letter, arg)
ok(len(names) > 40, "the commands' helps name %d options in all" % len(names))

# ---- each option on each command: accepted where help lists it, refused
# ("does not apply") where another command's help lists it
for c in cmds:
    wrong = []
    for name, arg in sorted(names.items()):
        if name == "help":
            continue
        word = "--%s=1" % name if arg else "--" + name
        rc, out, err = run(c, word)
        refused = "does not apply to" in err or "unrecognized option" in err
        if name in helps[c]:
            if refused:
                wrong.append("%s refused (%s)" % (word, err.strip().splitlines()[0]))
        elif not (rc == 2 and ("--%s does not apply to %s" % (name, "compare" if c == "sim" else c)) in err):
            wrong.append("%s not refused (exit %d: %s)" % (word, rc, err.strip()[:120]))
    for letter, arg in sorted(letters.items()):
        listed = any(v[0] == letter for v in helps[c].values())
        word = ["-" + letter] + (["1"] if arg else [])
        rc, out, err = run(c, *word)
        refused = "does not apply to" in err or "invalid option" in err
        if listed and refused:
            wrong.append("-%s refused" % letter)
        if not listed and not (rc == 2 and "-%s does not apply" % letter in err):
            wrong.append("-%s not refused (exit %d)" % (letter, rc))
    ok(not wrong, "%s takes exactly the %d options its help lists%s" % (c, len(helps[c]), ": " + "; ".join(wrong[:4]) if wrong else ""))

rc, out, err = run("stats", "--bogus")
ok(rc == 2 and "memlens stats: unrecognized option '--bogus'" in err and "Usage: memlens stats" in err,
   "an option no command reads is unrecognized, with the usage")
rc, out, err = run("stats", "--peaks")
ok(rc == 2 and "--peaks needs an argument" in err, "a missing argument is named (%s)" % err.strip())
rc, out, err = run("stats", "--json=yes")
ok(rc == 2 and "--json takes no argument" in err, "an argument to a flag is refused (%s)" % err.strip())


# ---- the manual page: a section per command with the same options and words
def unroff(s):
    s = s.replace("\\-", "-").replace("\\:", "").replace("\\e", "\\").replace("\\&", "")
    return re.sub(r"\\f[BIR]", "", s)


man = open(MAN, encoding="utf-8").read()
sections = dict(re.findall(r'\n\.SS "([\w-]+)"\n(.*?)(?=\n\.S[SH] )', man, re.S))
for c in cmds:
    if c == "sim":
        ok("sim" in sections and "compare" in sections["sim"], "the manual page says sim is compare")
        continue
    entries = {}
    for head, text in re.findall(r"\n\.TP\n([^\n]*)\n([^\n]*)", "\n" + sections.get(c, "")):
        m = re.match(r"(?:-(\w), )?--([\w-]+)(?: (\S+))?$", unroff(head))
        if m:
            entries[m.group(2)] = (m.group(1), m.group(3), unroff(text))
    flat = {k: (v[0], v[1], re.sub(r",\s+", ",", re.sub(r"\s+", " ", v[2]))) for k, v in helps[c].items()}
    mflat = {k: (v[0], v[1], re.sub(r",\s+", ",", v[2])) for k, v in entries.items()}
    diff = sorted(k for k in set(flat) | set(mflat) if flat.get(k) != mflat.get(k))
    ok(mflat == flat, "memlens(1) %s: the same %d options, letters, arguments and words as --help%s" %
       (c, len(flat), "".join("; --%s: help %s, man %s" % (k, flat.get(k), mflat.get(k)) for k in diff[:2])))

if shutil.which("groff"):
    p = subprocess.run(["groff", "-k", "-man", "-Tutf8", "-ww", "-z", MAN], capture_output=True, text=True)
    ok(p.returncode == 0 and not p.stderr.strip(), "groff reads memlens(1) without a warning %s" % p.stderr.strip()[:200])
else:
    ok(True, "groff reads memlens(1) # SKIP no groff here")


# ---- the bash completion
def complete(*words):
    script = ('source "%s"; COMP_WORDS=(memlens %s); COMP_CWORD=%d; _memlens; printf "%%s\\n" "${COMPREPLY[@]}"'
              % (COMPLETION, " ".join("'%s'" % w for w in words), len(words)))
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=TMP)
    return sorted(x for x in p.stdout.splitlines() if x)


ok(complete("") == sorted(cmds + ["--help", "--version", "--man", "--completion"]),
   "the completion offers the commands")
for c in cmds:
    want = sorted(["--" + n for n in helps[c]] + ["-" + v[0] for v in helps[c].values() if v[0]])
    ok(complete(c, "-") == want, "the completion of %s offers exactly its help's options" % c)
ok(complete("compare", "--strategies", "first-fit,be") == ["first-fit,best-fit"], "a strategy list completes after a comma")
ok(complete("render", "x", "--view", "a") == ["active", "address"], "an option's words complete")
ok(complete("stats", "--peaks", "") == [], "a number completes to nothing")

if shutil.which("meson") and os.path.isdir(BUILD):
    p = subprocess.run(["meson", "introspect", "--installed", BUILD], capture_output=True, text=True)
    inst = json.loads(p.stdout or "{}") if p.returncode == 0 else {}
    where = {os.path.basename(k): v for k, v in inst.items() if k in (MAN, COMPLETION)}
    ok(where.get("memlens.1", "").endswith("/man/man1/memlens.1")
       and where.get("memlens", "").endswith("/share/bash-completion/completions/memlens"),
       "meson installs memlens.1 under man1 and the completion under bash-completion/completions (%s)" % where)


# ---- the defaults help states are the ones the code takes
def default(cmd, name):
    m = re.search(r"\(default: (.*)\)$", helps[cmd][name][2])
    return m.group(1) if m else None


align = default("stats", "align")
nums = {k: int(re.search(p, align).group(1)) for k, p in
        {"snapshot": r"(\d+) for PyTorch snapshots", "csv": r"alignment column \((\d+) without",
         "jsonl": r"\"alignment\" \((\d+) without", "kineto": r"(\d+) for profiler traces"}.items()}
with open(os.path.join(TMP, "plain.jsonl"), "w") as f:
    f.write('{"format":"memlens-trace","version":1}\n{"kind":"alloc","id":1,"size":100}\n{"kind":"free","id":1}\n')
files = {"snapshot": os.path.join(SRC, "tests/data/tiny-snapshot.pickle"), "csv": os.path.join(SRC, "samples/tiny.16.csv"),
         "jsonl": os.path.join(TMP, "plain.jsonl"), "kineto": os.path.join(SRC, "tests/data/kineto-two-threads.json")}
got = {}
for k, path in files.items():
    rc, out, err = run("stats", path, "--json", "--quiet")
    got[k] = json.loads(out)["alignment"] if rc in (0, 1) else err.strip()   # 1: the snapshot records an OOM
ok(got == nums, "--align: the defaults help states are the inputs' (help %s, stats %s)" % (nums, got))

train = os.path.join(SRC, "samples/train-step.jsonl")
rc, out, _ = run("stats", train)
peaks = re.findall(r"^peak \d+:", out, re.M)
# blame rows: "  250.00 MiB    9.5%  [289, 341)  logits ..."
blames = [len(re.findall(r"^ +\d+(?:\.\d+)? \S?i?B +\d+\.\d%", b, re.M))
          for b in re.split(r"^peak \d+:[^\n]*\n", out, flags=re.M)[1:]]
rc, js, _ = run("stats", train, "--json", "--peaks", "0", "--blame", "0")
groups = json.loads(js)["peaks"]   # --peaks 0: every peak (one per level)
ok(len(peaks) == min(int(default("stats", "peaks")), len(groups)) and
   all(b == min(int(default("stats", "blame")), g["live_buffers"]) for b, g in zip(blames, groups)),
   "stats: --peaks and --blame defaults (%s, %s) are what it prints (%d of %d peaks, %s blame rows each)" %
   (default("stats", "peaks"), default("stats", "blame"), len(peaks), len(groups), blames))

rc, out, _ = run("compare", files["csv"], "--json", "--quiet")
ran = [r["strategy"] for r in json.loads(out)["results"]]
ok(",".join(ran) == default("compare", "strategies"), "compare: the default strategies are help's (%s)" % ran)

pool = {}
for extra in ([], ["--chunk", default("compare", "chunk")], ["--chunk", "1M"]):
    rc, out, _ = run("compare", train, "--strategies", "pool", "--json", "--quiet", *extra)
    pool[" ".join(extra)] = [r["peak"] for r in json.loads(out)["results"] if r["strategy"] == "pool"][0]
ok(pool[""] == pool["--chunk " + default("compare", "chunk")] != pool["--chunk 1M"],
   "compare: --chunk's default (%s) is the chunk pool runs with (%s)" % (default("compare", "chunk"), pool))

rc, out, err = run("render", train, "-o", "x.svg")
if "built without cairo" in err:
    ok(True, "render: the default size is help's # SKIP this memlens has no renderer")
else:
    ok(rc == 0 and "(%s," % default("render", "size") in err, "render: the default size is help's (%s)" % err.strip())
rc, out, err = run("replay", files["csv"], "--json")
ok(rc == 0 and json.loads(out)["backend"] == default("replay", "backend")
   and str(json.loads(out)["iterations"]) == default("replay", "iterations"), "replay: the default backend and iterations")

shutil.rmtree(TMP)
sys.exit(done())
