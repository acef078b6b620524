#!/usr/bin/env bash
# The defence-in-depth table of reference article 03, measured: runs
# workloads/duplicate-jobs.yaml (four workers, a job every 50 ms, the lock
# holder paused 400 ms past its 200 ms TTL every second) once per layer
# combination and prints "layers -> duplicates" as a Markdown table.
#
#   scripts/jobs-layers.sh [--seed N] [--set key=value]... [--out DIR]
#
# LS_BINARY names the lockstorm binary (default: build/lockstorm). Each run
# directory is kept under --out DIR (default: a temporary directory, removed
# at exit). Exit status: 0 when every run completed (whatever the counts).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
LS=${LS_BINARY:-$root/build/lockstorm}
[ -x "$LS" ] || { echo "jobs-layers: $LS not found; build first (scripts/build.sh) or set LS_BINARY" >&2; exit 3; }
out="" args=()
while [ $# -gt 0 ]; do
    case $1 in
        --out) out=$2; shift 2 ;;
        --seed|--set) args+=("$1" "$2"); shift 2 ;;
        *) echo "jobs-layers: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
if [ -z "$out" ]; then out=$(mktemp -d "${TMPDIR:-/tmp}/jobs-layers-XXXXXX"); trap 'rm -rf "$out"' EXIT; fi
mkdir -p "$out"

echo "| layers | jobs | duplicates | extra effects | refused by constraint | missed | mutex violations |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for layers in "[]" "[lock]" "[idempotency]" "[constraint]" "[lock, idempotency, constraint]"; do
    name=$(tr -d '[] ' <<<"$layers" | tr ',' '+')
    d=$out/${name:-none}
    rm -rf "$d"
    set +e
    "$LS" run "$root/workloads/duplicate-jobs.yaml" --out "$d" --quiet --format json \
        --set "workers.jobs.layers=$layers" ${args[@]+"${args[@]}"} >/dev/null 2>"$d.stderr"
    rc=$?
    set -e
    if [ "$rc" -gt 1 ]; then
        why=$("$LS" get "$d" verdict_reasons.0 2>/dev/null || true)
        echo "jobs-layers: run with layers $layers failed (exit $rc): ${why:-$(tail -1 "$d.stderr")}" >&2
        exit "$rc"
    fi
    mapfile -t v < <("$LS" get "$d" checks.jobs.jobs checks.jobs.duplicates \
        checks.jobs.extra_effects checks.jobs.refused checks.jobs.missed checks.mutex.violations)
    printf '| %s | %s | %s | %s | %s | %s | %s |\n' "${name:-none}" "${v[@]}"
done
