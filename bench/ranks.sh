#!/bin/bash
# The 64-rank run (issue 28): RANKS snapshots written by bench-snapshot
# --generate (rank k: SIZE + k * STEP bytes, so the ranks differ in
# length), then `memlens stats --jobs 2` and `--jobs 1` over all of them in
# one run, each under /usr/bin/time -v: wall time, and the peak RSS of the
# parent (it holds the summaries and the per-site lists of every rank;
# /usr/bin/time does not count the children it forks), then the peak RSS
# of `stats` on the largest file alone: what each child takes at most.
# docs/performance.md, "Many ranks". Usage:
#   bench/ranks.sh BUILD_DIR DIR [RANKS] [SIZE] [STEP]
# DIR holds the generated files (kept for a rerun; delete it afterwards).
set -e
BUILD=${1:?usage: bench/ranks.sh BUILD_DIR DIR [RANKS] [SIZE] [STEP]}
DIR=${2:?usage: bench/ranks.sh BUILD_DIR DIR [RANKS] [SIZE] [STEP]}
RANKS=${3:-64}
SIZE=${4:-4000000}
STEP=${5:-100000}
mkdir -p "$DIR"
for ((k = 0; k < RANKS; k++)); do
  f=$DIR/rank$k.pickle
  [ -s "$f" ] || "$BUILD/bench/bench-snapshot" --generate $((SIZE + k * STEP)) --out "$f" --keep --python-max 0 >/dev/null 2>&1
done
total=$(cat "$DIR"/rank*.pickle | wc -c)
echo "$RANKS snapshots, $total bytes in all"
for jobs in 2 1; do
  /usr/bin/time -v "$BUILD/cli/memlens" stats --jobs $jobs "$DIR"/rank*.pickle >"$DIR/stats-jobs$jobs.txt" 2>"$DIR/time-jobs$jobs.txt"
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$DIR/time-jobs$jobs.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$DIR/time-jobs$jobs.txt")
  echo "stats --jobs $jobs: wall $wall, the parent's peak RSS $((rss / 1024)) MiB"
done
last=$DIR/rank$((RANKS - 1)).pickle
/usr/bin/time -v "$BUILD/cli/memlens" stats "$last" >/dev/null 2>"$DIR/time-last.txt"
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$DIR/time-last.txt")
echo "stats $(basename "$last") alone ($(wc -c <"$last") bytes): peak RSS $((rss / 1024)) MiB" 
cmp -s "$DIR/stats-jobs2.txt" "$DIR/stats-jobs1.txt" && echo "same output with --jobs 2 and --jobs 1"
sed -n '/== across the ranks/,$p' "$DIR/stats-jobs2.txt"
