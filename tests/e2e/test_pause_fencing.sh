#!/usr/bin/env bash
# The demo: redis-single with holders paused longer than the TTL. The lock
# keeps its promise (no lock-broken), holders overstay (stale-holder > 0),
# the plain counter loses updates and the fenced one does not.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

d=$T_TMP/demo
run_ls "$d" "$WL/demo.yaml" --set duration=6s
check "demo meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d" checks.mutex.by_class.lock_broken == 0
expect_val "$d" checks.fencing.plain_lost_updates ">" 0
expect_val "$d" checks.fencing.fenced_lost_updates == 0
expect_val "$d" checks.fencing.stale_ops_rejected ">" 0
# every pause really stopped its target (state T confirmed before "start")
starts=$(grep -c '"event":"start"' "$d/faults.jsonl" || true)
ends=$(grep -c '"event":"end"' "$d/faults.jsonl" || true)
check "pauses started ($starts) and all ended ($ends)" [ "$starts" -ge 2 -a "$starts" -eq "$ends" ]
check "a violation names the pause active during it" \
    [ "$(get "$d" 'violations.0.faults.0')" != null ]
check "stale-holder violation holder overstayed its lease" \
    num_cmp "$(get "$d" 'violations.0.holders.0.exit_ms')" ">" "$(get "$d" 'violations.0.holders.0.valid_until_ms')"
check "verdict line is last and greppable" sh -c "tail -n1 '$d.stdout' | grep -q '^lockstorm: PASS workload=demo lock=redis-single'"
t_no_leftovers "$d"
t_finish
