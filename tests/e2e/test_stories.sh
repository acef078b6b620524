#!/usr/bin/env bash
# The story suite (workloads/stories/, docs/stories.md): `lockstorm run DIR`
# runs every story of the reference articles, one line per scenario, and
# every story meets its expect: block. A few stories are also run the other
# way round (without the defence they show), so the suite's passes are
# known to come from the defence: the double booking and the singleton
# cron without their lock, the stolen lock with the correct release.
# Also: what the directory runner does with a bad workload, an empty
# directory and --json. Long: the whole suite takes about 80 s on 2 cores.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$T_TMP/suite
set +e
"$LS" run "$WL/stories/" --out "$out" >"$T_TMP/suite.txt" 2>"$T_TMP/suite.err"
rc=$?
set -e
cat "$T_TMP/suite.txt"
n=$(ls "$WL"/stories/*.yaml | wc -l)
check "the suite passed (exit $rc)" [ "$rc" -eq 0 ]
check "one line per scenario ($n), each PASS" \
    [ "$(grep -c '^[0-9][0-9]-[a-z0-9-]* *PASS ' "$T_TMP/suite.txt")" -eq "$n" ]
check "the closing line counts them" grep -q "$n scenarios, $n passed, 0 failed" "$T_TMP/suite.txt"
for f in "$WL"/stories/*.yaml; do
    name=$(sed -n 's/^name: *//p' "$f")
    check "$name: a run directory with its result" [ -f "$out/$name/result.json" ]
done
check "every line shows the measured values" grep -q 'lock_broken=[1-9]' "$T_TMP/suite.txt"
t_no_leftovers "$out"

# the other way round: without the defence each story shows its failure
d=$T_TMP/booking-nolock
run_ls "$d" "$WL/stories/01-double-booking.yaml" --set 'workers.jobs.layers=[]'
check "double booking without the lock: the expectations fail (exit $RC)" [ "$RC" -eq 1 ]
check "... every table booked twice" \
    [ "$(get "$d" checks.jobs.duplicates)" -eq "$(get "$d" checks.jobs.jobs)" ]
d=$T_TMP/cron-nolock
run_ls "$d" "$WL/stories/08-singleton-cron.yaml" --set 'workers.jobs.layers=[]'
expect_val "$d" checks.jobs.duplicates == 15
expect_val "$d" checks.jobs.extra_effects == 30
d=$T_TMP/stolen-correct
run_ls "$d" "$WL/stories/02-stolen-lock.yaml" --set lock.impl=redis-single
expect_val "$d" checks.mutex.by_class.lock_broken == 0
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d" counts.release_not_owner ">" 0

# the directory runner itself
mkdir -p "$T_TMP/mixed" "$T_TMP/empty"
cat >"$T_TMP/mixed/a-ok.yaml" <<'YAML'
name: a-ok
duration: 300ms
workers: {count: 2, resources: 1, hold: 5ms}
expect: {checks.mutex.violations: 0}
YAML
printf 'name: b-bad\nworkers: {cont: 2}\n' >"$T_TMP/mixed/b-bad.yaml"
set +e
"$LS" run "$T_TMP/mixed" --out "$T_TMP/mixed-runs" >"$T_TMP/mixed.txt" 2>/dev/null
rc=$?
set -e
check "a workload that does not load: exit 2 ($rc), the others still run" [ "$rc" -eq 2 ]
check "... its line says ERROR and why" grep -q "^b-bad *ERROR *workload: .*cont" "$T_TMP/mixed.txt"
check "... the good one passed" grep -q "^a-ok *PASS" "$T_TMP/mixed.txt"
set +e
"$LS" run "$T_TMP/empty" >/dev/null 2>&1; rc=$?
check "an empty directory: exit 2 ($rc)" [ "$rc" -eq 2 ]
"$LS" run "$T_TMP/mixed" --json >/dev/null 2>&1; rc=$?
check "--json with a directory: exit 2 ($rc)" [ "$rc" -eq 2 ]
set -e
t_finish
