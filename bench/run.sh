#!/usr/bin/env bash
# bench/run.sh: every benchmark of bench/ in one command (docs/performance.md
# says what each measures and the targets). Installs what is missing
# (scripts/install-deps.sh, which includes redis-tools for redis-benchmark),
# builds Release into build-bench/, runs the benchmarks one after the other,
# writes bench/results.json and prints a short table of every target.
#
#   bash bench/run.sh                      # everything (about 10 minutes)
#   bash bench/run.sh --only hammer,check  # some of: evlog check hammer detect startup report proxy
#   bash bench/run.sh --smoke              # tiny sizes, seconds (what ctest runs)
#   --build-dir DIR   use an existing build (no install, no build)
#   --results FILE    where to write the results (default bench/results.json)
#
# Exit status: 0 when every benchmark ran (targets met or not: the table
# says), 1 when one failed to run or the checker missed a planted violation.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
smoke=0
build=""
results="$root/bench/results.json"
only="evlog check hammer detect startup report proxy"
while [ $# -gt 0 ]; do
    case $1 in
        --smoke) smoke=1 ;;
        --build-dir) build=$2; shift ;;
        --results) results=$2; shift ;;
        --only) only=${2//,/ }; shift ;;
        *) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
    shift
done

if [ -z "$build" ]; then
    bash "$root/scripts/install-deps.sh"
    build="$root/build-bench"
    echo "== build $build (Release)" >&2
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j"$(nproc)" >/dev/null || cmake --build "$build" -j1
fi
command -v redis-benchmark >/dev/null 2>&1 ||
    { echo "bench/run.sh: redis-benchmark missing (apt-get install redis-tools)" >&2; exit 3; }

export LS_BINARY="$build/lockstorm" LS_SOURCE_DIR="$root"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lsbench-run.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

flags=()
[ $smoke = 1 ] && flags+=(--smoke)
status=0
sections=()
loads=()
for b in $only; do
    prog="$build/bench/bench_$b"
    if [ ! -x "$prog" ]; then
        echo "bench/run.sh: no benchmark '$b' ($prog)" >&2
        exit 2
    fi
    echo "== $b" >&2
    t0=$SECONDS
    l0=$(cut -d' ' -f1 /proc/loadavg)
    rc=0
    "$prog" "${flags[@]}" --tmp "$tmp/$b" >"$tmp/$b.json" || rc=$?
    if [ $rc != 0 ] || [ ! -s "$tmp/$b.json" ]; then
        echo "bench/run.sh: $b failed (exit $rc)" >&2
        status=1
        [ -s "$tmp/$b.json" ] || echo '{"failed": true}' >"$tmp/$b.json"
    fi
    l1=$(cut -d' ' -f1 /proc/loadavg)
    echo "  ($b took $((SECONDS - t0)) s; load average $l0 -> $l1 on $(nproc) CPUs)" >&2
    loads+=("\"$b\": [$l0, $l1]")
    sections+=("$b")
done

{
    printf '{\n  "format": "lockstorm-bench",\n  "version": 1,\n'
    printf '  "smoke": %s,\n' "$([ $smoke = 1 ] && echo true || echo false)"
    printf '  "date": "%s",\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    printf '  "git": "%s",\n' "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    printf '  "machine": {"cpus": %s, "cpu": "%s", "kernel": "%s", "redis": "%s"},\n' \
        "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/"//g')" \
        "$(uname -r)" "$(redis-server --version | sed 's/.* v=\([^ ]*\).*/\1/')"
    # 1-minute load average before and after each section: the machine may
    # be shared, and the figures are only as quiet as it was
    printf '  "load_average": {%s},\n' "$(IFS=,; echo "${loads[*]}" | sed 's/,"/, "/g')"
    printf '  "sections": {'
    sep=""
    for b in "${sections[@]}"; do
        printf '%s\n    "%s": ' "$sep" "$b"
        sed 's/^/    /; 1s/^    //' "$tmp/$b.json"
        sep=","
    done
    printf '\n  }\n}\n'
} >"$results"

"$build/bench/bench_summary" "$results" || status=1
echo "results: $results" >&2
exit $status
