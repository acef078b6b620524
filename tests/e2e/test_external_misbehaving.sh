#!/usr/bin/env bash
# The `external` lock against a misbehaving adapter (tests/fixtures/
# bad_adapter.py): an adapter that fails its handshake (exits, says nothing,
# says garbage, speaks another protocol) fails the run with exit 3 and its
# stderr quoted; one that never answers, answers garbage, huge lines or
# wrong ids costs unknown outcomes and counted protocol errors, each kind
# told once on lockstorm's stderr (at most 5 kinds a run, then one line
# saying the rest are only counted), and the run still ends with a verdict; one that exits mid-hold is restarted and its
# grant recorded lost. Never a hang (every run is bounded by `timeout`),
# never a process left behind (each run in a session of its own).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

FIX=$SRC/tests/fixtures/bad_adapter.py
command -v python3 >/dev/null || { fail "python3 is needed for the fixture adapter"; t_finish; }

# bad_run MODE DIR [ARGS...]: run the fixture in MODE under setsid and a hard
# time bound, with $WORKERS workers (default 1); sets RC, SECS and SID
bad_run() {
    local mode=$1 d=$2; shift 2
    cat >"$T_TMP/$mode.yaml" <<YAML
name: bad-$mode
duration: 2s
cluster: {nodes: 1}
lock: {impl: external, ttl: 300ms, options: {command: ["$FIX", $mode], request_timeout: 300ms}}
workers: {count: ${WORKERS:-1}, resources: 1, hold: 100ms, think: 5ms}
YAML
    local t0 t1
    t0=$(date +%s%N)
    set +e
    timeout 40 setsid bash -c 'echo $$ >"$0.sid"; exec "$@"' "$d" "$LS" run "$T_TMP/$mode.yaml" \
        --out "$d" --quiet "$@" >"$d.stdout" 2>"$d.stderr"
    RC=$?
    set -e
    t1=$(date +%s%N)
    SECS=$(( (t1 - t0) / 1000000000 ))
    SID=$(cat "$d.sid")
}

# handshake failures: exit 3, one clear message quoting the adapter
for spec in "exit-early|exited 1 before its hello|refusing to start" \
            "garbage-hello|instead of its hello|HELLO? is this thing on" \
            "old-protocol|speaks protocol 2|lockstorm speaks 1" \
            "silent|no hello within 10s|its stderr is empty"; do
    IFS='|' read -r mode frag1 frag2 <<<"$spec"
    d=$T_TMP/$mode
    bad_run "$mode" "$d"
    msg=$(cat "$d.stderr")
    check "$mode: exit 3 ($RC)" [ "$RC" -eq 3 ]
    check "$mode: says '$frag1'" grep -qF -- "$frag1" "$d.stderr"
    check "$mode: quotes '$frag2'" grep -qF -- "$frag2" "$d.stderr"
    check "$mode: names the worker and the adapter" grep -q "worker 0 could not start: adapter for worker 0" "$d.stderr"
    t_no_session_leftovers "$SID" "$mode"
done
check "silent: gives up after the 10 s hello timeout, not later ($SECS s)" [ "$SECS" -le 16 ]

# runtime misbehaviour: the run goes on and ends with a verdict: pass, fail
# or unknown (exit 0, 1 or 4; an adapter that garbles every reply lets no
# grant through, too little activity to judge: unknown. These runs were
# "fail" only while liveness counted the last wait to the run's end, past
# the workers' last attempt, and called the 2 s run's resource stuck)
verdict_rc() { [ "$1" -le 1 ] || [ "$1" -eq 4 ]; }
d=$T_TMP/never-answers
bad_run never-answers "$d"
check "never-answers: ends with a verdict (exit $RC)" [ "$RC" -le 1 ]
check "never-answers: bye ignored, SIGTERM ignored: SIGKILL, still within bounds ($SECS s)" [ "$SECS" -le 12 ]
expect_val "$d" counts.unknown ">" 3
expect_val "$d" counts.grants == 0
expect_val "$d" adapter.timeouts ">" 3
check "never-answers: the session log shows the escalation" grep -q "SIGKILL" "$d/adapters/worker-000.log"
t_no_session_leftovers "$SID" never-answers

for mode in garbage wrong-ids huge-lines; do
    d=$T_TMP/$mode
    bad_run "$mode" "$d"
    check "$mode: ends with a verdict (exit $RC)" verdict_rc "$RC"
    check "$mode: within bounds ($SECS s)" [ "$SECS" -le 10 ]
    expect_val "$d" adapter.protocol_errors ">" 3
    expect_val "$d" counts.unknown ">" 3
    check "$mode: a protocol error quoted in result.json" \
        [ "$("$LS" get "$d" adapter.protocol_error_samples.0)" != null ]
    check "$mode: quoted in the session log" grep -q "protocol error" "$d/adapters/worker-000.log"
    told=$(grep -c "adapter protocol error:" "$d.stderr" || true)
    check "$mode: told on stderr, one line per kind, not one per error ($told lines)" \
        [ "$told" -eq 1 ]
    check "$mode: the stderr line names the worker and the count's place" \
        grep -q "warning: worker 0: adapter protocol error: .*adapter.protocol_errors" "$d.stderr"
    t_no_session_leftovers "$SID" "$mode"
done
check "garbage: the stderr line quotes the adapter's line" \
    grep -q "not JSON.*'<html>502 Bad Gateway</html>'" "$T_TMP/garbage.stderr"
check "wrong-ids: the stderr line says what was wrong" \
    grep -q "adapter protocol error: reply to unknown id [0-9]*: '{" "$T_TMP/wrong-ids.stderr"

# several workers, one kind of error: told once for the whole run
d=$T_TMP/garbage3
WORKERS=3 bad_run garbage "$d"
check "garbage, 3 workers: ends with a verdict (exit $RC)" verdict_rc "$RC"
expect_val "$d" adapter.protocol_errors ">" 9
check "garbage, 3 workers: one stderr line for the run ($(grep -c 'adapter protocol error' "$d.stderr" || true))" \
    [ "$(grep -c 'adapter protocol error' "$d.stderr" || true)" -eq 1 ]
t_no_session_leftovers "$SID" garbage3

# an adapter wrong in nine ways: five kinds told, then one line for the rest
d=$T_TMP/chatty
WORKERS=2 bad_run chatty "$d"
check "chatty: ends with a verdict (exit $RC)" verdict_rc "$RC"
expect_val "$d" adapter.protocol_errors ">=" 9
told_re='worker [0-9]*: adapter protocol error:'
kinds=$(grep "$told_re" "$d.stderr" | sed 's/.*adapter protocol error: //; s/[0-9][0-9]*/#/g' |
        cut -c1-40 | sort -u | wc -l)
check "chatty: five lines, five distinct kinds ($(grep -c "$told_re" "$d.stderr" || true) lines, $kinds kinds)" \
    [ "$(grep -c "$told_re" "$d.stderr" || true)/$kinds" = 5/5 ]
check "chatty: then one line saying the rest are only counted" \
    [ "$(grep -c 'more kinds of adapter protocol error: only counted' "$d.stderr" || true)" -eq 1 ]
check "chatty: nothing else on stderr ($(wc -l <"$d.stderr") lines)" [ "$(wc -l <"$d.stderr")" -eq 6 ]
check "chatty: the summary's adapter line counts them" \
    grep -q "^adapter  *bad-adapter chatty caps=ttl,renew processes=2 protocol_errors=$(get "$d" adapter.protocol_errors)\$" "$d/summary.txt"
t_no_session_leftovers "$SID" chatty
check "huge-lines: the real replies came late and were dropped" \
    [ "$("$LS" get "$T_TMP/huge-lines" adapter.late_replies)" -gt 3 ]

d=$T_TMP/exit-mid-hold
bad_run exit-mid-hold "$d"
check "exit-mid-hold: ends with a verdict (exit $RC)" [ "$RC" -le 1 ]
expect_val "$d" adapter.restarts ">=" 1
expect_val "$d" adapter.exits ">=" 1
expect_val "$d" counts.lost ">=" 1
expect_val "$d" counts.grants ">" 3
check "exit-mid-hold: lost recorded inside the hold, which ended at once" \
    bash -c "'$LS' log export '$d' | grep -A1 '\"type\":\"lost\"' | grep -q '\"type\":\"exit\"'"
t_no_session_leftovers "$SID" exit-mid-hold

t_finish
