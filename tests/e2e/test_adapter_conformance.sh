#!/usr/bin/env bash
# Every bundled adapter configuration (tests/e2e/adapters.sh) passes
# `lockstorm adapter-test`: handshake, grant, busy, release, stale release,
# renew, renew after expiry, unknown op, garbage, a reply slower than the
# timeout, an answer under a blackhole partition, bye. Fails (never skips)
# when the adapters' packages are not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"
need_adapters || t_finish

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
# the check itself must bite: an adapter that answers with wrong ids fails it
set +e
timeout 120 "$LS" adapter-test -- "$SRC/tests/fixtures/bad_adapter.py" wrong-ids >"$T_TMP/bad.out" 2>&1
rc=$?
set -e
check "a wrong-ids adapter fails adapter-test (exit $rc)" [ "$rc" -eq 1 ]
check "... with FAIL lines naming the checks" grep -q '^FAIL grant' "$T_TMP/bad.out"
t_finish
