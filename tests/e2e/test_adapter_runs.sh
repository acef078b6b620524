#!/usr/bin/env bash
# Every bundled adapter configuration (tests/e2e/adapters.sh) under a short
# run with no faults: exit 0, no violation, grants made, the adapter section
# of result.json filled (name, caps, no restart, no protocol error). Then the
# hand-rolled ioredis lock under holder pauses longer than its TTL shows
# stale-holder violations exactly like the built-in redis-single under the
# same workload (and its fences keep the fenced counter intact); every
# workloads/adapters/*.yaml loads. Fails (never skips) when the adapters'
# packages are not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"

for f in "$WL"/adapters/*.yaml; do
    check "$(basename "$f") loads" "$LS" validate "$f" >/dev/null
done
need_adapters || t_finish
cd "$SRC" # the adapters' commands are relative to the source tree

for spec in "${ADAPTERS[@]}"; do
    IFS='|' read -r name nodes cmd opts <<<"$spec"
    cat >"$T_TMP/$name.yaml" <<YAML
name: nofault-$name
seed: 3
duration: 2s
cluster: {nodes: $nodes}
lock:
  impl: external
  ttl: 1s
  options: {command: $cmd, adapter: $opts}
workers: {count: 3, resources: 2, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
    d=$T_TMP/run-$name
    run_ls "$d" "$T_TMP/$name.yaml"
    check "$name: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
    expect_val "$d" checks.mutex.violations == 0
    expect_val "$d" counts.grants ">" 10
    expect_val "$d" adapter.restarts == 0
    expect_val "$d" adapter.protocol_errors == 0
    expect_val "$d" adapter.processes == 3
    check "$name: result.json names the library ($(get "$d" adapter.name) $(get "$d" adapter.version))" \
        [ "$(get "$d" adapter.name)" != null ]
    check "$name: adapter stderr files in the run directory" [ -f "$d/adapters/worker-000.stderr" ]
    caps=$("$LS" get "$d" adapter.caps | tr -d '[]" \n')
    check "$name: the summary names the adapter, its version and caps, and nothing more" \
        grep -qxF "adapter    $(get "$d" adapter.name) $(get "$d" adapter.version) caps=$caps processes=3" "$d/summary.txt"
    t_no_leftovers "$d"
done

# ioredis-handrolled vs redis-single: holders paused 900 ms past a 500 ms TTL
wl=$WL/adapters/ioredis-handrolled-pause-long.yaml
d=$T_TMP/handrolled-pauses
run_ls "$d" "$wl"
check "handrolled under long pauses: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d" checks.mutex.by_class.lock_broken == 0
expect_val "$d" checks.fencing.fenced_lost_updates == 0
d2=$T_TMP/single-pauses
run_ls "$d2" "$wl" --set lock.impl=redis-single --set 'lock.options={}' --set 'expect={}'
expect_val "$d2" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d2" checks.mutex.by_class.lock_broken == 0
expect_val "$d2" checks.fencing.fenced_lost_updates == 0
t_finish
