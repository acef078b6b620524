#!/usr/bin/env bash
# A PASS must be evidence (docs/checkers.md "Evidence"): `lockstorm check`
# compares the event logs of a real run with what its run.json lists. From
# one short naive-del run with violations (expectations off, so the verdict
# is the checkers' own): all logs deleted, one log deleted, a log copied in
# from a second run, a bit flipped in the middle of a log each give exit 4
# with the gap named in result.json's "evidence"; a run whose adapter is
# missing is recorded as failed and checks unknown; the intact directory
# checks exactly as the run did. Until the overall verdict reads
# evidence.complete (harness/verdict.c), these assert on the exit code of
# runs without `expect:` and on verdict_checks / evidence in the JSON.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

base=$T_TMP/base
run_ls "$base" "$WL/naive-del.yaml" --set duration=3s --set 'expect={}'
check "the base run found violations (exit $RC)" [ "$RC" -eq 1 ] ||
    { cat "$base.stderr"; t_finish; exit 1; }
t_no_leftovers "$base"
id=$(sed -n 's/^ *"run_id": "\([0-9a-f]*\)",*$/\1/p' "$base/run.json")
check "run.json has a 32-hex-digit run id ($id)" [ "${#id}" -eq 32 ]
check "the run's result: evidence complete" [ "$(get "$base" evidence.complete)" = true ]
check "the run's result names the run id" [ "$(get "$base" evidence.run_id)" = "$id" ]
check "the run's result: 6 of 6 logs" [ "$(get "$base" evidence.logs.found)/$(get "$base" evidence.logs.expected)" = 6/6 ]
check "each log header carries the run id" \
    [ "$(od -A n -t x1 -j 64 -N 16 "$base/events/worker-003.bin" | tr -d ' \n')" = "$id" ]
violations=$(get "$base" checks.mutex.violations)
rm -f "$base/result.json"

# checked DESC WANT_RC GAP: `check` of $T_TMP/rd exits WANT_RC, evidence
# incomplete, verdict_checks unknown, a gap containing GAP
rd=$T_TMP/rd
mk() { rm -rf "$rd"; cp -r "$base" "$rd"; }
checked() {
    local desc=$1 want=$2 gap=$3
    set +e
    timeout 60 "$LS" check "$rd" --json >"$T_TMP/out.json" 2>"$T_TMP/err"
    local rc=$?
    set -e
    local gaps complete vc
    gaps=$("$LS" get "$T_TMP/out.json" evidence.gaps 2>/dev/null) || gaps="($gaps)"
    complete=$("$LS" get "$T_TMP/out.json" evidence.complete 2>/dev/null) || complete="($complete)"
    vc=$("$LS" get "$T_TMP/out.json" verdict_checks 2>/dev/null) || vc="($vc)"
    if [ "$rc" -eq "$want" ] && [ "$complete" = false ] && [ "$vc" = unknown ] &&
        grep -qF -- "$gap" <<<"$gaps"; then
        ok "$desc (exit $rc): $gap"
    else
        fail "$desc (exit $rc, complete $complete, verdict_checks $vc): gaps $gaps; $(head -c 300 "$T_TMP/err")"
    fi
}

mk; rm "$rd"/events/*
checked "all logs deleted" 4 "events/: no event logs (run.json lists 6)"
mk; rm "$rd/events/worker-002.bin"
checked "one log deleted" 4 "events/worker-002.bin: missing (worker 2 epoch 0"
check "one log deleted: the missing log is counted" \
    [ "$(get "$T_TMP/out.json" evidence.logs.missing)" = 1 ]

other=$T_TMP/other
run_ls "$other" "$WL/naive-del.yaml" --set duration=1s --set 'expect={}'
check "a second run ran (exit $RC)" [ "$RC" -le 1 ]
mk; cp "$other/events/worker-001.bin" "$rd/events/worker-001.bin"
checked "a log of another run copied over one" 4 "events/worker-001.bin: a log of another run (run id"
check "the copied log is counted foreign" [ "$(get "$T_TMP/out.json" evidence.logs.foreign)" = 1 ]
mk; cp "$other/events/worker-001.bin" "$rd/events/worker-009.bin"
checked "a log of another run added" 4 "events/worker-009.bin: a log of another run"

mk; f=$rd/events/worker-004.bin; sz=$(stat -c %s "$f")
byte=$(od -A n -t u1 -j $((sz / 2)) -N 1 "$f" | tr -d ' ')
printf "\\$(printf %03o $((byte ^ 4)))" | dd of="$f" bs=1 seek=$((sz / 2)) conv=notrunc status=none
checked "one bit flipped in the middle of a log" 4 "events/worker-004.bin: damaged after record"
check "the flipped log is counted damaged" [ "$(get "$T_TMP/out.json" evidence.logs.damaged)" = 1 ]

# the intact directory: the run's verdict, complete evidence
mk
set +e
"$LS" check "$rd" --json >"$T_TMP/out.json" 2>"$T_TMP/err"
rc=$?
set -e
check "intact: check exits as the run did (exit $rc)" [ "$rc" -eq 1 ]
check "intact: evidence complete, same violations" \
    [ "$(get "$T_TMP/out.json" evidence.complete)/$(get "$T_TMP/out.json" checks.mutex.violations)" = "true/$violations" ]

# a JSONL history has no run to compare with: complete, run_state null
"$LS" log export "$base" >"$T_TMP/h.jsonl"
set +e
"$LS" check --history "$T_TMP/h.jsonl" --json >"$T_TMP/out.json" 2>"$T_TMP/err"
rc=$?
set -e
check "history: checked (exit $rc), evidence complete, run_state null" \
    [ "$rc" -eq 1 -a "$(get "$T_TMP/out.json" evidence.complete)/$(get "$T_TMP/out.json" evidence.run_state)" = "true/null" ]

# a run whose adapter is missing: exit 3, recorded as failed, never a pass
failed=$T_TMP/failed
run_ls "$failed" "$WL/naive-del.yaml" --set duration=2s --set 'expect={}' \
    --set lock.impl=external --set 'lock.options={command: [/nonexistent/adapter]}'
check "failed start: run exits 3 ($RC)" [ "$RC" -eq 3 ]
check "failed start: run.json state failed" grep -q '"state": "failed"' "$failed/run.json"
check "failed start: run.json has the error" grep -q '"error": "worker .*/nonexistent/adapter' "$failed/run.json"
t_no_leftovers "$failed"
rd=$failed
checked "failed start" 4 "run.json: the run failed: worker"
t_finish
