#!/usr/bin/env bash
# Duplicate jobs (workers.mode: jobs; reference articles 03 and 05): the
# bundled workloads/duplicate-jobs.yaml under each defence layer of article
# 03's table, through scripts/jobs-layers.sh (which prints the measured
# table). Holder pauses of 400 ms under a 200 ms TTL: with no defence every
# job runs on several workers; the lock alone lets some jobs run twice; an
# idempotency key (SET NX before the side effect), a unique constraint on
# the side effect, and all three together let none run twice.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$T_TMP/layers
set +e
LS_BINARY=$LS bash "$SRC/scripts/jobs-layers.sh" --out "$out" --set duration=3s >"$T_TMP/table.md" \
    2>"$T_TMP/table.err"
rc=$?
set -e
check "jobs-layers.sh ran every combination (exit $rc)" [ "$rc" -eq 0 ]
cat "$T_TMP/table.md"
check "the table has a row per combination" [ "$(grep -c '^| [a-z]' "$T_TMP/table.md")" -eq 6 ]

# no defence: every worker did (nearly) every job
expect_val "$out/none" checks.jobs.jobs == 60
expect_val "$out/none" checks.jobs.duplicates ">=" 50
expect_val "$out/none" checks.jobs.missed == 0
# the lock alone: the paused holder's job was done again by the next holder
expect_val "$out/lock" checks.jobs.duplicates ">" 0
expect_val "$out/lock" checks.jobs.missed == 0
expect_val "$out/lock" checks.mutex.by_class.stale_holder ">" 0
for v in none lock idempotency constraint; do
    check "$v: the first holder pause took effect" [ "$(get "$out/$v" faults.0.skipped)" = false ]
done
# without the lock a "holder" is a worker between its claimed step and the
# effect: every pause caught one there (one landing in the check before the
# claim bit nothing the log could show: the run was UNKNOWN, 1 in 6)
check "none: every holder pause bit a job in progress" \
    [ "$(get "$out/none" coverage.faults.not_bit)" = 0 ]
# the idempotency key alone: claimed once, done once
expect_val "$out/idempotency" checks.jobs.duplicates == 0
expect_val "$out/idempotency" checks.jobs.missed == 0
expect_val "$out/idempotency" checks.jobs.steps.skip_done ">" 0
# the constraint alone: every later insert refused
expect_val "$out/constraint" checks.jobs.duplicates == 0
expect_val "$out/constraint" checks.jobs.refused ">" 0
expect_val "$out/constraint" checks.jobs.missed == 0
# all three
expect_val "$out/lock+idempotency+constraint" checks.jobs.duplicates == 0
expect_val "$out/lock+idempotency+constraint" checks.jobs.missed == 0
expect_val "$out/lock+idempotency+constraint" checks.mutex.by_class.stale_holder ">" 0

# the checker's duplicate list agrees with the storage's record
d=$out/lock
check "jobs.jsonl has one line per announced job" [ "$(wc -l <"$d/jobs.jsonl")" -eq 60 ]
dups=$(awk -F'"effects":\\[' '{ split($2, a, "]"); n = split(a[1], x, ","); if (n > 1) c++ } END { print c + 0 }' "$d/jobs.jsonl")
check "duplicates counted from jobs.jsonl ($dups) = checks.jobs.duplicates" \
    [ "$dups" -eq "$(get "$d" checks.jobs.duplicates)" ]
"$LS" log export "$d" >"$T_TMP/lock.jsonl"
check "job events are exported with the job and the step" \
    grep -q '"type":"job".*"job":[0-9]*,"step":"effect"' "$T_TMP/lock.jsonl"
# re-checking the copied run directory gives the same count
cp -r "$d" "$T_TMP/copy"
"$LS" check "$T_TMP/copy" --json >"$T_TMP/copy.json" || true
check "lockstorm check on a copy: same duplicates" \
    [ "$(get "$T_TMP/copy.json" checks.jobs.duplicates)" -eq "$(get "$d" checks.jobs.duplicates)" ]
t_no_leftovers "$d"
t_finish
