#!/bin/bash
# The GTK4 viewer in a real window under Xvfb: open a sample, zoom and
# select through the actions, pick a buffer by the hit test, switch
# strategy, compare, export PNG/SVG/PDF/report (memlens-view --self-test
# checks each step's effect and prints TAP, renumbered here).
# $1 = memlens-view, $2 = source root, $3 = memlens. Skips (77) without Xvfb.
VIEW=$1
SRC=$2
MEMLENS=$3
if ! command -v xvfb-run >/dev/null 2>&1 || ! command -v Xvfb >/dev/null 2>&1; then
  echo "1..0 # SKIP Xvfb (xvfb-run) is not installed"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_DATA_HOME="$T/data" XDG_CONFIG_HOME="$T/config" XDG_CACHE_HOME="$T/cache"
export GSK_RENDERER=cairo GTK_A11Y=none NO_AT_BRIDGE=1 GDK_BACKEND=x11
n=0
failed=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
# xrun CMD...: CMD under Xvfb; its own exit status, which the command
# writes down itself: xvfb-run replaces it with 5 when removing its
# temporary folder fails (seen on a loaded machine)
xrun() {
  rm -f "$T/xrc"
  XRC="$T/xrc" timeout 150 xvfb-run -a -s "-screen 0 1600x1000x24" sh -c '"$@"; echo $? >"$XRC"' sh "$@"
  local r=$?
  [ -s "$T/xrc" ] && r=$(cat "$T/xrc")
  return "$r"
}

# the command hands over to the viewer
"$MEMLENS" view --help >"$T/help" 2>&1; ok $? "memlens view --help exits 0"
grep -q "Usage: memlens view" "$T/help"; ok $? "it shows its usage"
out=$("$MEMLENS" view --version 2>&1); [ "$out" = "memlens-view $("$MEMLENS" --version | cut -d' ' -f2)" ]; ok $? "memlens view runs memlens-view from the build tree ($out)"
MEMLENS_VIEW=/nonexistent/memlens-view "$MEMLENS" view x.jsonl >/dev/null 2>"$T/err"; rc=$?
[ $rc -eq 2 ] && grep -q "cannot run" "$T/err"; ok $? "a missing viewer is a clear error, exit 2"

# the scripted path through a real window
mkdir -p "$T/out"
xrun "$VIEW" --self-test="$T/out" "$SRC/samples/viewer-demo.jsonl" >"$T/tap" 2>"$T/log"; rc=$?
if grep -q "cannot open display\|Xvfb failed" "$T/log"; then
  echo "1..0 # SKIP Xvfb could not start"
  exit 77
fi
while read -r line; do
  case "$line" in
    "ok "*) ok 0 "viewer: ${line#ok * - }";;
    "not ok "*) ok 1 "viewer: ${line#not ok * - }";;
  esac
done <"$T/tap"
[ $rc -eq 0 ]; ok $? "the scripted run exits 0 (got $rc)"
[ "$(grep -c '^ok' "$T/tap")" -ge 30 ]; ok $? "it ran every step ($(grep -c '^ok' "$T/tap") checks)"
[ -s "$T/out/window-open.png" ] && [ -s "$T/out/window-compare.png" ]; ok $? "screenshots were taken"

# a bad file is reported in the window, not a crash
printf 'this is not a trace\n' >"$T/bad.jsonl"
xrun "$VIEW" --self-test="$T/out" "$T/bad.jsonl" >"$T/tap2" 2>"$T/log2"; rc=$?
[ $rc -eq 1 ] && grep -q "^not ok 1 - the file opens" "$T/tap2"; ok $? "a bad file fails to load cleanly (exit $rc, no crash)"

# a name with underscores keeps them in the Recent menu
cp "$SRC/samples/viewer-demo.jsonl" "$T/viewer_demo_copy.jsonl"
xrun "$VIEW" --self-test="$T/out" "$T/viewer_demo_copy.jsonl" >"$T/tap4" 2>"$T/log4"; rc=$?
[ $rc -eq 0 ] && grep -q "^ok .* the Recent menu lists viewer_demo_copy.jsonl with its underscores kept" "$T/tap4"
ok $? "the Recent menu keeps the underscores of viewer_demo_copy.jsonl (exit $rc)"

# a planning instance (CSV, no addresses): best-fit by default
cat >"$T/ex.12.csv" <<'CSV'
id,lower,upper,size
b1,0,3,4
b2,3,9,4
b3,0,9,4
b4,9,21,4
b5,0,21,4
CSV
xrun "$VIEW" --self-test="$T/out" "$T/ex.12.csv" >"$T/tap3" 2>"$T/log3"; rc=$?
[ $rc -eq 0 ]; ok $? "the CSV instance goes through the same script (exit $rc)"
grep -q "the view now shows first-fit" "$T/tap3"; ok $? "it starts with best-fit and switches to first-fit"

echo "1..$n"
[ "$failed" -eq 0 ]
