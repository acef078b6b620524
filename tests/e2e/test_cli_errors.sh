#!/usr/bin/env bash
# Bad input on the command line and in workloads: one line on stderr naming
# what is wrong, exit 2, and nothing started (no run directory, no process).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# expect_usage DESCRIPTION PATTERN ARGS...
expect_bad() {
    local desc=$1 pat=$2; shift 2
    set +e
    (cd "$T_TMP" && "$LS" "$@" >"$T_TMP/out" 2>"$T_TMP/err")
    local rc=$?
    set -e
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] && grep -q -- "$pat" "$T_TMP/err"; then
        ok "$desc"
    else
        fail "$desc (exit $rc): $(cat "$T_TMP/err")"
    fi
}

expect_bad "unknown command" "unknown command" frobnicate
expect_bad "unknown command, before its options" "unknown command 'frobnicate'" frobnicate --jobs 2
expect_bad "unknown command, before a bad option" "unknown command 'frobnicate'" frobnicate --bogus
expect_bad "unknown option" "unknown option" run demo --bogus
expect_bad "missing workload file" "nope.yaml" run nope.yaml
printf 'name: x\nworkers:\n  cont: 3\n' >"$T_TMP/typo.yaml"
expect_bad "unknown key with suggestion" "typo.yaml:3:3:.*count" run "$T_TMP/typo.yaml"
printf 'lock:\n  impl: redlok\n' >"$T_TMP/impl.yaml"
expect_bad "unknown lock impl lists the valid ones" "impl.yaml:2:9:.*redis-single" run "$T_TMP/impl.yaml"
printf 'workers: {count: 0}\n' >"$T_TMP/range.yaml"
expect_bad "out of range" "range.yaml:1:.*range" run "$T_TMP/range.yaml"
expect_bad "bad --set" "set" run demo --set lock.tt=1s
check "no run directory was created" [ ! -e "$T_TMP/runs" ]
expect_bad "check on a non-run directory" "" check "$T_TMP"
t_finish
