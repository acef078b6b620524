#!/usr/bin/env bash
# README command 1: install what is missing, build, and run the bundled demo
# workload on an embedded cluster (redis-server processes the harness starts
# itself on free loopback ports), printing the verdict.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
cd "$root"
set +e
"$root/build/lockstorm" run demo "$@"
rc=$?
set -e
# The demo's expectations say what it must show (stale-holder violations
# without fencing, none lost with fencing); exit 0 means it showed it.
exit $rc
