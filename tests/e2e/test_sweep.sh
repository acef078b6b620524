#!/usr/bin/env bash
# `lockstorm sweep` end to end (docs/sweep.md): a 2x2 sweep (TTL x holder
# pause length, each cell a 2 s demo run with a holder kill) run as child
# processes into one sweep directory; the TTL-tuning report (sweep.json,
# sweep.txt, sweep.html, four charts) with measured overstays next to the
# predicted P(hold + pause > TTL), violations per class, fenced lost
# updates, the price of a longer TTL and the smallest safe TTL; the
# progress line; --report; sweep files in `list workloads` and refused by
# `run`; a bad sweep file starts nothing; SIGINT stops the cells by pid.
# A workload or sweep file piped through /dev/stdin is read once (the sweep
# test does not consume it before the workload is loaded).
# Also: report.html's fault windows and phases table, on a cell.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# TTL 100ms vs 1000ms x pause 50ms vs 250ms; holds 20-80 ms. Pause 250 ms
# always outlives a 100 ms lease and never a 1000 ms one (80 + 250 < 1000;
# with 500 ms, a holder resumed late at load average 10 overstayed once).
cat >"$T_TMP/s.yaml" <<EOF
sweep: e2e
description: 2x2 TTL x pause
workload: $WL/demo.yaml
seed: 5
set:
  duration: 2s
  faults[0].at: 300ms
  faults[0].every: 400ms
  faults[1]: {kind: kill, target: holder, at: 600ms, restart: 100ms}
  expect: {}
axes:
  lock.ttl: [100ms, 1000ms]
  faults[0].duration: [50ms, 250ms]
EOF

d=$T_TMP/sweep
set +e
"$LS" sweep "$T_TMP/s.yaml" --out "$d" --progress plain >"$d.stdout" 2>"$d.stderr"
RC=$?
set -e
check "sweep exits 0 (exit $RC)" [ "$RC" -eq 0 ]
[ "$RC" -eq 0 ] || { cat "$d.stderr"; }
for f in sweep.json sweep.txt sweep.html sweep.yaml style.gp \
         ttl-overstay.dat ttl-overstay.gp ttl-violations.dat ttl-violations.gp \
         ttl-fencing.dat ttl-fencing.gp ttl-price.dat ttl-price.gp; do
    check "$f written and non-empty" [ -s "$d/$f" ]
done
J=$d/sweep.json
check "format lockstorm-sweep" [ "$(get "$J" format)" = lockstorm-sweep ]
check "sweep.json: started_at, ended_at, duration_s in that order" t_times_in_order "$J"
check "4 cells" [ "$(get "$J" cells.3.name)" = 003-1000ms_250ms-r0 ] 
for i in 0 1 2 3; do
    check "cell $i done" [ "$(get "$J" cells.$i.state)" = done ]
    c=$d/$(get "$J" cells.$i.dir)
    check "cell $i has its own run directory with result.json" [ -s "$c/result.json" ]
    check "cell $i ran with the sweep's overrides (seed 5, duration 2s)" \
        grep -q '^seed: 5$' "$c/workload.yaml"
done
check "cell 3 ran TTL 1s" grep -q 'ttl: 1s' "$d/cells/003-1000ms_250ms-r0/workload.yaml"
check "each cell's command is recorded" \
    [ "$(get "$J" cells.0.command.1)" = run ]

# the series: one per pause length, a point per TTL
check "two series" [ "$(get "$J" series.1.label)" = "faults[0].duration=250ms" ]
p100='series.1.points.0'
p500='series.1.points.1'
expect_val "$J" "$p100.ttl_ms" == 100
expect_val "$J" "$p100.pauses" '>=' 3
expect_val "$J" "$p100.paused_holds" '>=' 1
expect_val "$J" "$p100.overstay_share" == 1
expect_val "$J" "$p100.predicted_p" == 1
expect_val "$J" "$p100.predicted_p_harness" == 1
expect_val "$J" "$p100.stale_holder" '>' 0
expect_val "$J" "$p100.stale_holder_per_pause" '>' 0
expect_val "$J" "$p100.lock_broken" == 0
expect_val "$J" "$p100.plain_lost_updates" '>=' 0
expect_val "$J" "$p100.fenced_lost_updates" == 0
expect_val "$J" "$p500.ttl_ms" == 1000
expect_val "$J" "$p500.overstay_share" == 0
expect_val "$J" "$p500.stale_holder" == 0
expect_val "$J" "$p500.predicted_p" == 0
expect_val "$J" series.1.smallest_safe_ttl_ms == 1000
expect_val "$J" series.1.predicted_safe_ttl_ms == 330
expect_val "$J" series.0.predicted_safe_ttl_ms == 130
check "a predicted curve per series" [ "$(get "$J" series.0.predicted_curve.columns.1)" = p ]
expect_val "$J" recommendation.ttl_ms == 1000
expect_val "$J" recommendation.fenced_lost_updates == 0
check "the recommendation says why" \
    sh -c "'$LS' get '$J' recommendation.text | grep -q 'zero stale-holder violations'"

# the price of a longer TTL: measured with the kill fault, about one TTL
check "price measured" [ "$(get "$J" price.measured)" = true ]
expect_val "$J" price.points.0.ttl_ms == 100
expect_val "$J" price.points.1.ttl_ms == 1000
expect_val "$J" price.points.1.crash_to_next_grant_ms '>' "$(get "$J" price.points.0.crash_to_next_grant_ms)"
expect_val "$J" price.points.1.crash_to_next_grant_ms '<=' 1100

# text, html, charts, progress
check "stdout ends with the greppable sweep line" \
    grep -q '^lockstorm: sweep e2e cells=4/4 errors=0 interrupted=no recommended_ttl=1s predicted_ttl=330ms$' "$d.stdout"
check "sweep.txt is the stdout summary" cmp -s "$d/sweep.txt" "$d.stdout"
check "plain progress: a line per finished cell" \
    [ "$(grep -c '^lockstorm: sweep .* finished=' "$d.stderr")" -eq 4 ]
check "sweep.html banner names the TTL" grep -q 'smallest safe TTL 1s' "$d/sweep.html"
check "sweep.html lists the cells with links" grep -q 'href="cells/000-100ms_50ms-r0/summary.txt"' "$d/sweep.html"
check "sweep.html shows the price" grep -q '<section id="price">' "$d/sweep.html"
if command -v gnuplot >/dev/null 2>&1; then
    for c in ttl-overstay ttl-violations ttl-fencing ttl-price; do
        check "$c.svg drawn" [ -s "$d/$c.svg" ]
        check "$c inlined in sweep.html" grep -q "<figure id=\"chart-$c\"><figcaption>[^<]*</figcaption><svg" "$d/sweep.html"
    done
    n=$(grep -c 'id="gnuplot_plot_' "$d/ttl-overstay.svg" || true)
    check "ttl-overstay.svg plots measured and predicted per series ($n)" [ "$n" -ge 8 ]
else
    fail "gnuplot missing: charts not checked (install gnuplot-nox)"
fi
check "ttl-overstay.dat names its columns" grep -q '^# columns: ttl_ms overstay_share' "$d/ttl-overstay.dat"
check "ttl-*.gp load the shared style" grep -q "^load 'style.gp'" "$d/ttl-price.gp"
t_no_leftovers "$d"

# a cell's report.html (lockstorm report) has the fault windows and phases table
c0=$d/cells/000-100ms_50ms-r0
"$LS" report "$c0" --format html --quiet >/dev/null 2>&1 || true
check "report.html has the fault windows and phases table" \
    grep -q '<section id="windows"><h2>Fault windows and phases</h2>' "$c0/report.html"
check "... with the phases" grep -q '<td>no_fault</td><td>no fault active</td>' "$c0/report.html"
check "... and a row per injected fault" grep -q '<td>fault #0</td><td>pause holder, ' "$c0/report.html"

# --report assembles the same report again from sweep.json and the cells
rm -f "$d/sweep.html" "$d/ttl-price.gp"
set +e
"$LS" sweep --report "$d" --quiet >"$T_TMP/report.out" 2>&1
rc=$?
set -e
check "sweep --report exits 0 ($rc)" [ "$rc" -eq 0 ]
check "--report rewrote sweep.html and the charts" [ -s "$d/sweep.html" -a -s "$d/ttl-price.gp" ]
check "--report prints the same line" \
    grep -q '^lockstorm: sweep e2e cells=4/4 .*recommended_ttl=1s' "$T_TMP/report.out"

# sweep files among the workloads
check "list workloads marks the bundled sweep" \
    sh -c "'$LS' list workloads | grep -q '^  ttl-sweep .*(sweep: lockstorm sweep ttl-sweep)'"
set +e
"$LS" run ttl-sweep >/dev/null 2>"$T_TMP/run-sweep.err"
rc=$?
set -e
check "run refuses a sweep file (exit $rc)" [ "$rc" -eq 2 ]
check "... and says how to run it" grep -q 'is a sweep file; run it with: lockstorm sweep' "$T_TMP/run-sweep.err"

# a bad value stops the sweep before anything runs
sed 's/1000ms\]/1OOOms]/' "$T_TMP/s.yaml" >"$T_TMP/bad.yaml"
set +e
"$LS" sweep "$T_TMP/bad.yaml" --out "$T_TMP/bad" >/dev/null 2>"$T_TMP/bad.err"
rc=$?
set -e
check "a bad axis value: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "... naming the override" grep -q "set 'lock.ttl=1OOOms'" "$T_TMP/bad.err"
check "... and nothing was started" [ ! -e "$T_TMP/bad" ]

# SIGINT: the running cell is stopped by pid, the report says interrupted
i=$T_TMP/intr
"$LS" sweep "$T_TMP/s.yaml" --out "$i" --quiet >"$i.stdout" 2>"$i.stderr" &
pid=$!
check "a cell started" wait_for 20 test -s "$i/cells/000-100ms_50ms-r0/run.json"
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
check "interrupted sweep exits 4 ($rc)" [ "$rc" -eq 4 ]
check "sweep.json says interrupted" [ "$(get "$i/sweep.json" interrupted)" = true ]
check "the running cell was interrupted" [ "$(get "$i/sweep.json" cells.0.state)" = interrupted ]
check "no later cell ran" [ "$(get "$i/sweep.json" cells.3.state)" = "not run" ]
t_no_leftovers "$i"

# piped through /dev/stdin: one reading serves the sweep test and the load
out=$(sed 's/duration: 10s/duration: 3s/' "$WL/demo.yaml" | "$LS" validate /dev/stdin 2>&1) && rc=0 || rc=$?
check "a workload piped to validate /dev/stdin loads (exit $rc: $(tail -1 <<<"$out"))" \
    bash -c '[ "$1" = 0 ] && grep -q "^duration: 3s" <<<"$2"' _ "$rc" "$out"
d=$T_TMP/stdin-run
set +e
printf 'name: piped\nduration: 2s\nlock: {impl: redis-single, ttl: 1s}\n' |
    "$LS" run /dev/stdin --out "$d" --quiet >"$d.stdout" 2>"$d.stderr"
rc=$?
set -e
check "a workload piped to run /dev/stdin runs (exit $rc: $(tail -c 200 "$d.stderr"))" [ "$rc" -eq 0 ]
check "its resolved workload is the piped one" grep -q "^name: piped" "$d/workload.yaml"
t_no_leftovers "$d"
cat "$T_TMP/s.yaml" | "$LS" run /dev/stdin --out "$T_TMP/stdin-sweep" >"$T_TMP/ss.out" 2>&1 && rc=0 || rc=$?
check "a sweep file piped to run /dev/stdin: refused, exit 2 ($rc)" \
    bash -c '[ "$1" = 2 ] && grep -q "is a sweep file" "$2" && [ ! -e "$3" ]' _ "$rc" "$T_TMP/ss.out" \
    "$T_TMP/stdin-sweep"

t_finish
