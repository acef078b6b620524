#!/usr/bin/env bash
# Bounded fault schedules (docs/reliability.md "Bounded fault schedules"):
# a schedule over FAULT_MAX_OCCURRENCES (10,000) occurrences, or a period
# shorter than the kind's minimum, is refused at load with one line and
# exit 2; a schedule at the cap runs, and faults.jsonl and result.json stay
# within the bound the docs state.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

head='name: budget
duration: DUR
workers: {count: 1, resources: 1}'

# refused NAME DURATION FRAGMENT YAML-FAULTS...
refused() {
    local name=$1 dur=$2 frag=$3; shift 3
    local f=$T_TMP/$name.yaml
    { echo "${head/DUR/$dur}"; printf '%s\n' "$@"; } >"$f"
    set +e
    (cd "$T_TMP" && timeout -k 5 20 "$LS" run "$f" --quiet >"$f.out" 2>"$f.err")
    local rc=$?
    set -e
    check "$name: exit 2 (got $rc)" [ "$rc" -eq 2 ]
    check "$name: one line on stderr" [ "$(wc -l <"$f.err")" -eq 1 ]
    check "$name: says '$frag'" grep -qF -- "$frag" "$f.err"
    check "$name: nothing started (no run directory)" [ ! -e "$T_TMP/runs" ]
}

refused every-1ns 24h "1ns is shorter than 1ms, the shortest period of a latency fault" \
    'faults:' \
    '  - {kind: latency, target: node:0, delay: 1ms, at: 0, duration: 1ns, every: 1ns, count: 1000000000}'
refused every-2ms-24h 24h "starts 43200000 occurrences; a run starts at most 10000" \
    'faults:' '  - {kind: latency, target: node:0, delay: 1ms, at: 0, duration: 1ms, every: 2ms}'
refused two-faults 10s "starts 5000 occurrences, 10001 with the faults before it" \
    'faults:' '  - {kind: latency, target: node:0, delay: 1ms, at: 0, duration: 500us, every: 1ms, count: 5001}' \
    '  - {kind: latency, target: node:0, delay: 1ms, at: 5s, duration: 500us, every: 1ms}'
refused kill-10ms 20s "10ms is shorter than 50ms, the shortest period of a kill fault" \
    'faults:' '  - {kind: kill, target: worker:0, at: 0, duration: 1ms, every: 10ms}'
refused nemesis-over 10s "a run starts at most 10000 (use a longer interval)" \
    'faults:' '  - {kind: latency, target: node:0, delay: 1ms, at: 0, duration: 500us, every: 1ms}' \
    'nemesis: {kinds: [pause], interval: 100ms}'

# at the cap: 10,000 latency occurrences in 10 s
wl=$T_TMP/cap.yaml
{ echo "${head/DUR/10s}"; echo 'faults:'
  echo '  - {kind: latency, target: node:0, delay: 1ms, at: 0, duration: 500us, every: 1ms}'; } >"$wl"
check "at the cap: the workload loads" "$LS" validate "$wl" >/dev/null 2>&1
run_ls "$T_TMP/cap" "$wl"
check "at the cap: the run ends with a verdict (rc $RC)" [ "$RC" -le 1 -o "$RC" -eq 4 ]
n=$(grep -c . "$T_TMP/cap/faults.jsonl" || true)
check "at the cap: faults.jsonl has the 10,000 starts and ends ($n lines)" [ "$n" -le 20000 ]
fj=$(stat -c %s "$T_TMP/cap/faults.jsonl")
rj=$(stat -c %s "$T_TMP/cap/result.json")
echo "# at the cap: faults.jsonl $fj bytes, result.json $rj bytes"
check "faults.jsonl within 8 MB ($fj bytes)" [ "$fj" -le 8000000 ]
check "result.json within 12 MB ($rj bytes)" [ "$rj" -le 12000000 ]
t_no_leftovers "$T_TMP/cap"

echo "$T_PASS passed, $T_FAIL failed"
[ "$T_FAIL" -eq 0 ]
