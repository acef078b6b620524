#!/usr/bin/env bash
# Installs what the bundled lock adapters (adapters/, docs/adapters.md) need:
# Node.js + npm and the Node packages of adapters/node pinned by its
# package-lock.json (`npm ci`, only when the lockfile changed since the last
# install), and redis-py for /usr/bin/python3 (Debian package python3-redis)
# for adapters/python. Idempotent. Called by scripts/test.sh; exits non-zero
# with a clear message when something cannot be installed (npm registry
# unreachable, no root for apt), and the adapter tests then fail saying so.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
status=0

apt_install() {
    local SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
            echo "lockstorm: error: need root (or sudo) to install: $*" >&2
            return 3
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    echo "lockstorm: installing missing packages: $*" >&2
    # one apt-get at a time, as scripts/install-deps.sh (the same lock)
    local apt=($SUDO flock /var/lock/lockstorm-apt.lock apt-get -o DPkg::Lock::Timeout=600)
    "${apt[@]}" update -qq && "${apt[@]}" install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
/usr/bin/python3 -c 'import redis' >/dev/null 2>&1 || missing+=(python3-redis)
if [ ${#missing[@]} -gt 0 ] && ! apt_install "${missing[@]}"; then
    echo "lockstorm: error: could not install ${missing[*]}: the adapter tests will fail" >&2
    status=3
fi

node_dir=$root/adapters/node
stamp=$node_dir/node_modules/.lockstorm-lock-sha256
want=$(sha256sum "$node_dir/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "lockstorm: error: npm is missing: cannot install adapters/node" >&2
        status=3
    elif (cd "$node_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2); then
        echo "$want" >"$stamp"
        echo "lockstorm: adapters/node: packages installed from package-lock.json" >&2
    else
        echo "lockstorm: error: 'npm ci' in adapters/node failed (is the npm registry" \
             "reachable?): the adapter tests will fail" >&2
        status=3
    fi
fi
exit $status
