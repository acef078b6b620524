#!/usr/bin/env bash
# Named resources and lock.key_prefix (docs/workload-reference.md,
# docs/workloads.md "Resources and keys"): workers.resources as a list of
# names, on a redis-server the test starts itself (topology external, a
# keyspace shared with other keys). The lock keys and fence counters are
# PREFIX+NAME and PREFIX+fence:NAME (seen with SCAN on the node), no
# lockstorm:* key is made, other keys are left alone; the names are in the
# story, the text and Markdown summaries, result.json, run.json, faults.jsonl and the
# resolved workload.yaml, and `lockstorm check` of the run directory shows
# them again. A Node adapter gets PREFIX+NAME as its `res`. The bad inputs
# (duplicates, empty names, too many, characters a key part cannot have) are
# in tests/bad-input/ (test_bad_input.sh: FILE:LINE:COL, exit 2, nothing runs).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nodes.sh"

start_node shared
port=$PORT
redis-cli -p "$port" set other:team:key keep >/dev/null
redis-cli -p "$port" set ci:t1:invoice-42 stale-grant-of-an-earlier-run >/dev/null

cat >"$T_TMP/named.yaml" <<YAML
name: named-stolen
seed: 11
duration: 2500ms
cluster: {topology: external, addresses: ["127.0.0.1:$port"]}
lock:
  impl: naive-del
  ttl: 200ms
  key_prefix: "ci:t1:"
  retry: {attempts: 100, delay: 5ms, jitter: 5ms}
workers:
  count: 4
  resources: [invoice-42, invoice-43]
  hold: {dist: uniform, min: 30ms, max: 80ms}
  think: 2ms
faults:
  - {kind: pause, target: holder, at: 400ms, duration: 400ms, every: 800ms}
expect:
  checks.mutex.violations: "> 0"
YAML

d=$T_TMP/run
run_ls "$d" "$T_TMP/named.yaml"
check "the negative control ran and broke (exit $RC; $(tail -n 1 "$d.stdout"))" [ "$RC" -eq 0 ]
keys=$(redis-cli -p "$port" --scan --pattern '*' | sort | tr '\n' ' ')
check "fence counters under the prefix and the names ($keys)" \
    bash -c 'grep -q "ci:t1:fence:invoice-42 " <<<"$1" && grep -q "ci:t1:fence:invoice-43 " <<<"$1"' _ "$keys"
check "no lockstorm:* key on the node" bash -c '! grep -q "lockstorm:" <<<"$1"' _ "$keys"
check "other keys were left alone" [ "$(redis-cli -p "$port" get other:team:key)" = keep ]
check "the stale grant under the prefix was cleared before the run" \
    bash -c '[ "$(redis-cli -p "$1" get ci:t1:invoice-42)" != stale-grant-of-an-earlier-run ]' _ "$port"
check "the story names the resource" grep -qE "w[0-9]+ acquires invoice-4[23] " "$d/summary.txt"
check "the incidents table names it" grep -qE '^  #[0-9]+ invoice-4[23] ' "$d/summary.txt"
check "summary.md names it" grep -q "invoice-4[23]" "$d/summary.md"
check "the header lists the names" grep -q "resources 2 (invoice-42, invoice-43)" "$d/summary.txt"
check "the verdict line keeps resources=N" grep -q "resources=2 " "$d.stdout"
check "the pause's record in faults.jsonl names the resource it held" \
    grep -qE '"(held|acquiring)_resource":"invoice-4[23]"' "$d/faults.jsonl"
check "result.json: violations name the resource" \
    bash -c '"$1" get "$2" "violations[0].resource" | grep -qE "^invoice-4[23]$"' _ "$LS" "$d"
check "run.json: the resource names and the key prefix" \
    [ "$("$LS" get "$d/run.json" 'resources[1]')" = invoice-43 -a "$("$LS" get "$d/run.json" key_prefix)" = ci:t1: ]
check "workload.yaml: the names and the prefix" \
    bash -c 'grep -q "resources: \[\"invoice-42\", \"invoice-43\"\]" "$1" && grep -q "key_prefix: \"ci:t1:\"" "$1"' _ "$d/workload.yaml"
"$LS" check "$d" >"$T_TMP/check.out" 2>&1 || true
check "lockstorm check of the run directory names them again" \
    grep -qE '^  #[0-9]+ invoice-4[23] ' "$T_TMP/check.out"
check "... and no r0/r1" bash -c '! grep -qE "(^| )r[01] " "$1"' _ "$T_TMP/check.out"
t_no_leftovers "$d"

# the default is what it was: lockstorm:r0 (a run on the same node, no prefix, no names)
sed -e '/key_prefix/d' -e 's/resources: \[invoice-42, invoice-43\]/resources: 1/' \
    -e 's/"> 0"/">= 0"/' "$T_TMP/named.yaml" >"$T_TMP/plain.yaml"
d2=$T_TMP/plain
run_ls "$d2" "$T_TMP/plain.yaml" --set duration=1s
check "default keys run (exit $RC)" [ "$RC" -le 1 ]
check "default fence key lockstorm:fence:r0" [ "$(redis-cli -p "$port" exists lockstorm:fence:r0)" = 1 ]
t_no_leftovers "$d2"

# an adapter gets PREFIX+NAME as res (docs/protocol.md): the Node ioredis adapter, when installed
if [ -d "$SRC/adapters/node/node_modules/ioredis" ] && command -v node >/dev/null; then
    redis-cli -p "$port" del ci:t1:fence:invoice-42 ci:t1:fence:invoice-43 >/dev/null
    cat >"$T_TMP/adapter.yaml" <<YAML
name: named-adapter
duration: 1500ms
cluster: {topology: external, addresses: ["127.0.0.1:$port"]}
lock:
  impl: external
  ttl: 500ms
  key_prefix: "ci:t2:"
  options: {command: [node, "$SRC/adapters/node/ioredis-handrolled.js"]}
workers: {count: 2, resources: [job-a], hold: 10ms, think: 5ms}
YAML
    redis-cli -p "$port" config set notify-keyspace-events KEA >/dev/null
    d3=$T_TMP/adapter
    (timeout 20 redis-cli -p "$port" psubscribe '__keyspace@0__:ci:t2:*' >"$T_TMP/events.txt" 2>&1 &
     echo $! >"$T_TMP/sub.pid"; wait) &
    wait_for 5 test -s "$T_TMP/sub.pid"
    run_ls "$d3" "$T_TMP/adapter.yaml"
    t_kill TERM "$(cat "$T_TMP/sub.pid")" timeout
    check "the adapter run passed (exit $RC)" [ "$RC" -eq 0 ]
    check "the adapter's lock key was PREFIX+NAME (keyspace events)" \
        grep -q "__keyspace@0__:ci:t2:job-a" "$T_TMP/events.txt"
    t_no_leftovers "$d3"
else
    echo "# adapters/node not installed: the adapter case is skipped (scripts/install-adapters.sh)"
fi
t_finish
