#!/usr/bin/env bash
# Every bundled adapter configuration (tests/e2e/adapters.sh) passes
# `lockstorm adapter-test`: handshake, grant, busy, release, stale release,
# renew, renew after expiry, renew by a stale token, unknown op, garbage, a
# reply slower than the timeout, an answer under a blackhole partition, bye.
# Fails (never skips) when the adapters' packages are not installed. The
# checks must bite: an adapter answering with wrong ids fails, and so does
# one whose renew is an unconditional PEXPIRE (the classic extend bug,
# tests/fixtures/pexpire_adapter.py), while its correct twin passes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"
need_adapters || t_finish
# adapter-test makes its scratch directory under $TMPDIR and keeps it when
# a check fails (the negative controls below); lib.sh points $TMPDIR at the
# test's own temporary directory

cd "$SRC" # the adapters' commands are relative to the source tree
for spec in "${ADAPTERS[@]}"; do
    IFS='|' read -r name nodes cmd opts <<<"$spec"
    read -r -a argv <<<"$(echo "$cmd" | tr -d '[],')"
    out=$T_TMP/$name.out
    set +e
    timeout 120 "$LS" adapter-test --nodes "$nodes" --options "$opts" -- "${argv[@]}" >"$out" 2>&1
    rc=$?
    set -e
    if [ "$rc" -eq 0 ] && grep -q "adapter-test: [0-9]* passed, 0 failed" "$out"; then
        ok "$name: adapter-test passes ($(grep -c '^PASS' "$out") checks, $(grep -c '^SKIP' "$out") skipped)"
    else
        fail "$name: adapter-test exit $rc: $(grep -E '^FAIL|error' "$out" | head -3 | tr '\n' ' ')"
    fi
done
check "the runs that passed left no scratch directory" \
    sh -c "! ls -d '$T_TMP'/lockstorm-adapter-test-* >/dev/null 2>&1"
# the check itself must bite: an adapter that answers with wrong ids fails it
set +e
timeout 120 "$LS" adapter-test -- "$SRC/tests/fixtures/bad_adapter.py" wrong-ids >"$T_TMP/bad.out" 2>&1
rc=$?
set -e
check "a wrong-ids adapter fails adapter-test (exit $rc)" [ "$rc" -eq 1 ]
check "... with FAIL lines naming the checks" grep -q '^FAIL grant' "$T_TMP/bad.out"
kept=$(sed -n 's/.*(scratch directory \(.*\))$/\1/p' "$T_TMP/bad.out" | head -1)
check "... its scratch directory kept, under \$TMPDIR ($kept)" \
    sh -c "case '$kept' in '$T_TMP'/lockstorm-adapter-test-*) [ -f '$kept/adapter.stderr' ] ;; *) false ;; esac"
# the extend bug: a renew that does not check the token
fx=$SRC/tests/fixtures/pexpire_adapter.py
set +e
timeout 120 "$LS" adapter-test -- "$fx" >"$T_TMP/pexpire.out" 2>&1
rc=$?
timeout 120 "$LS" adapter-test -- "$fx" correct >"$T_TMP/pexpire-ok.out" 2>&1
rc_ok=$?
set -e
check "an unconditional-PEXPIRE renew fails adapter-test (exit $rc)" [ "$rc" -eq 1 ]
check "... on the stale-token renew alone, naming the bug" \
    sh -c "grep -q '^FAIL renew by a stale token .*does not check the token (an unconditional PEXPIRE' '$T_TMP/pexpire.out' &&
           [ \"\$(grep -c '^FAIL' '$T_TMP/pexpire.out')\" -eq 1 ]"
check "its token-checked twin passes (exit $rc_ok)" \
    sh -c "[ $rc_ok -eq 0 ] && grep -q '^PASS renew by a stale token' '$T_TMP/pexpire-ok.out'"
t_finish
