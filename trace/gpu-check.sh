#!/bin/bash
# trace/gpu-check.sh — the GPU check of the tracer and the CUDA replay, in one
# call, under 5 minutes. Run from the repository root on a machine with a GPU:
#
#   bash trace/gpu-check.sh [BUILD_DIR]        (default: build-gpu; $OUT/ keeps the files)
#   env: CUDATOOLKIT (default /usr/local/cuda-13.0), ITER (replay iterations, default 20)
#
# 1. builds memlens with the cuda feature enabled (reuses BUILD_DIR if built)
# 2. traces trace/gpu-sample.cu (two streams, kernels, a stream-wait-event)
#    with --kernels --sync
# 3. traces it again with stream-ordered allocation (cudaMallocAsync, what
#    --torch-tensors makes PyTorch do) and --sites (the allocating library)
# 4. replays a best-fit plan of each trace with the cuda backend (must find 0
#    corruptions) and a deliberately broken plan (every buffer at offset 0:
#    must find more than 0), timing the plan against cudaMalloc/cudaFree and
#    cudaMallocAsync/cudaFreeAsync
# 5. prints one table; exit 0 when every check passed, 1 otherwise.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
W=${OUT:-$(mktemp -d)}
mkdir -p "$W"
ITER=${ITER:-20}
t0=$(date +%s)
fail=0
log() { echo "gpu-check: $*" >&2; }

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >"$W/gpus.txt" 2>&1; then
  log "no GPU here (nvidia-smi failed); nothing to check"; exit 77
fi
log "GPU: $(head -1 "$W/gpus.txt")"

# 1. build (the toolkit: $CUDATOOLKIT, else /usr/local/cuda-13.0, else where nvcc is)
TK=${CUDATOOLKIT:-/usr/local/cuda-13.0}
if [ ! -d "$TK" ] && command -v nvcc >/dev/null; then TK=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")"); fi
if [ ! -x "$BUILD/cli/memlens" ] || [ ! -f "$BUILD/trace/libmemlens-inject.so" ] || [ ! -x "$BUILD/trace/gpu-sample" ]; then
  log "building in $BUILD"
  { [ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" -Dcuda=enabled -Dgui=disabled -Dcudatoolkit="$TK"; } >"$W/setup.log" 2>&1 \
    || { log "meson setup failed:"; tail -20 "$W/setup.log" >&2; exit 2; }
  timeout 150 ninja -C "$BUILD" -j"$(nproc)" cli/memlens trace/libmemlens-inject.so trace/gpu-sample >"$W/build.log" 2>&1 \
    || { log "build failed:"; tail -30 "$W/build.log" >&2; exit 2; }
fi
M=$BUILD/cli/memlens
APP=$BUILD/trace/gpu-sample
log "build ready after $(( $(date +%s) - t0 )) s"

# 2-3. trace
trace_one() {  # NAME ARGS...
  local name=$1; shift
  timeout 60 "$M" trace "$@" -o "$W/$name-%p.jsonl" >"$W/$name.out" 2>"$W/$name.err"
  echo $? >"$W/$name.rc"
  ls "$W"/"$name"-*.jsonl 2>/dev/null | grep -v '\.dev[0-9]' | head -1
}
T1=$(trace_one sync --kernels --sync -- "$APP")
T2=$(trace_one async --kernels --sync --sites --torch-tensors -- "$APP" --async)
field() {  # FILE.err: "from N CUPTI records, D dropped"
  sed -n 's/.*from \([0-9]*\) CUPTI records, \([0-9]*\) dropped.*/\1 \2/p' "$1" | head -1
}
count() { if [ -n "$2" ] && [ -f "$2" ]; then grep -c "$1" "$2"; else echo 0; fi; }
read -r REC1 DROP1 <<<"$(field "$W/sync.err")"
read -r REC2 DROP2 <<<"$(field "$W/async.err")"

# 4. replay
replay_pair() {  # TRACE NAME -> NAME-good.json NAME-bad.json NAME-good.replay NAME-bad.replay
  local t=$1 name=$2
  [ -n "$t" ] || return 1
  timeout 60 "$M" plan "$t" --strategy best-fit -o "$W/$name-good.json" >/dev/null 2>"$W/$name-plan.err" || return 1
  sed 's/"offset":[0-9]*/"offset":0/g' "$W/$name-good.json" >"$W/$name-bad.json"
  timeout 90 "$M" replay "$t" --plan "$W/$name-good.json" --backend cuda --iterations "$ITER" --json \
    >"$W/$name-good.replay" 2>"$W/$name-good.replay.err"
  timeout 90 "$M" replay "$t" --plan "$W/$name-bad.json" --backend cuda --iterations 1 --json \
    >"$W/$name-bad.replay" 2>"$W/$name-bad.replay.err"
  return 0
}
replay_pair "$T1" sync
replay_pair "$T2" async
jnum() {  # KEY FILE: a top-level number
  [ -f "$2" ] && sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" "$2" | head -1
}
jtime() {  # METHOD FILE: per-allocation microseconds
  [ -f "$2" ] && sed -n "s/.*\"$1\":{\"total_s\":[0-9.e+-]*,\"per_alloc_us\":\([0-9.e+-]*\)}.*/\1/p" "$2" | head -1
}

# 5. the table
check() {  # LABEL VALUE CONDITION(pass when true)
  local verdict=PASS
  if ! eval "$3"; then verdict=FAIL; fail=1; fi
  printf "%-48s %14s  %s\n" "$1" "${2:-?}" "$verdict"
}
info() { printf "%-48s %14s\n" "$1" "${2:-?}"; }

echo
echo "memlens GPU check on $(head -1 "$W/gpus.txt")"
printf "%-48s %14s  %s\n" "check" "value" "verdict"
printf -- "%.0s-" {1..70}; echo
v=$(cat "$W/sync.rc" 2>/dev/null); check "traced program exit code (cudaMalloc run)" "$v" '[ "$v" = 0 ]'
check "CUPTI records seen (cudaMalloc run)" "$REC1" '[ "${REC1:-0}" -gt 0 ]'
check "dropped records (cudaMalloc run)" "$DROP1" '[ "${DROP1:-1}" = 0 ]'
a=$(count '"kind":"alloc"' "$T1"); check "allocations traced (program makes 25)" "$a" '[ "$a" -ge 25 ]'
k=$(count '"kind":"kernel"' "$T1"); check "kernels traced (program launches 41)" "$k" '[ "$k" -ge 41 ]'
w=$(count '"sync":"stream_wait"' "$T1"); check "stream-wait-events traced (program makes 8)" "$w" '[ "$w" -ge 8 ]'
r=$(count '"sync":"stream_wait".*"stream2"' "$T1"); check "  ... with the recording stream resolved" "$r" '[ "$r" = "$w" ] && [ "$r" -gt 0 ]'
v=$(cat "$W/async.rc" 2>/dev/null); check "traced program exit code (cudaMallocAsync run)" "$v" '[ "$v" = 0 ]'
check "CUPTI records seen (cudaMallocAsync run)" "$REC2" '[ "${REC2:-0}" -gt 0 ]'
check "dropped records (cudaMallocAsync run)" "$DROP2" '[ "${DROP2:-1}" = 0 ]'
a2=$(count '"flags":\["async"\]' "$T2"); check "stream-ordered allocs + frees (program: 50)" "$a2" '[ "$a2" -ge 50 ]'
st=$(count '"kind":"alloc".*"stack":' "$T2"); check "allocations naming their library (--sites)" "$st" '[ "$st" -gt 0 ]'
info "  ... the library named" "$(sed -n 's/.*"kind":"stack".*"site":"\([^"]*\)".*/\1/p' "$T2" 2>/dev/null | head -1)"
for n in sync async; do
  g=$(jnum corrupted "$W/$n-good.replay"); check "corruptions, best-fit plan, $n trace (= 0)" "$g" '[ "$g" = 0 ]'
  b=$(jnum corrupted "$W/$n-bad.replay"); check "corruptions, broken plan, $n trace (> 0)" "$b" '[ "${b:-0}" -gt 0 ]'
  bc=$(jnum baseline_corrupted "$W/$n-good.replay"); check "corruptions, baselines, $n trace (= 0)" "$bc" '[ "$bc" = 0 ]'
  info "per allocation, plan ($n, $ITER iterations), us" "$(jtime plan "$W/$n-good.replay")"
  info "per allocation, cudaMalloc/cudaFree, us" "$(jtime cudaMalloc "$W/$n-good.replay")"
  info "per allocation, cudaMallocAsync/FreeAsync, us" "$(jtime cudaMallocAsync "$W/$n-good.replay")"
done
printf -- "%.0s-" {1..70}; echo
echo "elapsed $(( $(date +%s) - t0 )) s; files in $W"
for f in sync.err async.err sync-good.replay.err sync-bad.replay.err async-good.replay.err; do
  [ -s "$W/$f" ] && { echo "--- $f"; tail -5 "$W/$f"; }
done
exit $fail
