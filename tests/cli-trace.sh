#!/bin/bash
# memlens trace and memlens replay end to end, on a machine with no GPU.
# Env (from meson): MEMLENS_FAKE_DRIVER (a program that does the driver's
# injection step), MEMLENS_HAVE_CUPTI, MEMLENS_HAVE_CUDA_REPLAY.
. "$(dirname "$0")/lib.sh"

have_driver=0
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' && have_driver=1

run trace --help; ok $rc "trace --help exits 0"
contains "$T/out" "Usage: memlens trace"; ok $? "trace --help shows its usage"
contains "$T/out" "--torch-tensors"; ok $? "trace --help explains --torch-tensors"
run replay --help; ok $rc "replay --help exits 0"
contains "$T/out" "Usage: memlens replay"; ok $? "replay --help shows its usage"

run trace; ok $([ $rc -eq 2 ]; echo $?) "trace without a program exits 2"
contains "$T/err" "no program"; ok $? "and says so"
run trace --flush-ms lots -- true; ok $([ $rc -eq 2 ]; echo $?) "a bad --flush-ms exits 2"
run trace -o /nonexistent/dir/t-%p.jsonl -- sh -c 'echo ran'
ok $([ $rc -eq 2 ]; echo $?) "an output folder that does not exist exits 2"
! contains "$T/out" "ran"; ok $? "before running the program"
contains "$T/err" "cannot write into /nonexistent/dir"; ok $? "and names the folder"

if [ "$MEMLENS_HAVE_CUPTI" = 1 ]; then
  (cd "$T" && "$MEMLENS" trace -- true >"$T/out" 2>"$T/err"); rc=$?
  ok $rc "trace -- true runs the program and exits 0"
  if [ $have_driver = 0 ]; then
    contains "$T/err" "no trace was written"; ok $? "it explains that no trace was written"
    contains "$T/err" "no CUDA driver"; ok $? "because there is no CUDA driver"
  fi
  ! ls "$T"/memlens-*.jsonl >/dev/null 2>&1; ok $? "and leaves no trace file behind"

  run trace -- sh -c 'exit 3'; ok $([ $rc -eq 3 ]; echo $?) "trace keeps the program's exit code (3)"
  run trace -- sh -c 'kill -TERM $$'; ok $([ $rc -eq 143 ]; echo $?) "a program killed by SIGTERM gives 128+15"
  run trace -- /nonexistent/program; ok $([ $rc -eq 127 ]; echo $?) "a program that cannot run gives 127"
  contains "$T/err" "cannot run /nonexistent/program"; ok $? "and says which"

  # the driver's injection step, emulated: the tracer starts, CUPTI refuses, the program runs on
  if [ $have_driver = 0 ]; then
    run trace --kernels --sync -o "$T/x-%p.jsonl" -- "$MEMLENS_FAKE_DRIVER" 5
    ok $([ $rc -eq 5 ]; echo $?) "an injected program keeps its exit code (5)"
    contains "$T/out" "fake program ran"; ok $? "the program ran"
    [ "$(grep -c 'memlens-inject\[' "$T/err")" -eq 1 ]; ok $? "the tracer printed exactly one message"
    contains "$T/err" "the tracer started but could not record"; ok $? "memlens trace explains why nothing came"
    ! ls "$T"/x-*.jsonl >/dev/null 2>&1; ok $? "no trace file is left"
  fi
  # records handed to the tracer as CUPTI would: a real trace comes out
  MEMLENS_FAKE_RECORDS=1 run trace --kernels --sync -o "$T/r-%p.jsonl" -- "$MEMLENS_FAKE_DRIVER" 4
  ok $([ $rc -eq 4 ]; echo $?) "with records: the exit code is still the program's (4)"
  f=$(ls "$T"/r-*.jsonl 2>/dev/null | head -1)
  [ -n "$f" ]; ok $? "a trace file named with the process id was written"
  ! ls "$T"/.r-*.jsonl.memlens-tmp-* >/dev/null 2>&1; ok $? "no temporary file is left beside it"
  contains "$T/err" "9 events (3 allocations, 1 kernels, 2 syncs) from 9 CUPTI records, 2 dropped"; ok $? "the summary counts events, records and drops"
  contains "$f" '"source":"cupti"'; ok $? "the header says cupti"
  contains "$f" '"dropped_records":2'; ok $? "the header carries the dropped records"
  contains "$f" '"sync":"stream_wait","stream2":13'; ok $? "the stream wait knows the recording stream"
  run stats "$f"; ok $rc "memlens stats reads the trace"
  contains "$T/out" "lower bound"; ok $? "and finds a lower bound"
  run check "$f"; ok $rc "the recorded plan is valid"
  run replay "$f"; ok $rc "the recorded plan replays clean on the host"
  contains "$T/out" "replay of the recorded plan"; ok $? "replay used the recorded addresses"
  contains "$T/out" "on 2 streams"; ok $? "on the trace's two streams"

  # a crash after a checkpoint: the checkpoint stays, and we say what it is
  MEMLENS_FAKE_RECORDS=crash run trace -o "$T/c-%p.jsonl" -- "$MEMLENS_FAKE_DRIVER" 0
  ok $([ $rc -eq 134 ]; echo $?) "a program that aborts gives 128+6"
  f=$(ls "$T"/c-*.jsonl 2>/dev/null | head -1)
  [ -n "$f" ]; ok $? "its checkpoint is on disk"
  contains "$f" "memlens: checkpoint"; ok $? "and ends in a checkpoint mark"
  contains "$T/err" "holds a checkpoint only"; ok $? "memlens trace says it is only a checkpoint"
  run stats "$f"; ok $rc "the checkpoint is a readable trace"

  # two processes, one file name without %p: the second replaces the first, and we say so
  MEMLENS_FAKE_RECORDS=1 run trace -o "$T/same.jsonl" -- sh -c "'$MEMLENS_FAKE_DRIVER' 0 && '$MEMLENS_FAKE_DRIVER' 0"
  ok $rc "two traced processes in one run"
  [ "$(grep -c '^memlens trace: wrote' "$T/err")" -eq 2 ]; ok $? "both wrote a trace"
  contains "$T/err" "several processes wrote"; ok $? "the clash of file names is reported"
  contains "$T/err" "put %p in --output"; ok $? "with the fix"
  [ "$(ls "$T"/same.jsonl* | wc -l)" -eq 1 ]; ok $? "one complete file is left, no temporaries"

  # --torch-tensors reaches the program's environment
  run trace --torch-tensors -- sh -c 'echo "conf=$PYTORCH_CUDA_ALLOC_CONF inj=$CUDA_INJECTION64_PATH"'
  contains "$T/out" "conf=backend:cudaMallocAsync"; ok $? "--torch-tensors sets PYTORCH_CUDA_ALLOC_CONF"
  contains "$T/out" "libmemlens-inject.so"; ok $? "CUDA_INJECTION64_PATH names the injection library"
  PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 run trace --torch-tensors -- sh -c 'echo "conf=$PYTORCH_CUDA_ALLOC_CONF"'
  contains "$T/out" "conf=max_split_size_mb:128,backend:cudaMallocAsync"; ok $? "--torch-tensors keeps other settings"
  MEMLENS_INJECT=/nonexistent/lib.so run trace -- true
  ok $([ $rc -eq 2 ]; echo $?) "a bad MEMLENS_INJECT exits 2"
else
  run trace -- true; ok $([ $rc -eq 2 ]; echo $?) "without CUPTI in the build, trace exits 2"
  contains "$T/err" "without CUPTI"; ok $? "and says the build lacks CUPTI"
fi

# replay: the host backend
cat >"$T/t.jsonl" <<'JSONL'
{"format":"memlens-trace","version":1,"alignment":256}
{"kind":"alloc","id":1,"size":256}
{"kind":"alloc","id":2,"size":256,"stream":2}
{"kind":"free","id":1}
{"kind":"alloc","id":3,"size":512}
{"kind":"free","id":2}
{"kind":"free","id":3}
JSONL
run replay "$T/t.jsonl" --strategy best-fit; ok $rc "a best-fit plan replays clean (exit 0)"
contains "$T/out" "the plan is valid"; ok $? "and says valid"
contains "$T/out" "on 2 streams"; ok $? "it counts the streams"
run plan "$T/t.jsonl" --strategy first-fit -o "$T/good.json"; ok $rc "plan written"
run replay "$T/t.jsonl" --plan "$T/good.json" --iterations 3 --json; ok $rc "replay --plan --json exits 0"
contains "$T/out" '"corrupted":0'; ok $? "json: no corruption"
contains "$T/out" '"iterations":3'; ok $? "json: three iterations"
# plant a conflict: buffer 2 on top of buffer 1 while both live
sed -e 's/"id":2,"segment":0,"offset":[0-9]*/"id":2,"segment":0,"offset":0/' -e 's/"id":1,"segment":0,"offset":[0-9]*/"id":1,"segment":0,"offset":0/' "$T/good.json" >"$T/bad.json"
grep -q '"id":2,"segment":0,"offset":0' "$T/bad.json"; ok $? "planted: buffer 2 at offset 0"
run replay "$T/t.jsonl" --plan "$T/bad.json"; ok $([ $rc -eq 1 ]; echo $?) "the planted conflict exits 1"
contains "$T/out" "corrupted: buffer 1"; ok $? "it names the victim"
contains "$T/out" "overwritten by buffer 2"; ok $? "and the buffer that overwrote it"
contains "$T/out" "found at tick 2"; ok $? "and the tick"
run replay "$T/t.jsonl" --plan "$T/bad.json" --json; ok $([ $rc -eq 1 ]; echo $?) "json: exit 1"
contains "$T/out" '"victim":1,"culprit":2,"tick":2'; ok $? "json: victim, culprit, tick"

run replay "$T/t.jsonl" --backend gpu; ok $([ $rc -eq 2 ]; echo $?) "an unknown backend exits 2"
run replay "$T/t.jsonl" --iterations 0; ok $([ $rc -eq 2 ]; echo $?) "--iterations 0 exits 2"
run replay "$T/t.jsonl" --plan "$T/good.json" --strategy best-fit; ok $([ $rc -eq 2 ]; echo $?) "--plan with --strategy exits 2"
run replay "$T/nope.jsonl"; ok $([ $rc -eq 2 ]; echo $?) "a missing trace exits 2"
if [ $have_driver = 0 ]; then
  run replay "$T/t.jsonl" --backend cuda
  ok $([ $rc -eq 2 ]; echo $?) "--backend cuda with no GPU exits 2"
  if [ "$MEMLENS_HAVE_CUDA_REPLAY" = 1 ]; then
    contains "$T/err" "no usable GPU"; ok $? "and says there is no usable GPU"
  else
    contains "$T/err" "without the CUDA replay backend"; ok $? "and says the build lacks it"
  fi
fi
# Signals to the tracer (issue 13, item 10), with a shell as the program: it
# loads no CUDA, so any file serves as the injection library and this runs
# in every build. A signal sent to memlens trace goes on to the program,
# memlens waits for it, removes its manifest ($TMPDIR/memlens-trace-*), and
# when the program died of the signal, dies of the same signal.
: >"$T/fake-inject.so"
mkdir -p "$T/tmpdir"
TMPDIR="$T/tmpdir" MEMLENS_INJECT="$T/fake-inject.so" python3 - "$MEMLENS" "$T" >"$T/sig.res" <<'PY'
import os, signal, subprocess, sys, time
memlens, T = sys.argv[1], sys.argv[2]
def ok(cond, what):   # one line per check: 0 or 1, then what it checks
    print('%d %s' % (0 if cond else 1, what), flush=True)
cases = [
    (signal.SIGTERM, 'exec sleep 100', -signal.SIGTERM, 'the program dies of the forwarded SIGTERM'),
    (signal.SIGINT, 'exec sleep 100', -signal.SIGINT, 'the program dies of the forwarded SIGINT (sent with kill, not from a terminal)'),
    (signal.SIGHUP, 'exec sleep 100', -signal.SIGHUP, 'the program dies of the forwarded SIGHUP'),
    (signal.SIGTERM, "trap 'echo caught >\"$0.got\"; exit 7' TERM; while :; do sleep 0.05; done", 7,
     'a program that catches SIGTERM exits 7 in its own time'),
]
for sig, body, want, what in cases:
    pidf = os.path.join(T, 'child.pid')
    for f in (pidf, pidf + '.got'):
        if os.path.exists(f):
            os.unlink(f)
    p = subprocess.Popen([memlens, 'trace', '--quiet', '-o', os.path.join(T, 'sig-%p.jsonl'), '--', 'sh', '-c',
                          'echo $$ >"$0"; ' + body, pidf])
    deadline = time.time() + 20
    while time.time() < deadline and not (os.path.exists(pidf) and open(pidf).read().strip()):
        time.sleep(0.02)
    child = int(open(pidf).read())
    ok(any(f.startswith('memlens-trace-') for f in os.listdir(os.path.join(T, 'tmpdir'))), '%s: the manifest exists while the program runs' % sig.name)
    time.sleep(0.2)
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill(); rc = p.wait()
    try:
        os.kill(child, 0)
        alive = True
        os.kill(child, signal.SIGKILL)
    except ProcessLookupError:
        alive = False
    ok(not alive, '%s: the program is not left running (it was, with parent 1)' % sig.name)
    ok(rc == want, '%s: %s (memlens status %s, want %s)' % (sig.name, what, rc, want))
    if want == 7:
        ok(os.path.exists(pidf + '.got'), '%s: the program got the signal' % sig.name)
    ok(os.listdir(os.path.join(T, 'tmpdir')) == [], '%s: no memlens-trace-* manifest is left in $TMPDIR' % sig.name)
# a program that dies of a signal by itself: memlens dies of it too (not exit 128+N)
p = subprocess.run([memlens, 'trace', '--quiet', '-o', os.path.join(T, 'sig-%p.jsonl'), '--', 'sh', '-c', 'kill -USR1 $$'])
ok(p.returncode == -signal.SIGUSR1, 'a program killed by SIGUSR1: memlens dies of SIGUSR1 (status %s)' % p.returncode)
PY
while read -r st what; do ok $st "$what"; done <"$T/sig.res"
[ -s "$T/sig.res" ]; ok $? "the signal checks ran"
finish
