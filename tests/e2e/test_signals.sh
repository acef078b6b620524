#!/usr/bin/env bash
# Signals are always honoured (docs/reliability.md): 20 runs, each sent
# SIGINT, SIGTERM or SIGHUP at a random moment of a phase where the harness
# waits on something -- start-up of many workers and of adapters, a fault
# waiting for a holder that never comes (issue 14's reproduction: the
# signal was taken by the fault's wait and then ignored for the rest of the
# run), holders paused by faults, a failover waiting out its replication
# cut, the teardown waiting for the workers' natural end, the checker pass
# -- and twice a second signal just after the first. For each: the harness
# says on stderr that it is stopping within 2 s of the signal (or has
# exited by then), it exits within a bound and never with a pass, its
# run.json is final, `lockstorm check` reads what it left, and no process
# of the run remains (the run is started under setsid: its session id names
# every process it started). Then: a second signal cuts the workers'
# SIGTERM grace short (a worker whose adapter ignores SIGTERM is SIGKILLed
# within 1 s of it), and a suite signalled in its first scenario's checking
# does not start the second. The seed is printed; LS_SIGNALS_SEED replays
# it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

seed=${LS_SIGNALS_SEED:-$(( $(date +%s) % 100000 ))}
echo "# LS_SIGNALS_SEED=$seed"
RANDOM=$seed
W=$T_TMP/wl
mkdir -p "$W"

cat >"$W/startup.yaml" <<'EOF'
name: sig-startup
duration: 5s
workers: {count: 12, resources: 3, hold: 5ms, think: 5ms}
EOF
cat >"$W/adapters.yaml" <<EOF
name: sig-adapters
duration: 5s
lock: {impl: external, ttl: 300ms, options: {command: [$SRC/adapters/python/redis_py_lock.py]}}
workers: {count: 3, resources: 1, hold: 5ms, think: 5ms}
EOF
# issue 14's reproduction: the only grant is at the start (think 1h), so
# every occurrence of the pause waits its full second for a holder
cat >"$W/holder-wait.yaml" <<'EOF'
name: sig-holder-wait
duration: 12s
workers: {count: 1, resources: 1, hold: 0, think: 1h}
faults:
  - {kind: pause, target: holder, at: 100ms, duration: 100ms, every: 1s}
EOF
cat >"$W/pause.yaml" <<'EOF'
name: sig-pause
duration: 10s
lock: {ttl: 300ms}
workers: {count: 4, resources: 2, hold: {dist: uniform, min: 20ms, max: 80ms}, think: 5ms}
faults:
  - {kind: pause, target: holder, at: 300ms, duration: 700ms, every: 800ms}
EOF
# a manual failover waiting 3 s with the replication cut before the kill
cat >"$W/failover.yaml" <<'EOF'
name: sig-failover
duration: 10s
cluster: {topology: replicated, replicas: 2, sentinels: 0}
lock: {ttl: 600ms}
workers: {count: 2, resources: 1, hold: 20ms, think: 5ms}
faults:
  - {kind: failover, mode: manual, how: kill, cut_before: 3s, at: 300ms, duration: 50ms}
EOF
# the run ends at 1 s; the teardown then waits up to 5 s for the holds of
# 3 s to end by themselves
cat >"$W/teardown.yaml" <<'EOF'
name: sig-teardown
duration: 1s
workers: {count: 3, resources: 3, hold: 3s, think: 1ms}
EOF
# many events quickly: the checker pass and the charts take a while
cat >"$W/checking.yaml" <<'EOF'
name: sig-checking
duration: 1500ms
workers: {count: 4, resources: 2, hold: 0, think: 0}
EOF

# phase|workload|from_ms|to_ms|when (start: after the harness started;
# finished: after run.json says the run finished, i.e. in the checking)
phases=(
    "startup|startup|20|400|start"
    "startup|startup|400|900|start"
    "adapters|adapters|50|1500|start"
    "holder-wait|holder-wait|500|3000|start"
    "holder-wait|holder-wait|500|3000|start"
    "holder-wait|holder-wait|500|3000|start"
    "holder-wait|holder-wait|500|3000|start"
    "pause|pause|600|2500|start"
    "pause|pause|600|2500|start"
    "pause|pause|600|2500|start"
    "failover|failover|1200|2800|start"
    "failover|failover|1200|2800|start"
    "teardown|teardown|1300|2500|start"
    "teardown|teardown|1300|2500|start"
    "teardown|teardown|1300|2500|start"
    "checking|checking|0|150|finished"
    "checking|checking|0|150|finished"
    "checking|checking|0|150|finished"
    "twice|pause|600|2000|start"
    "twice|startup|100|1500|start"
)
sigs=(INT TERM HUP)

# ended PID: the process is gone or a zombie (it is our child until waited)
ended() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null || echo X); [ "$s" = Z ] || [ "$s" = X ]; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
said_stopping() { grep -qE '^lockstorm: SIG(INT|TERM|HUP): (stopping|checking stopped)' "$1"; }

for i in "${!phases[@]}"; do
    IFS='|' read -r phase wl lo hi when <<<"${phases[$i]}"
    ms=$(( lo + RANDOM % (hi - lo + 1) ))
    k=$(( RANDOM % 3 ))
    sig=${sigs[$k]}
    d=$T_TMP/r$i
    setsid "$LS" run "$W/$wl.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
    pid=$!
    t_start=$(now_ms)
    if [ "$when" = finished ]; then
        # poll (bounded) until the run's final run.json is written: checking begins
        wait_for 30 grep -qs '"state": "finished"' "$d/run.json" || true
    fi
    t_from=$(now_ms)
    while [ $(( $(now_ms) - t_from )) -lt "$ms" ] && ! ended "$pid"; do sleep 0.01; done
    desc="run $i ($phase, SIG$sig at ${ms} ms)"
    [ "$when" = finished ] && desc="run $i ($phase, SIG$sig ${ms} ms after the run finished)"
    if ended "$pid"; then
        set +e
        wait "$pid"
        rc=$?
        set -e
        # only the checking may be over that soon; anything else is a broken run
        if [ "$when" = finished ]; then
            ok "$desc: ended before the signal (exit $rc)"
        else
            fail "$desc: ended before the signal (exit $rc): $(tail -n 2 "$d.stderr" | tr '\n' ' ')"
        fi
        continue
    fi
    sid=$pid
    t_sig=$(now_ms)
    kill -"$sig" "$pid"
    if [ "$phase" = twice ]; then
        sleep 0.05 # another signal (two of one kind pending at once are one)
        kill -"${sigs[$(( (k + 1) % 3 ))]}" "$pid" 2>/dev/null || true
    fi
    # teardown started: the stderr line, or the harness already gone
    while ! said_stopping "$d.stderr" && ! ended "$pid" && [ $(( $(now_ms) - t_sig )) -lt 5000 ]; do
        sleep 0.01
    done
    took=$(( $(now_ms) - t_sig ))
    check "$desc: teardown started within 2 s (${took} ms)" [ "$took" -le 2000 ]
    # the wind-down is bounded too
    while ! ended "$pid" && [ $(( $(now_ms) - t_sig )) -lt 20000 ]; do sleep 0.02; done
    if ! ended "$pid"; then
        fail "$desc: still running 20 s after the signal"
        t_kill KILL "$pid"
    fi
    set +e
    wait "$pid"
    rc=$?
    set -e
    echo "# $desc: exit $rc after $(( $(now_ms) - t_sig )) ms; $(grep -c . "$d.stderr") stderr lines"
    state=$(sed -n 's/^ *"state": "\([a-z]*\)".*/\1/p' "$d/run.json" 2>/dev/null | head -n1 || true)
    if [ "$phase" = twice ] && [ "$rc" -le 128 ]; then
        # taken in the teardown ("again") or in the checking ("checking stopped")
        check "$desc: the second signal is taken and said too" \
            [ "$(grep -cE '^lockstorm: SIG(INT|TERM|HUP)' "$d.stderr")" -ge 2 ]
    fi
    if [ "$rc" -gt 128 ]; then
        # taken by the default action: before the harness blocked signals
        # (nothing started) or after the run was checked and written
        check "$desc: killed by the signal (exit $rc) only before the run started or after its result" \
            [ ! -f "$d/run.json" -o -s "$d/result.json" ]
    else
        check "$desc: exit code is not a pass (exit $rc)" [ "$rc" -eq 1 -o "$rc" -eq 4 ]
    fi
    if [ -f "$d/run.json" ]; then
        check "$desc: run.json is final (state $state)" [ -n "$state" -a "$state" != running ]
        set +e
        "$LS" check "$d" >"$d.check" 2>"$d.check.err"
        crc=$?
        set -e
        if [ "$state" = finished ]; then
            # the signal came once the run was over (checking): what it left is complete
            check "$desc: lockstorm check gives the finished run a verdict (exit $crc)" \
                [ "$crc" -eq 0 -o "$crc" -eq 1 -o "$crc" -eq 4 ]
        else
            check "$desc: lockstorm check says unknown or fail (exit $crc)" \
                sh -c "[ $crc -eq 4 -o $crc -eq 1 ] && grep -qE '^lockstorm: (UNKNOWN|FAIL)' '$d.check'"
        fi
    else
        check "$desc: no run.json: stopped before anything started (exit $rc)" [ ! -s "$d/result.json" ]
    fi
    t_no_session_leftovers "$sid" "$desc"
done

# ---- a second signal cuts the workers' SIGTERM grace short ----
# The worker's adapter never answers and ignores SIGTERM (bad_adapter.py
# never-answers): after the first signal its worker needs ~3 s to let go
# (a release that times out, bye, SIGTERM, SIGKILL), longer than the
# harness's 2 s SIGTERM grace. A second signal 100 ms after the first must
# end that grace: the worker is SIGKILLed at once, by pid.
cat >"$W/stubborn.yaml" <<EOF
name: sig-stubborn
duration: 20s
lock: {impl: external, ttl: 300ms, options: {command: [$SRC/tests/fixtures/bad_adapter.py, never-answers]}}
workers: {count: 1, resources: 1, hold: 5ms, think: 5ms}
EOF
d=$T_TMP/stubborn
setsid "$LS" run "$W/stubborn.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
pid=$!
# worker_pid: the first pid recorded under "workers" in run.json
worker_pid() { sed -n '/"workers"/,$p' "$d/run.json" 2>/dev/null | grep -m1 -o '"pid": [1-9][0-9]*' | grep -o '[0-9]*$'; }
wait_for 30 worker_pid >/dev/null || true
wpid=$(worker_pid || true)
sleep 1 # the worker is waiting on its adapter by now (the moment is not the point: the grace is)
kill -INT "$pid"
sleep 0.1
kill -TERM "$pid"
t_sig=$(now_ms)
while [ -n "$wpid" ] && ! ended "$wpid" && [ $(( $(now_ms) - t_sig )) -lt 5000 ]; do sleep 0.01; done
took=$(( $(now_ms) - t_sig ))
while ! ended "$pid" && [ $(( $(now_ms) - t_sig )) -lt 20000 ]; do sleep 0.02; done
set +e
wait "$pid"
rc=$?
set -e
check "second signal: the worker (pid ${wpid:-?}) is gone within 1 s of it, not after the 2 s grace (${took} ms)" \
    [ -n "$wpid" -a "$took" -lt 1000 ]
check "second signal: said on stderr" grep -q 'SIGTERM again: already stopping' "$d.stderr"
check "second signal: the run still ends with a verdict that is not a pass (exit $rc)" \
    [ "$rc" -eq 4 -o "$rc" -eq 1 ]
t_no_session_leftovers "$pid" "second signal"

# ---- a suite (`lockstorm run DIR`) stops at a signal taken in its checking ----
sd=$T_TMP/suite
mkdir -p "$sd"
cp "$W/checking.yaml" "$sd/a.yaml"
sed 's/^name: sig-checking$/name: sig-checking-2/' "$W/checking.yaml" >"$sd/b.yaml"
setsid "$LS" run "$sd" --out "$T_TMP/suite-out" >"$T_TMP/suite.stdout" 2>"$T_TMP/suite.stderr" &
pid=$!
wait_for 30 grep -qs '"state": "finished"' "$T_TMP/suite-out/sig-checking/run.json" || true
kill -INT "$pid"
t_sig=$(now_ms)
while ! ended "$pid" && [ $(( $(now_ms) - t_sig )) -lt 20000 ]; do sleep 0.02; done
t_kill KILL "$pid"
set +e
wait "$pid"
rc=$?
set -e
echo "# suite: exit $rc; $(tail -n 1 "$T_TMP/suite.stdout")"
check "suite: stopped at the signal (exit $rc), its second scenario never started" \
    [ "$rc" -ne 0 -a ! -e "$T_TMP/suite-out/sig-checking-2" ]
t_no_session_leftovers "$pid" "suite"
t_finish
