#!/usr/bin/env bash
# `lockstorm adapter init node|python DIR` writes a working adapter on the
# SDK (adapters/node/sdk, adapters/python/lockstorm_adapter.py) around a
# correct sample lock, with a workload that runs it: for each language the
# skeleton passes `lockstorm adapter-test` and `lockstorm run` of its
# workload (from another directory: the adapter path resolves against the
# workload's directory) on real redis-servers; then a bug is planted (the
# compare-and-delete release replaced by a plain DEL) and both gates must
# catch it. Node installs the SDK by its file: path with npm, offline from
# npm's cache (scripts/install-adapters.sh filled it). A DIR that is not
# empty is refused with one line, exit 2, nothing written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"
need_adapters || t_finish

# refusals: bad language, missing DIR, non-empty DIR
set +e
"$LS" adapter init rust "$T_TMP/r" >"$T_TMP/r.out" 2>"$T_TMP/r.err"; rc=$?
set -e
check "an unknown language is a usage error (exit $rc)" [ "$rc" -eq 2 ]
check "... and writes nothing" [ ! -e "$T_TMP/r" ]
mkdir -p "$T_TMP/full" && echo keep >"$T_TMP/full/notes.txt"
set +e
"$LS" adapter init node "$T_TMP/full" >"$T_TMP/full.out" 2>"$T_TMP/full.err"; rc=$?
set -e
check "a non-empty DIR is refused (exit $rc)" [ "$rc" -eq 2 ]
check "... with one line saying so ($(cat "$T_TMP/full.err"))" \
    sh -c "[ \$(wc -l <'$T_TMP/full.err') -eq 1 ] && grep -q 'is not empty' '$T_TMP/full.err'"
check "... and nothing written" [ "$(ls "$T_TMP/full")" = notes.txt ]

# the Node SDK packs (npm pack: what `npm install <path>` of a tarball takes)
set +e
(cd "$SRC/adapters/node/sdk" && npm pack --pack-destination "$T_TMP" --loglevel=error) \
    >"$T_TMP/pack.out" 2>&1; rc=$?
set -e
tgz=$(ls "$T_TMP"/lockstorm-adapter-*.tgz 2>/dev/null | head -1)
check "the Node SDK packs with npm pack (exit $rc)" \
    sh -c "[ $rc -eq 0 ] && [ -n '$tgz' ] && tar -tzf '$tgz' | grep -q 'package/index.js'"

# the Node skeleton's ioredis is the one adapters/node pins
cd "$T_TMP" # runs start elsewhere than the skeleton's directory
pinned=$(sed -n 's/^ *"ioredis": "\([^"]*\)".*/\1/p' "$SRC/adapters/node/package.json")

for lang in node python; do
    d=$T_TMP/$lang/my-adapter
    set +e
    "$LS" adapter init "$lang" "$d" >"$T_TMP/$lang.init" 2>&1; rc=$?
    set -e
    check "$lang: adapter init writes the skeleton (exit $rc)" [ "$rc" -eq 0 ]
    check "$lang: ... and prints the commands to run next" \
        grep -q "lockstorm run workload.yaml" "$T_TMP/$lang.init"
    if [ "$lang" = node ]; then
        adapter=(node adapter.js)
        check "node: package.json depends on the SDK by an absolute file: path" \
            grep -q "\"@lockstorm/adapter\": \"file:$SRC/adapters/node/sdk\"" "$d/package.json"
        check "node: ... and on ioredis $pinned, as adapters/node pins it" \
            grep -q "\"ioredis\": \"$pinned\"" "$d/package.json"
        set +e
        (cd "$d" && timeout 60 "$LS" adapter-test -- node adapter.js) >"$T_TMP/noinstall.at" 2>&1
        set -e
        check "node: before npm install, adapter-test says to run it ($(grep -o 'lockstorm adapter error.*' "$T_TMP/noinstall.at" | head -1))" \
            grep -q "lockstorm adapter error: Cannot find module '@lockstorm/adapter'.*: run npm install in $d" \
            "$T_TMP/noinstall.at"
        set +e
        (cd "$d" && timeout 120 npm install --prefer-offline --no-audit --no-fund \
            --loglevel=error) >"$T_TMP/npm.out" 2>&1; rc=$?
        set -e
        check "node: npm install (offline from the cache) (exit $rc; $(tail -2 "$T_TMP/npm.out" | tr '\n' ' '))" \
            [ "$rc" -eq 0 ]
        bug="s/await redis.eval(RELEASE, 1, res, token)/await redis.del(res)/"
    else
        adapter=(/usr/bin/python3 adapter.py)
        bug='s/client.eval(RELEASE, 1, req\["res"\], req\["token"\])/client.delete(req["res"])/'
    fi
    # the protocol: adapter-test from the skeleton's directory, as printed
    set +e
    (cd "$d" && timeout 120 "$LS" adapter-test -- "${adapter[@]}") >"$T_TMP/$lang.at" 2>&1; rc=$?
    set -e
    check "$lang: adapter-test passes (exit $rc; $(grep '^FAIL' "$T_TMP/$lang.at" | head -2 | tr '\n' ' '))" \
        [ "$rc" -eq 0 ]
    # the verdict: run from elsewhere (the command resolves next to workload.yaml)
    run_ls "$T_TMP/$lang-run" "$d/workload.yaml"
    v=$(get "$T_TMP/$lang-run" verdict 2>/dev/null || true)
    check "$lang: lockstorm run of the written workload passes from another directory (exit $RC, $v; $(tail -c 300 "$T_TMP/$lang-run.stderr" | tr '\n' ' '))" \
        sh -c "[ $RC -eq 0 ] && [ '$v' = pass ]"
    expect_val "$T_TMP/$lang-run" counts.grants ">=" 50

    # plant the bug: release = plain DEL, no token check
    sed -i "$bug" "$d/${adapter[1]}"
    check "$lang: the bug is planted" sh -c "! grep -q 'eval(RELEASE' '$d/${adapter[1]}'"
    set +e
    (cd "$d" && timeout 120 "$LS" adapter-test -- "${adapter[@]}") >"$T_TMP/$lang.bug.at" 2>&1
    rc=$?
    set -e
    check "$lang: adapter-test catches the DEL release (exit $rc: $(grep '^FAIL' "$T_TMP/$lang.bug.at" | head -1))" \
        sh -c "[ $rc -eq 1 ] && grep -q '^FAIL' '$T_TMP/$lang.bug.at'"
    run_ls "$T_TMP/$lang-bug" "$d/workload.yaml"
    v=$(get "$T_TMP/$lang-bug" verdict 2>/dev/null || true)
    broken=$(get "$T_TMP/$lang-bug" checks.mutex.by_class.lock_broken 2>/dev/null || true)
    check "$lang: the run's gate fails on it (exit $RC, $v, lock-broken $broken)" \
        sh -c "[ $RC -eq 1 ] && [ '$v' = fail ] && [ '${broken:-0}' -gt 0 ]"
done
t_finish
