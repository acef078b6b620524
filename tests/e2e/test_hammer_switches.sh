#!/usr/bin/env bash
# The two switches bench/ hammers with: workers.store: false (pure lock
# hammering: no protected-resource ops, nothing to lose) and cluster.proxy:
# false (workers dial the lock nodes directly: no proxy process, and link
# faults are refused at load time, before anything starts).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

d=$T_TMP/hammer
cat >"$T_TMP/hammer.yaml" <<'YAML'
name: hammer
duration: 1s
cluster: {proxy: false}
lock: {impl: redis-single, ttl: 1s, retry: {attempts: 1, delay: 0, jitter: 0}}
workers: {count: 4, resources: 4, hold: 0, think: 0, store: false}
YAML
run_ls "$d" "$T_TMP/hammer.yaml"
check "run exits 0 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 0 ]
expect_val "$d" counts.grants ">" 100
expect_val "$d" counts.store_ops == 0
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" checks.fencing.plain_lost_updates == 0
check "run.json has no proxy" grep -q '"proxy": null' "$d/run.json"
check "no proxy log" [ ! -e "$d/nodes/proxy.log" ]
check "the resolved workload echoes both switches" \
    grep -q "proxy: false" "$d/workload.yaml"
check "the resolved workload echoes store: false" grep -q "store: false" "$d/workload.yaml"
t_no_leftovers "$d"

# the defaults: through the proxy, with the store ops
d2=$T_TMP/default
sed 's/proxy: false/proxy: true/; s/store: false/store: true/' "$T_TMP/hammer.yaml" >"$T_TMP/default.yaml"
run_ls "$d2" "$T_TMP/default.yaml"
check "default run exits 0 (got $RC)" [ "$RC" -eq 0 ]
expect_val "$d2" counts.store_ops ">" 100
check "run.json names the proxy" grep -q '"log": "nodes/proxy.log"' "$d2/run.json"
t_no_leftovers "$d2"

# a link fault needs the proxy: refused before anything starts (exit 2)
cat >"$T_TMP/linkfault.yaml" <<'YAML'
name: linkfault
duration: 1s
cluster: {proxy: false}
faults:
  - {kind: latency, target: holder, delay: 10ms, at: 200ms, duration: 200ms}
YAML
set +e
"$LS" run "$T_TMP/linkfault.yaml" --out "$T_TMP/lf" --quiet >"$T_TMP/lf.stdout" 2>"$T_TMP/lf.stderr"
rc=$?
set -e
check "link fault without proxy: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "the error names cluster.proxy" grep -q "needs cluster.proxy: true" "$T_TMP/lf.stderr"
check "nothing was started" [ ! -e "$T_TMP/lf/run.json" ]

t_finish
