#!/usr/bin/env bash
# Link faults through lockstorm's proxy, end to end: the bundled workloads
# under workloads/faults/ (latency, partition blackhole / hold / reset,
# bandwidth, slicer, Redlock minority partition) each meet their `expect:`,
# plus checks that each fault really did something (window numbers against
# the fault-free phase, faults.jsonl says what the proxy acknowledged), that
# no worker entered without a grant, that a partition of one worker leaves
# the others working, and that no process (proxy included) remains.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FW=$WL/faults

# no_enter_without_grant DIR: every enter follows an acquire_ok of its
# worker (the last acquire outcome before it).
no_enter_without_grant() {
    "$LS" log export "$1" | awk '
        /"type":"acquire_(ok|busy|fail|unknown)"/ { match($0, /"w":[0-9]+/); w = substr($0, RSTART + 4, RLENGTH - 4)
            last[w] = ($0 ~ /"type":"acquire_ok"/) }
        /"type":"enter"/ { match($0, /"w":[0-9]+/); w = substr($0, RSTART + 4, RLENGTH - 4)
            if (!last[w]) bad++; last[w] = 0 }
        END { exit bad > 0 }'
}

# proxy_gone DIR: the proxy pid recorded in run.json is no longer running
proxy_gone() {
    local pid
    pid=$(sed -n '/"proxy": {/,/}/s/.*"pid": \([0-9]*\).*/\1/p' "$1/run.json")
    [ -n "$pid" ] && [ ! -e "/proc/$pid" ]
}

# --- latency: p50 up by about the delay inside the window, not outside ---
d=$T_TMP/latency
run_ls "$d" "$FW/latency.yaml"
check "latency meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
win=$(get "$d" 'fault_windows[0].acquire_p50_ms')
out=$(get "$d" 'phases.no_fault.acquire_p50_ms')
check "latency window acquire p50 $win ms is delay 40 ms + up to jitter (<= 120)" \
    sh -c "awk -v a='$win' 'BEGIN { exit !(a >= 38 && a <= 120) }'"
check "outside the window acquire p50 $out ms stays low" num_cmp "$out" "<" 10
check "the proxy acknowledged the latency rule" grep -q '"proxy_generation":1' "$d/faults.jsonl"
check "proxy log records the rule" grep -q 'generation 1 applied: 4 link directions' "$d/nodes/proxy.log"
check "proxy pid in run.json is gone" proxy_gone "$d"
t_no_leftovers "$d"

# --- partition (blackhole) of the only node ---
d=$T_TMP/partition
run_ls "$d" "$FW/partition.yaml"
check "partition meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
unk=$(get "$d" 'fault_windows[0].unknown')
fl=$(get "$d" 'fault_windows[0].failed')
check "blackholed acquires end unknown ($unk) or failed ($fl)" [ $((unk + fl)) -gt 0 ]
check "no grant inside the blackhole (edges aside)" num_cmp "$(get "$d" 'fault_windows[0].grants')" "<=" 4
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" phases.no_fault.grants ">" 50
check "no enter without a grant" no_enter_without_grant "$d"
dr=$(sed -n 's/.*"event":"end".*"dropped_to_node":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
check "the blackhole dropped requests (${dr:-none} bytes)" [ "${dr:-0}" -gt 0 ]
check "faults.jsonl names every worker's link to node 0" \
    grep -q '"target":"isolate:node:0".*"links":\[\[0,0\],\[1,0\],\[2,0\],\[3,0\],\[4,0\],\[5,0\]\]' "$d/faults.jsonl"
t_no_leftovers "$d"

# --- hold: requests delivered late, late grants expire by TTL ---
d=$T_TMP/hold
run_ls "$d" "$FW/partition-hold.yaml"
check "partition-hold meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
check "no enter without a grant (hold)" no_enter_without_grant "$d"
t_no_leftovers "$d"

# --- reset: connections reset and refused, then working again ---
d=$T_TMP/reset
run_ls "$d" "$FW/partition-reset.yaml"
check "partition-reset meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
n=$(sed -n '/"event":"start"/s/.*"connections_reset":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
m=$(sed -n '/"event":"end"/s/.*"connections_reset":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
check "new connections were reset during the window (${m:-none})" [ "${m:-0}" -gt 10 ]
check "the reset closed the open connections (${n:-none})" [ "${n:-0}" -ge 4 ]
check "acquires inside the reset window failed" \
    num_cmp "$(get "$d" 'fault_windows[0].failed')" ">" 10
expect_val "$d" checks.mutex.violations == 0
check "no enter without a grant (reset)" no_enter_without_grant "$d"
t_no_leftovers "$d"

# --- bandwidth and slicer ---
d=$T_TMP/bandwidth
run_ls "$d" "$FW/bandwidth.yaml"
check "bandwidth meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
t_no_leftovers "$d"
d=$T_TMP/slicer
run_ls "$d" "$FW/slicer.yaml"
check "slicer meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
# the end line says what crossed the links: size 1 means one write per byte
bt=$(sed -n 's/.*"event":"end".*"bytes_to_node":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
wt=$(sed -n 's/.*"event":"end".*"writes_to_node":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
bf=$(sed -n 's/.*"event":"end".*"bytes_from_node":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
wf=$(sed -n 's/.*"event":"end".*"writes_from_node":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
check "slicer wrote byte by byte: to-node $bt bytes in $wt writes, from-node $bf in $wf" \
    [ "${bt:-0}" -gt 1000 -a "${wt:-0}" -eq "${bt:-0}" -a "${bf:-0}" -gt 100 -a "${wf:-0}" -eq "${bf:-0}" ]
t_no_leftovers "$d"

# --- Redlock with a drawn minority cut off ---
d=$T_TMP/minority
run_ls "$d" "$FW/partition-minority.yaml"
check "partition-minority meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
check "minority partitions recorded the nodes drawn" \
    sh -c "[ \$(grep -c '\"nodes_drawn\":\[[0-9],[0-9]\]' '$d/faults.jsonl') -eq 3 ]"
t_no_leftovers "$d"

# --- one worker cut from the node: the others keep working ---
cat >"$T_TMP/one.yaml" <<'EOF'
name: one-worker-cut
duration: 4s
lock: {impl: redis-single, ttl: 500ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}}
workers: {count: 3, resources: 3, hold: 5ms, think: 5ms}
faults:
  - {kind: partition, workers: [0], nodes: [0], mode: blackhole, at: 1s, duration: 2s}
EOF
d=$T_TMP/one
run_ls "$d" "$T_TMP/one.yaml"
check "one-worker partition run ends normally (exit $RC)" [ "$RC" -eq 0 ]
start=$(sed -n 's/.*"event":"start","t_ns":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
end=$(sed -n 's/.*"event":"end","t_ns":\([0-9]*\).*/\1/p' "$d/faults.jsonl")
grants_in() {
    "$LS" log export "$d" | awk -v s="$start" -v e="$end" -v w="$1" '
        /"type":"acquire_ok"/ && $0 ~ "\"w\":" w "," { match($0, /"t":[0-9]+/); t = substr($0, RSTART + 4, RLENGTH - 4) + 0
            if (t > s + 250000000 && t < e) n++ } END { print n + 0 }'
}
g0=$(grants_in 0); g1=$(grants_in 1); g2=$(grants_in 2)
check "worker 0 got no grant while cut off ($g0)" [ "$g0" -eq 0 ]
check "workers 1 and 2 kept getting grants ($g1, $g2)" [ "$g1" -gt 10 -a "$g2" -gt 10 ]
check "faults.jsonl names worker 0 and node 0" grep -q '"worker":0,"node":0' "$d/faults.jsonl"
t_no_leftovers "$d"

# --- the proxy dies with the harness (PR_SET_PDEATHSIG), even on SIGKILL ---
d=$T_TMP/killed
"$LS" run "$FW/latency.yaml" --out "$d" --quiet --set duration=30s >/dev/null 2>&1 &
hpid=$!
proxy_pid_of() { sed -n '/"proxy": {/,/}/s/.*"pid": \([0-9]*\).*/\1/p' "$d/run.json" 2>/dev/null; }
has_proxy_pid() { [ -n "$(proxy_pid_of)" ]; }
if wait_for 20 has_proxy_pid; then
    ppid=$(proxy_pid_of)
    check "proxy $ppid runs during the run" [ -e "/proc/$ppid" ]
    kill -KILL "$hpid"
    wait "$hpid" 2>/dev/null || true
    proxy_dead() { [ ! -e "/proc/$ppid" ] || grep -q '^State:.*Z' "/proc/$ppid/status" 2>/dev/null; }
    check "proxy $ppid died with the SIGKILLed harness" wait_for 5 proxy_dead
else
    fail "run.json never named a proxy pid"
    t_kill KILL "$hpid"
fi
t_no_leftovers "$d"

t_finish
