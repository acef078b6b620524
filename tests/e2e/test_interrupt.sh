#!/usr/bin/env bash
# Ctrl-C (SIGINT) and SIGTERM mid-run: the harness stops at once, leaves a
# readable run directory (run.json says interrupted, result.json written),
# exits with a non-passing code, and no process of the run remains.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for sig in INT TERM; do
    d=$T_TMP/int-$sig
    "$LS" run "$WL/demo.yaml" --out "$d" --quiet --set duration=60s >"$d.stdout" 2>"$d.stderr" &
    pid=$!
    # wait until workers are logging and a fault has started
    check "SIG$sig: run got going" wait_for 20 grep -q '"event":"start"' "$d/faults.jsonl"
    t0=$(date +%s%N)
    kill -"$sig" "$pid"
    set +e
    wait "$pid"
    rc=$?
    set -e
    t1=$(date +%s%N)
    check "SIG$sig: exit code is not a pass ($rc)" [ "$rc" -eq 1 -o "$rc" -eq 4 ]
    check "SIG$sig: stopped within 10s ($(( (t1 - t0) / 1000000 )) ms)" [ $(( (t1 - t0) / 1000000 )) -lt 10000 ]
    check "SIG$sig: run.json says interrupted" grep -q '"interrupted": true' "$d/run.json"
    check "SIG$sig: result.json written" [ -s "$d/result.json" ]
    check "SIG$sig: result says interrupted" [ "$(get "$d" interrupted)" = true ]
    check "SIG$sig: verdict is not pass" [ "$(get "$d" verdict)" != pass ]
    t_no_leftovers "$d"
    set +e
    "$LS" check "$d" >/dev/null
    crc=$?
    set -e
    check "SIG$sig: lockstorm check reads the interrupted run ($crc)" [ "$crc" -eq 1 -o "$crc" -eq 4 ]
done
t_finish
