#!/usr/bin/env bash
# The report files of a real run (docs/reports.md): junit.xml valid against
# tests/junit.xsd, the four charts drawn by gnuplot and non-empty, the
# violation stories in result.json / summary.txt / junit.xml / report.html,
# --format selecting the files for run, check and report, a missing gnuplot
# skipping the charts with one line, and the progress line's modes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "not ok - $1 is required by this test (scripts/install-deps.sh installs $2)"
        T_FAIL=$((T_FAIL + 1))
        t_finish
        exit 1
    fi
}
need gnuplot gnuplot-nox
need xmllint libxml2-utils
XSD=$SRC/tests/junit.xsd

# A short demo: paused holders, stale-holder violations, fencing saves the data.
d=$T_TMP/demo
run_ls "$d" "$WL/demo.yaml" --set duration=4s
check "demo run finished (exit $RC)" [ "$RC" -eq 0 -o "$RC" -eq 1 ]
for f in result.json summary.txt junit.xml report.html style.gp faults.gp \
         timeline.dat timeline.gp latency.dat latency.gp rate.dat rate.gp fencing.dat fencing.gp; do
    check "$f written and non-empty" [ -s "$d/$f" ]
done

# Charts: every SVG made, non-empty, with plotted data (gnuplot's plot groups).
for c in timeline latency rate fencing; do
    check "$c.svg drawn" [ -s "$d/$c.svg" ]
    n=$(grep -c 'id="gnuplot_plot_' "$d/$c.svg" || true)
    check "$c.svg has plotted series ($n)" [ "$n" -ge 2 ]
    check "$c.gp loads the shared style" grep -q "^load 'style.gp'" "$d/$c.gp"
    check "$c.dat names its columns" grep -q '^# columns: ' "$d/$c.dat"
done
nfaults=$(grep -c '^set object' "$d/faults.gp" || true)
check "fault windows shaded ($nfaults objects in faults.gp)" [ "$nfaults" -ge 2 ]
check "timeline draws overlaps (violations listed)" grep -q 'stale-holder' "$d/timeline.dat"
check "no gnuplot.log left when every chart was drawn" [ ! -e "$d/gnuplot.log" ]
# the scripts are the user's too: they re-run by hand in the run directory
rm -f "$d/rate.svg"
check "rate.gp re-runs by hand" sh -c "cd '$d' && gnuplot rate.gp && [ -s rate.svg ]"

# JUnit: schema-valid; the run's and the golden files.
check "junit.xml validates against tests/junit.xsd" \
    xmllint --noout --schema "$XSD" "$d/junit.xml"
for g in "$SRC"/tests/unit/golden/junit_*.xml; do
    check "golden $(basename "$g") validates" xmllint --noout --schema "$XSD" "$g"
done
tests=$(grep -o '<testsuite [^>]*tests="[0-9]*"' "$d/junit.xml" | grep -o 'tests="[0-9]*"' | tr -dc 0-9)
check "one testcase per expectation (5) and checker (5: mutex, fencing, liveness, stats, commands): $tests" [ "$tests" = 10 ]
check "junit.xml carries a violation's story" grep -q 'story of violation [0-9]* (r[0-9]* stale-holder' "$d/junit.xml"
check "junit.xml's suite output says how the verdict follows" grep -q '<system-out>\(PASS\|FAIL\): ' "$d/junit.xml"

# Stories: in the model, the text summary and the page.
st=$(get "$d" violations.0.story_text)
check "violations[0].story_text is a story" sh -c "echo \"\$1\" | grep -q 'acquires .* overlap on r[0-9]' " _ "$st"
check "the story ends with the class" sh -c "echo \"\$1\" | grep -q '· stale-holder: w[0-9]* overstayed its lease'" _ "$st"
check "the story names the pause" sh -c "echo \"\$1\" | grep -q 'pause w[0-9]* (fault #[0-9]*)'" _ "$st"
check "violations[0].story has items" [ "$(get "$d" violations.0.story.0.kind)" = grant ]
nst=$(grep -c '"story_text":' "$d/result.json" || true)
check "at most check.stories (3) violations get a story ($nst)" [ "$nst" -ge 1 -a "$nst" -le 3 ]
check "summary.txt narrates a story" grep -q '^story of violation [0-9]* (r[0-9]* stale-holder' "$d/summary.txt"
check "summary.txt says how the verdict follows" grep -q '^verdict    \(PASS\|FAIL\): ' "$d/summary.txt"
check "report.html shows a story" grep -q '<article class="story" id="story-[0-9]*">' "$d/report.html"

# A negative control: naive-del's lock-broken violations get a story that
# shows the late unconditional release freeing another holder's lock.
n=$T_TMP/naive-del
run_ls "$n" "$WL/naive-del.yaml" --set duration=3s --format json,text,junit
check "naive-del run found lock-broken violations (exit $RC)" \
    num_cmp "$(get "$n" checks.mutex.by_class.lock_broken)" ">" 0
check "a lock-broken violation has a story" \
    grep -q '"story_text": ".*lock-broken: r0 was granted to w[0-9]* while w[0-9]*.s lease was valid' "$n/result.json"
check "... naming the release that freed the other holder's lock" \
    grep -q 'releases r0\( (its previous grant)\)\?, while w[0-9]* holds it .*w[0-9]*.s release at [0-9.]*s freed it first' "$n/result.json"
# The lock's own failure is told first, in the summary and in junit.xml,
# even when stale-holder violations came first in time.
first=$(grep -m1 '^story of violation ' "$n/summary.txt" || true)
check "summary.txt's first story is lock-broken ($first)" sh -c "echo \"\$1\" | grep -q ' lock-broken'" _ "$first"
check "junit.xml's mutex testcase tells a lock-broken story" grep -q 'story of violation [0-9]* (r0 lock-broken):' "$n/junit.xml"
check "junit.xml validates against tests/junit.xsd (naive-del)" xmllint --noout --schema "$XSD" "$n/junit.xml"
t_no_leftovers "$n"

# --format on report: only the files asked for.
r=$T_TMP/reformat
mkdir -p "$r" && cp -r "$d/events" "$d"/*.json "$d"/*.jsonl "$d/workload.yaml" "$r/"
rm -f "$r/result.json"
set +e
"$LS" report "$r" --format junit >"$r.out" 2>"$r.err"
rc=$?
set -e
check "report --format junit exits with the verdict ($rc)" [ "$rc" -eq 0 -o "$rc" -eq 1 ]
check "report --format junit wrote junit.xml" [ -s "$r/junit.xml" ]
check "... and nothing else" [ ! -e "$r/result.json" -a ! -e "$r/report.html" -a ! -e "$r/timeline.dat" ]
check "report names what it wrote" grep -q "wrote into $r: junit.xml" "$r.out"
set +e
"$LS" report "$r" --format pdf >/dev/null 2>"$r.err2"
rc=$?
set -e
check "an unknown format is a usage error (exit $rc)" [ "$rc" -eq 2 ]
check "... naming it" grep -q "unknown format 'pdf'" "$r.err2"

# --format on check RUN_DIR: writes into it; stdout still ends with the verdict.
rm -f "$r/junit.xml"
set +e
"$LS" check "$r" --format junit >"$r.check.out" 2>"$r.check.err"
set -e
check "check RUN_DIR --format junit wrote junit.xml" [ -s "$r/junit.xml" ]
check "check --format: stdout ends with the verdict line" sh -c "tail -n1 '$r.check.out' | grep -q '^lockstorm: \(PASS\|FAIL\)'"
check "check --format: names what it wrote on stderr" grep -q "wrote into $r: junit.xml" "$r.check.err"

# gnuplot missing: one line, everything else written.
m=$T_TMP/nognuplot
mkdir -p "$m" && cp -r "$d/events" "$d"/*.json "$d"/*.jsonl "$d/workload.yaml" "$m/"
rm -f "$m/result.json"
set +e
PATH=/nonexistent "$LS" report "$m" >"$m.out" 2>"$m.err"
rc=$?
set -e
check "report without gnuplot still ends with the verdict ($rc)" [ "$rc" -eq 0 -o "$rc" -eq 1 ]
check "one line says the charts were skipped" \
    [ "$(cat "$m.err")" = "lockstorm: charts skipped: gnuplot not found" ]
for f in result.json summary.txt junit.xml report.html timeline.dat timeline.gp style.gp; do
    check "without gnuplot: $f still written" [ -s "$m/$f" ]
done
check "without gnuplot: no svg" [ ! -e "$m/timeline.svg" ]
check "the page says why the charts are missing" grep -q 'charts skipped: gnuplot not found' "$m/report.html"

# --format on run; --progress plain prints one line per second without a TTY.
f=$T_TMP/formats
set +e
"$LS" run "$WL/demo.yaml" --out "$f" --set duration=2s --format json,text --progress plain \
    >"$f.stdout" 2>"$f.stderr"
rc=$?
set -e
check "run --format json,text (exit $rc)" [ "$rc" -eq 0 -o "$rc" -eq 1 ]
check "run --format json,text wrote result.json and summary.txt" [ -s "$f/result.json" -a -s "$f/summary.txt" ]
check "... and no junit.xml, report.html or chart" \
    [ ! -e "$f/junit.xml" -a ! -e "$f/report.html" -a ! -e "$f/timeline.gp" ]
np=$(grep -c '^lockstorm: progress [0-9.]*s/2.0s grants=[0-9]* rate=[0-9]*/s busy=[0-9]* unknown=[0-9]* attempts=[0-9]* faults_active=[0-9]*' "$f.stderr" || true)
check "--progress plain: a line per second ($np)" [ "$np" -ge 2 -a "$np" -le 5 ]
check "--progress plain: a last line marked done" grep -q 'faults_active=[0-9]* (done)$' "$f.stderr"
check "stdout still ends with the verdict line" sh -c "tail -n1 '$f.stdout' | grep -q '^lockstorm: \(PASS\|FAIL\)'"
q=$T_TMP/quiet
set +e
"$LS" run "$WL/demo.yaml" --out "$q" --set duration=1500ms --quiet --progress plain >/dev/null 2>"$q.stderr"
rc=$?
set -e
check "--quiet run finished (exit $rc)" [ "$rc" -eq 0 -o "$rc" -eq 1 ]
check "--quiet: nothing on stderr" [ ! -s "$q.stderr" ]
a=$T_TMP/auto
set +e
"$LS" run "$WL/demo.yaml" --out "$a" --set duration=1500ms >/dev/null 2>"$a.stderr"
rc=$?
set -e
check "run without --progress finished (exit $rc)" [ "$rc" -eq 0 -o "$rc" -eq 1 ]
check "no TTY, no --progress: no progress line" sh -c "! grep -q 'progress\|grants' '$a.stderr'"
if command -v script >/dev/null 2>&1; then
    t=$T_TMP/tty
    script -qec "'$LS' run '$WL/demo.yaml' --out '$t' --set duration=1500ms >/dev/null" /dev/null \
        >"$t.tty" 2>&1 </dev/null || true
    check "on a TTY: a live line redrawn in place" grep -q $'\r\033\[K\[ *[0-9.]*s/1.5s\] grants [0-9]* ([0-9]*/s)  busy [0-9]*  unknown [0-9]*' "$t.tty"
    t_no_leftovers "$t"
fi
set +e
"$LS" run "$WL/demo.yaml" --out "$T_TMP/bad" --progress sometimes >/dev/null 2>"$T_TMP/bad.err"
rc=$?
set -e
check "--progress sometimes is a usage error (exit $rc)" [ "$rc" -eq 2 ]

# check --history --format writes into --out.
h=$T_TMP/hist
"$LS" log export "$d" >"$h.jsonl"
set +e
"$LS" check --history "$h.jsonl" --format junit,json --out "$h" >/dev/null 2>"$h.err"
rc=$?
set -e
check "check --history --format junit,json --out DIR (exit $rc)" [ "$rc" -ne 2 -a "$rc" -ne 3 ]
check "... wrote junit.xml (valid) and result.json" sh -c \
    "[ -s '$h/result.json' ] && xmllint --noout --schema '$XSD' '$h/junit.xml' 2>/dev/null"

t_no_leftovers "$d"
t_no_leftovers "$f"
t_finish
