#!/usr/bin/env bash
# Histories whose shape once made the checkers' work grow with the square
# or the cube of their length (docs/checkers.md "Cost: one pass, bounded
# memory"): grants never released (a lock left to expire by its TTL) piled
# up in liveness, which walked every holder for each pair of holders on
# every grant (20,000 grants: minutes, the check never ended); holds that
# never end (enters without exits) made each hold that ended walk every
# pending violation and each violation look up every holder's lease in a
# list (5,000 enters: 55 s); and many workers' holds that never end (each
# enter, grant and end walking them all). Each check here runs under a 60 s limit and
# must give the figures worked out below. Before: the grants check did not
# end within the limit, the enters one took 16 s (0.4 s now).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# run_check NAME FILE ARGS...: check FILE into $T_TMP/NAME; exit code in $rc
run_check() {
    local name=$1 file=$2; shift 2
    set +e
    timeout 60 "$LS" check --history "$file" --format json --out "$T_TMP/$name" "$@" \
        >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    rc=$?
    set -e
}
get() { "$LS" get "$T_TMP/$1" "$2"; }
# run_limited NAME KB FILE ARGS...: check FILE into $T_TMP/NAME in KB of
# address space (not under AddressSanitizer: its shadow memory alone is
# terabytes); exit code in $rc
run_limited() {
    local name=$1 kb=$2 file=$3; shift 3
    set +e
    (ulimit -v "$kb" && exec timeout 60 "$LS" check --history "$file" "$@" --format json \
        --out "$T_TMP/$name" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err")
    rc=$?
    set -e
}

# One worker, 20,000 rounds a microsecond apart: invoke, a grant with a
# 500 ns lease one ns later, enter, exit; never a release. Each invoke
# waits 1 ns for its grant, behind the earlier grants (all expired): the
# first round waits with no holder (free), the others behind expired ones.
awk 'BEGIN { for (i = 1; i <= 20000; i++) { t = i * 1000
    printf "{\"t\":%d,\"w\":0,\"type\":\"acquire_invoke\",\"res\":\"r0\"}\n", t
    printf "{\"t\":%d,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"r0\",\"valid_until\":%d}\n", t + 1, t + 501
    printf "{\"t\":%d,\"w\":0,\"type\":\"enter\",\"res\":\"r0\"}\n", t + 2
    printf "{\"t\":%d,\"w\":0,\"type\":\"exit\",\"res\":\"r0\"}\n", t + 3 } }' >"$T_TMP/norelease.jsonl"
run_check norelease "$T_TMP/norelease.jsonl"
check "20,000 grants never released: checked (exit $rc)" [ "$rc" -eq 0 ]
check "... waits behind expired grants: 19,999 ns" [ "$(get norelease checks.liveness.waits.expired.total_ms)" = 0.019999 ]
check "... with no holder: 1 ns" [ "$(get norelease checks.liveness.waits.free.total_ms)" = 1e-06 ]
check "... within a lease: none" [ "$(get norelease checks.liveness.waits.held.total_ms)" = 0 ]
check "... 20,000 holds, no violation" \
    [ "$(get norelease checks.mutex.holds) $(get norelease checks.mutex.violations)" = "20000 0" ]
# The same as a semaphore of 3 (the walk for the third latest lease): the
# first three rounds wait with fewer than 3 holders (free), the rest behind
# 3 or more expired ones.
run_check norelease3 "$T_TMP/norelease.jsonl" --capacity 3
check "... as a semaphore of 3: checked (exit $rc)" [ "$rc" -eq 0 ]
check "... waits behind expired grants 19,997 ns, free 3 ns" \
    [ "$(get norelease3 checks.liveness.waits.expired.total_ms) $(get norelease3 checks.liveness.waits.free.total_ms)" = "0.019997 3e-06" ]

# Three workers in turn, 3,000 grants and enters, no exit: every hold lasts
# to the end of its worker's log, so every enter but the first finds holds
# active, except each worker's last, which enters at its log's last record
# and so has zero length: 3,000 - 1 - 3 violations, one incident.
awk 'BEGIN { for (i = 0; i < 3000; i++) { t = (i + 1) * 1000; w = i % 3
    printf "{\"t\":%d,\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r0\",\"valid_until\":%d}\n", t, w, t + 500
    printf "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r0\"}\n", t + 1, w } }' >"$T_TMP/noexit.jsonl"
run_check noexit "$T_TMP/noexit.jsonl"
check "3,000 enters without an exit: checked, violations found (exit $rc)" [ "$rc" -eq 1 ]
check "... 2,996 violations, all stale holders, one incident" \
    [ "$(get noexit checks.mutex.violations) $(get noexit checks.mutex.by_class.stale_holder) $(get noexit checks.mutex.incidents)" = "2996 2996 1" ]

# The same shape, 20,000 enters, in 400 MB of address space: memory that
# grows with the pairs of overlapping holds (each violation naming every
# active hold, each grant copying every live grant's lease: 536 MB for
# 5,000 enters) stopped the check: "lockstorm: fatal: out of memory",
# aborted (exit 134); now it keeps the holders of the 50 listed violations
# only and the raises of the leases (none here). Not under AddressSanitizer,
# which maps terabytes of shadow memory.
awk 'BEGIN { for (i = 0; i < 20000; i++) { t = (i + 1) * 1000; w = i % 3
    printf "{\"t\":%d,\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r0\",\"valid_until\":%d}\n", t, w, t + 500
    printf "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r0\"}\n", t + 1, w } }' >"$T_TMP/noexit20k.jsonl"
libs=$(ldd "$LS" 2>/dev/null || true)
if [[ $libs != *libasan* ]]; then
    run_limited noexit20k 400000 "$T_TMP/noexit20k.jsonl"
    check "20,000 enters without an exit in 400 MB: checked (exit $rc)" [ "$rc" -eq 1 ]
    check "... 19,996 violations, one incident" \
        [ "$(get noexit20k checks.mutex.violations) $(get noexit20k checks.mutex.incidents)" = "19996 1" ]
else
    echo "ok - # SKIP 20,000 enters in 400 MB: an AddressSanitizer build"
fi

# 8,000 workers entering 40 times each without an exit, on 4 resources
# (80,000 holds a resource, none ends before its worker's log does; the
# leases of two resources expired at the next grant, of the other two
# valid): each enter scanned the active holds for the latest grant and
# counted their valid leases, each grant walked the live grants, each end
# searched the active list and walked every pending violation: the square
# of the holds of a resource (2,000 workers: 5.7 s; 8,000: did not end in
# minutes); 0.6 s now.
awk 'BEGIN { t = 0; for (k = 0; k < 40; k++) for (w = 0; w < 8000; w++) { t += 1000
    printf "{\"t\":%d,\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r%d\",\"valid_until\":%d}\n", t, w, w % 4, t + (w % 2 ? 1000000000 : 500)
    printf "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r%d\"}\n", t + 1, w, w % 4 } }' \
    >"$T_TMP/noexit8k.jsonl"
run_check noexit8k "$T_TMP/noexit8k.jsonl" --jobs 1
check "8,000 workers entering 40 times without an exit: checked (exit $rc)" [ "$rc" -eq 1 ]
check "... 311,996 violations, half of each class, one incident a resource" \
    [ "$(get noexit8k checks.mutex.violations) $(get noexit8k checks.mutex.by_class.stale_holder) $(get noexit8k checks.mutex.by_class.lock_broken) $(get noexit8k checks.mutex.incidents)" = "311996 155998 155998 4" ]

# 20,000 workers of 42 events each (58 MB: spilled), in time order: a spill
# file per worker cost ext4 an inode each (2 s of system time), the pass's
# read buffers and, on two threads, the helpers' rings held 4 KB and 16 KB
# a worker (213 MB in all, out of memory in 200 MB of address space); now
# one spill file, 1 KB a worker, and one thread past 1,024 workers read
# with pread. The same result on one thread and on two.
# (times up to 1.4e10 printed with %.0f: mawk's %d stops at 2^31 - 1,
# which put most of them at one instant)
awk 'BEGIN { for (c = 0; c < 7; c++) for (w = 0; w < 20000; w++) {
    t = (c * 20000 + w) * 100000; r = w % 64
    printf "{\"t\":%.0f,\"w\":%d,\"type\":\"acquire_invoke\",\"res\":\"r%d\"}\n", t, w, r
    printf "{\"t\":%.0f,\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r%d\",\"valid_until\":%.0f}\n", t + 10, w, r, t + 90000
    printf "{\"t\":%.0f,\"w\":%d,\"type\":\"enter\",\"res\":\"r%d\"}\n", t + 20, w, r
    printf "{\"t\":%.0f,\"w\":%d,\"type\":\"exit\",\"res\":\"r%d\"}\n", t + 30, w, r
    printf "{\"t\":%.0f,\"w\":%d,\"type\":\"release_invoke\",\"res\":\"r%d\"}\n", t + 40, w, r
    printf "{\"t\":%.0f,\"w\":%d,\"type\":\"release_ok\",\"res\":\"r%d\"}\n", t + 50, w, r } }' \
    >"$T_TMP/wide20k.jsonl"
run_check wide20k-1 "$T_TMP/wide20k.jsonl" --jobs 1
check "20,000 workers, spilled, one thread: checked, 140,000 holds, no violation (exit $rc)" \
    [ "$rc" -eq 0 -a "$(get wide20k-1 checks.mutex.holds) $(get wide20k-1 checks.mutex.violations)" = "140000 0" ]
if [[ $libs != *libasan* ]]; then
    run_limited wide20k-2 200000 "$T_TMP/wide20k.jsonl" --jobs 2
    check "... on two threads in 200 MB: the same result (exit $rc)" \
        cmp "$T_TMP/wide20k-1/result.json" "$T_TMP/wide20k-2/result.json"
else
    echo "ok - # SKIP 20,000 workers in 200 MB: an AddressSanitizer build"
fi

# 20,000 workers of 17 grants each on 64 resources, every event at one
# instant (a clock too coarse to tell them apart) and no renewal: the
# mutex checker's index of a resource's live grants by instant (for the
# renewals' question, checkers/mutex_live.c), made for every long list
# whether a renewal asked or not, took 15 MB more and the check ran out of
# 200 MB of address space ("fatal: out of memory", exit 134); now made
# only when a renewal asks. 340,000 holds, no overlap: ties invent none.
awk 'BEGIN { t = 5000; for (c = 0; c < 17; c++) for (w = 0; w < 20000; w++) { r = w % 64
    printf "{\"t\":%d,\"w\":%d,\"type\":\"acquire_invoke\",\"res\":\"r%d\"}\n", t, w, r
    printf "{\"t\":%d,\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r%d\",\"valid_until\":%d}\n", t, w, r, t + 90000
    printf "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r%d\"}\n", t, w, r
    printf "{\"t\":%d,\"w\":%d,\"type\":\"exit\",\"res\":\"r%d\"}\n", t, w, r
    printf "{\"t\":%d,\"w\":%d,\"type\":\"release_invoke\",\"res\":\"r%d\"}\n", t, w, r
    printf "{\"t\":%d,\"w\":%d,\"type\":\"release_ok\",\"res\":\"r%d\"}\n", t, w, r } }' \
    >"$T_TMP/ties340k.jsonl"
if [[ $libs != *libasan* ]]; then
    run_limited ties340k 200000 "$T_TMP/ties340k.jsonl" --jobs 1
    check "340,000 grants at one instant, no renewal, in 200 MB: checked (exit $rc)" [ "$rc" -eq 0 ]
    check "... 340,000 holds, no violation" \
        [ "$(get ties340k checks.mutex.holds) $(get ties340k checks.mutex.violations)" = "340000 0" ]
else
    echo "ok - # SKIP 340,000 grants at one instant in 200 MB: an AddressSanitizer build"
    echo "ok - # SKIP ..."
fi
rm -f "$T_TMP/ties340k.jsonl"

# One worker holding every one of 65,536 resources at once (granted and
# entered, never exited: a batch job's locks), then 1,000,000 renewals of
# them in a scattered order, then the exits and releases in another: each
# record searched the worker's grants for its resource, all of them (29.7
# s for 300,000 renewals, a Release build); now through an index by
# resource (util/keyslots.h) once a worker has 32. One hold per resource:
# no violation.
awk 'BEGIN { n = 65536; t = 0
    for (i = 0; i < n; i++) {
        printf "{\"t\":%d,\"w\":0,\"type\":\"acquire_ok\",\"res\":\"r%d\",\"valid_until\":%d}\n", t, i, t + 1000000
        printf "{\"t\":%d,\"w\":0,\"type\":\"enter\",\"res\":\"r%d\"}\n", t + 1, i; t += 10 }
    for (j = 0; j < 1000000; j++) {
        printf "{\"t\":%d,\"w\":0,\"type\":\"renew_ok\",\"res\":\"r%d\",\"valid_until\":%d}\n", t, (j * 7919) % n, t + 1000000; t += 10 }
    for (k = 0; k < n; k++) {
        printf "{\"t\":%d,\"w\":0,\"type\":\"exit\",\"res\":\"r%d\"}\n", t, (k * 40503) % n
        printf "{\"t\":%d,\"w\":0,\"type\":\"release_ok\",\"res\":\"r%d\"}\n", t + 1, (k * 40503) % n; t += 10 } }' \
    >"$T_TMP/held64k.jsonl"
run_check held64k "$T_TMP/held64k.jsonl"
check "65,536 resources held by one worker, 10^6 renewals: checked, no violation (exit $rc)" \
    [ "$rc" -eq 0 -a "$(get held64k checks.mutex.holds) $(get held64k checks.mutex.violations)" = "65536 0" ]
check "... 10^6 renewals counted" [ "$(get held64k counts.renewals)" = 1000000 ]

# 200 workers granted r0 and entering 500 times each, never an exit or a
# release (100,000 grants live at once, each lease run out 500 ns after
# its grant), then 1,000 renewals in turn (each renews all 500 grants of
# its worker), then every worker crashes: every renewal but those of the
# last grant finds later grants made after its lease ran out, all live:
# 1,000 * 500 - 5 renewed after loss, by 99,999 grants. Each grant a
# renewal raised walked the live grants (and a lease's fifth raise walked
# them again to keep only the raises still asked about): the square of
# the grants (152 s, a Release build: killed at the limit); now they are
# found by grant instant (checkers/mutex_live.c): 0.5 s.
awk 'BEGIN { t = 0
    for (k = 0; k < 500; k++) for (w = 0; w < 200; w++) { t += 1000
        printf "{\"t\":%d,\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r0\",\"valid_until\":%d}\n", t, w, t + 500
        printf "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r0\"}\n", t + 1, w }
    for (j = 0; j < 1000; j++) { t += 1000
        printf "{\"t\":%d,\"w\":%d,\"type\":\"renew_ok\",\"res\":\"r0\",\"valid_until\":%d}\n", t, j % 200, t + 500 }
    t += 1000
    for (w = 0; w < 200; w++) printf "{\"t\":%d,\"w\":%d,\"type\":\"crash\"}\n", t, w }' \
    >"$T_TMP/renewlate.jsonl"
run_check renewlate "$T_TMP/renewlate.jsonl" --jobs 1
check "100,000 grants never released, renewed after their leases ran out: checked (exit $rc)" \
    [ "$rc" -eq 1 ]
check "... 499,995 renewals after loss by 99,999 grants" \
    [ "$(get renewlate checks.mutex.renewed_after_loss) $(get renewlate checks.mutex.renewed_after_loss_holds)" = "499995 99999" ]
check "... 100,000 holds, 99,999 violations, one incident" \
    [ "$(get renewlate checks.mutex.holds) $(get renewlate checks.mutex.violations) $(get renewlate checks.mutex.incidents)" = "100000 99999 1" ]
t_finish
