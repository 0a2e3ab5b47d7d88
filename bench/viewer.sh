#!/bin/bash
# Frame times of the viewer while zooming and panning a large trace under
# Xvfb (docs/performance.md, "Viewer"). Usage:
#   bench/viewer.sh BUILD_DIR [BUFFERS | FILE] [OUT.json]
# Generates the trace once (bench/gen-viewer-trace.py, cached in /tmp), or
# takes FILE (e.g. a snapshot from bench-snapshot --generate 1G --keep),
# opens it in bench-viewer (bench/viewer.c), which records the time from launch to
# the first frame showing the drawn trace, then changes the view 130 times along
# a fixed path (fit, zoom in 1.5x at a point 30 times, pan 30 times deep,
# zoom out 30 times, pan 30 times wide) and records, for each frame, the
# frame clock's before-paint -> after-paint time and the timeline's own
# snapshot time.
set -e
BUILD=${1:-build}
N=${2:-1000000}
OUT=${3:-/tmp/memlens-viewer-bench.json}
SRC=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$N" ]; then
  TRACE=$N
else
  TRACE=/tmp/memlens-bench-$N.csv
  [ -s "$TRACE" ] || python3 "$SRC/bench/gen-viewer-trace.py" "$TRACE" "$N"
fi
export GSK_RENDERER=${GSK_RENDERER:-cairo} GTK_A11Y=none NO_AT_BRIDGE=1
export XDG_DATA_HOME=$(mktemp -d)
xvfb-run -a -s "-screen 0 1600x1000x24" "$BUILD/bench/bench-viewer" "$OUT" "$TRACE"
