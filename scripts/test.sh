#!/usr/bin/env bash
# README command 2 (and CI, via .ci/run): install what is missing, build with
# warnings as errors, run the whole test suite (unit + end-to-end against
# real redis-server processes); then the same suite again under
# AddressSanitizer + UndefinedBehaviorSanitizer. Set LS_NO_SANITIZE=1 to
# skip the second pass locally. In CI (CI=true), or with LS_FUZZ=1, the
# libFuzzer targets run last for a bounded time (scripts/fuzz.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/install-deps.sh"
# the bundled lock adapters' packages (npm ci from the lockfile, python3-redis);
# when that fails the adapter tests fail and say why, the rest still runs
bash "$root/scripts/install-adapters.sh" ||
    echo "lockstorm: warning: adapter packages missing: tests/e2e/test_adapter_*.sh will fail" >&2

jobs=$(nproc)
run_suite() {
    local dir=$1; shift
    echo "== build $dir ($*)"
    LS_BUILD_DIR="$dir" bash "$root/scripts/build.sh" -DLS_WERROR=ON "$@"
    echo "== test $dir"
    ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 600
}

run_suite "$root/build"
if [ "${LS_NO_SANITIZE:-0}" != 1 ]; then
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run_suite "$root/build-asan" -DLS_SANITIZE=ON
fi
# libFuzzer targets (scripts/fuzz.sh): a short budget in CI (CI=true), the
# script's default (60 s each) when LS_FUZZ=1 asks for it locally
if [ "${CI:-}" = true ] || [ "${LS_FUZZ:-0}" = 1 ]; then
    LS_FUZZ_SECONDS=${LS_FUZZ_SECONDS:-$([ "${CI:-}" = true ] && echo 20 || echo 60)} \
        bash "$root/scripts/fuzz.sh"
fi
echo "== all tests passed"
