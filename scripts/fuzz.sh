#!/usr/bin/env bash
# Build the libFuzzer targets (tests/fuzz/fuzz_*.c) with clang, ASan and
# UBSan into build-fuzz/ and run each for a bounded time; fails on any crash,
# leak, sanitizer report, timeout (one input over LS_FUZZ_TIMEOUT s) or out
# of memory. docs/reliability.md says how to run them longer.
#
#   LS_FUZZ_SECONDS   time per target (default 60; CI: 20)
#   LS_FUZZ_TARGETS   which (default: all), e.g. "workload history"
#   LS_FUZZ_JOBS      parallel workers per target (default 1)
#   LS_FUZZ_TIMEOUT   seconds one input may take (default 10)
#   LS_FUZZ_KEEP=1    keep the grown corpora in build-fuzz/corpus/ between runs
#
# Seeds: tests/fuzz/corpus/<target>/ plus, for the loaders, the bundled
# workloads/ and the bad-input catalogue (tests/bad-input/). The corpus the
# fuzzer grows goes to build-fuzz/corpus/<target>/, never into the source
# tree; crash inputs land in build-fuzz/artifacts/ (named in the failure).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LS_FUZZ_BUILD_DIR:-$root/build-fuzz}
secs=${LS_FUZZ_SECONDS:-60}
jobs=${LS_FUZZ_JOBS:-1}
tmo=${LS_FUZZ_TIMEOUT:-10}
all="workload evlog history jsonl parsers json adapter"
targets=${LS_FUZZ_TARGETS:-$all}

if ! command -v clang >/dev/null 2>&1; then
    echo "lockstorm: error: scripts/fuzz.sh needs clang (apt-get install clang)" >&2
    exit 3
fi
echo "== build $build (clang, libFuzzer, ASan+UBSan)"
CC=clang cmake -S "$root" -B "$build" -DLS_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target $(for t in $targets; do printf 'fuzz_%s ' "$t"; done)

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/artifacts" "$build/tmp"
export TMPDIR=$build/tmp  # the evlog and history targets write their input there
failed=()
for t in $targets; do
    bin=$build/tests/fuzz/fuzz_$t
    corpus=$build/corpus/$t
    [ "${LS_FUZZ_KEEP:-0}" = 1 ] || rm -rf "$corpus"
    mkdir -p "$corpus"
    seeds=("$root/tests/fuzz/corpus/$t")
    case $t in
        workload) seeds+=("$root/workloads" "$root/tests/bad-input") ;;
        history) seeds+=("$root/tests/bad-input/history") ;;
    esac
    echo "== fuzz_$t for ${secs}s (seeds: ${seeds[*]#$root/})"
    set +e
    par=()
    [ "$jobs" -gt 1 ] && par=(-fork="$jobs") # forks merge into one corpus
    (cd "$build" && exec "$bin" "$corpus" "${seeds[@]}" -max_total_time="$secs" -timeout="$tmo" \
        -rss_limit_mb=2048 "${par[@]}" -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t-") >"$build/fuzz_$t.log" 2>&1
    rc=$?
    set -e
    grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|Done [0-9]+ runs)' "$build/fuzz_$t.log" |
        tail -n 2 || true
    if [ "$rc" -ne 0 ]; then
        echo "fuzz_$t: FAILED (exit $rc); see $build/fuzz_$t.log:"
        grep -E 'ERROR|SUMMARY|Test unit written|runtime error' "$build/fuzz_$t.log" | head -n 8
        failed+=("$t")
    fi
done
rm -rf "$build/tmp"
if [ ${#failed[@]} -gt 0 ]; then
    echo "== fuzzing FAILED: ${failed[*]}"
    exit 1
fi
echo "== fuzzing: no findings (${secs}s per target)"
