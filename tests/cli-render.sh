#!/bin/bash
# render, check (races), diagnose and report end to end: on the bundled
# sample, on small traces made here, and on ../shared when present.
. "$(dirname "$0")/lib.sh"
SAMPLE="$SRC/samples/train-step.jsonl"
has_render=1
"$MEMLENS" render --help >/dev/null 2>&1 || has_render=0
magic() { head -c "${#2}" "$1" | cmp -s - <(printf '%s' "$2"); }

# stream 1 frees 100 bytes, stream 0 reuses them: a race unless synced
cat >"$T/race.jsonl" <<'EOF2'
{"format":"memlens-trace","version":1,"alignment":1}
{"kind":"alloc","id":1,"size":100,"stream":1}
{"kind":"free","id":1}
{"kind":"alloc","id":2,"size":100,"stream":0}
{"kind":"free","id":2}
EOF2
sed 's/{"kind":"alloc","id":2/{"kind":"sync","sync":"device"}\n&/' "$T/race.jsonl" >"$T/synced.jsonl"
# fragmentation under 300: two holes of 100 and a request of 150
cat >"$T/frag.jsonl" <<'EOF2'
{"format":"memlens-trace","version":1,"alignment":1}
{"kind":"alloc","id":1,"size":100,"site":"a.py:1"}
{"kind":"alloc","id":2,"size":100,"site":"b.py:2"}
{"kind":"alloc","id":3,"size":100,"site":"a.py:1"}
{"kind":"free","id":1}
{"kind":"free","id":3}
{"kind":"alloc","id":4,"size":150,"site":"c.py:3"}
EOF2

for c in render report diagnose; do
  run $c --help; ok $rc "$c --help exits 0"
  contains "$T/out" "Usage: memlens $c"; ok $? "$c --help shows its usage"
done

# check: races
run check "$T/race.jsonl" --strategy first-fit
ok $([ $rc -eq 1 ]; echo $?) "check finds the unsynchronised cross-stream reuse (exit 1)"
contains "$T/out" "cross-stream"; ok $? "check names the kind"
run check "$T/race.jsonl" --strategy first-fit --json
contains "$T/out" '"cross-stream":1'; ok $? "check --json counts one cross-stream race"
contains "$T/out" '"stream_a":1,"stream_b":0'; ok $? "check --json names both streams"
run check "$T/synced.jsonl" --strategy first-fit
ok $rc "a device sync between the free and the reuse orders it: valid"
run check "$SAMPLE"
ok $rc "the sample's recorded plan has no races"

# diagnose
run diagnose "$T/frag.jsonl" --capacity 300 --strategy first-fit
ok $([ $rc -eq 1 ]; echo $?) "diagnose exits 1 on OOM"
contains "$T/out" "FRAGMENTATION"; ok $? "diagnose: fragmentation verdict"
contains "$T/out" "b.py:2"; ok $? "diagnose blames the live call site"
run diagnose "$T/frag.jsonl" --capacity 250 --strategy first-fit --json
contains "$T/out" '"verdict":"capacity"'; ok $? "diagnose --json: capacity verdict under 250"
run diagnose "$T/frag.jsonl" --capacity 1K --strategy first-fit
ok $rc "diagnose exits 0 when it fits"
run diagnose "$T/frag.jsonl"
ok $([ $rc -eq 2 ]; echo $?) "diagnose without a capacity or a recorded OOM is a usage error"

# report: md, json, csv (no cairo needed)
run report "$SAMPLE" --strategies first-fit,best-fit -o "$T/r.json" --quiet
ok $rc "report writes JSON"
contains "$T/r.json" '"format":"memlens-report"'; ok $? "the JSON report says its format"
run compare "$SAMPLE" --strategies first-fit,best-fit --json --quiet
for s in recorded first-fit best-fit; do
  peak=$(grep -o "\"strategy\":\"$s\",\"peak\":[0-9]*" "$T/out" | grep -o '[0-9]*$')
  [ -n "$peak" ] && grep -q "\"strategy\":\"$s\",\"peak\":$peak," "$T/r.json"
  ok $? "JSON report: $s peak $peak as in compare --json"
done
run report "$SAMPLE" --strategies best-fit -o "$T/r.md" --quiet
ok $rc "report writes Markdown"
contains "$T/r.md" "## Strategies"; ok $? "the Markdown has the comparison"
run report "$SAMPLE" --strategies best-fit -o "$T/r.csv" --quiet
[ "$(wc -l <"$T/r.csv")" -eq 3 ]; ok $? "the CSV has a header and two rows (recorded, best-fit)"
run report "$SAMPLE" -o "$T/r.txt"
ok $([ $rc -eq 2 ] && [ ! -e "$T/r.txt" ]; echo $?) "an unknown report extension is refused, nothing written"

if [ $has_render = 0 ] || ! "$MEMLENS" render "$T/race.jsonl" -o "$T/probe.png" --quiet 2>/dev/null; then
  echo "# this memlens has no renderer: picture checks skipped"
  finish; exit $?
fi

# render
for ext in png svg pdf; do
  run render "$SAMPLE" -o "$T/s.$ext" --quiet
  ok $rc "render $ext"
  size=$(stat -c %s "$T/s.$ext" 2>/dev/null || echo 0)
  [ "$size" -gt 10000 ]; ok $? "the $ext is not empty ($size bytes)"
done
magic "$T/s.png" $'\x89PNG'; ok $? "PNG magic"
magic "$T/s.svg" '<?xml'; ok $? "SVG starts as XML"
contains "$T/s.svg" '<svg'; ok $? "SVG has an svg element"
magic "$T/s.pdf" '%PDF'; ok $? "PDF magic"
if command -v pdftoppm >/dev/null; then
  pdftoppm -png -r 30 -singlefile "$T/s.pdf" "$T/pdfpage" 2>/dev/null
  [ -s "$T/pdfpage.png" ]; ok $? "the PDF rasterises (pdftoppm)"
fi
run render "$SAMPLE" --strategy best-fit --range 100:200 --size 800x500 --color-by stream --dark -o "$T/z.png" --quiet
ok $rc "render with --range, --size, --color-by, --dark"
# the x axis: real time by default (every event of the sample has a time),
# ticks on request; the two pictures differ (the sample's events are not
# evenly spaced in time); --time-axis is the same option
run render "$SAMPLE" --axis time -o "$T/ax-time.png" --quiet; ok $rc "render --axis time"
run render "$SAMPLE" -o "$T/ax-auto.png" --quiet
cmp -s "$T/ax-time.png" "$T/ax-auto.png"; ok $? "the default axis of a fully timed trace is real time"
run render "$SAMPLE" --axis ticks -o "$T/ax-ticks.png" --quiet; ok $rc "render --axis ticks"
! cmp -s "$T/ax-time.png" "$T/ax-ticks.png"; ok $? "real time and ticks draw different pictures"
run render "$SAMPLE" --time-axis ticks -o "$T/ax-ticks2.png" --quiet
cmp -s "$T/ax-ticks.png" "$T/ax-ticks2.png"; ok $? "--time-axis ticks is --axis ticks"
run render "$SAMPLE" --axis sideways -o "$T/ax-bad.png"
ok $([ $rc -eq 2 ] && [ ! -e "$T/ax-bad.png" ] && grep -q -- "--axis sideways" "$T/err"; echo $?) "--axis sideways is refused, nothing written"
printf 'id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\n' >"$T/ax.csv"
run render "$T/ax.csv" --axis time -o "$T/ax-csv.png"
ok $([ $rc -eq 0 ] && grep -q "carry no times" "$T/err"; echo $?) "--axis time on a trace without times says it draws ticks"
run report "$SAMPLE" --strategies first-fit --axis ticks -o "$T/ax.html" --quiet; ok $rc "report --axis ticks (HTML)"
run report "$SAMPLE" --strategies first-fit --axis ticks -o "$T/ax.md"
ok $([ $rc -eq 2 ] && [ ! -e "$T/ax.md" ]; echo $?) "report --axis on Markdown is refused (no pictures)"
run render "$SAMPLE" -o "$T/x.bmp"
ok $([ $rc -eq 2 ] && [ ! -e "$T/x.bmp" ]; echo $?) "render refuses .bmp, writes nothing"
run render "$SAMPLE" --size 10x10 -o "$T/y.png"
ok $([ $rc -eq 2 ]; echo $?) "render refuses a tiny --size"
# 20000x20000 took 3.5 GB and half a minute (issue 26): refused at once
run render "$SAMPLE" --size 20000x20000 -o "$T/huge.png"
ok $([ $rc -eq 2 ] && [ ! -e "$T/huge.png" ] && grep -q "more than the 40 million a picture may have" "$T/err"; echo $?) \
  "render refuses --size 20000x20000 naming the limit of 40 million pixels, nothing written"
run render "$SAMPLE" --range 5:1 -o "$T/y.png"
ok $([ $rc -eq 2 ]; echo $?) "render refuses a backwards --range"
run render "$SAMPLE" --range 999999: -o "$T/y.png"
ok $([ $rc -eq 2 ] && [ ! -e "$T/y.png" ]; echo $?) "render refuses a range past the end"
run plan "$SAMPLE" --strategy best-fit -o "$T/p.json" --quiet
run render "$SAMPLE" --plan "$T/p.json" -o "$T/p.png" --quiet
ok $rc "render --plan"
run render "$SAMPLE" --plan "$T/p.json" --strategy first-fit -o "$T/q.png"
ok $([ $rc -eq 2 ] && [ ! -e "$T/q.png" ]; echo $?) "--plan and --strategy together are refused"
run render "$T/race.jsonl" --strategy first-fit -o "$T/race.svg" --quiet
ok $rc "render a plan with a race"
contains "$T/race.svg" 'rgb(85%,10%,10%)'; ok $? "the race is drawn in red"

# the stacked and the segments views
run render "$SAMPLE" --view active -o "$T/active.png" --quiet
ok $rc "render --view active"
[ -s "$T/active.png" ]; ok $? "it wrote the picture"
run render "$SAMPLE" --view segments -o "$T/seg.svg" --quiet
ok $rc "render --view segments as SVG"
run render "$SAMPLE" --view segments --at 10 -o "$T/state.png" --quiet
ok $rc "render --view segments --at 10 (the allocator state beside it)"
run render "$SAMPLE" --view segments --at 99999999 -o "$T/late.png"
ok $([ $rc -eq 2 ] && [ ! -e "$T/late.png" ]; echo $?) "--at past the end is refused, nothing written"
run render "$SAMPLE" --view stacked -o "$T/x.png"
ok $([ $rc -eq 2 ]; echo $?) "an unknown --view is refused (exit 2)"
contains "$T/err" "address, active or segments"; ok $? "naming the choices"

# the HTML report
run report "$SAMPLE" --strategies first-fit,best-fit -o "$T/r.html" --quiet
ok $rc "report writes HTML"
contains "$T/r.html" "<svg"; ok $? "the HTML inlines SVG"
! grep -qiE '<script|src="http|href="http|@import|url\(http' "$T/r.html"; ok $? "the HTML loads nothing from the network"
[ "$(grep -o '<table' "$T/r.html" | wc -l)" -eq "$(grep -o '</table>' "$T/r.html" | wc -l)" ]; ok $? "tables are closed"
if command -v xmllint >/dev/null; then
  xmllint --noout "$T/r.html" 2>"$T/xml.err"; ok $? "the HTML is well-formed (xmllint)"
fi
for s in recorded first-fit best-fit; do
  peak=$(grep -o "\"strategy\":\"$s\",\"peak\":[0-9]*" "$T/out" 2>/dev/null | grep -o '[0-9]*$')
  [ -z "$peak" ] && peak=$(grep -o "\"strategy\":\"$s\",\"peak\":[0-9]*" "$T/r.json" | grep -o '[0-9]*$')
  grep -q "data-strategy=\"$s\" data-peak=\"$peak\"" "$T/r.html"; ok $? "HTML: $s peak $peak as in compare --json"
done
lb=$(grep -o '"lower_bound":[0-9]*' "$T/r.json" | head -1 | grep -o '[0-9]*$')
grep -q "data-bytes=\"$lb\"" "$T/r.html"; ok $? "HTML: the lower bound $lb"

# ../shared, when present
S="$SHARED/benchmarks"
if [ -d "$S/minimalloc/challenging" ]; then
  run render "$S/minimalloc/challenging/A.1048576.csv" --strategy best-fit -o "$T/a.png" --quiet
  ok $rc "render a MiniMalloc instance"
  run diagnose "$S/minimalloc/challenging/A.1048576.csv" --strategy first-fit --strategies best-fit --json
  ok $([ $rc -eq 1 ]; echo $?) "diagnose the instance under its own capacity"
  contains "$T/out" '"verdict":"fragmentation"'; ok $? "A under 1 MiB with first-fit: fragmentation"
  run report "$S/compiler-plans/tiny_bert.csv" --strategies first-fit,best-fit -o "$T/tb.html" --quiet
  ok $([ $rc -le 1 ]; echo $?) "report on a compiler instance"
fi
finish
