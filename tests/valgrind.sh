#!/bin/bash
# valgrind.sh MEMLENS SOURCE_ROOT SANITIZED PROGRAM... — the core programs
# under valgrind's memcheck: no invalid reads or writes, no use of
# uninitialised values, no definite or indirect leaks.
#   - each unit-test PROGRAM and fuzz replay program (tests/fuzz/replay.c
#     over the seeds and the regression inputs);
#   - with the single PROGRAM "cli": the command's end-to-end tests
#     (cli-basics.sh, cli-bad-input.sh, cli-torch.sh) with memlens wrapped
#     in valgrind, so every error path is covered too.
# Two meson tests (valgrind, valgrind-cli) so that they run side by side.
# Any memcheck report fails the test; it exits 77 (skipped) when valgrind
# is missing or the build uses the sanitizers (they do not mix).
MEMLENS=$1
SRC=$2
SANITIZED=$3
shift 3
command -v valgrind >/dev/null || { echo "valgrind is not installed: skipped"; exit 77; }
[ "$SANITIZED" = true ] && { echo "a sanitizer build: memcheck does not run ASan binaries; skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/logs"
VG=(valgrind -q --tool=memcheck --suppressions="$SRC/tests/valgrind.supp" --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --log-file="$T/logs/vg.%p")
status=0
# the unit tests' long random loops run shorter under memcheck (tests/tap.h: tap_quick)
export ML_TEST_QUICK=1

cli=no
[ "${1:-}" = cli ] && { cli=yes; shift; }
for prog in "$@"; do
  prog=$(realpath "$prog")
  name=$(basename "$prog")
  case "$name" in
    replay-*) t=${name#replay-}; args=("$SRC/tests/fuzz/corpus/$t" "$SRC/tests/fuzz/regress/$t") ;;
    *) args=("$SRC") ;;   # test-torch reads its fixtures from there
  esac
  (cd "$T" && "${VG[@]}" "$prog" "${args[@]}" >"$T/out" 2>&1)
  rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: $name (exit $rc)"; tail -20 "$T/out"; status=1
  else
    echo "ok: $name (${SECONDS}s so far)"
  fi
done

# memlens itself, through the end-to-end tests
[ $cli = yes ] && cat >"$T/memlens" <<EOS
#!/bin/sh
exec ${VG[*]} "$MEMLENS" "\$@"
EOS
[ $cli = yes ] && chmod +x "$T/memlens"
[ $cli = yes ] && for t in cli-basics cli-bad-input cli-torch; do
  if bash "$SRC/tests/$t.sh" "$T/memlens" "$SRC" >"$T/out" 2>&1; then
    echo "ok: $t.sh under memcheck ($(grep -c '^ok' "$T/out") checks, ${SECONDS}s so far)"
  else
    echo "FAIL: $t.sh under memcheck"; grep '^not ok' "$T/out"; status=1
  fi
done

# every memcheck report, from any process
for log in "$T"/logs/vg.*; do
  [ -s "$log" ] || continue
  echo "memcheck report ($log):"; head -40 "$log"; status=1
done
[ $status -eq 0 ] && echo "memcheck: clean ($(ls "$T/logs" | wc -l) processes)"
exit $status
