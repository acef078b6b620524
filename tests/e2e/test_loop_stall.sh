#!/usr/bin/env bash
# The loop_stall fault and the `renewed` event (docs/protocol.md extensions
# stall and renewed) against the real Node and Python adapters:
# redis-semaphore's holder stalled past its TTL shows stale-holder (its
# bundled workload's expectations hold), faults.jsonl records the stall the
# adapter measured, and the library's own refreshes are in the event log as
# renew_ok records with no renew_invoke before them (what `renewed` events
# become), each valid for at most the TTL from when it was read; the same
# stall with a margin that covers it stays clean; the Python adapter stalls
# too; an adapter without the extension is recorded as a failed occurrence
# that did not bite (the run goes on, and with nothing else bitten its
# verdict is unknown, exit 4); a built-in lock is refused at load; a
# stalling worker killed and restarted leaves its request answered as
# dropped, at once. Bounded: about 60 s. Fails (never skips) when the
# adapters' packages are not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"

# a built-in lock has no event loop to block: refused at load, exit 2, one line
cat >"$T_TMP/builtin.yaml" <<'YAML'
name: stall-builtin
duration: 2s
lock: {impl: redis-single, ttl: 500ms}
faults:
  - {kind: loop_stall, target: holder, at: 1s, duration: 300ms}
YAML
set +e
"$LS" validate "$T_TMP/builtin.yaml" >"$T_TMP/builtin.out" 2>&1
rc=$?
set -e
check "loop_stall on a built-in lock: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "the refusal names the place and the reason ($(head -c 300 "$T_TMP/builtin.out"))" \
    grep -q "builtin.yaml:5:.*loop_stall.*has none" "$T_TMP/builtin.out"

need_adapters || t_finish
cd "$SRC" # the adapters' commands are relative to the source tree

# redis-semaphore, TTL 500 ms, holder stalled 900 ms (and paused 900 ms)
d=$T_TMP/stall
run_ls "$d" "$WL/adapters/redis-semaphore-stall.yaml"
check "redis-semaphore stalled: its expectations hold (exit $RC; $(tail -c 300 "$d.stderr"))" \
    [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d" fault_windows.0.violations ">" 0
expect_val "$d" adapter.stalls == 1
end=$(grep '"event":"end"' "$d/faults.jsonl" | head -1)
ms=$(printf '%s' "$end" | sed -n 's/.*"stalled_ms":\([0-9.]*\).*/\1/p')
check "faults.jsonl: the stall happened ($end)" grep -q '"stalled":true' <<<"$end"
check "faults.jsonl: stalled_ms $ms is the stall's 900 ms or a little more" \
    awk -v m="${ms:-0}" 'BEGIN { exit !(m >= 895 && m < 1900) }'
"$LS" log export "$d" >"$T_TMP/stall.jsonl"
auto=$(grep -c '"type":"renew_ok"' "$T_TMP/stall.jsonl" || true)
inv=$(grep -c '"type":"renew_invoke"' "$T_TMP/stall.jsonl" || true)
check "the library's refreshes are in the log: $auto renew_ok, $inv renew_invoke" \
    [ "$auto" -gt 0 ] && [ "$inv" -eq 0 ]
check "counts.renewals counts them ($(get "$d" counts.renewals))" [ "$(get "$d" counts.renewals)" -eq "$auto" ]
bad=$(python3 - "$T_TMP/stall.jsonl" <<'PY'
import json, sys
bad = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "renew_ok":
        left = e["valid_until"] - e["t"]
        bad += not (0 < left <= 500e6)
print(bad)
PY
)
check "each renewal's lease is at most the 500 ms TTL from when it was read ($bad outside)" \
    [ "$bad" -eq 0 ]

# the same stall with refreshInterval + stall < lockTimeout: clean
d=$T_TMP/margin
run_ls "$d" "$WL/adapters/redis-semaphore-stall-margin.yaml"
check "redis-semaphore with a margin for the stall: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" adapter.stalls == 2

# the Python adapter blocks its main thread, for 500 ms against a 250 ms
# request timeout: the stall's reply is waited for (stall + timeout), no
# timeout, no protocol error; redlock.js lacks the extension
for spec in "redis-py|[adapters/python/redis_py_lock.py]|1|0" "redlock|[node, adapters/node/redlock.js]|0|4"; do
    IFS='|' read -r name cmd stalls want <<<"$spec"
    cat >"$T_TMP/$name.yaml" <<YAML
name: stall-$name
seed: 5
duration: 2s
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 2s
  options: {command: $cmd, request_timeout: 250ms}
workers: {count: 2, resources: 1, hold: {dist: uniform, min: 300ms, max: 500ms}, think: 5ms}
faults:
  - {kind: loop_stall, target: holder, at: 700ms, duration: 500ms}
YAML
    d=$T_TMP/run-$name
    run_ls "$d" "$T_TMP/$name.yaml"
    check "$name: exit $want ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq "$want" ]
    expect_val "$d" adapter.stalls == "$stalls"
    if [ "$stalls" -eq 1 ]; then
        check "$name: stalled ($(tail -1 "$d/faults.jsonl"))" grep -q '"stalled":true' "$d/faults.jsonl"
        expect_val "$d" adapter.timeouts == 0
        expect_val "$d" adapter.protocol_errors == 0
    else
        check "$name: a failed occurrence that did not bite ($(head -1 "$d/faults.jsonl"))" \
            grep -q '"event":"failed".*lacks the stall extension.*did not bite' "$d/faults.jsonl"
        check "$name: never injected (bit null)" [ "$(get "$d" faults.0.bit)" = null ]
        check "$name: the verdict says nothing bit ($(get "$d" verdict_reasons | head -c 200))" \
            grep -q "bit" <<<"$(get "$d" verdict_reasons)"
    fi
    t_no_leftovers "$d"
done

# the stalling worker killed and restarted at once: its successor answers
# the pending request as dropped, so the end line comes at the planned end
# (2.5 s) saying so, not bitten; before, the harness spun 3 s more for an
# answer that never came (end at 5.5 s, "had no answer")
cat >"$T_TMP/restart.yaml" <<'YAML'
name: stall-restart
seed: 5
duration: 4s
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 2s
  options: {command: [adapters/python/redis_py_lock.py], request_timeout: 250ms}
workers: {count: 2, resources: 1, hold: {dist: uniform, min: 300ms, max: 500ms}, think: 5ms}
faults:
  - {kind: loop_stall, target: "worker:0", at: 1s, duration: 1500ms}
  - {kind: kill, target: "worker:0", at: 1300ms, restart: 0}
YAML
d=$T_TMP/restart
run_ls "$d" "$T_TMP/restart.yaml"
check "stall then restart: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
end=$(grep '"id":0,"event":"end"' "$d/faults.jsonl" || true)
check "the restarted worker answered the stall request as dropped ($end)" \
    grep -q '"stall_error":"worker 0 restarted.*"bit":false' <<<"$end"
tend=$(printf '%s' "$end" | sed -n 's/.*"t_ns":\([0-9]*\).*/\1/p')
check "the end line came at the planned end, not 3 s later (t_ns ${tend:-none})" \
    [ "${tend:-9999999999}" -lt 3500000000 ]
check "not bitten ($(get "$d" faults.0.bit))" [ "$(get "$d" faults.0.bit)" = false ]
t_no_leftovers "$d"
t_finish
