#!/usr/bin/env bash
# report.html at 10^5 holds (docs/reports.md "The timeline"): a JSONL history
# of 100,000 holds (20 workers on 4 resources, one planted overstay every
# 1,000 grants of a resource) is checked with `check --history --format
# html`; headless Chromium, driven over the DevTools protocol
# (tests/e2e/html_browser.py), loads the page with no console error, draws
# the whole run as per-pixel occupancy (level of detail), each hold once
# zoomed to the first violation, and pages the violations table. No timing
# assertion. The screenshot timeline-1e5.png is a CI artefact (LS_ARTIFACTS_DIR
# or LS_ARTEFACT_DIR; by default BUILD_DIR/artefacts/test_html_scale under
# ctest, else kept in a directory whose path is printed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

t_need_browser

field() { python3 -c 'import json,sys
v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v.get(k) if isinstance(v,dict) else None
print("" if v is None else v)' "$1" "$2"; }

# 10^5 holds: 20 workers on 4 resources, one planted overstay every 1,000
# grants of a resource, as a JSONL history (docs/checkers.md "JSONL histories").
big=$T_TMP/big
python3 - "$T_TMP/big.jsonl" <<'PY'
import sys
R, PER, N = 4, 5, 100000
fence = [0] * R
with open(sys.argv[1], "w") as out:
    for k in range(N // R):
        for r in range(R):
            w, g = r + R * (k % PER), (k * 2500 + r * 300) * 1000
            fence[r] += 1
            x = g + (2800000 if k % 1000 == 999 else 1800000)
            out.write('{"t":%d,"w":%d,"type":"acquire_ok","res":"r%d","token":"t%d","fence":%d,'
                      '"valid_until":%d}\n' % (g, w, r, k, fence[r], g + 2000000))
            out.write('{"t":%d,"w":%d,"type":"enter","res":"r%d"}\n' % (g + 1000, w, r))
            out.write('{"t":%d,"w":%d,"type":"exit","res":"r%d"}\n' % (x, w, r))
            out.write('{"t":%d,"w":%d,"type":"release_ok","res":"r%d"}\n' % (x + 1000, w, r))
PY
"$LS" check --history "$T_TMP/big.jsonl" --format json,html --out "$big" -q >/dev/null 2>"$T_TMP/big.err" || true
check "10^5 holds: report.html written" [ -s "$big/report.html" ]
check "10^5 holds: all in series.holds, none sampled" \
    [ "$(get "$big" series.holds.kept)" = 100000 -a "$(get "$big" series.holds.sampled_every)" = 1 ]
python3 "$SRC/tests/e2e/html_browser.py" "$CHROME" "$big/report.html" "$big/timeline-1e5.png" --whole >"$T_TMP/b2.json" || true
sed 's/^/# /' "$T_TMP/b2.json" | cut -c1-400
check "10^5 holds: the page loads with no console error" \
    [ -z "$(field "$T_TMP/b2.json" fatal)" -a "$(field "$T_TMP/b2.json" errors)" = "[]" ]
check "10^5 holds: the whole run is drawn as per-pixel occupancy" \
    [ "$(field "$T_TMP/b2.json" timeline.lod)" = occupancy ]
check "10^5 holds: zoomed to the first violation, each hold is drawn" \
    [ "$(field "$T_TMP/b2.json" after_click.lod)" = holds ]
check "10^5 holds: a double-click shows the whole run again, as occupancy" \
    [ "$(field "$T_TMP/b2.json" after_reset.why)" = reset -a "$(field "$T_TMP/b2.json" after_reset.lod)" = occupancy ]
check "10^5 holds: hovering the first violation's holder shows it" \
    sh -c "echo '$(field "$T_TMP/b2.json" tip | tr '\n' ' ')' | grep -q 'w16 holds r0'"
check "10^5 holds: 96 violations (the last grant of each resource has no successor), the 50 listed each a row" \
    [ "$(get "$big" checks.mutex.violations)" = 96 -a "$(field "$T_TMP/b2.json" violation_rows)" = 50 ]
check "10^5 holds: the violations and incidents tables are paged" \
    [ "$(field "$T_TMP/b2.json" pagers)" = 2 ]


art=${LS_ARTIFACTS_DIR:-${LS_ARTEFACT_DIR:-}}
if [ -z "$art" ] && [ -f "$PWD/CMakeCache.txt" ]; then
    art=$PWD/artefacts/test_html_scale # ctest runs in the build directory
fi
[ -n "$art" ] || art=$(mktemp -d "$T_OUTER_TMP/lockstorm-html-XXXXXX")
mkdir -p "$art"
cp "$big/timeline-1e5.png" "$art/" && echo "# screenshot in $art/timeline-1e5.png"
t_finish
