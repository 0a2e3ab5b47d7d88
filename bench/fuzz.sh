#!/bin/bash
# bench/fuzz.sh SECONDS [TARGET...] — runs every libFuzzer target in
# tests/fuzz/ (or the ones named: jsonl csv plan events ...) for SECONDS
# each, one after another, at low priority.
#
# Builds build-fuzz/ with clang (-Dfuzz=true) when it is missing. Each
# target starts from its seed corpus (tests/fuzz/corpus/NAME, copied, so the
# seeds stay small) plus what earlier runs found (build-fuzz/fuzz/NAME/corpus).
# Crashing inputs land in build-fuzz/fuzz/NAME/findings/; copy them to
# tests/fuzz/regress/NAME/ once fixed so CI replays them. The byte-level
# targets get tests/fuzz/memlens.dict (every key the readers look up,
# tests/fuzz/make-dict.py). Limits: 4 KiB
# inputs, 10 s per input (a hang), 256 MiB per malloc and 1 GiB RSS (a
# reader that believes a length field). Prints one line per target:
#   TARGET SECONDS EXECUTIONS EXEC/S CORPUS FINDINGS
# and appends the same lines to build-fuzz/fuzz/summary.txt (a log of every
# run). Exit 1 on a finding.
set -u
cd "$(dirname "$0")/.."
secs=${1:?usage: bench/fuzz.sh SECONDS [TARGET...]}
shift
BUILD=${FUZZ_BUILD:-build-fuzz}
if [ ! -f "$BUILD/build.ninja" ]; then
  # b_lundef=false: clang links the ASan runtime into executables only, so
  # a shared library (the CUPTI injection library) has it undefined
  CC=clang meson setup "$BUILD" -Dfuzz=true -Db_lundef=false >/dev/null || exit 2
fi
ninja -C "$BUILD" -j2 >/dev/null || { echo "fuzz.sh: build failed" >&2; exit 2; }
if [ $# -eq 0 ]; then
  set -- $(for f in "$BUILD"/tests/fuzz/fuzz-*; do [ -f "$f" ] && [ -x "$f" ] && basename "$f" | sed "s/^fuzz-//"; done)
fi
mkdir -p "$BUILD/fuzz"
summary="$BUILD/fuzz/summary.txt"
printf '%-8s %8s %12s %8s %7s %9s  %s\n' TARGET SECONDS EXECUTIONS EXEC/S CORPUS FINDINGS ENDED
status=0
for t in "$@"; do
  exe="$BUILD/tests/fuzz/fuzz-$t"
  [ -x "$exe" ] || { echo "fuzz.sh: no target $t" >&2; status=2; continue; }
  dir="$BUILD/fuzz/$t"
  mkdir -p "$dir/corpus" "$dir/findings"
  before=$(ls "$dir/findings" | wc -l)
  # the byte-level targets get the dictionary of every key the readers
  # look up; the generators (*-gen) write their keys themselves
  dict=()
  case $t in *-gen) ;; *) dict=(-dict=tests/fuzz/memlens.dict) ;; esac
  start=$(date +%s)
  nice -n 15 "$exe" "$dir/corpus" "tests/fuzz/corpus/$t" "${dict[@]}" \
    -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=256 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/" >"$dir/log.txt" 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log.txt" | tail -1)
  [ -n "$execs" ] || execs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$dir/log.txt" | tail -1)
  [ -n "$execs" ] || execs=$(grep -o '#[0-9]*' "$dir/log.txt" | tail -1 | tr -d '#')
  execs=${execs:-0}
  corpus=$(ls "$dir/corpus" | wc -l)
  found=$(( $(ls "$dir/findings" | wc -l) - before ))
  [ $rc -ne 0 ] && [ $found -eq 0 ] && found=1   # died without leaving an artifact
  printf '%-8s %8d %12d %8d %7d %9d  %s\n' "$t" "$took" "$execs" $(( execs / (took ? took : 1) )) "$corpus" "$found" "$(date -u +%FT%TZ)" | tee -a "$summary"
  if [ $found -gt 0 ]; then
    status=1
    grep -m1 -E 'ERROR: |runtime error|fuzz: ' "$dir/log.txt" | sed "s/^/  $t: /"
  fi
done
exit $status
