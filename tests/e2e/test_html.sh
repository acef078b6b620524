#!/usr/bin/env bash
# report.html in a real browser: headless Chromium loads the page of a real
# run, the DOM it builds must have the verdict banner and every chart as a
# non-empty inline <svg>; then, driven over the DevTools protocol
# (tests/e2e/html_browser.py), the page loads with no console error, the
# timeline exists, a click on the first violation changes the visible range
# (read back from #tl data-view-from/to), the wheel zooms (test_html_scale.sh
# does the same at 10^5 holds). The screenshots (report.png, timeline.png)
# are CI artefacts: copied with
# report.html to LS_ARTIFACTS_DIR (or LS_ARTEFACT_DIR), by default
# BUILD_DIR/artefacts/test_html when run by ctest, else kept in the test's
# directory and their path printed. Chromium is installed when missing
# (LS_WITH_CHROMIUM=1 scripts/install-deps.sh); if that fails the test fails
# and says why: it never skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

t_need_browser

d=$T_TMP/demo
# the demo's pauses of the holder, and one pause of node 0 (a node's row)
run_ls "$d" "$WL/demo.yaml" --set duration=4s --set 'faults=[{kind: pause, target: holder, at: 1s,
    duration: 700ms, every: 1.5s}, {kind: pause, target: "node:0", at: 3200ms, duration: 300ms}]'
check "demo run finished (exit $RC)" [ "$RC" -eq 0 -o "$RC" -eq 1 ]
check "report.html written" [ -s "$d/report.html" ]
check "the page fetches nothing (no script src, no link, no remote URL)" \
    sh -c "! grep -Eq '<script[^>]* src|<link|https?://[^w]' '$d/report.html'"
check "one inline script, the timeline's" [ "$(grep -o '<script>' "$d/report.html" | wc -l)" -eq 1 ]
check "series.holds lists every hold (total = coverage.holds)" \
    [ "$(get "$d" series.holds.total)" = "$(get "$d" coverage.holds)" ]

# One browser run per action, each with its own profile, bounded in time.
chrome() {
    local profile
    profile=$(mktemp -d "$T_TMP/profile-XXXXXX")
    timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" "$@" 2>"$profile.stderr"
}

chrome --dump-dom "file://$d/report.html" >"$T_TMP/dom.html" || true
check "chromium rendered the page (DOM dumped)" [ -s "$T_TMP/dom.html" ]
check "verdict banner present" grep -q '<header class="banner \(pass\|fail\|unknown\)" id="verdict"' "$T_TMP/dom.html"
check "verdict banner says the verdict" grep -q '<div class="word">\(PASS\|FAIL\|UNKNOWN\)</div>' "$T_TMP/dom.html"
check "verdict banner carries the verdict line" grep -q 'lockstorm: \(PASS\|FAIL\|UNKNOWN\) workload=demo' "$T_TMP/dom.html"

# Each chart: its figure holds an inline <svg> with drawn content.
svg_shapes() { # FILE CHART -> number of shapes inside that chart's figure
    awk -v id="<figure id=\"chart-$2\">" '
        BEGIN { RS = "\001" }
        { i = index($0, id); if (!i) { print 0; exit }
          rest = substr($0, i); e = index(rest, "</figure>"); fig = substr(rest, 1, e)
          if (!index(fig, "<svg")) { print 0; exit }
          print gsub(/<(path|use|rect|polygon|circle|text)[ >]/, "", fig) }' "$1"
}
for c in timeline latency rate fencing; do
    n=$(svg_shapes "$T_TMP/dom.html" "$c")
    check "chart $c: inline svg with content ($n shapes)" [ "${n:-0}" -ge 20 ]
done
for s in workload expectations checks charts stories faults warnings; do
    check "section $s present" grep -q "<section id=\"$s\">" "$T_TMP/dom.html"
done
check "the first violation's story is on the page" grep -q '<article class="story" id="story-1">' "$T_TMP/dom.html"

chrome --window-size=1366,4000 --screenshot="$d/report.png" "file://$d/report.html" >/dev/null || true
check "screenshot kept as report.png" [ -s "$d/report.png" ]
check "report.png is a PNG" sh -c "head -c 8 '$d/report.png' | od -An -c | grep -q 'P   N   G'"
size=$(stat -c %s "$d/report.png" 2>/dev/null || echo 0)
check "the screenshot is not blank ($size bytes)" [ "$size" -gt 50000 ]
# The timeline, driven as a person would (html_browser.py prints one JSON
# object; jq-free: python reads it back).
field() { python3 -c 'import json,sys
v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v.get(k) if isinstance(v,dict) else None
print("" if v is None else v)' "$1" "$2"; }
python3 "$SRC/tests/e2e/html_browser.py" "$CHROME" "$d/report.html" "$d/timeline.png" >"$T_TMP/b1.json" || true
sed 's/^/# /' "$T_TMP/b1.json" | cut -c1-400
check "the browser drove the page" [ -z "$(field "$T_TMP/b1.json" fatal)" ]
check "no console error or exception" [ "$(field "$T_TMP/b1.json" errors)" = "[]" ]
check "the timeline element exists" [ -n "$(field "$T_TMP/b1.json" timeline.to)" ]
check "a row per worker, then node_0's for its fault ($(field "$T_TMP/b1.json" timeline.rows))" \
    [ "$(field "$T_TMP/b1.json" timeline.rows)" = "w0 w1 w2 w3 w4 w5 node_0" ]
from0=$(field "$T_TMP/b1.json" timeline.from); to0=$(field "$T_TMP/b1.json" timeline.to)
from1=$(field "$T_TMP/b1.json" after_click.from); to1=$(field "$T_TMP/b1.json" after_click.to)
check "a click on the first violation changes the visible range ($from0..$to0 -> $from1..$to1)" \
    [ -n "$from1" -a "$from0..$to0" != "$from1..$to1" ]
check "... and selects it" [ "$(field "$T_TMP/b1.json" after_click.selected)" = "violation-1" ]
check "... and outlines its story (violation 1 has one)" [ "$(field "$T_TMP/b1.json" after_click.story)" = 0 ]
check "... and the range holds the violation" \
    num_cmp "$from1" "<=" "$(get "$d" violations.0.overlap_start_ms)"
tip=$(field "$T_TMP/b1.json" tip | tr '\n' ' ')
w0=$(get "$d" violations.0.holders.0.worker); f0=$(get "$d" violations.0.holders.0.fence)
check "hovering the first violation's holder names it: w$w0, fence $f0, lease, outcome ($tip)" \
    sh -c "echo '$tip' | grep -q 'w$w0 holds' && echo '$tip' | grep -q 'fence $f0' && echo '$tip' | grep -q 'lease until' && echo '$tip' | grep -q 'release:'"
check "the wheel zooms in" [ "$(field "$T_TMP/b1.json" after_wheel.why)" = "zoom" ]
check "every listed violation has its row" \
    [ "$(field "$T_TMP/b1.json" violation_rows)" = "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["violations"]))' "$d/result.json")" ]
check "timeline screenshot kept" [ -s "$d/timeline.png" ]

art=${LS_ARTIFACTS_DIR:-${LS_ARTEFACT_DIR:-}}
if [ -z "$art" ] && [ -f "$PWD/CMakeCache.txt" ]; then
    art=$PWD/artefacts/test_html # ctest runs in the build directory
fi
if [ -n "$art" ]; then
    mkdir -p "$art"
    cp "$d/report.png" "$d/timeline.png" "$d/report.html" "$art/" &&
        echo "# artefacts in $art"
else
    keep=$(mktemp -d "$T_OUTER_TMP/lockstorm-html-XXXXXX")
    cp "$d/report.png" "$d/timeline.png" "$d/report.html" "$keep/" &&
        echo "# screenshots kept in $keep"
fi
t_no_leftovers "$d"
t_finish
