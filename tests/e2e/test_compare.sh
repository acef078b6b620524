#!/usr/bin/env bash
# Comparisons (docs/compare.md): a workload with a compare: block runs one
# run per variant (same seed and schedule) into sibling directories and
# prints one row per variant; `lockstorm compare` on two short runs prints
# one row per run (text and --json), warns when they are not alike, and
# refuses a directory without result.json; a variant that does not load
# stops the matrix before anything runs; a variant's fault mapping
# overrides an entry's keys or leaves it out (n/a with the reason), and its
# mistakes are FILE:LINE:COL errors (exit 2, nothing runs); the bundled
# compare-single-vs-redlock has a failover column (n/a where there is no
# replica) and shows the single node broken (lock-broken, after a node
# crash too) where Redlock is not. After every run no process remains.
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
# with --quiet stdout has the conclusion lines alone; the tables are in compare.txt
check "--quiet: stdout is the conclusion ($(head -c 200 "$d.stdout"))" \
    bash -c '[ "$(grep -c "^under pause: \|^under latency: \|^whole run: " "$1")" -eq 3 ] && ! grep -q "^run " "$1"' _ "$d.stdout"
rows=$(grep -cE '^(single|redlock-3) ' "$d/compare.txt" || true)
check "the table has one row per variant in each of its tables (the overall one in two parts, to fit 100 columns: $rows)" [ "$rows" -eq 6 ]
check "same schedule noted" grep -q "same seed, workers and fault schedule" "$d/compare.txt"
check "a column group per fault kind" grep -qE '\| pause +\| latency' "$d/compare.txt"
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

# a report, not a gate: what the checkers found, worded as such; a run
# that could not be judged makes the exit 4 and says why under the table
check "the checkers column says clean / violations, never pass / fail" \
    bash -c '"$1" compare "$2/single" "$2/redlock-3" | awk "NR == 2 && \$4 == \"checkers\" {h = 1} NR > 2 && NR <= 4 && \$4 !~ /^(clean|violations)\$/ {bad = 1} END {exit !(h && !bad)}"' \
    _ "$LS" "$d"
u=$T_TMP/undecided
mkdir -p "$u"
sed -e 's/"verdict": "[a-z]*"/"verdict": "unknown"/' -e 's/"verdict_checks": "[a-z]*"/"verdict_checks": "unknown"/' \
    -e 's/"verdict_reasons": \[[^]]*\]/"verdict_reasons": []/' "$d/single/result.json" >"$u/result.json"
set +e
"$LS" compare "$d/redlock-3" "$u" >"$u.out" 2>&1
RC=$?
set -e
check "compare with a run whose verdict is unknown: exit 4 ($RC)" [ "$RC" -eq 4 ]
check "... its row says unknown and a line says why" \
    bash -c 'grep -qE "^undecided +redis-single +1 +unknown " "$1" && grep -q "^unknown: undecided: " "$1"' _ "$u.out"

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

# a variant's fault mapping: an override and a skip (n/a with the reason)
{ echo "name: cmp-map"; grep -E '^(seed|duration|cluster|lock|workers):' "$T_TMP/cmp.yaml"
  cat <<'YAML'
faults:
  - {kind: latency, delay: 10ms, at: 500ms, duration: 300ms}
  - {kind: partition, isolate: "node:0", mode: blackhole, at: 1s, duration: 300ms}
compare:
  - name: all
  - name: mapped
    faults:
      latency: {delay: 25ms}
      1: {skip: "no partition in this variant (test)"}
YAML
} >"$T_TMP/map.yaml"
d5=$T_TMP/map
run_ls "$d5" "$T_TMP/map.yaml"
check "fault mapping: both variants ran (exit $RC)" [ "$RC" -eq 0 ]
check "the override took: latency 25ms in the mapped variant" \
    grep -q '"kind":"latency".*"delay":"25ms"' "$d5/mapped/faults.jsonl"
check "... 10ms in the other" grep -q '"kind":"latency".*"delay":"10ms"' "$d5/all/faults.jsonl"
check "the skipped partition did not run in the mapped variant" \
    bash -c '! grep -q "\"kind\":\"partition\"" "$1"' _ "$d5/mapped/faults.jsonl"
check "... and is not in its workload.yaml" bash -c '! grep -q "kind: partition" "$1"' _ "$d5/mapped/workload.yaml"
starts=$(grep -c '"kind":"partition".*"event":"start"\|"event":"start".*"kind":"partition"' "$d5/all/faults.jsonl" || true)
check "... but ran in the other ($starts)" [ "$starts" -eq 1 ]
check "its cells are n/a" grep -qE '^mapped .* n/a +n/a +n/a +n/a +n/a$' "$d5/compare.txt"
check "the reason is under the table" \
    grep -qx 'n/a: mapped, partition: no partition in this variant (test)' "$d5/compare.txt"
check "compare.json: by_fault.partition.not_applicable" \
    [ "$("$LS" get "$d5/compare.json" runs[1].by_fault.partition.not_applicable)" = "no partition in this variant (test)" ]
check "an override makes the schedules differ: a warning" \
    [ "$("$LS" get "$d5/compare.json" same_schedule)" = false ]
check "... printed" grep -q "^warning: the runs differ" "$d5/compare.txt"
t_no_leftovers "$d5/all"
t_no_leftovers "$d5/mapped"

# mapping errors: FILE:LINE:COL, exit 2, nothing runs
bad_map() { # NAME FRAGMENT YAML-OF-THE-VARIANT-LIST
    printf 'name: cmp-badmap\nduration: 1s\ncluster: {topology: replicated, replicas: 1}\nfaults:\n  - {kind: failover, mode: manual, at: 500ms, duration: 50ms}\ncompare:\n%s\n' "$3" \
        >"$T_TMP/$1.yaml"
    run_ls "$T_TMP/$1" "$T_TMP/$1.yaml"
    check "$1: exit 2 ($RC)" [ "$RC" -eq 2 ]
    check "$1: one FILE:LINE:COL line with the fix ($(head -c 300 "$T_TMP/$1.stderr"))" \
        grep -qF -- "$2" "$T_TMP/$1.stderr"
    check "$1: nothing ran" [ ! -e "$T_TMP/$1" ]
}
bad_map unmapped "$T_TMP/unmapped.yaml:5:5: faults[0]: kind failover needs cluster.topology: replicated; in compare variant 'single' (line 7), map it: faults: {failover: {skip: REASON}}" \
    '  - name: single
    cluster: {topology: independent}'
bad_map unknown-kind "unknown-kind.yaml:10:7: compare[0].faults.failovr: no faults[] entry has kind 'failovr'; did you mean 'failover'?" \
    '  - name: single
    cluster: {topology: independent}
    faults:
      failovr: {skip: "x"}'
bad_map no-reason "no-reason.yaml:10:24: compare[0].faults.failover.skip: expected the reason the fault does not apply" \
    '  - name: single
    cluster: {topology: independent}
    faults:
      failover: {skip: ""}'
bad_map bad-index "bad-index.yaml:10:7: compare[0].faults.3: faults[3] does not exist (the workload's faults: list has 1 entry)" \
    '  - name: single
    cluster: {topology: independent}
    faults:
      3: {skip: "x"}'

# the bundled comparison: 4 variants x 12 s, about 55 s on a loaded 2-vCPU
# VM. What is asserted was measured over runs first (docs/compare.md).
check "compare-single-vs-redlock validates" bash -c '"$1" validate compare-single-vs-redlock >/dev/null 2>&1' _ "$LS"
# the variants are loaded from the text read once: a pipe has one reading
check "a compare workload piped through /dev/stdin validates, variants included" \
    bash -c '"$1" validate /dev/stdin <"$2" >/dev/null 2>&1' _ "$LS" "$SRC/workloads/compare-single-vs-redlock.yaml"
rc=0
"$LS" validate /dev/stdin <"$T_TMP/bad.yaml" >"$T_TMP/bad-stdin.out" 2>&1 || rc=$?
check "a broken variant piped in: exit 2 naming the variant ($rc: $(head -c 200 "$T_TMP/bad-stdin.out"))" \
    bash -c '[ "$1" = 2 ] && grep -q "broken" "$2" && ! grep -q "is empty" "$2"' _ "$rc" "$T_TMP/bad-stdin.out"
d4=$T_TMP/bundled
run_ls "$d4" compare-single-vs-redlock
check "bundled comparison ran (exit $RC)" [ "$RC" -eq 0 ]
for v in redis-single redis-single-replicated redlock-3 redlock-5; do
    check "row for $v" grep -qE "^$v +" "$d4/compare.txt"
    t_no_leftovers "$d4/$v"
done
for k in pause latency partition kill clock failover; do # split to fit 100 columns
    check "a column group for $k" grep -qE "\\| $k( |\$)" "$d4/compare.txt"
done
check "compare.txt fits 100 columns" bash -c '! grep -q ".\{101\}" "$1"' _ "$d4/compare.txt"
cj=$d4/compare.json
check "same schedule (the n/a failover aside)" [ "$("$LS" get "$cj" same_schedule)" = true ]
# failover: n/a with the reason where there is no replica, run on the replicated set
for i in 0 2 3; do
    v=$("$LS" get "$cj" "runs[$i].label")
    check "$v: failover n/a with a reason" [ -n "$("$LS" get "$cj" "runs[$i].by_fault.failover.not_applicable")" ]
    check "$v: n/a line under the table" grep -q "^n/a: $v, failover: ..*" "$d4/compare.txt"
    check "$v: no failover ran" bash -c '! grep -q "\"kind\":\"failover\"" "$1"' _ "$d4/$v/faults.jsonl"
done
check "replicated: the failover started (cut verified, primary killed)" \
    grep -q '"event":"start".*"kind":"failover".*"cut_verified"' "$d4/redis-single-replicated/faults.jsonl"
check "... and promoted the replica" \
    grep -q '"promoted":true' "$d4/redis-single-replicated/faults.jsonl"
check "... counted in the failover group" \
    [ "$("$LS" get "$cj" runs[1].by_fault.failover.windows)" = 1 ]
# safety: the single node is broken
expect_val "$d4/redis-single" checks.mutex.by_class.lock_broken ">" 0
expect_val "$d4/redis-single" checks.fencing.fenced_lost_updates == 0
# node-level faults on node 0 (the crash without persistence, the clock
# jump): in their windows or their aftermath they break the single node's
# lock and never Redlock's majority. Per kind the single node's damage is
# likely, not certain (a crash between holds breaks nothing: the kill group
# was 1-2 in 6 of 6 plain runs, 0 in one run under ASan), so the single
# node is judged over both kinds together
group_broken() { # ROW KIND: lock-broken in the KIND group, inside its windows + after them
    echo $(( $("$LS" get "$cj" "runs[$1].by_fault.$2.lock_broken") + \
             $("$LS" get "$cj" "runs[$1].by_fault.$2.after_lock_broken") ))
}
kill_broken() { group_broken "$1" kill; }
node_broken() { echo $(( $(group_broken "$1" kill) + $(group_broken "$1" clock) )); }
check "node crash + clock jump: redis-single broken ($(kill_broken 0) + $(group_broken 0 clock))" \
    [ "$(node_broken 0)" -ge 1 ]
# Redlock under the faults within its model (a paused holder, latency, one
# node partitioned off): never lock-broken. Node 0's crash with an
# immediate empty restart and its 3 s clock jump are outside it (Redlock
# asks for delayed restarts and bounded drift): a holder granted on a bare
# majority that includes node 0 (two contending rounds split the nodes, or
# a node answers late) loses its majority with node 0's key, as K2 and K1
# show (docs/scenarios.md). That happened here (redlock-5, kill group 1, in
# a suite run beside test_scenarios), so those groups are shown, not
# asserted.
for row in 2 3; do
    name=$("$LS" get "$cj" "runs[$row].label")
    g=$(( $(group_broken "$row" pause) + $(group_broken "$row" latency) + \
          $(group_broken "$row" partition) ))
    check "$name: no lock-broken under pause, latency, partition ($g)" [ "$g" -eq 0 ]
done
# failover: the grants acknowledged while replication was cut exist only on
# the primary that dies (lost writes). Whether one is still held when the
# promoted replica grants its lock again (lock-broken) depends on timing:
# measured 1-2 in 3 of 5 runs, so it is shown, not asserted.
rd=$d4/redis-single-replicated
cut=$(grep -o '"cut_ms":[0-9.]*' "$rd/faults.jsonl" | head -n1 | cut -d: -f2)
down=$(grep -o '"down_ms":[0-9.]*' "$rd/faults.jsonl" | head -n1 | cut -d: -f2)
lost=$("$LS" log export "$rd" | awk -F'[:,]' -v a="${cut:-0}" -v b="${down:-0}" \
    '/"type":"acquire_ok"/ { t = $2 / 1e6; if (t > a && t < b) n++ } END { print n + 0 }')
check "failover: grants acknowledged while replication was cut ($lost, ${cut}-${down} ms)" \
    [ "$lost" -ge 1 ]
clocks=$(grep -c '"kind":"clock".*TIME on the node shows the shifted clock' "$d4/redlock-3/faults.jsonl" || true)
check "the clock jump was verified in redlock-3 ($clocks)" [ "$clocks" -eq 1 ]
kills=$(grep -c '"event":"start".*"kind":"kill"' "$d4/redis-single/faults.jsonl" || true)
check "the node crash happened in redis-single ($kills)" [ "$kills" -eq 1 ]

t_finish
