#!/usr/bin/env bash
# Lease renewal: a renewal thread extends the lease while the hold lasts.
# Holds longer than the TTL stay safe when renewed (and are caught as
# stale-holder when not); a holder paused past its TTL finds its renewal
# refused, records `lost`, and with on_lost: abort ends the hold early.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

cat >"$T_TMP/renew.yaml" <<'YAML'
name: renew
duration: 3s
lock: {impl: redis-single, ttl: 200ms, renew: {every: 60ms}}
workers: {count: 3, resources: 1, hold: {dist: fixed, value: 450ms}, think: {dist: fixed, value: 2ms}}
YAML

# holds of 450 ms under a 200 ms TTL, renewed every 60 ms: no violation
d=$T_TMP/renewed
run_ls "$d" "$T_TMP/renew.yaml"
check "renewed: exit 0 ($RC)" [ "$RC" -eq 0 ]
expect_val "$d" counts.renewals ">" 10
expect_val "$d" counts.renew_failed == 0
expect_val "$d" checks.mutex.violations == 0
t_no_leftovers "$d"

# the same holds without renewal overstay the TTL: stale-holder violations
d=$T_TMP/unrenewed
run_ls "$d" "$T_TMP/renew.yaml" --set lock.renew=none
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d" counts.renewals == 0

# a holder paused past its TTL and resumed mid-hold (holds of 1.5 s, pauses of
# 300 ms): its next renewal is refused -> lost, and on_lost: abort ends the
# hold at once, without the write
d=$T_TMP/paused
run_ls "$d" "$T_TMP/renew.yaml" --set duration=4s --set lock.ttl=150ms --set lock.renew.every=40ms \
    --set 'workers.hold=1500ms' \
    --set 'faults=[{kind: pause, target: holder, at: 500ms, duration: 300ms, every: 1s}]'
expect_val "$d" counts.lost ">" 0
expect_val "$d" counts.renew_failed ">" 0
"$LS" log export "$d" >"$T_TMP/paused.jsonl"
check "paused: after 'lost' the worker's next hold event is its exit, with no write" \
    awk '/"type":"lost"/ { w = $0; sub(/.*"w":/, "", w); sub(/,.*/, "", w); want[w] = 1; next }
         { w = $0; sub(/.*"w":/, "", w); sub(/,.*/, "", w) }
         want[w] && /"type":"store_write"/ { bad = 1 }
         want[w] && /"type":"exit"/ { delete want[w]; seen = 1 }
         END { exit !(seen && !bad) }' "$T_TMP/paused.jsonl"
t_no_leftovers "$d"
t_finish
