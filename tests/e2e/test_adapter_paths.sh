#!/usr/bin/env bash
# Adapter commands and what they need: (1) a relative path in
# lock.options.command resolves against the workload file's directory
# first, then against the directory lockstorm runs in (the bundled
# workloads' `adapters/node/...`, run from the repository root, keep
# working from a workload copied elsewhere); when both have the file, the
# workload's directory wins. (2) A bundled adapter whose npm packages are
# missing fails with one line that says "run scripts/install-adapters.sh"
# (the SDK's MODULE_NOT_FOUND handler; the harness quotes it), in
# adapter-test and in a run; an adapter elsewhere is told to npm install.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"
need_adapters || t_finish

workload() { # workload FILE NAME: a short, fault-free run of minimal.js
    cat >"$1" <<EOF
name: $2
seed: 3
duration: 1s
cluster: {nodes: 1, persistence: none}
lock:
  impl: external
  ttl: 500ms
  retry: {attempts: 1000, delay: 10ms, jitter: 5ms}
  options:
    command: [node, adapters/node/minimal.js]
workers: {count: 2, resources: 1, hold: {dist: uniform, min: 20ms, max: 40ms}, think: 5ms}
expect:
  checks.mutex.violations: 0
  counts.grants: ">= 5"
EOF
}

# (1a) only the current directory has it: the old behaviour
mkdir -p "$T_TMP/elsewhere"
workload "$T_TMP/elsewhere/w.yaml" cwd-relative
(cd "$SRC" && run_ls "$T_TMP/cwd-run" "$T_TMP/elsewhere/w.yaml"; echo "$RC" >"$T_TMP/cwd-run.rc")
check "a cwd-relative adapter path still runs from the repository root (exit $(cat "$T_TMP/cwd-run.rc"); $(tail -c 300 "$T_TMP/cwd-run.stderr" | tr '\n' ' '))" \
    [ "$(cat "$T_TMP/cwd-run.rc")" -eq 0 ]

# (1b) both have it: the workload's directory wins
mkdir -p "$T_TMP/near/adapters/node"
cat >"$T_TMP/near/adapters/node/minimal.js" <<EOF
process.stderr.write('near-the-workload copy\n');
require('$SRC/adapters/node/minimal.js');
EOF
workload "$T_TMP/near/w.yaml" near-wins
(cd "$SRC" && run_ls "$T_TMP/near-run" "$T_TMP/near/w.yaml"; echo "$RC" >"$T_TMP/near-run.rc")
check "the workload-relative adapter runs (exit $(cat "$T_TMP/near-run.rc"))" \
    [ "$(cat "$T_TMP/near-run.rc")" -eq 0 ]
check "... the copy next to the workload, not the one in the current directory" \
    grep -q 'near-the-workload copy' "$T_TMP/near-run/adapters/worker-000.stderr"
check "... named by its absolute path in result.json" \
    grep -q "\"$T_TMP/near/adapters/node/minimal.js\"" "$T_TMP/near-run/result.json"
# and from a third directory, only the workload's has it
(cd "$T_TMP/elsewhere" && run_ls "$T_TMP/near-run2" "../near/w.yaml"; echo "$RC" >"$T_TMP/near-run2.rc")
check "... also from another directory, the workload named relatively (exit $(cat "$T_TMP/near-run2.rc"))" \
    sh -c "[ $(cat "$T_TMP/near-run2.rc") -eq 0 ] && grep -q 'near-the-workload copy' '$T_TMP/near-run2/adapters/worker-000.stderr'"

# (2) a bundled adapter without its npm packages: a copy of the tree
# without node_modules (nothing above $T_TMP has one either)
tree=$T_TMP/checkout
mkdir -p "$tree/adapters/node" "$tree/scripts"
cp -r "$SRC/adapters/node/lib" "$SRC/adapters/node/sdk" "$SRC/adapters/node/ioredis-handrolled.js" \
    "$SRC/adapters/node/minimal.js" "$tree/adapters/node/"
cp "$SRC/scripts/install-adapters.sh" "$tree/scripts/"
set +e
(cd "$tree" && timeout 60 "$LS" adapter-test -- node adapters/node/ioredis-handrolled.js) \
    >"$T_TMP/missing.at" 2>&1
rc=$?
set -e
check "adapter-test on a bundled adapter without its packages fails ($rc)" \
    grep -q '^FAIL handshake' "$T_TMP/missing.at"
check "... saying which package and 'run scripts/install-adapters.sh'" \
    grep -q "npm package 'ioredis' is not installed: run scripts/install-adapters.sh" "$T_TMP/missing.at"
workload "$tree/w.yaml" missing-packages
(cd "$tree" && run_ls "$T_TMP/missing-run" w.yaml; echo "$RC" >"$T_TMP/missing-run.rc")
check "a run of it fails (exit $(cat "$T_TMP/missing-run.rc")) with the same one line on stderr" \
    sh -c "[ $(cat "$T_TMP/missing-run.rc") -ne 0 ] && grep -q 'run scripts/install-adapters.sh' '$T_TMP/missing-run.stderr'"
# an adapter outside a lockstorm checkout is told to npm install its own package
mkdir -p "$T_TMP/mine"
cp -r "$SRC/adapters/node/sdk" "$T_TMP/mine/"
printf '{"name":"mine","private":true}\n' >"$T_TMP/mine/package.json"
printf "require('./sdk');\nrequire('ioredis');\n" >"$T_TMP/mine/a.js"
set +e
node "$T_TMP/mine/a.js" </dev/null 2>"$T_TMP/mine.err"
set -e
check "an adapter of your own is told to npm install in its package directory" \
    grep -q "npm package 'ioredis' is not installed: run npm install in $T_TMP/mine\$" "$T_TMP/mine.err"
t_finish
