#!/usr/bin/env bash
# Coverage and the verdict rule (issue 14, "A PASS must be evidence"): a
# run whose faults never bit, or whose workers did (almost) nothing, is
# UNKNOWN with the reason unless an expectation gates on coverage; a run
# whose faults bite passes as before with coverage counted; an expectation
# on a fenced value of a run without fences is unmet, "not measured"; the
# default check.stuck_after follows the workload's holds. Each run <= 5 s.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# 1. The issue's reproduction: every worker killed at t=0 (restart never),
#    then a pause of nobody: 1 grant or so, formerly PASS.
d=$T_TMP/nothing
cat >"$T_TMP/nothing.yaml" <<'YAML'
name: nothing-tested
duration: 3s
faults:
  - {kind: kill, target: all-workers, at: 0, duration: 1s, restart: never}
  - {kind: pause, target: all-workers, at: 0, duration: 2s}
YAML
run_ls "$d" "$T_TMP/nothing.yaml"
check "nothing tested: exit 4 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 4 ]
check "nothing tested: verdict unknown" [ "$(get "$d" verdict)" = unknown ]
check "nothing tested: the reason is too little activity" \
    grep -q 'too little activity: [0-9]* grants, below' "$d/result.json"
check "nothing tested: grants below the floor" \
    [ "$(get "$d" coverage.grants)" -lt "$(get "$d" coverage.grant_floor)" ]
check "nothing tested: enough_activity false" [ "$(get "$d" coverage.enough_activity)" = false ]
check "nothing tested: the skipped pause is undecided" [ "$(get "$d" faults.1.bit)" = null ]
t_no_leftovers "$d"

# 2. Faults that never bite: each worker does one short cycle at the start,
#    then thinks past the run's end; the pause of worker 0 at 1 s catches it
#    thinking. Unknown, unless an expectation gates on coverage.
cat >"$T_TMP/nobite.yaml" <<'YAML'
name: no-bite
duration: 2500ms
lock: {impl: redis-single, ttl: 1s}
workers: {count: 2, resources: 2, hold: 1ms, think: 10s}
faults:
  - {kind: pause, target: "worker:0", at: 1s, duration: 300ms}
YAML
d=$T_TMP/nobite
run_ls "$d" "$T_TMP/nobite.yaml"
check "no bite: exit 4 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 4 ]
check "no bite: the pause did not bite" [ "$(get "$d" faults.0.bit)" = false ]
expect_val "$d" coverage.faults.occurrences == 1
expect_val "$d" coverage.faults.bit == 0
check "no bite: the reason says no fault occurrence bit" \
    grep -q 'no fault occurrence bit' "$d/result.json"
check "no bite: enough activity (the floor is 1 here)" [ "$(get "$d" coverage.enough_activity)" = true ]
d=$T_TMP/nobite-gated
run_ls "$d" "$T_TMP/nobite.yaml" --set 'expect.coverage.faults.bit=0'
check "no bite, gated on coverage.faults.bit: exit 0 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 0 ]
check "gated: no verdict_reasons" grep -q '"verdict_reasons": \[\]' "$d/result.json"

# 3. Faults that bite: holders paused (shorter than the TTL, so no violation).
cat >"$T_TMP/bite.yaml" <<'YAML'
name: bite
duration: 3s
lock: {impl: redis-single, ttl: 1s}
workers: {count: 4, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 2ms}
faults:
  - {kind: pause, target: holder, at: 500ms, duration: 200ms, every: 800ms}
YAML
d=$T_TMP/bite
run_ls "$d" "$T_TMP/bite.yaml"
check "bite: exit 0 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 0 ]
check "bite: the first pause caught its holder" [ "$(get "$d" faults.0.bit)" = true ]
check "bite: bit_reason names the hold" grep -q '"bit_reason": "worker [0-9]* was in a hold' "$d/result.json"
expect_val "$d" coverage.faults.bit ">=" 3
expect_val "$d" coverage.holds ">" 50
expect_val "$d" coverage.grants ">" 50
expect_val "$d" coverage.contended_acquires ">" 0
check "bite: grants above the floor" \
    [ "$(get "$d" coverage.grants)" -ge "$(get "$d" coverage.grant_floor)" ]
expect_val "$d" faults.0.late_ms ">=" 0
check "bite: faults.jsonl start lines carry late_ms" grep -q '"event":"start".*"late_ms":' "$d/faults.jsonl"

# 4. An expectation on the fenced counter of a run without fences: unmet,
#    "not measured", never met by a default 0.
cat >"$T_TMP/nofence.yaml" <<'YAML'
name: no-fence
duration: 1500ms
lock: {impl: redis-single, ttl: 1s, fencing: false}
workers: {count: 2, resources: 1, hold: 2ms, think: 2ms}
expect:
  checks.fencing.fenced_lost_updates: 0
  checks.mutex.violations: 0
YAML
d=$T_TMP/nofence
run_ls "$d" "$T_TMP/nofence.yaml"
check "no fences: exit 1 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 1 ]
check "no fences: fenced_lost_updates is null" [ "$(get "$d" checks.fencing.fenced_lost_updates)" = null ]
check "no fences: the expectation is unmet" [ "$(get "$d" expectations.0.ok)" = false ]
check "no fences: got is null" [ "$(get "$d" expectations.0.got)" = null ]
check "no fences: why says not measured" \
    grep -q '"why": "not measured: fencing not offered (lock.fencing is false)"' "$d/result.json"
check "no fences: the measured expectation is met" [ "$(get "$d" expectations.1.ok)" = true ]

# 5. Holds of 3 s with the default check.stuck_after: a waiter behind two
#    such holds is no stuck resource (the old 2 s default said "stuck r0").
cat >"$T_TMP/long.yaml" <<'YAML'
name: long-holds
duration: 4500ms
lock: {impl: redis-single, ttl: 5s}
workers: {count: 3, resources: 1, hold: 3s, think: 5ms}
YAML
d=$T_TMP/long
run_ls "$d" "$T_TMP/long.yaml"
check "long holds: exit 0 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 0 ]
expect_val "$d" checks.liveness.stuck_resources == 0
expect_val "$d" checks.liveness.stuck_after_ms == 16000
check "long holds: stuck_after derived" [ "$(get "$d" checks.liveness.stuck_after_from)" = auto ]
check "long holds: the echo says auto" grep -q 'stuck_after: auto' "$d/workload.yaml"
# A given value wins. Before waits were split (issue 17) the waiter behind
# the 3 s hold was stuck with 2 s; it waits behind a holder inside its
# 5 s lease, which is not stuck whatever stuck_after says
# (docs/checkers.md "Waits").
d=$T_TMP/long-2s
run_ls "$d" "$T_TMP/long.yaml" --set check.stuck_after=2s
expect_val "$d" checks.liveness.stuck_after_ms == 2000
check "long holds, stuck_after 2s given: it wins" \
    [ "$(get "$d" checks.liveness.stuck_after_from)" = check.stuck_after ]
check "long holds, stuck_after 2s given: a wait behind a valid lease is not stuck (exit 0; got $RC)" \
    [ "$RC" -eq 0 ]
expect_val "$d" checks.liveness.waits.held.longest_ms ">=" 2000
t_finish
