#!/usr/bin/env bash
# Failover on a replicated topology, end to end, each scenario workload
# against real redis-server and redis-sentinel processes: the lost write
# (replication cut, primary killed, replica promoted by the harness) breaks
# redis-single and WAIT 1 prevents it; the split brain (primary paused past
# Sentinel's down-after, promoted replica, old primary continued) breaks it
# and min-replicas-to-write prevents it. Each is also checked for having
# really happened (faults.jsonl: cut verified, old primary down, a new
# primary confirmed), the violations for landing where the story says, and
# every process of the run (nodes, sentinels, both proxies, workers) for
# being gone afterwards.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SC=$WL/scenarios

# fault_line DIR ID EVENT: that line of faults.jsonl
fault_line() { grep "\"id\":$2,\"event\":\"$3\"" "$1/faults.jsonl" | head -n1; }
# jfield LINE KEY: a scalar field of a JSON line
jfield() { printf '%s' "$1" | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[-0-9.a-z]*\).*/\1/p" | head -n1 | tr -d '"'; }
# errs DIR TYPE ERR: how many TYPE events carry err ERR
errs() { "$LS" log export "$1" | grep "\"type\":\"$2\"" | grep -c "\"err\":\"$3\"" || true; }

# all_gone DIR: no pid recorded in run.json (workers, nodes, storage, the
# workers' and the replication proxy, sentinels) is still running
all_gone() {
    local p left=""
    for p in $(grep -o '"pid": [0-9]*' "$1/run.json" | awk '{print $2}' | sort -u); do
        [ "$p" -gt 0 ] && [ -e "/proc/$p" ] && left="$left $p"
    done
    [ -z "$left" ] || { echo "still running:$left" >&2; return 1; }
}

# failover_happened DIR ID: start confirmed the old primary down, end a new one
failover_happened() {
    local s e
    s=$(fault_line "$1" "$2" start); e=$(fault_line "$1" "$2" end)
    [ -n "$s" ] && [ -n "$e" ] || return 1
    [ "$(jfield "$e" promoted)" = true ] || return 1
    [ "$(jfield "$e" new_primary)" != "$(jfield "$s" old_primary)" ] || return 1
    case "$(jfield "$s" verified)" in "old primary reaped"|"old primary in state T") ;; *) return 1 ;; esac
}

# ---- lost write: cut, kill, manual promotion -> lock-broken ---------------
d=$T_TMP/lost
run_ls "$d" "$SC/failover-lost-write.yaml"
check "failover-lost-write meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
check "both failovers happened (old primary reaped, replica promoted)" \
    sh -c "$(declare -f fault_line jfield failover_happened); failover_happened '$d' 0 && failover_happened '$d' 1"
s=$(fault_line "$d" 0 start); e=$(fault_line "$d" 0 end)
check "replication was cut and the cut verified before the kill" \
    [ -n "$(jfield "$s" cut_verified)" -a "$(jfield "$s" cut_replicas_checked)" = 2 ]
check "the old primary rejoined as a replica" [ "$(jfield "$e" old_rejoined)" = true ]
# in_cut DIR MS: MS lies inside a cut window [cut_ms, kill] of failover 0 or 1
in_cut() {
    local k s c t
    for k in 0 1; do
        s=$(fault_line "$1" $k start)
        c=$(jfield "$s" cut_ms); t=$(awk -v ns="$(jfield "$s" t_ns)" 'BEGIN { print ns / 1e6 }')
        awk -v c="$c" -v t="$t" -v a="$2" 'BEGIN { exit !(a > c && a < t) }' && return 0
    done
    return 1
}
first=$(get "$d" violations.0.holders.0.acquired_ms)
second=$(get "$d" violations.0.holders.1.acquired_ms)
check "the lost grant ($first ms) was made while replication was cut" in_cut "$d" "$first"
check "the second grant ($second ms) came after a promotion" \
    sh -c "awk -v a='$second' -v p='$(jfield "$e" confirmed_ms)' 'BEGIN { exit !(a >= p - 1) }'"
lost_lb=$(get "$d" checks.mutex.by_class.lock_broken)
check "no process of the run remains" all_gone "$d"

# ---- the same with WAIT 1: nothing unacknowledged is granted --------------
d=$T_TMP/lost-wait
run_ls "$d" "$SC/failover-lost-write-wait.yaml"
check "failover-lost-write-wait meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken == 0
check "both failovers happened" \
    sh -c "$(declare -f fault_line jfield failover_happened); failover_happened '$d' 0 && failover_happened '$d' 1"
nr=$(errs "$d" acquire_fail "not replicated")
check "grants made during the cut were refused as not replicated ($nr)" [ "$nr" -gt 0 ]
check "no process of the run remains" all_gone "$d"
echo "# lost write: lock-broken $lost_lb without WAIT, $(get "$d" checks.mutex.by_class.lock_broken) with WAIT 1"

# ---- split brain: pause past down-after, Sentinel promotes ----------------
d=$T_TMP/split
run_ls "$d" "$SC/split-brain.yaml"
check "split-brain meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
check "the failover happened (old primary stopped, Sentinel's promotion confirmed)" \
    sh -c "$(declare -f fault_line jfield failover_happened); failover_happened '$d' 0"
e=$(fault_line "$d" 0 end)
check "a majority of the sentinels named the new primary" \
    [ "$(jfield "$e" sentinels_agreeing)" -ge 2 ]
cont=$(jfield "$e" old_continued_ms)
second=$(get "$d" violations.0.holders.1.acquired_ms)
first=$(get "$d" violations.0.holders.0.acquired_ms)
check "both grants of the broken lock came after the old primary resumed ($cont ms)" \
    sh -c "awk -v c='$cont' -v a='$first' -v b='$second' 'BEGIN { exit !(a > c && b > c) }'"
n=$(grep -c '"sentinels"' "$d/run.json")
check "run.json records the sentinels" [ "$n" -ge 1 ]
split_lb=$(get "$d" checks.mutex.by_class.lock_broken)
check "no process of the run remains (sentinels included)" all_gone "$d"

# ---- the same with min-replicas-to-write 1 ---------------------------------
d=$T_TMP/split-min
run_ls "$d" "$SC/split-brain-min-replicas.yaml"
check "split-brain-min-replicas meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken == 0
check "the failover happened" \
    sh -c "$(declare -f fault_line jfield failover_happened); failover_happened '$d' 0"
nr=$(errs "$d" release_fail "error reply")
check "the old primary refused writes once it resumed ($nr releases failed: NOREPLICAS)" \
    [ "$nr" -gt 0 ]
check "no process of the run remains (sentinels included)" all_gone "$d"
echo "# split brain: lock-broken $split_lb without, $(get "$d" checks.mutex.by_class.lock_broken) with min_replicas_to_write 1"

t_finish
