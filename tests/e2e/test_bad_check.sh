#!/usr/bin/env bash
# Bad input to the checker (docs/reliability.md): every JSONL history in
# tests/bad-input/history/ (NAME.jsonl, its expected fragment in NAME.expect)
# fed to `lockstorm check --history` exits 2 with exactly one line on stderr
# naming FILE:LINE (FILE: when the file as a whole is wrong) and what to do;
# and run directories with missing, foreign or damaged files (made here from
# one real run) get either a verdict with the damage listed in the result's
# warnings, or one clear line and exit 2 (not what lockstorm writes) / 3
# (cannot be read) -- never a crash, a hang or a sanitizer report. Also: the
# CLI's own argument errors (exit 2, one line, nothing created).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CAT=$SRC/tests/bad-input/history

# one_line_exit DESC WANT_RC FRAGMENT CMD...: exit WANT_RC, exactly one line
# on stderr containing FRAGMENT, no crash (exit >= 128 is a signal)
one_line_exit() {
    local desc=$1 want=$2 frag=$3; shift 3
    set +e
    timeout 30 "$@" >"$T_TMP/out" 2>"$T_TMP/err"
    local rc=$?
    set -e
    local nl
    nl=$(wc -l <"$T_TMP/err")
    if [ "$rc" -eq "$want" ] && [ "$nl" -eq 1 ] && grep -qF -- "$frag" "$T_TMP/err"; then
        ok "$desc"
    else
        fail "$desc (exit $rc, $nl lines): $(head -c 400 "$T_TMP/err")"
    fi
}

# ---- JSONL histories ----
n=0
for f in "$CAT"/*.jsonl; do
    frag=$(head -n 1 "${f%.jsonl}.expect")
    one_line_exit "history $(basename "$f")" 2 "$f$frag" "$LS" check --history "$f"
    n=$((n + 1))
done
check "the history catalogue has at least 20 cases ($n)" [ "$n" -ge 20 ]
mkdir "$T_TMP/dir.jsonl"
one_line_exit "history: a directory" 2 "dir.jsonl: cannot read: Is a directory" \
    "$LS" check --history "$T_TMP/dir.jsonl"
mkfifo "$T_TMP/fifo.jsonl"
one_line_exit "history: a FIFO (no hang)" 2 "fifo.jsonl: cannot read: not a regular file" \
    "$LS" check --history "$T_TMP/fifo.jsonl"
one_line_exit "history: a missing file" 2 "nope.jsonl: cannot read: No such file" \
    "$LS" check --history "$T_TMP/nope.jsonl"
# a good history still passes through the same path
printf '%s\n' '{"t":1,"w":0,"type":"acquire_invoke","res":"r0","attempt":1}' \
    '{"t":2,"w":0,"type":"acquire_ok","res":"r0","token":"a","fence":1,"valid_until":100000000}' \
    '{"t":3,"w":0,"type":"enter","res":"r0"}' '{"t":4,"w":0,"type":"exit","res":"r0"}' \
    '{"t":5,"w":0,"type":"release_invoke","res":"r0"}' '{"t":6,"w":0,"type":"release_ok","res":"r0"}' \
    >"$T_TMP/good.jsonl"
set +e
"$LS" check --history "$T_TMP/good.jsonl" >/dev/null 2>"$T_TMP/err"
rc=$?
set -e
check "a good history is checked (exit $rc)" [ "$rc" -eq 0 ]

# ---- CLI arguments ----
cwd=$(mktemp -d "$T_TMP/cwd-XXXXXX")
cli() { # cli DESC FRAGMENT ARGS...
    local desc=$1 frag=$2; shift 2
    one_line_exit "cli: $desc" 2 "$frag" bash -c 'cd "$1" && shift && exec "$@"' _ "$cwd" "$LS" "$@"
}
cli "unknown command" "unknown command 'frobnicate'" frobnicate
cli "unknown option" "unknown option '--bogus'" run demo --bogus
cli "run without workload" "run needs exactly one WORKLOAD" run
cli "run with two workloads" "run needs exactly one WORKLOAD" run demo demo
cli "empty workload argument" "an argument is empty" run ''
cli "--seed not a number" "seed: expected a non-negative integer, got 'abc'" run demo --seed abc
cli "--seed negative" "seed: expected a non-negative integer" run demo --seed -1
cli "--seed over 2^64" "is out of range 0..18446744073709551615" run demo --seed 99999999999999999999999
cli "--seed without value" "--seed needs a value" run demo --seed
cli "--out empty" "--out needs a non-empty value" run demo --out ''
cli "--out a file" "exists and is not an empty directory" run demo --out /etc/hostname
# a non-empty dir of the test's own: were the refusal to fail, the run must
# not land in the source tree
mkdir -p "$T_TMP/full" && : >"$T_TMP/full/keep"
cli "--out a non-empty dir" "exists and is not an empty directory" run demo --out "$T_TMP/full"
cli "--format unknown" "unknown format 'bogus'" run demo --format bogus
cli "--progress unknown" "--progress 'bogus'" run demo --progress bogus
cli "--set without =" "expected key.path=value" run demo --set noequals
cli "--set unknown key" "unknown key" run demo --set lock.tll=1s
cli "--set bad index" "out of range" run demo --set 'faults[9].kind=pause'
cli "--replay with a workload" "takes no WORKLOAD" run demo --replay "$T_TMP"
cli "--replay of a non-run" "workload.yaml: cannot read" run --replay "$T_TMP/nothing"
cli "check without args" "check needs a RUN_DIR" check
cli "check RUN_DIR and --history" "not both" check "$T_TMP" --history "$T_TMP/good.jsonl"
cli "check --capacity 0" "--capacity '0'" check --history "$T_TMP/good.jsonl" --capacity 0
cli "check --capacity huge" "--capacity '99999999999'" check --history "$T_TMP/good.jsonl" --capacity 99999999999
cli "check --near-miss without unit" "--near-miss" check --history "$T_TMP/good.jsonl" --near-miss 10
cli "check --out without --history" "--out is for --history" check "$T_TMP" --out x
cli "report without args" "report needs a RUN_DIR" report
cli "list unknown" "unknown category 'bogus'" list bogus
cli "log without export" "log export RUN_DIR" log
cli "get without path" "usage: lockstorm get" get
cli "validate without workload" "validate needs exactly one WORKLOAD" validate
check "CLI errors created nothing in the working directory" [ -z "$(ls -A "$cwd")" ]

# ---- run directories ----
base=$T_TMP/base
run_ls "$base" "$WL/demo.yaml" --set duration=1500ms --set 'faults=[]' --set 'expect={}'
check "the base run ran ($RC)" [ "$RC" -eq 0 ] || { cat "$base.stderr"; t_finish; exit 1; }
rm -f "$base"/result.json "$base"/summary.txt
mk() { rm -rf "$T_TMP/rd"; cp -r "$base" "$T_TMP/rd"; }
rd=$T_TMP/rd

# refused DESC WANT_RC FRAGMENT: `check rd` is refused with one line
refused() { one_line_exit "rundir: $1" "$2" "$3" "$LS" check "$rd"; }
# checked DESC WARNING [GAP]: `check rd` gives a verdict (0, 1 or 4) and its
# result lists a warning containing WARNING; with GAP, data the verdict
# needed is lost: exit 4 and an evidence gap containing GAP
checked() {
    local desc=$1 warn=$2 gap=${3:-}
    set +e
    timeout 30 "$LS" check "$rd" --json >"$T_TMP/out" 2>"$T_TMP/err"
    local rc=$?
    set -e
    local gaps
    gaps=$("$LS" get "$T_TMP/out" evidence.gaps 2>/dev/null) || gaps=""
    if [ -n "$gap" ] && { [ "$rc" -ne 4 ] || ! grep -qF -- "$gap" <<<"$gaps"; }; then
        fail "rundir: $desc (exit $rc): wanted exit 4 and a gap '$gap'; gaps: $gaps"
    elif [ "$rc" -le 1 -o "$rc" -eq 4 ] && grep -qF -- "$warn" "$T_TMP/out"; then
        ok "rundir: $desc (exit $rc, warned${gap:+, gap})"
    else
        fail "rundir: $desc (exit $rc): $(head -c 300 "$T_TMP/err"); warnings: $("$LS" get "$T_TMP/out" warnings 2>&1 | head -c 300)"
    fi
}

mk; rm -rf "$rd"/*;                     refused "empty directory" 2 "not a lockstorm run directory"
mk; rm "$rd/run.json";                  refused "no run.json" 2 "not a lockstorm run directory (no run.json)"
mk; rm -r "$rd/events";                 refused "no events/" 2 "not a lockstorm run directory (no events/)"
mk; rm -r "$rd/events"; echo x >"$rd/events"; refused "events is a file" 2 "no events/"
mk; echo garbage >"$rd/run.json";       refused "run.json not JSON" 2 "run.json: offset 0"
mk; echo '[1]' >"$rd/run.json";         refused "run.json an array" 2 "run.json: not a JSON object"
mk; echo '{"format":"x"}' >"$rd/run.json"; refused "run.json foreign" 2 "format 'x', not a lockstorm run"
mk; rm "$rd/run.json"; mkdir "$rd/run.json"; refused "run.json a directory" 2 "run.json: cannot read: Is a directory"
mk; rm "$rd/run.json"; mkfifo "$rd/run.json"; refused "run.json a FIFO (no hang)" 2 "run.json: cannot read: not a regular file"
mk; echo hi >"$rd/events/worker-000.bin"; refused "log shorter than a header" 2 "shorter than its 128-byte header"
mk; head -c 8192 /dev/urandom >"$rd/events/worker-000.bin"; refused "log of random bytes" 2 "bad magic"
mk; rm "$rd/events/worker-000.bin"; mkdir "$rd/events/worker-000.bin"; refused "log a directory" 2 "not a regular file"
mk; rm "$rd/events/worker-000.bin"; mkfifo "$rd/events/worker-000.bin"; refused "log a FIFO (no hang)" 2 "not a regular file"
mk; : >"$rd/events/worker-001.bin";     checked "empty log (died at creation)" "worker 1: event log has no header" \
    "events/worker-001.bin: no header, though worker 1's process exited cleanly"
mk; head -c 4194432 /dev/zero >"$rd/events/worker-001.bin"; checked "zero log (died before its header)" "worker 1: event log has no header" \
    "events/worker-001.bin: no header"
mk; truncate -s 1000 "$rd/events/worker-002.bin"; checked "log cut mid-record" "worker 2: event log incomplete" "events/worker-002.bin: damaged after record"
mk; f=$rd/events/worker-003.bin; sz=$(stat -c %s "$f")
printf '\x55\x55\x55\x55' | dd of="$f" bs=1 seek=$((sz - 100)) conv=notrunc status=none
checked "log with a corrupt tail" "worker 3: event log has a torn tail" \
    "events/worker-003.bin: damaged after record"
mk; echo x >"$rd/events/notes.txt";     checked "foreign file in events/" "events/notes.txt: not a worker event log, ignored"
check "rundir: a file in events/ that is no worker log is no gap" \
    [ "$("$LS" get "$T_TMP/out" evidence.complete)" = true ]
mk; echo 'garbage: [' >"$rd/workload.yaml"; checked "workload.yaml broken" "workload.yaml: " "workload.yaml: unreadable"
# well-formed YAML the loader refuses (an unknown lock): checked with defaults, a gap, as before
# the checkers read workload.yaml through model/rundir (issue 15: no behaviour change)
mk; sed -i 's/^  impl: .*/  impl: redis-nonexistent/' "$rd/workload.yaml"
checked "workload.yaml refused by the loader" "workload.yaml: " "workload.yaml: unreadable"
check "rundir: a refused workload.yaml is not echoed" [ "$("$LS" get "$T_TMP/out" workload)" = null ]
mk; rm "$rd/workload.yaml";             checked "workload.yaml missing" "workload.yaml missing" "workload.yaml: missing"
mk; echo garbage >"$rd/faults.jsonl";   checked "faults.jsonl garbage" "faults.jsonl:1: ignored" "faults.jsonl:1: damaged line"
mk; rm "$rd/faults.jsonl";              checked "faults.jsonl missing" "faults.jsonl: No such file" "faults.jsonl: No such file"
mk; echo garbage >"$rd/storage.jsonl";  checked "storage.jsonl garbage" "storage.jsonl:1: ignored" "storage.jsonl:1: damaged line"
mk; rm "$rd/storage.jsonl"; mkdir "$rd/storage.jsonl"; checked "storage.jsonl a directory" "storage.jsonl: Is a directory" "storage.jsonl: Is a directory"
mk; echo '{"format":"lockstorm-run","workers":"x","leftover_keys":5,"end_ns":"x"}' >"$rd/run.json"
checked "run.json with wrong types" "worker" "list: the event logs cannot be matched"
mk; sed -i 's/"state": "finished"/"state": "running"/' "$rd/run.json"
checked "run.json still running (harness died)" "the run is incomplete" \
    "the harness did not finish the run"
grep -q "the run is incomplete" "$T_TMP/err" && ok "rundir: check says on stderr that the run is incomplete" ||
    fail "rundir: no 'incomplete' line on stderr: $(cat "$T_TMP/err")"
t_finish
