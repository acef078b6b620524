#!/usr/bin/env bash
# Renewals the checker can see, and liveness that separates holding from
# waiting (issue 17; docs/checkers.md "Leases as they stood", "Losses",
# "Renewed after loss", "Waits"). The bundled workloads, each run as it is:
# - workloads/faults/pexpire-renew.yaml: the fixture adapter's unconditional
#   PEXPIRE renew succeeds after the paused holder's lease ran out and
#   another worker was granted: renewed-after-loss, the overlap
#   stale-holder (the final lease, the late renewal's, made it lock-broken
#   before leases as they stood), and a story for the anomaly;
# - pexpire-renew-correct.yaml, its control: the late renewal is refused,
#   the loss classified expired, no renewal after loss;
# - workloads/long-holds.yaml: 2.5-3.5 s holds inside a renewed lease with
#   check.stuck_after 2 s: long stalls, never stuck (the old open-stall rule
#   called r0 stuck), the waits held, not free;
# - workloads/setnx-expire-crash.yaml: a real stuck resource is still caught.
# Fails (never skips) when redis-py for /usr/bin/python3 is missing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if ! /usr/bin/python3 -c 'import redis' >/dev/null 2>&1; then
    fail "redis-py is missing for /usr/bin/python3 (Debian package python3-redis)"
    t_finish
fi
cd "$SRC" # the fixture adapter's command is relative to the source tree

d=$T_TMP/pexpire
run_ls "$d" "$WL/faults/pexpire-renew.yaml"
check "pexpire-renew: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.renewed_after_loss ">" 0
expect_val "$d" checks.mutex.renewed_after_loss_holds ">=" 1
expect_val "$d" checks.mutex.by_class.lock_broken == 0
check "pexpire-renew: the anomaly is listed with its story" \
    sh -c "'$LS' get '$d' checks.mutex.anomalies.0.class | grep -qx renewed-after-loss &&
           '$LS' get '$d' checks.mutex.anomalies.0.story_text | grep -q 'renewed-after-loss: w'"
check "pexpire-renew: the overlap's earlier holder shows its lease as it stood" \
    sh -c "v=\$('$LS' get '$d' violations.0.holders.0.valid_until_at_grant_ms) &&
           a=\$('$LS' get '$d' violations.0.holders.1.acquired_ms) &&
           awk -v v=\"\$v\" -v a=\"\$a\" 'BEGIN { exit !(v + 0 <= a + 0) }'"
check "pexpire-renew: the summary names the renewals after loss" \
    grep -q 'renewals\? after loss' "$d/summary.txt"
"$LS" report "$d" --format md >/dev/null 2>&1 || true
check "pexpire-renew: summary.md tells the anomaly's story, as summary.txt does" \
    sh -c "grep -q '^### Story of renewed-after-loss (r0, w' '$d/summary.md' &&
           grep -q 'renewed-after-loss' '$d/summary.md'"
t_no_leftovers "$d"

d=$T_TMP/pexpire-correct
run_ls "$d" "$WL/faults/pexpire-renew-correct.yaml"
check "pexpire-renew-correct: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.renewed_after_loss == 0
expect_val "$d" checks.mutex.losses_by_class.expired ">" 0
t_no_leftovers "$d"

# renewed events stamped by the adapter (host_mono_ms, protocol revision 3):
# the fixture's first renewal of each grant says it was written 100 ms after
# the acquire arrived, though the line comes 200 ms after it; the lease is
# counted from the stamp (ttl + ~100 ms after the grant), not from the read
# (ttl + ~200 ms: before the stamp, a line that waited in the pipe, as one
# does when the worker is paused or starved, lengthened the lease, and a
# next grant inside that length was called lock-broken). Its second
# renewal is stamped a minute ahead: refused, counted, read time used.
cat >"$T_TMP/stamped.yaml" <<EOF
name: stamped-renewals
seed: 1
duration: 1500ms
cluster: {nodes: 1, persistence: none}
lock:
  impl: external
  ttl: 2s
  options: {command: [python3, $SRC/tests/fixtures/stamped_adapter.py]}
workers: {count: 1, resources: 1, hold: {dist: fixed, value: 700ms}, think: 5ms}
EOF
d=$T_TMP/stamped
run_ls "$d" "$T_TMP/stamped.yaml"
check "stamped renewals: the run passed (exit $RC)" [ "$RC" -eq 0 ]
"$LS" log export "$d" >"$T_TMP/stamped.jsonl"
cat >"$T_TMP/first_leases.py" <<'PY'
import json, sys
grant, firsts = None, []
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "acquire_ok":
        grant = e["t"]
    elif e["type"] == "renew_ok" and grant is not None:
        firsts.append((e["valid_until"] - grant) / 1e6)
        grant = None
print("# first renewal's lease after the grant (ms):", [round(x, 1) for x in firsts])
sys.exit(0 if firsts and all(2080 < x < 2150 for x in firsts) else 1)
PY
check "stamped renewals: each grant's first renewal counts from its stamp (ttl + 100 ms, not + 200)" \
    python3 "$T_TMP/first_leases.py" "$T_TMP/stamped.jsonl"
check "stamped renewals: a stamp a minute ahead is refused and counted" \
    [ "$(get "$d" adapter.renewed_stamps_ignored)" -ge 1 ]
t_no_leftovers "$d"

d=$T_TMP/long
run_ls "$d" "$WL/long-holds.yaml"
check "long-holds: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.liveness.stuck_resources == 0
expect_val "$d" checks.liveness.longest_stall_ms ">=" 2000
expect_val "$d" checks.liveness.waits.held.longest_ms ">=" 2000
expect_val "$d" checks.liveness.longest_unserved_wait_ms "<" 500
check "long-holds: no stuck or long-stall sign in the summary" \
    sh -c "! grep -q '??? stuck\\|??? long stall' '$d/summary.txt'"
t_no_leftovers "$d"

d=$T_TMP/crash
run_ls "$d" "$WL/setnx-expire-crash.yaml"
check "setnx-expire-crash: still stuck (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.liveness.stuck_resources ">" 0
t_no_leftovers "$d"

t_finish
