# nodes.sh: redis servers a test starts itself, standing for servers
# lockstorm did not start (topology external, the docker/compose.yaml
# services); sourced after lib.sh. Each binds 127.0.0.1 on a free port
# (a port taken meanwhile makes the server exit: retried, bounded) and is
# stopped by pid when the test exits.
NODE_PIDS=()
stop_nodes() {
    local p
    for p in "${NODE_PIDS[@]}"; do t_kill TERM "$p"; done
    for p in "${NODE_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    t_cleanup
}
trap stop_nodes EXIT

# start_server NAME BINARY ARGS...: BINARY (redis-server or redis-sentinel)
# with ARGS, where the word @PORT@ is replaced by the chosen port; sets
# PORT and PID. Its output goes to $T_TMP/NAME.log.
start_server() {
    local name=$1 bin=$2 try port pid a args
    shift 2
    mkdir -p "$T_TMP/$name"
    for try in $(seq 1 20); do
        port=$((20000 + RANDOM % 30000))
        args=()
        for a in "$@"; do args+=("${a//@PORT@/$port}"); done
        (cd "$T_TMP/$name" && exec "$bin" "${args[@]}") >"$T_TMP/$name.log" 2>&1 &
        pid=$!
        # ready when it answers; given up on at once when it exited (port taken, bad args)
        if wait_for 5 bash -c 'kill -0 "$1" 2>/dev/null || exit 0; redis-cli -p "$2" ping >/dev/null 2>&1' \
            _ "$pid" "$port" && kill -0 "$pid" 2>/dev/null; then
            NODE_PIDS+=("$pid")
            PORT=$port
            PID=$pid
            return 0
        fi
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    echo "could not start $bin for $name (see $T_TMP/$name.log)" >&2
    cat "$T_TMP/$name.log" >&2
    return 1
}

# start_node NAME [EXTRA ARGS...]: a plain redis-server on 127.0.0.1
start_node() {
    local name=$1
    shift
    start_server "$name" redis-server --port @PORT@ --bind 127.0.0.1 --save '' \
        --appendonly no --daemonize no "$@"
}
