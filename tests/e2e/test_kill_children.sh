#!/usr/bin/env bash
# One of the run's own processes SIGKILLed from outside mid-run -- a worker,
# a lock node, the proxy, the storage node (docs/reliability.md): the run
# still ends through its teardown with a verdict (never a pass: it did not
# run as planned), result.json is written, run.json's incidents and the
# result's warnings name what died, and within 2 s nothing of the run is
# left (the run is started under setsid; its session names every process).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# pid_of RUN_DIR WHAT: the pid run.json records for WHAT (a worker, node,
# proxy or storage), once it is recorded
pid_of() {
    local v
    case $2 in
        worker) v=$("$LS" get "$1/run.json" workers.1.pid) ;;
        node) v=$("$LS" get "$1/run.json" nodes.0.pid) ;;
        proxy) v=$("$LS" get "$1/run.json" proxy.pid) ;;
        storage) v=$("$LS" get "$1/run.json" storage.pid) ;;
    esac
    [ -n "$v" ] && [ "$v" != null ] && [ "$v" -gt 1 ] && echo "$v"
}
recorded() { [ -f "$1/run.json" ] && pid_of "$1" "$2" >/dev/null; }
# the run is under way: its first fault (the demo's pause, at 1 s) started
logging() { grep -qs '"event":"start"' "$1/faults.jsonl"; }

not_error() { ! grep -q "error" "$1"; }
declare -A what_text=([worker]="worker 1" [node]="lock node 0" [proxy]="the proxy"
                      [storage]="the storage node")
for what in worker node proxy storage; do
    d=$T_TMP/$what
    setsid "$LS" run "$WL/demo.yaml" --out "$d" --quiet --set duration=3s --set 'expect={}' \
        --set cluster.proxy=true \
        >"$d.stdout" 2>"$d.stderr" &
    pid=$!
    if ! wait_for 15 recorded "$d" "$what" || ! wait_for 15 logging "$d"; then
        fail "$what: the run did not get going"
        t_kill KILL "$pid"
        wait "$pid" || true
        continue
    fi
    victim=$(pid_of "$d" "$what")
    kill -KILL "$victim"
    set +e
    wait "$pid"
    rc=$?
    set -e
    check "$what killed: the run ends with a verdict, not an error (exit $rc)" \
        [ "$rc" -eq 1 -o "$rc" -eq 4 ]
    check "$what killed: result.json written" [ -s "$d/result.json" ]
    check "$what killed: run.json names the incident" grep -q "${what_text[$what]}" "$d/run.json"
    check "$what killed: the result warns about it" \
        grep -q "incident: ${what_text[$what]}" "$d/result.json"
    check "$what killed: the run cannot pass" [ "$(get "$d" verdict)" != pass ]
    check "$what killed: stderr has no error line" not_error "$d.stderr"
    t_no_session_leftovers "$pid" "$what killed"
done
t_finish
