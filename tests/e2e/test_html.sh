#!/usr/bin/env bash
# report.html in a real browser: headless Chromium loads the page of a real
# run, the DOM it builds must have the verdict banner and every chart as a
# non-empty inline <svg>, and its screenshot is kept in the run directory
# (report.png, a CI artefact, copied with report.html to LS_ARTEFACT_DIR,
# by default BUILD_DIR/artefacts/test_html when run by ctest). Chromium is installed when missing
# (LS_WITH_CHROMIUM=1 scripts/install-deps.sh); if that fails the test fails
# and says why: it never skips.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

browser() { command -v chromium || command -v chromium-browser || true; }
CHROME=$(browser)
if [ -z "$CHROME" ]; then
    echo "# chromium missing: installing it (LS_WITH_CHROMIUM=1 scripts/install-deps.sh)"
    if ! LS_WITH_CHROMIUM=1 bash "$SRC/scripts/install-deps.sh" >"$T_TMP/install.log" 2>&1; then
        sed 's/^/# /' "$T_TMP/install.log" | tail -n 20
    fi
    CHROME=$(browser)
fi
if [ -z "$CHROME" ]; then
    fail "chromium is required for the HTML test and could not be installed (see the install log above); install the Debian package chromium"
    t_finish
    exit 1
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    fail "gnuplot is required to draw the charts (scripts/install-deps.sh installs gnuplot-nox)"
    t_finish
    exit 1
fi

d=$T_TMP/demo
run_ls "$d" "$WL/demo.yaml" --set duration=4s
check "demo run finished (exit $RC)" [ "$RC" -eq 0 -o "$RC" -eq 1 ]
check "report.html written" [ -s "$d/report.html" ]
check "the page fetches nothing (no script, no link, no remote URL)" \
    sh -c "! grep -Eq '<script|<link|https?://[^w]' '$d/report.html'"

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
if [ -z "${LS_ARTEFACT_DIR:-}" ] && [ -f "$PWD/CMakeCache.txt" ]; then
    LS_ARTEFACT_DIR=$PWD/artefacts/test_html # ctest runs in the build directory
fi
if [ -n "${LS_ARTEFACT_DIR:-}" ]; then
    mkdir -p "$LS_ARTEFACT_DIR"
    cp "$d/report.png" "$d/report.html" "$LS_ARTEFACT_DIR/" && echo "# artefacts in $LS_ARTEFACT_DIR"
fi
t_no_leftovers "$d"
t_finish
