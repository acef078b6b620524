#!/usr/bin/env bash
# Every negative control must be caught: each bundled workload runs its
# broken lock and the checker must report the bug it models.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

d=$T_TMP/busted
run_ls "$d" "$WL/busted.yaml"
check "busted: expectations met (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
check "busted: no faults were needed" [ "$(get "$d" 'faults')" = "[]" ]
t_no_leftovers "$d"

d=$T_TMP/naive-del
run_ls "$d" "$WL/naive-del.yaml"
check "naive-del: expectations met (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
t_no_leftovers "$d"

d=$T_TMP/naive-get-set
run_ls "$d" "$WL/naive-get-set.yaml"
check "naive-get-set: expectations met (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
t_no_leftovers "$d"

d=$T_TMP/naive-no-ttl
run_ls "$d" "$WL/naive-no-ttl.yaml"
check "naive-no-ttl: expectations met (exit $RC)" [ "$RC" -eq 0 ]
pause_ms=$(get "$d" 'faults.0.params.duration_ms')
expect_val "$d" checks.liveness.longest_stall_ms ">=" "$(awk -v p="$pause_ms" 'BEGIN{print p*0.9}')"
expect_val "$d" checks.mutex.violations == 0
t_no_leftovers "$d"

d=$T_TMP/naive-setnx-expire
run_ls "$d" "$WL/naive-setnx-expire.yaml"
check "naive-setnx-expire: expectations met (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.liveness.longest_stall_ms ">=" 1800
check "naive-setnx-expire: the pause hit a worker inside acquire" grep -q '"acquiring_resource":"r0"' "$d/faults.jsonl"
t_no_leftovers "$d"

# the correct lock under the same pause of the slowest acquirer: the key has
# its TTL from the start, so nobody waits much longer than the TTL
d=$T_TMP/single-acquirer-pause
run_ls "$d" "$WL/naive-setnx-expire.yaml" --set lock.impl=redis-single --set 'lock.options={}' \
    --set 'expect={}'
expect_val "$d" checks.liveness.longest_stall_ms "<" 1000

# a correct lock under the same pause as naive-no-ttl recovers after one TTL
d=$T_TMP/single-pause
run_ls "$d" "$WL/naive-no-ttl.yaml" --set lock.impl=redis-single --set lock.ttl=200ms \
    --set 'expect={}'
expect_val "$d" checks.liveness.longest_stall_ms "<" 1000
t_finish
