#!/usr/bin/env bash
# Command load per grant (docs/checkers.md "commands"): redlock-universal
# 0.8.5 with a TTL of 1 s runs its extension loop back to back through 2 s
# holds. The bundled workload that states it (>= 1000 lock commands per
# grant) passes; the gate a user writes (check.max_commands_per_grant 50
# and an expectation <= 50) FAILS on it, with the commands checker invalid
# (the negative control, caught); the same library with a TTL of 2 s
# passes the gate. `lockstorm check DIR` gives the same figure from the run
# directory alone. A node restarted by a fault leaves the figure not
# measured (a lower bound), and an expectation on it unmet with why. The
# first sample is the counters at go: no command of a counted grant is
# missed (a sample taken after go missed the first grants' commands).
# Fails (never skips) when the adapters' packages are not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"

need_adapters || t_finish
cd "$SRC" # the adapters' commands are relative to the source tree

# the bug, as the bundled workload states it
bug=$T_TMP/bug
run_ls "$bug" "$WL/adapters/redlock-universal-load.yaml"
check "redlock-universal-load meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
check "commands.json is in the run directory" [ -s "$bug/commands.json" ]
expect_val "$bug" checks.commands.per_grant ">=" 1000
expect_val "$bug" checks.commands.by_type.evalsha ">" 1000
expect_val "$bug" checks.commands.per_node.0.per_s ">" 500
expect_val "$bug" checks.commands.other_commands ">" 0
check "the text summary shows the figure" grep -q "commands  valid .*per_grant=" "$bug/summary.txt"
check "JUnit shows it" grep -q "commands: valid: per_grant=" "$bug/junit.xml"
check "the HTML report shows it" grep -q "per_grant <b>" "$bug/report.html"

# lockstorm check reproduces the figure from the directory alone
want=$(get "$bug" checks.commands.per_grant)
set +e
"$LS" check "$bug" >"$T_TMP/check.txt" 2>&1
crc=$?
set -e
check "lockstorm check passes the same run (exit $crc)" [ "$crc" -eq 0 ]
check "lockstorm check prints per_grant=$want" grep -q "per_grant=$want " "$T_TMP/check.txt"

# the gate a user writes fails on this library
gate=$T_TMP/gate
run_ls "$gate" "$WL/gates/redlock-universal-load-gate.yaml"
check "the gate fails (exit $RC, wanted 1)" [ "$RC" -eq 1 ]
check "the commands checker is invalid" [ "$(get "$gate" checks.commands.verdict)" = invalid ]
check "the expectation on per_grant is unmet" [ "$(get "$gate" expectations.0.ok)" = false ]
expect_val "$gate" checks.commands.per_grant ">" 50
check "the verdict line says FAIL" grep -q "^lockstorm: FAIL workload=redlock-universal-load-gate" \
    "$gate.stdout"

# the same library where its loop behaves passes the same gate
clean=$T_TMP/clean
run_ls "$clean" "$WL/adapters/redlock-universal-load-ttl2s.yaml"
check "redlock-universal with TTL 2 s passes the gate (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$clean" checks.commands.per_grant "<=" 50
check "its commands checker is valid" [ "$(get "$clean" checks.commands.verdict)" = valid ]

# a node restarted mid-run: its counters start again, the figure is a lower bound
cat >"$T_TMP/restart.yaml" <<'EOF'
name: command-load-restart
seed: 5
duration: 3s
cluster: {nodes: 1, persistence: none}
lock: {impl: redis-single, ttl: 500ms, retry: {attempts: 1000, delay: 5ms, jitter: 5ms}}
workers: {count: 2, resources: 1, hold: 50ms, think: 5ms}
faults:
  - {kind: kill, target: "node:0", at: 1s, restart: 0}
check: {max_commands_per_grant: 1000}
expect:
  checks.commands.per_grant: "<= 1000"
EOF
rs=$T_TMP/restart
run_ls "$rs" "$T_TMP/restart.yaml"
check "an expectation on a figure not measured fails (exit $RC, wanted 1)" [ "$RC" -eq 1 ]
check "per_grant is null" [ "$(get "$rs" checks.commands.per_grant)" = null ]
expect_val "$rs" checks.commands.per_grant_at_least ">" 0
check "the node's reset is recorded" [ "$(get "$rs" checks.commands.per_node.0.reset)" = true ]
check "the checker cannot decide under the limit" [ "$(get "$rs" checks.commands.verdict)" = unknown ]
why=$(get "$rs" expectations.0.why)
check "the expectation says not measured and why ($why)" \
    bash -c '[[ "$1" == "not measured: "*restarted* ]]' _ "$why"

# one worker, no contention, no think: each grant of redis-single is 6 lock
# commands (measured: exactly 6 * grants in every run), the first ones
# sent the instant go is given. A first sample taken after go missed them
# (seen: 18393 lock commands for 3067 grants, 17589 for 2932).
cat >"$T_TMP/go.yaml" <<'EOF'
name: command-load-from-go
seed: 3
duration: 1s
cluster: {nodes: 1, persistence: none}
lock: {impl: redis-single, ttl: 1s, retry: {attempts: 1000, delay: 5ms, jitter: 1ms}}
workers: {count: 1, resources: 1, hold: 0ms, think: 0ms}
EOF
go=$T_TMP/go
run_ls "$go" "$T_TMP/go.yaml"
check "command-load-from-go: exit 0 ($RC)" [ "$RC" -eq 0 ]
lk=$(get "$go" checks.commands.lock_commands)
ng=$(get "$go" counts.grants)
check "no lock command of a counted grant is missed: $lk lock commands for $ng grants (6 each)" \
    [ "$ng" -gt 0 -a "$lk" -eq $((6 * ng)) ]

t_finish
