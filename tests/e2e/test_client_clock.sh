#!/usr/bin/env bash
# Client clock faults reach adapter processes (docs/faults.md "Workers: the
# client clock"): every adapter runs with the LD_PRELOAD clock shim, and the
# `clock` probe (docs/protocol.md) shows what its runtime's wall clock did.
# - redis-lock 1.0.0 under a slow client clock deletes its successor's key
#   (lock-broken, caught), and every adapter's Date.now() was verified moved
#   by the step (-1000 ms) on the fault's start line;
# - the compare-and-delete lock under the same faults: no lock-broken;
# - the end's probes (after the restore: a shift of ~0) are
#   "indistinguishable", never "verified": an unshifted clock passes them too;
# - with a shim that shifts nothing (LOCKSTORM_CLOCK_SHIM pointing at a
#   library without the clock functions) the probe says "not moved", never
#   "verified": a fault that did not reach the runtime is visible;
# - Python's time.time() (redis-py adapter) moves by +3000 ms too.
# Fails (never skips) when the adapters' packages are not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"

need_adapters || t_finish
cd "$SRC" # the adapters' commands are relative to the source tree

# probes RUN_DIR WHAT: one line per worker of the first clock fault's start
# (WHAT=start) or end line: "worker result observed_offset_ms expected_offset_ms"
# (spaces in the result as _)
probes() {
    python3 - "$1/faults.jsonl" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") != sys.argv[2] or o.get("id") != 0:
        continue
    for c in o.get("clocks", []):
        a = c.get("adapter_clock", {})
        print(c.get("worker"), str(a.get("result")).replace(" ", "_"), a.get("observed_offset_ms"),
              a.get("expected_offset_ms"))
PY
}

# all_probes RUN_DIR WHAT RESULT LO HI: every worker's probe has RESULT, the
# fault's shift at the probe (expected_offset_ms) lies in LO..HI (a drift
# moves it on between the fault's start and the probe), and the runtime's
# clock showed it within 50 ms (verified, indistinguishable) or showed no
# shift (not_moved)
all_probes() {
    local n=0 bad=0 w r obs exp want
    while read -r w r obs exp; do
        n=$((n + 1))
        [ "$r" = "$3" ] || bad=$((bad + 1))
        want=$exp
        [ "$3" = not_moved ] && want=0
        awk -v o="$obs" -v e="$exp" -v w="$want" -v lo="$4" -v hi="$5" 'BEGIN {
            d = o - w; if (d < 0) d = -d; exit !(d <= 50 && e >= lo && e <= hi) }' ||
            bad=$((bad + 1))
    done < <(probes "$1" "$2")
    [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

# 1. redis-lock: the bug, caught; the shim verified in every adapter
d=$T_TMP/redis-lock
run_ls "$d" "$WL/adapters/redis-lock-client-clock.yaml"
check "redis-lock under a slow client clock: its expectations hold (exit $RC; $(tail -c 300 "$d.stdout"))" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
expect_val "$d" faults.0.adapter_clock.verified == 4
check "redis-lock: every adapter's Date.now() moved by the fault's shift (-1000 ms, then a quarter speed) at the start ($(probes "$d" start | tr '\n' ';'))" \
    all_probes "$d" start verified -2200 -995
check "redis-lock: and back at the end, which no probe can tell from a clock never moved ($(probes "$d" end | tr '\n' ';'))" \
    all_probes "$d" end indistinguishable -5 5
expect_val "$d" faults.0.adapter_clock.indistinguishable == 0
check "redis-lock: the probes are kept in adapters/worker-000.clock.jsonl" \
    grep -q '"result":"verified"' "$d/adapters/worker-000.clock.jsonl"
check "redis-lock: result.json lists the clock extension in adapter.caps" \
    sh -c "'$LS' get '$d' adapter.caps | grep -q clock"
t_no_leftovers "$d"

# 2. the compare-and-delete twin: the same faults, no lock-broken
d=$T_TMP/handrolled
run_ls "$d" "$WL/adapters/ioredis-handrolled-client-clock.yaml"
check "ioredis-handrolled under the same faults: its expectations hold (exit $RC; $(tail -c 300 "$d.stdout"))" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken == 0
check "ioredis-handrolled: Date.now() moved too ($(probes "$d" start | tr '\n' ';'))" \
    all_probes "$d" start verified -2200 -995

# 3. a shim that shifts nothing: the probe says so
# awk reads all of ldconfig's output (no `exit`): under pipefail, an awk that
# left early made ldconfig die of SIGPIPE, the assignment fail, and set -e
# end this test silently (seen twice in CI, never alone: it depends on how
# much ldconfig had written when awk left)
noshim=$(ldconfig -p | awk '!f && /libm\.so\.6 .*x86-64|libm\.so\.6 \(libc6/ {print $NF; f = 1}')
[ -n "$noshim" ] || noshim=/lib/x86_64-linux-gnu/libm.so.6
d=$T_TMP/noshim
LOCKSTORM_CLOCK_SHIM=$noshim run_ls "$d" "$WL/adapters/redis-lock-client-clock.yaml" \
    --set 'expect={}' --set duration=2500ms
check "a preload that shifts nothing: every probe says 'not moved' ($(probes "$d" start | tr '\n' ';'))" \
    all_probes "$d" start not_moved -2200 -995
expect_val "$d" faults.0.adapter_clock.not_moved == 4
check "a preload that shifts nothing: the start line does not say verified" \
    sh -c "! grep '\"id\":0,\"event\":\"start\"' '$d/faults.jsonl' | grep -q 'probe: verified'"

# 4. Python: time.time() moves by +3 s
cat >"$T_TMP/py.yaml" <<YAML
name: client-clock-python
seed: 5
duration: 2s
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 1s
  options: {command: [adapters/python/redis_py_lock.py]}
workers: {count: 2, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
faults:
  - {kind: clock, target: all-workers, jump: 3s, at: 500ms, duration: 1s}
YAML
d=$T_TMP/python
run_ls "$d" "$T_TMP/py.yaml"
check "redis-py run: exit 0 ($RC)" [ "$RC" -eq 0 ]
check "redis-py: time.time() moved by +3000 ms ($(probes "$d" start | tr '\n' ';'))" \
    all_probes "$d" start verified 2995 3005
t_no_leftovers "$d"
t_finish
