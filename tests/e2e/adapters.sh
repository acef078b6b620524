# adapters.sh: helpers for the bundled-adapter tests (sourced after lib.sh;
# not a test itself). need_adapters fails the test with a clear message when
# the adapters' packages are missing: an unreachable npm registry must show
# up as a failure, never as a silent skip.

# need_adapters: node, the npm packages of adapters/node installed from its
# package-lock.json (scripts/install-adapters.sh), and redis-py for
# /usr/bin/python3. Returns 1 (after one `not ok` line per problem) if not.
need_adapters() {
    local missing=0 want have
    if ! command -v node >/dev/null 2>&1; then
        fail "node is not installed (scripts/install-adapters.sh installs it)"
        missing=1
    fi
    want=$(sha256sum "$SRC/adapters/node/package-lock.json" | cut -d' ' -f1)
    have=$(cat "$SRC/adapters/node/node_modules/.lockstorm-lock-sha256" 2>/dev/null || true)
    if [ "$want" != "$have" ]; then
        fail "adapters/node packages are not installed from package-lock.json: run" \
             "scripts/install-adapters.sh (is the npm registry reachable?)"
        missing=1
    fi
    if ! /usr/bin/python3 -c 'import redis' >/dev/null 2>&1; then
        fail "redis-py is missing for /usr/bin/python3 (Debian package python3-redis;" \
             "scripts/install-adapters.sh installs it)"
        missing=1
    fi
    return $missing
}

# The bundled adapter configurations: NAME|NODES|COMMAND (YAML flow list)|ADAPTER OPTIONS (JSON)
ADAPTERS=(
    "ioredis-handrolled|1|[node, adapters/node/ioredis-handrolled.js]|{}"
    "ioredis-handrolled-fenced-renewing|1|[node, adapters/node/ioredis-handrolled.js]|{\"fencing\": true, \"auto_renew_ms\": 250}"
    "redlock|3|[node, adapters/node/redlock.js]|{}"
    "redlock4|3|[node, adapters/node/redlock.js]|{\"line\": 4}"
    "redlock-using|3|[node, adapters/node/redlock.js]|{\"auto_extend\": true}"
    "redis-semaphore|1|[node, adapters/node/redis-semaphore.js]|{}"
    "redis-semaphore-norefresh|1|[node, adapters/node/redis-semaphore.js]|{\"refresh_interval_ms\": 0}"
    "redis-semaphore-redlock|3|[node, adapters/node/redis-semaphore.js]|{\"kind\": \"redlock-mutex\"}"
    "redis-py|1|[adapters/python/redis_py_lock.py]|{}"
    "redis-lock|1|[node, adapters/node/redis-lock.js]|{}"
    "node-redis-warlock|1|[node, adapters/node/warlock.js]|{}"
    "minimal|1|[node, adapters/node/minimal.js]|{}"
)
