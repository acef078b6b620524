#!/usr/bin/env bash
# Nothing left behind, nothing lost, when the harness itself is SIGKILLed
# (docs/reliability.md). Eight runs, each killed at a random moment 0-2.5 s
# in (stratified: start-up, mid-run, teardown and reports; the seed is
# printed, LS_KILL_SEED replays it): within 2 s no process of that run
# remains (the run is started under setsid, so its session id names every
# process it started, redis-server included) and no port it listened on is
# still open. `lockstorm check` on what the dead run left gives a verdict
# over what was recorded and says the run was incomplete (or, killed before
# the workers started, exit 2 saying there is nothing to check). Last, a new
# run notices a process of an earlier run that is still alive (a real
# redis-server this test starts and records in a fake run directory) and
# says so on stderr without touching it; this test stops it by pid.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

seed=${LS_KILL_SEED:-$(( $(date +%s) % 100000 ))}
echo "# LS_KILL_SEED=$seed"
RANDOM=$seed
# A 2.2 s demo run has its nodes, proxy and workers up within ~0.05 s, stops
# its workers at ~2.25 s and has written its reports (gnuplot children
# included) by ~2.45 s: one slot for start-up, five mid-run, two for
# teardown, checking and reports (slower machines shift kills earlier in
# the run's life; a run that already ended is counted and skipped).
slots=(5:60 60:500 500:1000 1000:1500 1500:2000 2000:2250 2250:2350 2350:2500)
for i in "${!slots[@]}"; do
    lo=${slots[$i]%:*} hi=${slots[$i]#*:}
    ms=$(( lo + RANDOM % (hi - lo) ))
    d=$T_TMP/k$i
    setsid "$LS" run "$WL/demo.yaml" --out "$d" --quiet --set duration=2200ms \
        >"$d.stdout" 2>"$d.stderr" &
    pid=$!
    sleep "$(awk -v m="$ms" 'BEGIN {printf "%.3f", m / 1000}')" # the random moment is the point
    sid=$(awk '{print $6}' "/proc/$pid/stat" 2>/dev/null || echo "")
    if [ "$sid" != "$pid" ]; then
        # the run ended before the moment came (or setsid forked): nothing to kill
        wait "$pid" || true
        ok "run $i (${ms} ms): ended before the kill"
        continue
    fi
    procs=$(session_procs "$sid")
    ports=$(listen_ports $procs)
    if ! kill -KILL "$pid" 2>/dev/null; then
        wait "$pid" || true
        ok "run $i (${ms} ms): ended just before the kill"
        continue
    fi
    wait "$pid" 2>/dev/null || true
    echo "# run $i: killed at ${ms} ms with $(echo $procs | wc -w) processes, ports: $(echo $ports)"
    t_no_session_leftovers "$sid" "run $i killed at ${ms} ms" $ports
    # what it left can still be checked
    set +e
    "$LS" check "$d" >"$d.check.out" 2>"$d.check.err"
    crc=$?
    set -e
    if [ -f "$d/run.json" ]; then
        check "run $i: check gives a verdict over what was recorded (exit $crc)" \
            [ "$crc" -eq 1 -o "$crc" -eq 4 ]
        if grep -q '"state": "running"' "$d/run.json"; then
            check "run $i: check says the run was incomplete" \
                grep -q "the run is incomplete" "$d.check.err"
            check "run $i: an incomplete run never passes" \
                grep -qE '^lockstorm: (FAIL|UNKNOWN)' "$d.check.out"
        fi
    elif [ -d "$d" ]; then
        check "run $i: killed before its workers: check refuses with one line (exit $crc)" \
            [ "$crc" -eq 2 -a "$(wc -l <"$d.check.err")" -eq 1 ]
    fi
    check "run $i: no temp file outside the run directory" \
        [ -z "$(ls -A "$T_TMP" | grep -v -E "^k[0-9]+(\\.|$)")" ]
done

# ---- a leftover of an earlier run is noticed, never killed ----
rdir=$T_TMP/runs
mkdir -p "$rdir/old-run/events" "$T_TMP/n"
redis_up() { redis-cli -p "$1" ping 2>/dev/null | grep -q PONG; }
# up or dead: stop polling as soon as the stand-in exited (its port may have
# been taken by a test running alongside between our probe and its bind)
up_or_dead() { redis_up "$1" || ! kill -0 "$2" 2>/dev/null; }
rpid=
trap 't_kill TERM "$rpid"; t_cleanup' EXIT
for attempt in 1 2 3 4 5; do
    port=$(( 20000 + RANDOM % 30000 ))
    while ss -ltnH "sport = :$port" | grep -q .; do port=$(( 20000 + RANDOM % 30000 )); done
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$T_TMP/n" \
        --daemonize no >"$T_TMP/n/redis.log" 2>&1 &
    rpid=$!
    wait_for 10 up_or_dead "$port" "$rpid" || true
    redis_up "$port" && break
    echo "# stand-in redis-server on port $port (attempt $attempt) did not come up:"
    sed 's/^/#   /' "$T_TMP/n/redis.log"
    kill "$rpid" 2>/dev/null || true
    wait "$rpid" 2>/dev/null || true
    rpid=
done
check "our stand-in leftover redis-server is up" redis_up "$port"
now=$(date +%s%N)
cat >"$rdir/old-run/run.json" <<EOF
{"format": "lockstorm-run", "version": 1, "state": "running", "start_real_ns": $now,
 "duration_ns": 1000000000, "harness": {"pid": 999999999},
 "workers": [], "nodes": [{"index": 0, "port": $port, "pid": $rpid}], "proxy": null,
 "storage": null}
EOF
(cd "$T_TMP" && "$LS" run "$WL/demo.yaml" --quiet --set duration=300ms --set 'expect={}' \
    --set 'faults=[]' >"$T_TMP/new.out" 2>"$T_TMP/new.err") || true
check "a new run warns about the earlier run's live process" \
    grep -q "lockstorm: warning: a process of an earlier run is still alive: pid $rpid (a lock node: redis-server" "$T_TMP/new.err"
check "the warning names the earlier run directory" grep -q "runs/old-run" "$T_TMP/new.err"
check "the new run left it alone" kill -0 "$rpid"
set +e
"$LS" check "$rdir/old-run" >/dev/null 2>"$T_TMP/old.err"
set -e
check "check on the earlier run directory warns too" grep -q "pid $rpid" "$T_TMP/old.err"
# a pid recorded for a process that is not what the run started is not blamed
sed -i "s/\"pid\": $rpid/\"pid\": $$/" "$rdir/old-run/run.json"
set +e
"$LS" check "$rdir/old-run" >/dev/null 2>"$T_TMP/old2.err"
set -e
not_in() { ! grep -q "$1" "$2"; }
check "a reused pid (not redis-server) is not reported" not_in "still alive" "$T_TMP/old2.err"
kill "$rpid"
wait "$rpid" 2>/dev/null || true
t_finish
