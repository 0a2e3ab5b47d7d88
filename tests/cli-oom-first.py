"""A recorded OOM is the first thing every command says (issue 25, item 4):
stats, compare, report and diagnose name it in their first lines (device,
tick, request, device free) and exit 1; compare replays the request the
device refused, so that under the device's memory the caching row fails
where the real allocator did; its caching row is labelled cold, beside a
warm one replayed from the state at the trace's first event.

Every number is computed here from the pickle. argv: memlens, the source root."""
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snaplib import ok, done, size  # noqa: E402

MEMLENS, SRC = sys.argv[1:3]
TMP = tempfile.mkdtemp()
MIB = 1 << 20


def run(*args):
    p = subprocess.run([MEMLENS, *args], capture_output=True, text=True, cwd=TMP, timeout=300)
    return p.returncode, p.stdout, p.stderr



def recorded(path):
    """The first OOM of the device that has one: device, entry index, tick
    (entry i is tick i + 1), request, device free, reserved just before it
    and the bytes live then (rounded to 512)."""
    snap = pickle.load(open(path, "rb"))
    add = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
    for d, trace in enumerate(snap["device_traces"]):
        for i, e in enumerate(trace):
            if e["action"] != "oom":
                continue
            end = sum(s["total_size"] for s in snap["segments"] if s["device"] == d)
            net_after = sum(add.get(x["action"], 0) * x.get("size", 0) for x in trace[i:])
            live = {}
            for x in trace[:i]:
                if x["action"] == "alloc":
                    live[x["addr"]] = (x["size"] + 511) // 512 * 512
                elif x["action"] == "free_completed":
                    live.pop(x["addr"], None)
            return {"device": d, "index": i, "tick": i + 1, "request": e["size"], "device_free": e["device_free"],
                    "reserved": end - net_after, "live": sum(live.values())}
    return None


for name in ("oom-expandable-3dev.pickle", "tune-capacity.pickle"):
    path = os.path.join(SRC, "tests/data", name)
    w = recorded(path)
    line = "recorded OOM device %d, tick %d (trace entry %d): request %s, device free %s" % (
        w["device"], w["tick"], w["index"], size(w["request"]), size(w["device_free"]))
    for cmd in (["stats"], ["compare", "--strategies", "best-fit"]):
        rc, out, err = run(*cmd, path)
        ok(rc == 1 and line in out.splitlines()[:2], "%s %s: exit 1, the recorded OOM in the first lines (%s)" %
           (cmd[0], name, out.splitlines()[1] if len(out.splitlines()) > 1 else err.strip()))
        rc, out, err = run(*cmd, path, "--json")
        got = json.loads(out).get("recorded_oom") if out.startswith("{") else None
        ok(rc == 1 and got == {k: w[k] for k in ("device", "tick", "index", "request", "device_free")},
           "%s --json %s: \"recorded_oom\" as the pickle has it (%s)" % (cmd[0], name, got))
    rc, out, err = run("diagnose", path, "--strategies", "best-fit")
    ok(rc == 1 and ("the trace records an OOM on device %d" % w["device"]) in out.splitlines()[0]
       and ("request %s, device free %s" % (size(w["request"]), size(w["device_free"]))) in out.splitlines()[1],
       "diagnose %s: the recorded OOM first, exit 1" % name)
    rc, out, err = run("report", path, "-o", "r.md", "--strategies", "best-fit")
    md = open(os.path.join(TMP, "r.md")).read() if rc != 2 else ""
    head = md.split("\n## ")[1] if "\n## " in md else ""
    ok(rc == 1 and head.startswith("Out of memory") and size(w["request"]) in head and size(w["device_free"]) in head,
       "report %s: the recorded OOM in its first section, exit 1" % name)

    # compare under the device's memory (reserved + device free at the OOM): the
    # caching row replays the refused request and fails where the device did
    cap = w["reserved"] + w["device_free"]
    rc, out, err = run("compare", path, "--strategies", "caching", "--capacity", str(cap), "--json")
    js = json.loads(out)
    rows = {r["strategy"]: r for r in js["results"]}
    c = rows["caching"]["oom"]
    ok(rc == 1 and c and (c["tick"], c["request"]) == (w["tick"], w["request"]),
       "compare --capacity %s %s: caching (cold) fails at the recorded OOM, tick %d, %s (was: fits)" %
       (size(cap), name, w["tick"], size(w["request"])))
    ok(rows["recorded"]["oom"] and rows["recorded"]["oom"]["tick"] == w["tick"], "%s: the recorded row fails at its OOM" % name)
    ok(js["replayed_request"]["tick"] == w["tick"] and js["replayed_request"]["bytes"] == w["request"],
       "%s: --json says which request was replayed" % name)
    warm = js.get("caching_warm")
    ok(warm and warm["oom"] and warm["oom"]["tick"] == w["tick"] and warm["oom"]["recorded"],
       "%s: the warm replay fails at the recorded OOM too" % name)
    rc, out, err = run("compare", path, "--strategies", "caching", "--capacity", str(cap))
    labels = [l.split("  ")[0] for l in out.splitlines() if l.startswith("caching")]
    ok(labels[:2] == ["caching (cold)", "caching (warm)"], "%s: the caching rows are labelled cold and warm (%s)" % (name, labels))

# tune-capacity (one 100 MiB segment full at the OOM, hand-made): the warm
# replay maps the refused request in a new segment beside it
w = recorded(os.path.join(SRC, "tests/data/tune-capacity.pickle"))
rc, out, err = run("compare", os.path.join(SRC, "tests/data/tune-capacity.pickle"), "--strategies", "caching", "--json")
warm = json.loads(out)["caching_warm"]
ok(w["reserved"] - w["live"] < w["request"] and
   warm["reserved_peak"] == w["reserved"] + (w["request"] + 2 * MIB - 1) // (2 * MIB) * (2 * MIB),
   "the warm row's peak: reserved at the OOM + the refused request (%s = %s + %s)" %
   (size(warm["reserved_peak"]), size(w["reserved"]), size(w["request"])))

# a snapshot without an OOM: no line, exit 0
rc, out, err = run("stats", os.path.join(SRC, "tests/data/streams-annotate.pickle"))
ok(rc == 0 and "recorded OOM" not in out, "stats on a snapshot without an OOM: exit 0, no OOM line")
rc, out, err = run("compare", os.path.join(SRC, "tests/data/streams-annotate.pickle"), "--strategies", "caching")
ok(rc == 0 and "replayed     with" not in out and re.search(r"^caching \(warm\)", out, re.M), "compare on it: nothing replayed, the warm row")
sys.exit(done())
