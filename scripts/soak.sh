#!/usr/bin/env bash
# The soak run (not in the default CI budget; docs/reliability.md): one
# command runs tests/soak/soak.yaml -- 128 workers x 8 resources x 5 minutes
# under a random nemesis -- and reports what would show a leak:
#   - the harness's RSS (sampled every few seconds: first, max, last) and its
#     peak (VmHWM),
#   - the harness's open descriptors, once the workers are up and at the end
#     of the run (a fault loop that leaks a connection per fault grows it),
#   - the processes of the run (its session) over time,
#   - the checker's peak RSS re-checking the finished run (`lockstorm check`,
#     /usr/bin/time or the kernel's own accounting), against the event count,
#   - that nothing of the run is left 2 s after it ended.
# It fails (exit 1) when the harness's descriptors grew by more than
# LS_SOAK_FD_SLACK (default 16) from the start to the end of the run, when
# something is left behind, when the run itself errored (exit 3), when
# the checker's peak RSS is over LS_SOAK_CHECK_MAX_KB (default 102400: 100 MB),
# or when the run did too little to count (its activity floor not reached).
#
#   LS_SOAK_DURATION   override the duration (e.g. 30s for a quick look)
#   LS_SOAK_WORKERS    override workers.count
#   LS_BUILD_DIR       where lockstorm is built (default build/)
#   LS_SOAK_OUT        the run directory (default: a new temp directory, kept)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LS_BUILD_DIR:-$root/build}
ls_bin=$build/lockstorm
[ -x "$ls_bin" ] || { echo "lockstorm: error: $ls_bin not built (scripts/build.sh)" >&2; exit 3; }
out=${LS_SOAK_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/lssoak-XXXXXX")/run}
mkdir -p "$(dirname "$out")"
sets=()
[ -n "${LS_SOAK_DURATION:-}" ] && sets+=(--set "duration=$LS_SOAK_DURATION")
[ -n "${LS_SOAK_WORKERS:-}" ] && sets+=(--set "workers.count=$LS_SOAK_WORKERS")
slack=${LS_SOAK_FD_SLACK:-16}

echo "== soak: $root/tests/soak/soak.yaml ${sets[*]-} -> $out"
setsid "$ls_bin" run "$root/tests/soak/soak.yaml" --out "$out" --progress plain "${sets[@]}" \
    >"$out.stdout" 2>"$out.stderr" &
pid=$!
samples=$out.samples
echo "# t_s rss_kb fds session_procs" >"$samples"
fd_first="" t0=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    st=$(grep -s '"state"' "$out/run.json" | head -n 1 || true)
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
    procs=$(ps -eo sid= | awk -v s="$pid" '$1 == s' | wc -l)
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [ -n "$rss" ] || break
    # the descriptor baseline: 5 s in, every worker up and the nemesis started
    if [ -z "$fd_first" ] && [ $(( $(date +%s) - t0 )) -ge 5 ]; then
        fd_first=$fds
    fi
    echo "$(( $(date +%s) - t0 )) $rss $fds $procs" >>"$samples"
    # the last sample before teardown: while the run still says running
    case $st in *running*) fd_last=$fds ;; esac
    peak_hwm=$hwm
    sleep 2
done
set +e
wait "$pid"
rc=$?
set -e
# nothing left
left=""
for i in $(seq 1 40); do
    left=$(ps -eo pid=,sid=,stat= | awk -v s="$pid" '$2 == s && $3 !~ /^Z/ {print $1}')
    [ -z "$left" ] && break
    sleep 0.05
done
# the checker's memory over the finished run
events=$("$ls_bin" get "$out" counts.events 2>/dev/null || echo "?")
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$out.checkmem" "$ls_bin" check "$out" >/dev/null 2>&1 || true
    check_kb=$(tail -n 1 "$out.checkmem")
else
    # without GNU time: its VmHWM, sampled while it runs (a lower bound)
    "$ls_bin" check "$out" >/dev/null 2>&1 &
    cpid=$!
    check_kb=0
    while kill -0 "$cpid" 2>/dev/null; do
        h=$(awk '/^VmHWM:/ {print $2}' "/proc/$cpid/status" 2>/dev/null || echo 0)
        [ "${h:-0}" -gt "$check_kb" ] && check_kb=$h
        sleep 0.05
    done
    wait "$cpid" || true
fi
awk 'NR > 1 {n++; if (n == 1) first = $2; if ($2 > max) max = $2; last = $2;
             if ($4 > pmax) pmax = $4}
     END {printf "harness RSS (KiB): first %s, max %s, last %s; run processes: max %s\n",
          first, max, last, pmax}' "$samples"
echo "harness peak RSS (VmHWM): ${peak_hwm:-?} KiB"
echo "harness descriptors: ${fd_first:-?} with the workers up, ${fd_last:-?} at the end of the run"
echo "checker (lockstorm check) peak RSS: ${check_kb:-?} KiB for $events events"
echo "run exit: $rc ($(tail -n 1 "$out.stdout" 2>/dev/null | cut -c1-120))"
echo "samples: $samples; run directory: $out"
status=0
if [ "$rc" -ge 2 ] && [ "$rc" -ne 4 ]; then
    echo "soak: FAILED: the run ended with exit $rc: $(grep 'error' "$out.stderr" | head -n 3)"
    status=1
fi
if [ -n "$left" ]; then
    echo "soak: FAILED: processes of the run remain: $left"
    status=1
fi
if [ -n "${fd_first:-}" ] && [ -n "${fd_last:-}" ] && [ "$fd_last" -gt $((fd_first + slack)) ]; then
    echo "soak: FAILED: the harness's descriptors grew from $fd_first to $fd_last"
    status=1
fi
# the checker streams over the logs (docs/checkers.md): its memory must not
# follow the history's size; 100 MB is issue 8's bound for 10^8 events
check_max_kb=${LS_SOAK_CHECK_MAX_KB:-102400}
if [ -n "${check_kb:-}" ] && [ "$check_kb" -gt "$check_max_kb" ]; then
    echo "soak: FAILED: the checker's peak RSS $check_kb KiB is over $check_max_kb KiB"
    status=1
fi
# a soak that granted (almost) nothing exercised nothing: its figures are
# not evidence of anything (the result's activity floor, docs/checkers.md)
active=$("$ls_bin" get "$out" coverage.enough_activity 2>/dev/null || echo "?")
grants=$("$ls_bin" get "$out" counts.grants 2>/dev/null || echo "?")
if [ "$active" != true ]; then
    echo "soak: FAILED: the run did too little to stand for a soak (grants $grants," \
        "coverage.enough_activity $active)"
    status=1
fi
[ "$status" = 0 ] && echo "soak: ok"
exit "$status"
