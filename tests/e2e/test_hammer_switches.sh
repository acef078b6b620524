#!/usr/bin/env bash
# The two switches bench/ hammers with: workers.store: false (pure lock
# hammering: no protected-resource ops, nothing to lose) and cluster.proxy:
# false (workers dial the lock nodes directly: no proxy process, and link
# faults are refused at load time, before anything starts); true forces the
# proxy; auto (the default) starts it only for a workload that can need it
# (a link fault in faults or the nemesis, an adapter on protected nodes),
# and the run directory says which and why.
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
# nothing written to the storage: lost updates not measured (null), never 0
check "store off: plain_lost_updates is null, not 0" \
    [ "$(get "$d" checks.fencing.plain_lost_updates)" = null ]
check "store off: the fencing section says what was not measured" \
    sh -c "'$LS' get '$d' checks.fencing.not_measured | grep -q 'nothing was written'"
check "run.json has no proxy" grep -q '"proxy": null' "$d/run.json"
check "no proxy log" [ ! -e "$d/nodes/proxy.log" ]
check "the resolved workload echoes both switches" \
    grep -q "proxy: false" "$d/workload.yaml"
check "the resolved workload echoes store: false" grep -q "store: false" "$d/workload.yaml"
t_no_leftovers "$d"

# an explicit true forces the proxy on a workload without link faults
d2=$T_TMP/default
sed 's/proxy: false/proxy: true/; s/store: false/store: true/' "$T_TMP/hammer.yaml" >"$T_TMP/default.yaml"
run_ls "$d2" "$T_TMP/default.yaml"
check "proxy true run exits 0 (got $RC)" [ "$RC" -eq 0 ]
expect_val "$d2" counts.store_ops ">" 100
check "run.json names the proxy" grep -q '"log": "nodes/proxy.log"' "$d2/run.json"
check "proxy true: run.json's choice is the setting" \
    [ "$("$LS" get "$d2/run.json" proxy_choice.setting)/$("$LS" get "$d2/run.json" proxy_choice.proxy)" = true/true ]
t_no_leftovers "$d2"

# auto, no link fault: direct, and the run directory says so and why
d3=$T_TMP/auto-direct
sed 's/proxy: false/proxy: auto/' "$T_TMP/hammer.yaml" >"$T_TMP/auto.yaml"
run_ls "$d3" "$T_TMP/auto.yaml"
check "auto without link faults: exit 0 (got $RC)" [ "$RC" -eq 0 ]
check "auto without link faults: no proxy" grep -q '"proxy": null' "$d3/run.json"
check "auto without link faults: run.json's choice is false" \
    [ "$("$LS" get "$d3/run.json" proxy_choice.proxy)" = false ]
check "auto without link faults: workload.yaml says auto, false and why" \
    grep -q "proxy: auto  # resolved: false (no link fault" "$d3/workload.yaml"
"$LS" validate "$d3/workload.yaml" >"$T_TMP/echo.out" 2>&1 && rc=0 || rc=$?
check "the echoed workload loads again, still direct ($rc)" \
    bash -c '[ "$1" = 0 ] && grep -q "proxy: auto  # resolved: false" "$2"' _ "$rc" \
    "$T_TMP/echo.out"
t_no_leftovers "$d3"

# auto with a latency fault: through the proxy, and the fault takes effect
d4=$T_TMP/auto-proxy
cat >"$T_TMP/auto-latency.yaml" <<'YAML'
name: auto-latency
duration: 1500ms
lock: {impl: redis-single, ttl: 1s}
workers: {count: 2, resources: 1, hold: 5ms, think: 1ms}
faults:
  - {kind: latency, target: all-workers, delay: 20ms, at: 300ms, duration: 500ms}
YAML
run_ls "$d4" "$T_TMP/auto-latency.yaml"
check "auto with a latency fault: exit 0 (got $RC; $(tail -c 300 "$d4.stderr"))" [ "$RC" -eq 0 ]
check "auto with a latency fault: run.json names the proxy" \
    grep -q '"log": "nodes/proxy.log"' "$d4/run.json"
check "auto with a latency fault: the choice names the fault" \
    [ "$("$LS" get "$d4/run.json" proxy_choice.why)" = "faults[0] (latency) acts on proxy links" ]
check "auto with a latency fault: workload.yaml says true and why" \
    grep -q "proxy: auto  # resolved: true (faults\[0\] (latency)" "$d4/workload.yaml"
check "the latency rule was applied in the proxy" grep -q "applied" "$d4/nodes/proxy.log"
t_no_leftovers "$d4"

# auto with a partition only among the nemesis kinds: through the proxy
cat >"$T_TMP/auto-nemesis.yaml" <<'YAML'
name: auto-nemesis
duration: 2s
nemesis: {kinds: [pause, partition], interval: 500ms}
YAML
"$LS" validate "$T_TMP/auto-nemesis.yaml" >"$T_TMP/nem.out" 2>&1 && rc=0 || rc=$?
check "auto with a nemesis partition: proxy ($rc; $(head -c 200 "$T_TMP/nem.out"))" \
    bash -c '[ "$1" = 0 ] && grep -q "proxy: auto  # resolved: true (the nemesis draws partition" "$2"' _ \
    "$rc" "$T_TMP/nem.out"

# auto with an external adapter on password-protected nodes (no link fault):
# through the proxy, which authenticates for it; without a password: direct
ad=$WL/adapters/redlock-pause-short.yaml
"$LS" validate "$ad" >"$T_TMP/ad.out" 2>&1 && rc=0 || rc=$?
check "auto with an adapter on protected nodes: proxy ($rc)" \
    bash -c '[ "$1" = 0 ] && grep -q "proxy: auto  # resolved: true (an external adapter" "$2"' _ \
    "$rc" "$T_TMP/ad.out"
"$LS" validate "$ad" --set cluster.password=none >"$T_TMP/ad2.out" 2>&1 && rc=0 || rc=$?
check "auto with an adapter, no password: direct ($rc)" \
    bash -c '[ "$1" = 0 ] && grep -q "proxy: auto  # resolved: false" "$2"' _ "$rc" "$T_TMP/ad2.out"

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
