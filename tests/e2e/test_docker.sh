#!/usr/bin/env bash
# docker/ without a Docker engine (none runs on our machines; docs/docker.md
# says what this does and does not prove): compose.yaml is checked against
# the Compose schema by docker-compose's own `config`, and both files by
# tests/e2e/docker_check.py (stages, packages, COPY sources, the install
# layout, the private network, the services the workloads name). Every
# Debian package the Dockerfile installs must exist in the apt lists. Then
# the services' own command lines run here, on loopback: five nodes with
# the Redlock services' redis-server arguments, a primary and a replica with
# theirs, a Sentinel with the config the sentinel services write, and the
# two workloads the lockstorm services run, pointed at those nodes, must
# meet their expectations.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nodes.sh"
. "$(dirname "$0")/pkgs.sh"

# ---- static checks ----------------------------------------------------------
if ! command -v docker-compose >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    fail "docker-compose (and python3) needed to check docker/compose.yaml: scripts/install-deps.sh installs them"
    t_finish
    exit 1
fi
check "docker-compose config accepts docker/compose.yaml (Compose schema)" \
    bash -c 'docker-compose -f "$1/docker/compose.yaml" config -q 2>"$2"' _ "$SRC" "$T_TMP/compose.err"
[ -s "$T_TMP/compose.err" ] && sed 's/^/#   /' "$T_TMP/compose.err"

# Debian packages the runtime (libraries the binary links) and the builder
# (-dev packages of the pkg-config modules CMakeLists.txt requires) need
mapfile -t libpkgs < <(lib_packages "$LS")
mapfile -t devpkgs < <(dev_packages "$SRC/CMakeLists.txt")
check "the binary's libraries map to Debian packages (${libpkgs[*]})" [ ${#libpkgs[@]} -ge 2 ]
check "CMakeLists.txt's pkg-config modules map to Debian packages (${devpkgs[*]})" \
    bash -c '[ $# -ge 2 ] && ! grep -q "^?" <(printf "%s\n" "$@")' _ "${devpkgs[@]}"
python3 "$SRC/tests/e2e/docker_check.py" "$SRC" "$(IFS=,; echo "${libpkgs[*]}")" \
    "$(IFS=,; echo "${devpkgs[*]}")" >"$T_TMP/static.out"
while IFS= read -r line; do
    case $line in
        "ok - "*) ok "${line#ok - }" ;;
        "not ok - "*) fail "${line#not ok - }" ;;
    esac
done <"$T_TMP/static.out"
meta() { grep "^#$1 " "$T_TMP/static.out" | cut -d' ' -f2-; }

# every package the Dockerfile installs exists in Debian (apt lists needed)
if apt-cache show bash >/dev/null 2>&1; then
    for p in $(meta packages); do
        check "Debian has the package $p" bash -c 'apt-cache show "$1" >/dev/null 2>&1' _ "$p"
    done
else
    ok "no apt lists on this machine (run apt-get update): package names not checked (# skip)"
fi

# ---- the services' command lines, run here --------------------------------
read -r -a wls <<<"$(meta workloads)"
eval "node_args=($(meta node-command))"
eval "replica_args=($(meta replica-command))"
# on loopback, on a free port: --port 6379 -> --port @PORT@, plus --bind 127.0.0.1
local_args() {
    local out=() i
    for ((i = 0; i < $#; i++)); do
        local a=${*:i+1:1}
        if [ "$a" = --port ]; then out+=(--port @PORT@); i=$((i + 1)); else out+=("$a"); fi
    done
    printf '%q ' "${out[@]}" --bind 127.0.0.1 --daemonize no
}

addrs=""
for i in 1 2 3 4 5; do
    eval "args=($(local_args "${node_args[@]}"))"
    start_server "redlock-$i" redis-server "${args[@]}"
    addrs="$addrs${addrs:+, }\"127.0.0.1:$PORT\""
done
ok "five nodes run with the redlock services' redis-server arguments"
d=$T_TMP/redlock
run_ls "$d" "${wls[0]}" --set "cluster.addresses=[$addrs]" --set duration=5s
check "${wls[0]} (the lockstorm service's workload) meets its expectations (exit $RC; $(tail -n1 "$d.stdout"))" \
    [ "$RC" -eq 0 ]
t_no_leftovers "$d"

eval "args=($(local_args "${node_args[@]}"))"
start_server redis-primary redis-server "${args[@]}"
pport=$PORT
eval "args=($(local_args "${replica_args[@]}"))"
for i in "${!args[@]}"; do
    [ "${args[$i]}" = --replicaof ] && { args[i + 1]=127.0.0.1; args[i + 2]=$pport; }
done
start_server redis-replica-1 redis-server "${args[@]}"
rport=$PORT
check "the replica (its service's arguments) replicates the primary" \
    wait_for 10 bash -c '[ "$(redis-cli -p "$1" info replication | tr -d "\r" | grep -c "^master_link_status:up")" = 1 ]' _ "$rport"

# the sentinel services' config, as they write it, with the primary's address local
sent=$(meta sentinel-command)
conf=$T_TMP/sentinel.conf
gen=${sent%%&& exec *}
gen=${gen//\/tmp\/sentinel.conf/$conf}
gen=${gen//redis-primary 6379/127.0.0.1 $pport}
gen=${gen//port 26379/port @PORT@\\nbind 127.0.0.1}
check "the sentinel command writes its config" bash -c "$gen"
cp "$conf" "$T_TMP/sentinel.conf.in"
# redis-sentinel is redis-server in sentinel mode (the image installs the
# redis-sentinel package; here redis-server --sentinel runs the same code)
start_sentinel_conf() { sed "s/@PORT@/$1/" "$T_TMP/sentinel.conf.in" >"$conf" && exec redis-server "$conf" --sentinel; }
export -f start_sentinel_conf
export T_TMP conf
start_server sentinel-1 bash -c 'start_sentinel_conf "$1"' _ @PORT@
sport=$PORT
check "redis-sentinel accepts that config and names the primary" \
    wait_for 10 bash -c '[ "$(redis-cli -p "$1" sentinel get-master-addr-by-name lockstorm | tr "\n" " ")" = "127.0.0.1 $2 " ]' _ "$sport" "$pport"

d=$T_TMP/primary
run_ls "$d" "${wls[1]}" --set "cluster.addresses=[\"127.0.0.1:$pport\"]" --set duration=5s
check "${wls[1]} (the lockstorm-primary service's workload) meets its expectations (exit $RC; $(tail -n1 "$d.stdout"))" \
    [ "$RC" -eq 0 ]
t_no_leftovers "$d"

t_finish
