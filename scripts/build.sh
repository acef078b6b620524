#!/usr/bin/env bash
# Configure and build lockstorm into build/ (or $LS_BUILD_DIR). Extra
# arguments go to cmake's configure step (e.g. -DLS_SANITIZE=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LS_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null || cmake --build "$build" -j1
