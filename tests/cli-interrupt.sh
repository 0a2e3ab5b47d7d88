#!/bin/bash
# An interrupted conversion (SIGINT, SIGTERM) leaves no partial output: no
# OUT, no .OUT.memlens-tmp-*, an existing OUT untouched; it says so on stderr and
# dies of the signal (status 128 + signal number), as a shell expects.
. "$(dirname "$0")/lib.sh"

H='{"format":"memlens-trace","version":1}'
# big N FILE: a trace of N allocations (2N events), 8 live at a time
big() {
  awk -v n="$1" -v h="$H" 'BEGIN { print h
    for (i = 0; i < n; i++) {
      printf "{\"kind\":\"alloc\",\"id\":%d,\"size\":%d,\"name\":\"t%d\"}\n", i, 256 + i % 4096, i % 1000
      if (i >= 8) printf "{\"kind\":\"free\",\"id\":%d}\n", i - 8 } }' >"$2"
}
tmps() { compgen -G "$(dirname "$1")/.$(basename "$1").memlens-tmp-*"; }   # OUT's temporaries

# 1. While reading: the input is a FIFO we hold open, so memlens is
#    certainly still reading when the signal comes.
for sig in INT TERM; do
  rm -f "$T/fifo.jsonl" "$T/o.jsonl"
  mkfifo "$T/fifo.jsonl"
  "$MEMLENS" convert "$T/fifo.jsonl" "$T/o.jsonl" 2>"$T/err" &
  pid=$!
  exec 3>"$T/fifo.jsonl"
  printf '%s\n{"kind":"alloc","id":1,"size":4}\n' "$H" >&3
  sleep 0.3
  kill -s $sig $pid
  wait $pid; rc=$?
  exec 3>&-
  want=$((128 + $(kill -l $sig)))
  ok $([ $rc -eq $want ]; echo $?) "SIG$sig while reading: dies of the signal (status $rc, want $want)"
  contains "$T/err" "interrupted; no partial output was left behind"; ok $? "SIG$sig while reading: says it was interrupted"
  [ ! -e "$T/o.jsonl" ] && [ -z "$(tmps "$T/o.jsonl")" ]; ok $? "SIG$sig while reading: no output, no temporary file"
done

# 2. While writing: start a long conversion, wait for its temporary file
#    to appear, then interrupt it. A run that finishes before the signal
#    lands is retried with a trace twice as long.
nalloc=400000
big $nalloc "$T/big.jsonl"
for sig in INT TERM; do
  for out in o.jsonl o.csv; do
    caught=no
    for try in 1 2 3; do
      echo "previous contents" >"$T/$out"
      "$MEMLENS" convert "$T/big.jsonl" "$T/$out" 2>"$T/err" &
      pid=$!
      while kill -0 $pid 2>/dev/null && [ -z "$(tmps "$T/$out")" ]; do sleep 0.005; done
      kill -s $sig $pid 2>/dev/null
      wait $pid; rc=$?
      if [ $rc -ne 0 ]; then caught=yes; break; fi
      nalloc=$((nalloc * 2)); big $nalloc "$T/big.jsonl"
    done
    ok $([ $caught = yes ]; echo $?) "SIG$sig while writing $out: interrupted mid-write (try $try, $nalloc allocations)"
    want=$((128 + $(kill -l $sig)))
    ok $([ $rc -eq $want ]; echo $?) "SIG$sig while writing $out: dies of the signal (status $rc, want $want)"
    contains "$T/err" "interrupted; no partial output was left behind"; ok $? "SIG$sig while writing $out: says it was interrupted"
    [ -z "$(tmps "$T/$out")" ]; ok $? "SIG$sig while writing $out: no temporary file left"
    [ "$(cat "$T/$out")" = "previous contents" ]; ok $? "SIG$sig while writing $out: the existing $out is untouched"
  done
done

# 3. Uninterrupted, the same conversion completes and replaces OUT.
run convert "$T/big.jsonl" "$T/o.jsonl"
ok $rc "uninterrupted: exit 0"
[ "$(wc -l <"$T/o.jsonl")" -eq $((2 * nalloc - 8 + 1)) ] && [ -z "$(tmps "$T/o.jsonl")" ]; ok $? "uninterrupted: complete output ($((2 * nalloc - 8 + 1)) lines), no temporary file"
# 4. SIGKILL cannot be caught: the writer's temporary stays behind, named
#    .OUT.memlens-tmp-PID-XXXXXX; the next write to OUT removes it (its PID
#    is dead), but not a temporary of a live process or another file.
caught=no
for try in 1 2 3; do
  rm -f "$T/k.jsonl"
  "$MEMLENS" convert "$T/big.jsonl" "$T/k.jsonl" 2>"$T/err" &
  pid=$!
  while kill -0 $pid 2>/dev/null && [ -z "$(tmps "$T/k.jsonl")" ]; do sleep 0.005; done
  kill -s KILL $pid 2>/dev/null
  wait $pid; rc=$?
  if [ $rc -eq 137 ]; then caught=yes; break; fi
  nalloc=$((nalloc * 2)); big $nalloc "$T/big.jsonl"
done
ok $([ $caught = yes ]; echo $?) "SIGKILL while writing: killed mid-write (try $try)"
stale=$(tmps "$T/k.jsonl")
case "$stale" in *"/.k.jsonl.memlens-tmp-$pid-"??????) true;; *) false;; esac
ok $? "the temporary left is named .OUT.memlens-tmp-PID-XXXXXX with the dead writer's PID ($(basename "$stale"))"
sleep 1000 & live=$!
echo live >"$T/.k.jsonl.memlens-tmp-$live-abcdef"
echo mine >"$T/.k.jsonl.memlens-tmp-notes"
run convert "$SRC/samples/tiny.16.csv" "$T/k.jsonl"; ok $rc "the next write to the same output exits 0"
[ ! -e "$stale" ]; ok $? "and removed the dead writer's temporary"
[ -e "$T/.k.jsonl.memlens-tmp-$live-abcdef" ] && [ -e "$T/.k.jsonl.memlens-tmp-notes" ]; ok $? "a live process's temporary and another file stay"
kill $live; wait $live 2>/dev/null
finish
