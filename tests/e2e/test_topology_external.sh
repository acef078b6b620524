#!/usr/bin/env bash
# cluster.topology external end to end: the test starts three redis-server
# nodes itself (as docker/compose.yaml would), leaves a stale grant with no
# TTL on one of them, and runs Redlock against them through cluster.addresses
# (one given by host name). The harness must clear the stale key, start only
# its own storage node, apply holder pauses and a proxy partition to the
# external nodes, leave the nodes running, and refuse at load time any fault
# that needs process control of a node. An unreachable address is exit 3.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/nodes.sh"

ports=()
for i in 0 1 2; do start_node "ext-$i"; ports+=("$PORT"); done
# a grant an earlier run left behind, with no TTL: it would block r0 forever
redis-cli -p "${ports[0]}" set lockstorm:r0 stale-grant >/dev/null
redis-cli -p "${ports[0]}" set unrelated:key keep >/dev/null

cat >"$T_TMP/ext.yaml" <<YAML
name: external-redlock
duration: 3s
cluster:
  topology: external
  addresses: ["127.0.0.1:${ports[0]}", "localhost:${ports[1]}", "127.0.0.1:${ports[2]}"]
lock:
  impl: redlock
  ttl: 300ms
  retry: {attempts: 100, delay: 5ms, jitter: 5ms}
  options: {node_timeout: 50ms}
workers: {count: 4, resources: 1, hold: {dist: uniform, min: 20ms, max: 60ms}, think: 5ms}
faults:
  - {kind: pause, target: holder, at: 500ms, duration: 600ms}
  - {kind: partition, nodes: [0], at: 1.5s, duration: 500ms}
expect:
  checks.mutex.by_class.lock_broken: 0
  checks.mutex.by_class.stale_holder: "> 0"
  counts.grants: ">= 20"
YAML

out=$("$LS" validate "$T_TMP/ext.yaml" 2>&1)
check "validate: nodes follow the addresses" grep -q "nodes: 3" <<<"$out"
check "validate: the addresses are echoed" grep -q "localhost:${ports[1]}" <<<"$out"

d=$T_TMP/run
run_ls "$d" "$T_TMP/ext.yaml"
check "external redlock meets its expectations (exit $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken == 0
expect_val "$d" counts.grants ">=" 20
check "the stale grant was cleared before the run" \
    [ "$(redis-cli -p "${ports[0]}" exists lockstorm:r0)" = 0 ]
check "keys outside lockstorm: were left alone" \
    [ "$(redis-cli -p "${ports[0]}" get unrelated:key)" = keep ]
check "only the storage node was started" [ -s "$d/nodes/storage.log" -a ! -e "$d/nodes/node-0.log" ]
starts=$(grep -c '"event":"start"' "$d/faults.jsonl" || true)
check "both faults started ($starts)" [ "$starts" -eq 2 ]
check "the partition dropped traffic to the external node" \
    grep -Eq '"dropped_to_node":[1-9]' "$d/faults.jsonl"
check "the pause acted on a worker" grep -q '"kind":"pause".*"worker":[0-9]' "$d/faults.jsonl"
for i in 0 1 2; do
    check "external node $i still runs and answers" \
        [ "$(redis-cli -p "${ports[$i]}" ping)" = PONG ]
done
check "lockstorm check agrees offline" "$LS" check "$d" --json -q >/dev/null
t_no_leftovers "$d"

# faults that need process control of a node are refused before anything starts
for f in '{kind: kill, target: "node:1", at: 1s}' '{kind: pause, target: "node:0", at: 1s}' \
         '{kind: stall, at: 1s}'; do
    set +e
    msg=$("$LS" validate "$T_TMP/ext.yaml" --set "faults[2]=$f" 2>&1 >/dev/null)
    rc=$?
    set -e
    kind=$(sed 's/.*kind: \([a-z]*\).*/\1/' <<<"$f")
    check "fault $kind on a node refused (exit $rc)" [ "$rc" -eq 2 ]
    check "refusal says why: $kind" \
        grep -q "fault kind '$kind' needs cluster control; not available with topology external" <<<"$msg"
done
set +e
msg=$("$LS" validate "$T_TMP/ext.yaml" --set 'nemesis={kinds: [kill, pause, partition]}' 2>&1)
rc=$?
set -e
check "a nemesis of kill/pause/partition targets workers and links only (exit $rc)" [ "$rc" -eq 0 ]
check "no node target drawn for the nemesis" bash -c '! grep -q "node:" <<<"$1"' _ "$msg"
set +e
msg=$("$LS" validate "$T_TMP/ext.yaml" --set 'cluster.addresses=[]' 2>&1)
rc=$?
set -e
check "external without addresses refused (exit $rc)" [ "$rc" -eq 2 ]
check "it says what to write" grep -q "topology external needs the host:port" <<<"$msg"

# a node nobody listens on: environment error, the storage node stopped again
d=$T_TMP/unreachable
freeport=${ports[2]}
kill "${NODE_PIDS[2]}"; wait "${NODE_PIDS[2]}" 2>/dev/null || true
run_ls "$d" "$T_TMP/ext.yaml" --set faults=[]
check "an unreachable node is exit 3 (got $RC)" [ "$RC" -eq 3 ]
check "the error names the node and address" \
    grep -q "node 2 (127.0.0.1:$freeport" "$d.stderr"
t_no_leftovers "$d"

t_finish
