#!/usr/bin/env bash
# The random nemesis, replay, the quiet tail and the final heal, end to end
# against real redis-server nodes and workers: the same seed draws the same
# schedule twice, another seed another one, `run --replay` reproduces a
# recorded schedule under another seed, no fault starts in the quiet tail,
# a 60 s pause in a 3 s run is healed at the end (the paused worker runs
# again and exits by itself), and the per-window numbers add up.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

wl=$T_TMP/nem.yaml
cat >"$wl" <<'EOF'
name: nem
seed: 5
duration: 3s
quiet_tail: 1s
cluster: {nodes: 1}
lock: {impl: redis-single, ttl: 300ms}
workers: {count: 4, resources: 2, hold: {dist: uniform, min: 10ms, max: 40ms}}
nemesis:
  kinds: [pause]
  interval: 250ms
  duration: {min: 50ms, max: 200ms}
  start: 200ms
  targets:
    pause: [holder, random-worker, node:0]
EOF

# schedule RUN_DIR: one line per scheduled occurrence: kind, target as
# written, planned start (not the victim, not the actual time)
schedule() {
    grep -E '"event":"(start|skipped|failed)"' "$1/faults.jsonl" |
        sed -E 's/.*"kind":"([^"]*)".*"target":"([^"]*)".*"planned_ns":([0-9]+).*/\1 \2 \3/'
}

a=$T_TMP/a b=$T_TMP/b c=$T_TMP/c r=$T_TMP/r
run_ls "$a" "$wl"
check "first run finished (exit $RC)" [ "$RC" -eq 0 -o "$RC" -eq 1 ]
run_ls "$b" "$wl"
check "second run finished (exit $RC)" [ "$RC" -eq 0 -o "$RC" -eq 1 ]
na=$(schedule "$a" | wc -l)
check "the nemesis drew several faults ($na)" [ "$na" -ge 4 ]
check "every scheduled line is a nemesis one" \
    [ "$(grep -c '"source":"nemesis"' "$a/faults.jsonl")" -eq "$na" ]
check "same seed: same faults.jsonl schedule" diff <(schedule "$a") <(schedule "$b")
check "same seed: same nemesis.yaml" cmp -s "$a/nemesis.yaml" "$b/nemesis.yaml"
check "nemesis.yaml lists the drawn faults" [ "$(grep -c '^  - kind: pause' "$a/nemesis.yaml")" -eq "$na" ]
check "resolved workload keeps the nemesis section" grep -q '^nemesis:$' "$a/workload.yaml"

run_ls "$c" "$wl" --seed 6
differ() { ! cmp -s "$1" "$2"; }
check "another seed: another schedule" differ <(schedule "$a") <(schedule "$c")

set +e
"$LS" run --replay "$a" --seed 6 --out "$r" --quiet >"$r.stdout" 2>"$r.stderr"
RC=$?
set -e
check "replay finished (exit $RC)" [ "$RC" -eq 0 -o "$RC" -eq 1 ]
check "replay ran with the new seed" grep -q '^seed: 6$' "$r/workload.yaml"
check "replay under another seed: the recorded schedule" diff <(schedule "$a") <(schedule "$r")
check "replay records where its schedule came from" \
    grep -q "^# nemesis schedule replayed from $a/nemesis.yaml" "$r/nemesis.yaml"
set +e
"$LS" run --replay "$T_TMP/nowhere" --out "$T_TMP/x" --quiet >/dev/null 2>&1
rc=$?
"$LS" run "$wl" --replay "$a" --out "$T_TMP/y" --quiet >/dev/null 2>&1
rc2=$?
set -e
check "replay of a missing run dir is a usage error ($rc)" [ "$rc" -eq 2 ]
check "replay with a WORKLOAD too is a usage error ($rc2)" [ "$rc2" -eq 2 ]

# quiet tail: nothing planned or started at or after 2 s; all healed by then
tail_ns=2000000000
late=$(schedule "$a" | awk -v t=$tail_ns '$3 >= t' | wc -l)
check "no occurrence planned in the quiet tail" [ "$late" -eq 0 ]
late=$(grep '"event":"start"' "$a/faults.jsonl" |
    sed -E 's/.*"t_ns":([0-9]+).*/\1/' | awk -v t=$tail_ns '$1 >= t' | wc -l)
check "no fault started in the quiet tail" [ "$late" -eq 0 ]
starts=$(grep -c '"event":"start"' "$a/faults.jsonl" || true)
ends=$(grep -c '"event":"end"' "$a/faults.jsonl" || true)
check "every start has an end ($starts/$ends)" [ "$starts" -ge 1 -a "$starts" -eq "$ends" ]
late_end=$(grep '"event":"end"' "$a/faults.jsonl" |
    sed -E 's/.*"t_ns":([0-9]+).*/\1/' | awk -v t=$((tail_ns + 100000000)) '$1 > t' | wc -l)
check "every fault ended by the start of the quiet tail" [ "$late_end" -eq 0 ]

# per-window numbers: one window per start, consistent with the totals
nw=0 sumg=0
while [ "$(get "$a" "fault_windows.$nw.grants")" != null ]; do
    sumg=$((sumg + $(get "$a" "fault_windows.$nw.grants")))
    nw=$((nw + 1))
done
total=$(get "$a" counts.grants)
check "one fault window per started fault ($nw)" [ "$nw" -eq "$starts" ]
check "window grants ($sumg) <= total grants ($total)" [ "$sumg" -le "$total" ]
check "fault + no_fault grants = total grants" \
    [ $(( $(get "$a" phases.fault.grants) + $(get "$a" phases.no_fault.grants) )) -eq "$total" ]
expect_val "$a" phases.quiet_tail.start_ms == 2000
expect_val "$a" phases.quiet_tail.grants ">" 0
check "the window table is in the summary" grep -q '^fault windows: ' "$a/summary.txt"
for d in "$a" "$b" "$c" "$r"; do t_no_leftovers "$d"; done

# the final heal: 60 s pauses of a holder and of the node in a 3 s run
h=$T_TMP/heal
cat >"$T_TMP/heal.yaml" <<'EOF'
name: heal
duration: 3s
cluster: {nodes: 1}
lock: {impl: redis-single, ttl: 300ms}
workers: {count: 3, resources: 1}
faults:
  - {kind: pause, target: holder, at: 1s, duration: 60s}
  - {kind: pause, target: node:0, at: 1.5s, duration: 60s}
expect: {checks.mutex.by_class.lock_broken: 0}  # the paused holder overstays: stale-holder
EOF
t0=$(date +%s%N)
run_ls "$h" "$T_TMP/heal.yaml"
el=$(( ($(date +%s%N) - t0) / 1000000 ))
check "a 3 s run with 60 s pauses ends promptly (${el} ms, exit $RC)" [ "$el" -lt 15000 -a "$RC" -eq 0 ]
check "both pauses started" [ "$(grep -c '"event":"start"' "$h/faults.jsonl")" -eq 2 ]
check "both pauses ended by the final heal" \
    [ "$(grep '"event":"end"' "$h/faults.jsonl" | grep -c 'final heal')" -eq 2 ]
start0=$(grep '"event":"start"' "$h/faults.jsonl" | grep '"id":0,')
pw=$(echo "$start0" | sed -E 's/.*"worker":([0-9]+).*/\1/')
p_start=$(echo "$start0" | sed -E 's/.*"t_ns":([0-9]+).*/\1/')
p_end=$(grep '"event":"end"' "$h/faults.jsonl" | grep '"id":0,' | sed -E 's/.*"t_ns":([0-9]+).*/\1/')
check "the holder pause ended at the run end (${p_end} ns)" \
    [ "$p_end" -ge 3000000000 -a "$p_end" -lt 5000000000 ]
# the pause took effect: the paused holder logged nothing while paused ...
"$LS" log export "$h" >"$h.events"
times_of() { grep "\"w\":$pw," "$h.events" | sed -E 's/.*"t":([0-9]+).*/\1/'; }
during=$(times_of | awk -v s=$((p_start + 5000000)) -v e=$((p_end - 5000000)) '$1 > s && $1 < e' | wc -l)
check "worker $pw was really stopped (no event inside its pause)" [ "$during" -eq 0 ]
# ... and the heal continued it: it finished the hold it was paused in right
# away (without the heal it would stay stopped until the harness SIGTERMs
# it, seconds later)
# the smallest by awk, not `sort | head -n1`: head leaving early would kill
# sort by SIGPIPE and, under pipefail and set -e, this test with it
first_after=$(times_of | awk -v e="$p_end" '$1 >= e && (m == "" || $1 < m) { m = $1 } END { if (m != "") print m }')
check "worker $pw ran again right after the heal (${first_after:-never} ns)" \
    [ "${first_after:-999999999999}" -lt $((p_end + 1000000000)) ]
check "no worker had to be killed (none left stopped)" \
    [ "$(grep -c '"killed_by_harness": true' "$h/run.json" || true)" -eq 0 ]
expect_val "$h" counts.crashes == 0
t_no_leftovers "$h"
t_finish
