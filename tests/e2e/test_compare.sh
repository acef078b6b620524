#!/usr/bin/env bash
# Comparisons (docs/compare.md): a workload with a compare: block runs one
# run per variant (same seed and schedule) into sibling directories and
# prints one row per variant; `lockstorm compare` on two short runs prints
# one row per run (text and --json), warns when they are not alike, and
# refuses a directory without result.json; a variant that does not load
# stops the matrix before anything runs; the bundled
# compare-single-vs-redlock shows the single node broken (lock-broken)
# where Redlock is not. After every run no process remains.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cat >"$T_TMP/cmp.yaml" <<'YAML'
name: cmp-short
seed: 4
duration: 2s
cluster: {nodes: 1}
lock: {impl: redis-single, ttl: 500ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}}
workers: {count: 3, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 2ms}
faults:
  - {kind: pause, target: holder, at: 500ms, duration: 800ms}
  - {kind: latency, delay: 10ms, at: 1500ms, duration: 300ms}
compare:
  - name: single
    lock: {impl: redis-single, ttl: 500ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}}
  - name: redlock-3
    lock: {impl: redlock, ttl: 500ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}, options: {node_timeout: 50ms}}
    cluster: {nodes: 3}
YAML

d=$T_TMP/m
set +e
"$LS" run "$T_TMP/cmp.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr"
RC=$?
set -e
check "compare: block: every variant ran (exit $RC)" [ "$RC" -eq 0 ]
check "one run directory per variant" [ -s "$d/single/result.json" -a -s "$d/redlock-3/result.json" ]
check "compare.txt and compare.json written" [ -s "$d/compare.txt" -a -s "$d/compare.json" ]
rows=$(grep -cE '^(single|redlock-3) ' "$d.stdout" || true)
check "the table has one row per variant in each of its two tables ($rows)" [ "$rows" -eq 4 ]
check "same schedule noted" grep -q "same seed, workers and fault schedule" "$d.stdout"
check "a column group per fault kind" grep -qE '\| pause +\| latency' "$d.stdout"
check "the variants ran their own lock" \
    [ "$(get "$d/single" workload.lock.impl)" = redis-single -a "$(get "$d/redlock-3" workload.lock.impl)" = redlock ]
check "... on their own nodes" [ "$(get "$d/redlock-3" workload.cluster.nodes)" = 3 ]
check "... with the same seed" [ "$(get "$d/single" seed)" = "$(get "$d/redlock-3" seed)" ]
check "a variant's workload.yaml is a plain workload (no compare block)" \
    grep -q '^compare: ~' "$d/redlock-3/workload.yaml"
starts=$(grep -c '"event":"start"' "$d/redlock-3/faults.jsonl" || true)
check "the faults ran in the variant ($starts starts)" [ "$starts" -eq 2 ]
t_no_leftovers "$d/single"
t_no_leftovers "$d/redlock-3"

# lockstorm compare on two short runs
out=$("$LS" compare "$d/single" "$d/redlock-3")
check "compare prints one row per run" \
    [ "$(printf '%s\n' "$out" | grep -cE '^single +redis-single +1 ')" -eq 1 -a \
      "$(printf '%s\n' "$out" | grep -cE '^redlock-3 +redlock +3 ')" -eq 1 ]
check "compare --json is a lockstorm-compare document with 2 runs" \
    bash -c '"$1" compare --json "$2" "$3" >"$4" && "$1" get "$4" format runs[1].label runs[0].by_fault.pause.windows | tr "\n" " " | grep -q "^lockstorm-compare redlock-3 1 "' \
    _ "$LS" "$d/single" "$d/redlock-3" "$T_TMP/cmp.json"
check "compare of the variant directories equals the matrix's table" \
    bash -c 'diff <("$1" compare "$2/single" "$2/redlock-3") "$2/compare.txt"' _ "$LS" "$d"

# runs that are not alike: a warning
d2=$T_TMP/other
run_ls "$d2" "$T_TMP/cmp.yaml" --set 'compare=null' --seed 99
check "a single run of the workload without its block (exit $RC)" [ "$RC" -le 1 -a -s "$d2/result.json" ]
check "differing seeds: a warning" bash -c '"$1" compare "$2" "$3" | grep -q "^warning: the runs differ"' \
    _ "$LS" "$d/single" "$d2"
t_no_leftovers "$d2"

set +e
"$LS" compare "$d/single" "$T_TMP" >/dev/null 2>"$T_TMP/nores.err"
RC=$?
set -e
check "compare of a directory without result.json: exit 2 ($RC)" [ "$RC" -eq 2 ]
check "... naming the file" grep -q "result.json" "$T_TMP/nores.err"

# a variant that does not load: nothing runs
cat >"$T_TMP/bad.yaml" <<'YAML'
name: cmp-bad
duration: 1s
lock: {impl: redis-single, ttl: 500ms}
compare:
  - name: ok
  - name: broken
    lock: {impl: no-such-lock}
YAML
d3=$T_TMP/bad
set +e
"$LS" run "$T_TMP/bad.yaml" --out "$d3" --quiet >"$d3.stdout" 2>"$d3.stderr"
RC=$?
set -e
check "a variant that does not load: exit 2 ($RC)" [ "$RC" -eq 2 ]
check "... named in the error" grep -q "broken" "$d3.stderr"
check "... and nothing ran" [ ! -e "$d3/ok" ]
check "validate checks the variants too" bash -c '! "$1" validate "$2" >/dev/null 2>&1' _ "$LS" "$T_TMP/bad.yaml"

# the bundled comparison (4 variants x 10 s)
check "compare-single-vs-redlock validates" bash -c '"$1" validate compare-single-vs-redlock >/dev/null 2>&1' _ "$LS"
d4=$T_TMP/bundled
set +e
"$LS" run compare-single-vs-redlock --out "$d4" --quiet >"$d4.stdout" 2>"$d4.stderr"
RC=$?
set -e
check "bundled comparison ran (exit $RC)" [ "$RC" -eq 0 ]
for v in redis-single redis-single-replicated redlock-3 redlock-5; do
    check "row for $v" grep -qE "^$v +" "$d4.stdout"
    t_no_leftovers "$d4/$v"
done
expect_val "$d4/redis-single" checks.mutex.by_class.lock_broken ">" 0
expect_val "$d4/redis-single" checks.fencing.fenced_lost_updates == 0
expect_val "$d4/redlock-3" checks.mutex.by_class.lock_broken == 0
expect_val "$d4/redlock-5" checks.mutex.by_class.lock_broken == 0
clocks=$(grep -c '"kind":"clock".*TIME on the node shows the shifted clock' "$d4/redlock-3/faults.jsonl" || true)
check "the clock jump was verified in redlock-3 ($clocks)" [ "$clocks" -eq 1 ]

t_finish
