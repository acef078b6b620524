#!/usr/bin/env bash
# The checkers' pass on several threads (docs/checkers.md "The pass on
# several cores"): `lockstorm check --jobs N` prints the same result
# document and writes the same result.json, byte for byte, for N = 1, 2, 3
# and 8, on the bench's planted histories (bench/histgen.c: 2x10^5 and
# 10^6 events; 4x10^5 of 300 workers as JSONL), on one whose workers were
# restarted (--epochs), on one
# with a damaged log (a bit flipped: the pass finds it, the history is
# loaded again and checked; early in the log and in a chunk the helpers
# read ahead), and on a JSONL history that spills to disk;
# each also with the logs read through their mappings (LS_CHECK_READ=map:
# the pass's look-ahead helpers work on those) instead of with pread, and
# with pread and every chunk read and checked by the helpers
# (LS_CHECK_RING_WAIT=1: the merging thread reads none itself), and
# the 10^6 one with half of each kind (an open-file limit of 64 lets 32
# logs keep a descriptor; docs/performance.md "Reading the logs"); and
# with every consumer fed by a helper through the queue, the helper or
# the merging thread making their calls (LS_CHECK_OFFLOAD=all, main:all),
# on the first history also each consumer alone.
# Bad --jobs values: one line, exit 2, nothing read.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# --jobs is the check's: another command refuses it (a run's checker child
# uses the default)
run_refuses_jobs() {
    local rc
    set +e
    "$LS" run "$SRC/workloads/demo.yaml" --jobs 2 >"$T_TMP/out" 2>"$T_TMP/err"
    rc=$?
    set -e
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] &&
        grep -q -- "--jobs applies to check and report" "$T_TMP/err"; then
        ok "run --jobs: one line, exit 2"
    else
        fail "run --jobs: exit $rc: $(head -c 300 "$T_TMP/err")"
    fi
}

BC=$(dirname "$LS")/bench/bench_check
if [ ! -x "$BC" ]; then
    fail "no $BC (the bench programs are built with lockstorm)"
    run_refuses_jobs
    t_finish
fi

# gen NAME SIZE [ARGS...]: a planted history, kept in $T_TMP/NAME
gen() {
    local name=$1 size=$2; shift 2
    mkdir -p "$T_TMP/$name"
    if ! timeout 120 "$BC" --keep --tmp "$T_TMP/$name" --sizes "$size" "$@" \
        --lockstorm "$LS" >"$T_TMP/$name.gen" 2>&1; then
        fail "bench_check $name: $(tail -n 3 "$T_TMP/$name.gen")"
        return 1
    fi
}

# same DESC ARGS...: `check ARGS --jobs N --json` for N in 1 2 3 8, the
# logs read with pread (the default) and through their mappings
# (LS_CHECK_READ=map); the printed document and (for a run directory,
# first ARG) result.json equal those of --jobs 1 with pread, and the exit
# status too
same() {
    local desc=$1; shift
    local n m k rc rc1= bad=
    for m in pread map ring off offmain ${OFFLOAD_EACH:-}; do
        for n in 1 2 3 8; do
            case $m in pread | map) ;; *) [ "$n" != 1 ] || continue ;; esac
            k=$m$n
            set +e
            # ring: read with pread, every chunk taken from the helpers
            # (LS_CHECK_RING_WAIT=1), so that their checks decide; off:
            # every consumer fed by a helper (LS_CHECK_OFFLOAD=all), offmain:
            # the same with the merging thread making those calls but the
            # ones a helper needs made (main:all); o-NAME: that consumer alone
            local off=
            case $m in off) off=all ;; offmain) off=main:all ;; o-*) off=${m#o-} ;; esac
            LS_CHECK_READ=$([ "$m" = map ] && echo map || echo pread) LS_CHECK_RING_WAIT=$([ "$m" = ring ] && echo 1 || echo 0) \
                LS_CHECK_OFFLOAD=$off \
                ${LIMIT:-} timeout 60 "$LS" check "$@" --jobs "$n" --json >"$T_TMP/j$k.out" \
                2>"$T_TMP/j$k.err"
            rc=$?
            set -e
            if [ -d "$1" ] && [ -f "$1/result.json" ]; then
                cp "$1/result.json" "$T_TMP/j$k.result"
            fi
            [ -n "$rc1" ] || rc1=$rc
            if [ "$rc" -ge 2 ] && [ "$rc" -ne 4 ]; then
                bad="$bad $m --jobs $n: exit $rc: $(head -c 300 "$T_TMP/j$k.err")"
            elif [ "$rc" != "$rc1" ]; then
                bad="$bad $m --jobs $n: exit $rc, --jobs 1: $rc1"
            elif ! cmp -s "$T_TMP/jpread1.out" "$T_TMP/j$k.out"; then
                bad="$bad $m --jobs $n: printed result differs: $({ diff "$T_TMP/jpread1.out" \
                    "$T_TMP/j$k.out" || true; } | head -c 300)"
            elif [ -f "$T_TMP/jpread1.result" ] && ! cmp -s "$T_TMP/jpread1.result" "$T_TMP/j$k.result"; then
                bad="$bad $m --jobs $n: result.json differs"
            fi
        done
    done
    rm -f "$T_TMP"/j*.result
    if [ -z "$bad" ] && [ -s "$T_TMP/jpread1.out" ]; then
        ok "$desc: the same result for --jobs 1, 2, 3, 8, logs read with pread (also every chunk from the helpers) or mapped, consumers fed by a helper or by the merging thread (exit $rc1)"
    else
        fail "$desc:${bad:- nothing printed}"
    fi
}

# a refused option: exit 2, and the scratch directory bench_check had made
# in $TMPDIR (this test's own, lib.sh) is gone
set +e
"$BC" --resources 257 >"$T_TMP/bc.out" 2>"$T_TMP/bc.err"
rc=$?
set -e
check "bench_check --resources 257: exit 2 ($rc), nothing left in \$TMPDIR ($(ls -d "$T_TMP"/lsbench.* 2>/dev/null | head -2 | tr '\n' ' '))" \
    sh -c "[ $rc -eq 2 ] && grep -q 'from 1 to 256' '$T_TMP/bc.err' && ! ls -d '$T_TMP'/lsbench.* >/dev/null 2>&1"

# ---- planted histories ----
if gen small 2e5 --jsonl-max 2e5; then
    # and each consumer alone fed by a helper through the queue
    OFFLOAD_EACH="o-mutex o-series o-fencing o-liveness o-stats o-windows o-coverage" \
        same "2x10^5 events, planted violations" "$T_TMP/small/hist-200000" --format json
    # the JSONL form of the same history, spilling (a 4 MB memory bound)
    LS_JSONL_MEM_BOUND=4194304 same "2x10^5 events as JSONL, spilled" \
        --history "$T_TMP/small/hist-200000-jl.jsonl" --near-miss 0ms
    # a damaged log: a byte of record 1000 of worker 5 flipped, so its
    # checksum fails when the pass reads it; the history is loaded again
    # (that log cut there) and checked again, on every thread count
    cp -r "$T_TMP/small/hist-200000" "$T_TMP/damaged"
    printf '\x55' | dd of="$T_TMP/damaged/events/worker-005.bin" bs=1 \
        seek=$((128 + 64 * 1000 + 40)) conv=notrunc status=none
    same "2x10^5 events, a damaged log" "$T_TMP/damaged" --format json
    grep -q 'damaged' "$T_TMP/jpread1.out" || fail "the damaged log is not in the result"
    # the same in record 2900: a chunk the helpers read and check ahead
    # (the merging thread reads the first chunks itself while they start)
    cp -r "$T_TMP/small/hist-200000" "$T_TMP/damaged2"
    printf '\x55' | dd of="$T_TMP/damaged2/events/worker-005.bin" bs=1 \
        seek=$((128 + 64 * 2900 + 40)) conv=notrunc status=none
    same "2x10^5 events, a log damaged in a later chunk" "$T_TMP/damaged2" --format json
    grep -q '"damaged": 1' "$T_TMP/jpread1.out" || fail "the damaged log is not in the result"
fi
# 300 workers: the rings' chunks are 109 records, so most begin inside a
# packed stream's 128-record block (the helpers decode on from where their
# last chunk of the stream ended); 1,333 records a worker, so that the
# streams stay packed (a spilled stream of up to 64 KB is read back); a
# violation every 100 grants of a resource (4 each)
if gen wide 4e5 --jsonl-max 4e5 --resources 75 --violate-every 100 --jobs 1 --repeat 1; then
    LS_JSONL_MEM_BOUND=4194304 same "4x10^5 events of 300 workers as JSONL, spilled" \
        --history "$T_TMP/wide/hist-400000-jl.jsonl" --near-miss 0ms
fi
if gen big 1e6 --jsonl-max 0; then
    same "10^6 events, planted violations" "$T_TMP/big/hist-1000000" --format json
    # 32 of the 64 logs read with pread, the others through their mappings
    LIMIT="prlimit --nofile=64:64 --" same "10^6 events, half the logs read with pread" \
        "$T_TMP/big/hist-1000000" --format json
fi
if gen epochs 2e5 --jsonl-max 0 --epochs 4; then
    same "2x10^5 events, every worker restarted 3 times" "$T_TMP/epochs/hist-200000" \
        --format json
fi

# ---- bad --jobs ----
for v in 0 -1 junk 257 1x '' ' 4' +4; do
    set +e
    "$LS" check "$T_TMP/nonexistent" --jobs "$v" >"$T_TMP/out" 2>"$T_TMP/err"
    rc=$?
    set -e
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] &&
        { [ -z "$v" ] || grep -q -- "--jobs '$v': expected an integer from 1 to 256" "$T_TMP/err"; }; then
        ok "--jobs '$v': one line, exit 2"
    else
        fail "--jobs '$v': exit $rc: $(head -c 300 "$T_TMP/err")"
    fi
done

run_refuses_jobs

t_finish
