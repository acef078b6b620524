#!/usr/bin/env bash
# Comparisons that fit CI (docs/compare.md): a compare: block of 4 variants
# (one with a long name) and 3 fault kinds, 2.5 s each, runs for real; its
# text fits 100 columns (the tables split), compare.md and compare.html are
# written, and the conclusion per fault kind says what the counts say:
# tests/e2e/conclusion_check.py recomputes every line from compare.json's
# numbers alone and finds it in compare.txt. A run made unknown (its
# result.json's verdict rewritten) is "unknown" in every line and exit 4;
# -q prints the conclusion lines alone; `lockstorm compare --format md|html`
# prints the same documents. Workers name their resources: the names reach
# the comparison's runs. No process remains.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cat >"$T_TMP/ci.yaml" <<'YAML'
name: cmp-ci
seed: 5
duration: 2500ms
cluster: {nodes: 1}
lock: {impl: redis-single, ttl: 300ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}}
workers: {count: 4, resources: [invoice-42, invoice-43], hold: {dist: uniform, min: 20ms, max: 60ms}, think: 2ms}
faults:
  - {kind: pause, target: holder, at: 300ms, duration: 500ms}
  - {kind: latency, delay: 5ms, at: 1s, duration: 300ms}
  - {kind: kill, target: "node:0", restart: 0, at: 1500ms}
compare:
  - name: redis-single
  - name: naive-del-negative-control
    lock: {impl: naive-del, ttl: 300ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}}
  - name: redlock-3
    lock: {impl: redlock, ttl: 300ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}, options: {node_timeout: 50ms}}
    cluster: {nodes: 3}
  - name: redlock-5
    lock: {impl: redlock, ttl: 300ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}, options: {node_timeout: 50ms}}
    cluster: {nodes: 5}
YAML

d=$T_TMP/m
set +e
"$LS" run "$T_TMP/ci.yaml" --out "$d" --format text,json,md,html >"$d.stdout" 2>"$d.stderr"
RC=$?
set -e
check "the compare: block ran its 4 variants (exit $RC; $(tail -n 2 "$d.stderr"))" [ "$RC" -eq 0 ]
for f in compare.txt compare.json compare.md compare.html; do
    check "$f written" [ -s "$d/$f" ]
done
long=$(awk 'length > 100' "$d.stdout" "$d/compare.txt" | head -n 3)
check "no line longer than 100 columns (stdout and compare.txt) ${long:+: $long}" [ -z "$long" ]
check "stdout is compare.txt" diff -q "$d.stdout" "$d/compare.txt"
check "the wide tables were split: the run column repeats" \
    [ "$(grep -c '^run ' "$d/compare.txt")" -ge 4 ]
for k in pause latency kill; do
    check "a group and a conclusion line for $k" \
        bash -c 'grep -qE "\| $2( |\$)" "$1" && grep -q "^under $2: " "$1"' _ "$d/compare.txt" "$k"
done
check "conclusion ends with the whole run" grep -q '^whole run: ' "$d/compare.txt"
out=$(python3 "$SRC/tests/e2e/conclusion_check.py" "$d/compare.json" "$d/compare.txt" 2>&1) && rc=0 || rc=$?
check "every conclusion line is what the counts say ($out)" [ "$rc" -eq 0 ]
# what the counts say, checked against the run directories themselves
st=$(get "$d/redis-single" checks.mutex.by_class.stale_holder)
if [ "$st" -gt 0 ]; then
    check "whole run: redis-single's $st stale-holder from its result.json" \
        grep -q "redis-single.* stale-holder $st" <<<"$("$LS" get "$d/compare.json" 'conclusions[3].text')"
else
    check "whole run: redis-single clean as its result.json says" \
        grep -qE "redis-single( |,[^;]*)clean" <<<"$("$LS" get "$d/compare.json" 'conclusions[3].text')"
fi
check "compare.md: a conclusion list and a table per fault kind" \
    bash -c 'grep -q "^### Conclusion" "$1" && grep -q "^- under pause: " "$1" && [ "$(grep -c "^### Under " "$1")" -eq 3 ]' _ "$d/compare.md"
check "compare.html: a page with the conclusion and the runs table" \
    bash -c 'grep -q "<ul id=conclusion>" "$1" && grep -q "<li>under kill: " "$1" && grep -q "<table id=runs>" "$1" && grep -q "</html>" "$1"' _ "$d/compare.html"
check "the variants' resources are named" \
    [ "$("$LS" get "$d/redlock-3" 'workload.workers.resources[1]')" = invoice-43 ]
for v in redis-single naive-del-negative-control redlock-3 redlock-5; do t_no_leftovers "$d/$v"; done

dirs=("$d/redis-single" "$d/naive-del-negative-control" "$d/redlock-3" "$d/redlock-5")
check "compare --format md prints compare.md" diff -q <("$LS" compare --format md "${dirs[@]}") "$d/compare.md"
check "compare --format html prints compare.html" diff -q <("$LS" compare --format html "${dirs[@]}") "$d/compare.html"
q=$("$LS" compare -q "${dirs[@]}")
check "compare -q: the conclusion lines alone" \
    bash -c '[ "$(grep -vc "^under \|^whole run: \|^  " <<<"$1")" -eq 0 ] && grep -q "^whole run: " <<<"$1"' _ "$q"
o=$T_TMP/out
mkdir -p "$o"
"$LS" compare --out "$o" --format md "${dirs[@]}" >/dev/null
check "compare --out DIR --format md writes compare.{txt,json,md}, not html" \
    [ -s "$o/compare.txt" -a -s "$o/compare.json" -a -s "$o/compare.md" -a ! -e "$o/compare.html" ]
set +e
"$LS" compare --format md,html "${dirs[@]}" >/dev/null 2>"$T_TMP/fmt.err"
rc=$?
set -e
check "two formats without --out: exit 2 with the way out ($rc: $(cat "$T_TMP/fmt.err"))" \
    bash -c '[ "$1" -eq 2 ] && grep -q -- "--out DIR" "$2"' _ "$rc" "$T_TMP/fmt.err"

# a run whose checkers could not decide: "unknown" in every line, never clean
u=$T_TMP/unknown-run
mkdir -p "$u"
python3 - "$d/redlock-5/result.json" "$u/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["verdict"] = "unknown"
r["verdict_checks"] = "unknown"
r["verdict_reasons"] = ["evidence: planted for the test"]
json.dump(r, open(sys.argv[2], "w"))
PY
set +e
"$LS" compare --json "${dirs[@]:0:3}" "$u" >"$T_TMP/u.json"
rc=$?
set -e
check "a comparison with an unknown run: exit 4 ($rc)" [ "$rc" -eq 4 ]
out=$(python3 "$SRC/tests/e2e/conclusion_check.py" "$T_TMP/u.json" 2>&1) && rc=0 || rc=$?
check "its conclusion lines are what the counts say ($out)" [ "$rc" -eq 0 ]
check "the unknown run is unknown in every line" \
    [ "$(grep -c "unknown-run unknown" <<<"$out")" -eq 4 ]
t_finish
