#!/usr/bin/env bash
# The nodes' per-run password (docs/reliability.md "Security"): with the
# default cluster.password auto every redis-server of a run refuses a client
# that did not authenticate (NOAUTH) and its command line does not carry the
# password; the built-in locks (redis-single, Redlock on 3 nodes, directly
# and through the proxy), the storage node, a replicated set with sentinels
# (the replica and the sentinels authenticate; a sentinel refuses a
# stranger too) and a Node.js adapter (through the proxy, which
# authenticates for it) all work; the password is in no
# file of the run directory but its 0600 secret files, and in no output.
# cluster.password none leaves the nodes open. topology external takes the
# password from the environment variable cluster.password_env names and
# never writes it anywhere; a missing variable or a wrong password is a
# clear exit 3 that does not quote the password. Load-time refusals: exit 2.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"
. "$(dirname "$0")/nodes.sh"

# no_secret DIR PASSWORD DESC: PASSWORD is in no file of DIR except the
# 0600 secret files nodes/password and nodes/*.conf, nor in DIR.stdout/.stderr
no_secret() {
    local dir=$1 pw=$2 desc=$3 f bad=""
    while IFS= read -r f; do
        case "${f#"$dir"/}" in
            nodes/password | nodes/*.conf)
                [ "$(stat -c %a "$f")" = 600 ] || bad="$bad ${f#"$dir"/}(mode $(stat -c %a "$f"))" ;;
            *) bad="$bad ${f#"$dir"/}" ;;
        esac
    done < <(grep -rlF -- "$pw" "$dir" || true)
    grep -qF -- "$pw" "$dir.stdout" "$dir.stderr" && bad="$bad (lockstorm's output)"
    check "$desc: the password is only in the 0600 secret files [${bad# }]" [ -z "$bad" ]
}

# run_bg NAME: lockstorm run $T_TMP/NAME.yaml into $T_TMP/NAME in the
# background (sets d and runpid); run_wait: wait for it (sets RC)
run_bg() {
    d=$T_TMP/$1
    "$LS" run "$T_TMP/$1.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
    runpid=$!
}
run_wait() { set +e; wait "$runpid"; RC=$?; set -e; }

# ---- a run with the default password: nodes refuse strangers ----
cat >"$T_TMP/single.yaml" <<'YAML'
name: pw-single
duration: 10s
cluster: {nodes: 1}
lock: {impl: redis-single, ttl: 500ms}
workers: {count: 3, resources: 2, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
run_bg single
# runjson DIR EXPR: a value of run.json (python3 expression over j)
runjson() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1/run.json" "$2"; }
wait_for 20 bash -c '[ -s "$1/run.json" ] && grep -q "\"storage\"" "$1/run.json"' _ "$d" || true
port=$(runjson "$d" 'j["nodes"][0]["port"]' || true)
npid=$(runjson "$d" 'j["nodes"][0]["pid"]' || true)
spid=$(runjson "$d" 'j["storage"]["pid"]' || true)
check "run.json names node 0's port ($port)" [ -n "$port" ]
pw=$(cat "$d/nodes/password" 2>/dev/null || true)
check "nodes/password holds a 64-hex-digit password, mode 0600" \
    bash -c '[[ "$1" =~ ^[0-9a-f]{64}$ ]] && [ "$(stat -c %a "$2")" = 600 ]' _ "$pw" "$d/nodes/password"
reply=$(redis-cli -p "$port" ping 2>&1 || true)
check "an unauthenticated client is refused: NOAUTH ($reply)" grep -q NOAUTH <<<"$reply"
reply=$(redis-cli -p "$port" get lockstorm:r0 2>&1 || true)
check "no key can be read without the password ($reply)" grep -q NOAUTH <<<"$reply"
reply=$(REDISCLI_AUTH=$pw redis-cli -p "$port" ping 2>&1 || true)
check "REDISCLI_AUTH=\$(cat RUN/nodes/password) redis-cli works (the documented way): $reply" \
    [ "$reply" = PONG ]
reply=$(REDISCLI_AUTH=wrong-password redis-cli -p "$port" ping 2>&1 || true)
check "a wrong password is refused ($reply)" grep -qE 'WRONGPASS|invalid' <<<"$reply"
check "the node's command line does not carry the password (/proc/$npid/cmdline)" \
    bash -c '[ -r "/proc/$1/cmdline" ] && ! grep -qF -- "$2" "/proc/$1/cmdline"' _ "$npid" "$pw"
check "the storage node requires it too (pid $spid)" \
    bash -c '! grep -qF -- "$2" "/proc/$1/cmdline" && grep -q "requirepass" "$3/nodes/storage.conf"' \
    _ "$spid" "$pw" "$d"
run_wait
check "redis-single with the password: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
expect_val "$d" counts.grants ">" 10
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" checks.fencing.plain_lost_updates == 0
no_secret "$d" "$pw" "redis-single"
t_no_leftovers "$d"

# ---- Redlock (concurrent calls, locks/redis_multi.c), with and without the proxy ----
for proxy in true false; do
    d=$T_TMP/redlock-$proxy
    run_ls "$d" "$WL/redlock.yaml" --set duration=2s --set cluster.proxy=$proxy --set 'faults=[]' \
        --set 'expect={}'
    check "redlock, proxy $proxy: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
    expect_val "$d" counts.grants ">" 10
    expect_val "$d" checks.mutex.violations == 0
    no_secret "$d" "$(cat "$d/nodes/password")" "redlock, proxy $proxy"
    t_no_leftovers "$d"
done

# ---- a replicated set with sentinels: replicas and sentinels authenticate ----
# (8 s: the checks below talk to the run's sentinel and replica while it
# runs; with 3 s a loaded CI machine saw the run end first, 'connection
# refused')
cat >"$T_TMP/repl.yaml" <<'YAML'
name: pw-sentinels
duration: 8s
cluster: {topology: replicated, replicas: 1, sentinels: 3}
lock: {impl: redis-single, ttl: 500ms}
workers: {count: 2, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
run_bg repl
has_sentinels() { runjson "$d" 'len(j["replication"]["sentinels"])' 2>/dev/null | grep -q '^[1-9]'; }
wait_for 30 has_sentinels || true
sport=$(runjson "$d" 'j["replication"]["sentinels"][0]["port"]' || true)
rport=$(runjson "$d" 'j["nodes"][1]["port"]' || true)
reply=$(redis-cli -p "$sport" sentinel get-master-addr-by-name lockstorm 2>&1 || true)
check "a sentinel refuses a client without the password ($sport: $reply)" grep -q NOAUTH <<<"$reply"
reply=$(REDISCLI_AUTH=$(cat "$d/nodes/password") redis-cli -p "$rport" info replication 2>&1 |
    tr -d '\r' | grep '^master_link_status' || true)
check "the replica authenticated to its primary ($reply)" [ "$reply" = "master_link_status:up" ]
run_wait
check "replicated with sentinels: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
expect_val "$d" counts.grants ">" 10
no_secret "$d" "$(cat "$d/nodes/password")" "replicated with sentinels"
t_no_leftovers "$d"

# ---- cluster.password none: open nodes, no secret file ----
d=$T_TMP/none
run_ls "$d" "$T_TMP/single.yaml" --set duration=1s --set cluster.password=none
check "cluster.password none: exit 0 ($RC)" [ "$RC" -eq 0 ]
check "cluster.password none: no nodes/password, no node config file" \
    bash -c '[ ! -e "$1/nodes/password" ] && [ ! -e "$1/nodes/node-0.conf" ]' _ "$d"
check "cluster.password none: echoed in the resolved workload" grep -q 'password: none' "$d/workload.yaml"

# ---- a Node.js adapter through the proxy ----
if need_adapters; then
    cd "$SRC"
    cat >"$T_TMP/node.yaml" <<'YAML'
name: pw-node-adapter
duration: 2s
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 1s
  options: {command: [node, adapters/node/ioredis-handrolled.js], adapter: {}}
workers: {count: 3, resources: 2, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
    d=$T_TMP/node
    run_ls "$d" "$T_TMP/node.yaml"
    check "Node adapter through the authenticating proxy: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" \
        [ "$RC" -eq 0 ]
    expect_val "$d" counts.grants ">" 10
    expect_val "$d" adapter.protocol_errors == 0
    check "the adapter saw no NOAUTH (its stderr)" bash -c '! grep -rq NOAUTH "$1"/adapters/' _ "$d"
    no_secret "$d" "$(cat "$d/nodes/password")" "Node adapter"
    t_no_leftovers "$d"
    "$LS" validate "$T_TMP/node.yaml" --set cluster.proxy=false >"$T_TMP/np.out" 2>&1 && rc=0 || rc=$?
    check "an adapter without the proxy on protected nodes: exit 2 naming the fix ($rc)" \
        bash -c '[ "$1" = 2 ] && grep -q "cluster.password: none" "$2"' _ "$rc" "$T_TMP/np.out"
    cd - >/dev/null
fi

# ---- topology external: the password from the environment ----
ext_pw="ext-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')"
export REDISCLI_AUTH=$ext_pw # start_server's readiness ping authenticates
start_node ext-0 --requirepass "$ext_pw"
unset REDISCLI_AUTH
cat >"$T_TMP/ext.yaml" <<YAML
name: pw-external
duration: 2s
cluster: {topology: external, addresses: ["127.0.0.1:$PORT"], password_env: LS_TEST_REDIS_PW}
lock: {impl: redis-single, ttl: 500ms}
workers: {count: 3, resources: 2, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
d=$T_TMP/ext
LS_TEST_REDIS_PW=$ext_pw run_ls "$d" "$T_TMP/ext.yaml"
check "external with cluster.password_env: exit 0 ($RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
expect_val "$d" counts.grants ">" 10
check "the external password is in no file of the run directory and no output" \
    bash -c '! grep -rqF -- "$2" "$1" "$1.stdout" "$1.stderr"' _ "$d" "$ext_pw"
check "the resolved workload names the variable only" grep -q 'password_env: LS_TEST_REDIS_PW' "$d/workload.yaml"
t_no_leftovers "$d"
# an adapter is not handed the variable (the worker got the password in
# memory): the fixture adapter's own child shows the environment it got
if command -v python3 >/dev/null; then
    pf=$T_TMP/ext-adapter.pids
    : >"$pf"
    cat >"$T_TMP/ext-adapter.yaml" <<YAML
name: pw-external-adapter
duration: 3s
cluster: {topology: external, addresses: ["127.0.0.1:$PORT"], password_env: LS_TEST_REDIS_PW}
lock: {impl: external, ttl: 1s, options: {command: [python3, "$SRC/tests/fixtures/spawning_adapter.py", "$pf"]}}
workers: {count: 1, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
    d=$T_TMP/ext-adapter
    LS_TEST_REDIS_PW=$ext_pw "$LS" run "$T_TMP/ext-adapter.yaml" --out "$d" --quiet \
        >"$d.stdout" 2>"$d.stderr" &
    pid=$!
    check "external + adapter: the adapter's child started" wait_for 20 sh -c "[ -s '$pf' ]"
    gc=$(head -n1 "$pf")
    env_ok=0
    if tr '\0' '\n' <"/proc/$gc/environ" >"$T_TMP/gc.env" 2>/dev/null && [ -s "$T_TMP/gc.env" ]; then
        env_ok=1
    fi
    check "external + adapter: the adapter's environment could be read" [ "$env_ok" = 1 ]
    check "external + adapter: it has PATH (the environment is passed on)" grep -q '^PATH=' "$T_TMP/gc.env"
    check "external + adapter: LS_TEST_REDIS_PW is not in the adapter's environment" \
        bash -c '! grep -q "^LS_TEST_REDIS_PW=" "$1" && ! grep -qF -- "$2" "$1"' _ "$T_TMP/gc.env" "$ext_pw"
    set +e; wait "$pid"; rc=$?; set -e
    check "external + adapter: exit 0 ($rc; $(tail -c 300 "$d.stderr"))" [ "$rc" -eq 0 ]
    t_no_leftovers "$d"
fi
d=$T_TMP/ext-unset
run_ls "$d" "$T_TMP/ext.yaml"
check "external, variable unset: exit 3 naming the variable ($RC: $(head -c 300 "$d.stderr"))" \
    bash -c '[ "$1" = 3 ] && grep -q "LS_TEST_REDIS_PW" "$2"' _ "$RC" "$d.stderr"
d=$T_TMP/ext-wrong
start=$(date +%s)
LS_TEST_REDIS_PW=not-the-password run_ls "$d" "$T_TMP/ext.yaml"
check "external, wrong password: exit 3 at once, saying AUTH ($RC: $(head -c 300 "$d.stderr"))" \
    bash -c '[ "$1" = 3 ] && grep -q "AUTH" "$2" && ! grep -q "not-the-password" "$2"' _ "$RC" "$d.stderr"
check "external, wrong password: no 10 s of retries ($(( $(date +%s) - start )) s)" \
    [ $(( $(date +%s) - start )) -lt 8 ]

# ---- load-time refusals ----
"$LS" validate "$T_TMP/single.yaml" --set cluster.password_env=REDIS_PW >"$T_TMP/v1.out" 2>&1 && rc=0 || rc=$?
check "password_env without topology external: exit 2 ($rc)" \
    bash -c '[ "$1" = 2 ] && grep -q "only valid with cluster.topology external" "$2"' _ "$rc" "$T_TMP/v1.out"
"$LS" validate "$T_TMP/ext.yaml" --set 'cluster.password_env=hunter2!' >"$T_TMP/v2.out" 2>&1 && rc=0 || rc=$?
check "password_env that is not a variable name: exit 2 ($rc)" \
    bash -c '[ "$1" = 2 ] && grep -q "not an environment variable name" "$2"' _ "$rc" "$T_TMP/v2.out"
"$LS" validate "$T_TMP/single.yaml" --set cluster.password=secret >"$T_TMP/v3.out" 2>&1 && rc=0 || rc=$?
check "cluster.password takes auto or none, never a password: exit 2 ($rc)" [ "$rc" = 2 ]
t_finish
