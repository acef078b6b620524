#!/usr/bin/env bash
# A correct lock with no faults: redis-single, 8 workers, 2 resources, 5 s.
# No violation, no lost update, grants happen; `lockstorm check` on the run
# directory reproduces the verdict; `log export` and the JSONL checker agree.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

d=$T_TMP/correct
cat >"$T_TMP/correct.yaml" <<'YAML'
name: correct
duration: 5s
lock: {impl: redis-single, ttl: 1s}
workers: {count: 8, resources: 2, hold: {dist: uniform, min: 1ms, max: 5ms}, think: {dist: fixed, value: 1ms}}
YAML
run_ls "$d" "$T_TMP/correct.yaml"
check "run exits 0 (got $RC; $(tail -n1 "$d.stdout"))" [ "$RC" -eq 0 ]
check "verdict line says PASS" grep -q "PASS" "$d.stdout"
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" checks.fencing.plain_lost_updates == 0
expect_val "$d" checks.fencing.fenced_lost_updates == 0
expect_val "$d" checks.fencing.fence_regressions == 0
expect_val "$d" counts.grants ">" 500
expect_val "$d" counts.release_not_owner == 0
check "fencing offered" [ "$(get "$d" checks.fencing.offered)" = true ]
for f in workload.yaml run.json faults.jsonl storage.jsonl result.json summary.txt events/worker-000.bin events/worker-007.bin nodes/node-0.log nodes/storage.log; do
    check "run directory has $f" [ -s "$d/$f" -o "$f" = faults.jsonl ]
done
t_no_leftovers "$d"

# the checker alone, on the run directory, gives the same verdict
set +e
"$LS" check "$d" --json >"$T_TMP/check.json"
crc=$?
set -e
check "check exits like the run ($crc)" [ "$crc" -eq "$RC" ]
check "check gives the same verdict" [ "$("$LS" get "$T_TMP/check.json" verdict)" = "$(get "$d" verdict)" ]
check "check counts the same grants" [ "$("$LS" get "$T_TMP/check.json" counts.grants)" = "$(get "$d" counts.grants)" ]

# export -> JSONL -> checker: same mutex verdict and grant count
"$LS" log export "$d" >"$T_TMP/events.jsonl"
check "export wrote events" [ "$(wc -l <"$T_TMP/events.jsonl")" -gt 1000 ]
set +e
"$LS" check --history "$T_TMP/events.jsonl" --json >"$T_TMP/hist.json"
set -e
check "history check: same grants" [ "$("$LS" get "$T_TMP/hist.json" counts.grants)" = "$(get "$d" counts.grants)" ]
check "history check: no mutex violation" [ "$("$LS" get "$T_TMP/hist.json" checks.mutex.violations)" = 0 ]
t_finish
