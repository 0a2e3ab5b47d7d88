# TAP helpers for the end-to-end tests: source it, then call ok/fail.
# $1 of the test = the memlens binary, $2 = the source root.
MEMLENS=$1
SRC=$2
# The real data beside the checkout (../shared), else the machine's /work/shared.
SHARED="$SRC/../shared"
[ -d "$SHARED" ] || SHARED=/work/shared
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
tap_n=0
failed=0
ok() {  # ok CONDITION_EXIT_STATUS DESCRIPTION
  tap_n=$((tap_n + 1))
  # one TAP line: a description quoting a message of several lines would
  # leave lines that are not TAP ("Unknown TAP output lines")
  local what
  what=$(printf '%s' "$2" | tr '\n' ' ')
  if [ "$1" -eq 0 ]; then echo "ok $tap_n - $what"; else echo "not ok $tap_n - $what"; failed=$((failed + 1)); fi
}
# run CMD...: runs memlens, keeps stdout in $T/out, stderr in $T/err, status in $rc
run() { "$MEMLENS" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
contains() { grep -qF -- "$2" "$1"; }
# skip DESCRIPTION REASON: a TAP skip (the check cannot run in this build)
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1 # SKIP $2"; }
# skip_all REASON: the whole test cannot run here (no torch, no display,
# no data). Under meson's TAP protocol a skip is the plan "1..0 # SKIP"
# with exit status 0; exit 77 is the exitcode protocol's skip and TAP
# counts it as an ERROR (tests/skips.py checks every test for this).
skip_all() { echo "1..0 # SKIP $1"; exit 0; }
# have_html: this memlens writes HTML reports (built with cairo; the core
# configuration, -Dgui=disabled, is not)
have_html() { "$MEMLENS" report "$SRC/samples/train-step.jsonl" --strategies first-fit -o "$T/.probe.html" >/dev/null 2>&1; }
# runs_under_vlimit KIB: memlens starts under `ulimit -v KIB`. A sanitizer
# build does not (ASan reserves terabytes of address space); its failure
# must not become a sanitizer report in CI's log_path, so the probe runs
# with the sanitizers' options cleared (the message goes to stderr).
runs_under_vlimit() {
  { (ulimit -v "$1"; ASAN_OPTIONS= UBSAN_OPTIONS= exec "$MEMLENS" stats "$SRC/samples/tiny.16.csv" --quiet) >/dev/null 2>&1; } 2>/dev/null
}
finish() { echo "1..$tap_n"; [ "$failed" -eq 0 ]; }
