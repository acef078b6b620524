#!/usr/bin/env bash
# Gates that fit CI habits: `lockstorm init` without a scenario writes the
# correct-lock starter, whose header names its own file and the command
# that runs it; that starter runs and PASSes; `--format md` writes
# summary.md (verdict, evidence, expectations table, a story) and `-q`
# prints the verdict line alone; `check --md` / `check -q` print the same
# from the run directory. One run of 4 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

ws=$T_TMP/ws
mkdir -p "$ws/ci"

# ---- init without a scenario ---------------------------------------------
(cd "$ws" && "$LS" init 2>"$T_TMP/init.err")
f=$ws/correct-lock.yaml
check "init without a scenario writes correct-lock.yaml" [ -s "$f" ]
check "... the header's first line names its own file" \
    grep -q '^# correct-lock\.yaml: lockstorm starter workload' <(head -n1 "$f")
check "... and says how to run it" grep -qx '# run it: lockstorm run correct-lock.yaml' "$f"
check "... a correct lock, not the broken one" grep -q '^  impl: redis-single ' "$f"
check "... it loads" bash -c '"$1" validate "$2" >/dev/null 2>&1' _ "$LS" "$f"
(cd "$ws" && "$LS" init ci/gate.yaml 2>/dev/null)
check "init FILE: the header names FILE" \
    bash -c 'head -n2 "$1" | grep -q "^# ci/gate.yaml: " &&
             grep -qx "# run it: lockstorm run ci/gate.yaml" "$1"' _ "$ws/ci/gate.yaml"

# ---- the starter runs: --format md, -q -----------------------------------
d=$ws/run
set +e
(cd "$ws" && "$LS" run correct-lock.yaml --out "$d" --format md,json -q >"$d.stdout" \
    2>"$d.stderr")
rc=$?
set -e
check "the starter PASSes (exit $rc; $(tail -n1 "$d.stdout"))" [ "$rc" -eq 0 ]
check "-q: stdout is the verdict line alone" \
    bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^lockstorm: PASS workload=correct-lock " "$1"' \
    _ "$d.stdout"
check "-q: nothing on stderr" [ ! -s "$d.stderr" ]
check "--format md,json wrote summary.md and result.json" \
    [ -s "$d/summary.md" -a -s "$d/result.json" ]
check "... and not the other reports" [ ! -e "$d/summary.txt" -a ! -e "$d/junit.xml" ]
md=$d/summary.md
check "summary.md: the verdict heading" \
    grep -qx '## lockstorm PASS: correct-lock (redis-single)' "$md"
check "summary.md: how the verdict follows" grep -q '^\*\*PASS\*\*: 3 of 3 expectations met' "$md"
check "summary.md: the verdict line, as run printed it" grep -qxF "$(cat "$d.stdout")" "$md"
check "summary.md: what it rests on" grep -q '^- evidence: complete, worker logs 6 of 6 ' "$md"
check "summary.md: coverage" grep -q '^- coverage: holds [0-9]' "$md"
check "summary.md: the expectations table" \
    grep -qx '| checks.mutex.by\\_class.lock\\_broken | == | 0 | 0 | met |' "$md"
check "summary.md: ... every row met" \
    [ "$(grep -c ' | met |$' "$md")" -eq 3 ]
check "summary.md: the incidents" grep -q '^### Incidents: [1-9]' "$md"
check "summary.md: the stale-holder story" \
    grep -q '^### Story of violation [0-9]* (r0 stale-holder, incident #' "$md"

# ---- check --md and -q on the run directory ------------------------------
check "check --md prints summary.md" \
    bash -c 'diff -u "$3" <("$1" check "$2" --md)' _ "$LS" "$d" "$md"
check "check -q prints the verdict line alone" \
    bash -c 'diff -u "$3" <("$1" check "$2" -q 2>/dev/null)' _ "$LS" "$d" "$d.stdout"
set +e
"$LS" check "$d" --md --json >/dev/null 2>"$T_TMP/both.err"
rc=$?
set -e
check "--md with --json is a usage error (exit $rc)" [ "$rc" -eq 2 ]
rm -f "$md"
check "check --format markdown writes summary.md" \
    bash -c '"$1" check "$2" --format markdown -q >/dev/null && [ -s "$2/summary.md" ]' _ "$LS" "$d"
t_no_leftovers "$d"
t_finish
