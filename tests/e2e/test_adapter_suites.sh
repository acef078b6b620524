#!/usr/bin/env bash
# Every adapter suite (workloads/adapters/*.yaml: each bundled lock library
# under holder pauses shorter and longer than its TTL, a latency spike, a
# node restart without persistence and a partition) meets its expect:
# block, i.e. each library still does what docs/adapters.md "Findings" says
# it does. The suites run as they are (their own seed and duration: that is
# what was measured), two `lockstorm run DIR` at a time over the two halves
# of the directory; any unmet expectation fails the test, with the suite's
# line (every measured value) shown. Fails (never skips) when the adapters'
# packages are not installed. Long (~2.5 min on 2 cores): labelled `long`,
# run alone (RUN_SERIAL: other tests' load would move the libraries'
# timing away from what was measured) and left out of the sanitizer build
# (CMakeLists.txt). Last, one suite without its fault must fail: the
# expectations depend on the fault.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"

need_adapters || t_finish
cd "$SRC" # the adapters' commands are relative to the source tree

suites=("$WL"/adapters/*.yaml)
n=${#suites[@]}
check "the adapter suites are there ($n)" [ "$n" -ge 35 ]

# two halves, alternating in name order (each adapter's suites are spread
# over both), as directories of links the directory runner reads
mkdir -p "$T_TMP/half0" "$T_TMP/half1" "$T_TMP/runs"
for i in "${!suites[@]}"; do
    ln -s "${suites[$i]}" "$T_TMP/half$((i % 2))/"
done
t0=$(date +%s)
pids=()
for h in 0 1; do
    "$LS" run "$T_TMP/half$h" --out "$T_TMP/runs" --quiet \
        >"$T_TMP/half$h.txt" 2>"$T_TMP/half$h.err" &
    pids+=($!)
done
rcs=()
for p in "${pids[@]}"; do
    set +e
    wait "$p"
    rcs+=($?)
    set -e
done
secs=$(($(date +%s) - t0))
cat "$T_TMP/half0.txt" "$T_TMP/half1.txt"
echo "# $n suites in ${secs}s"

for h in 0 1; do
    m=$(find "$T_TMP/half$h" -name '*.yaml' | wc -l)
    check "half $h: every suite met its expectations (exit ${rcs[$h]}; $(tail -c 300 "$T_TMP/half$h.err" | tr '\n' ' '))" \
        [ "${rcs[$h]}" -eq 0 ]
    check "half $h: the closing line counts $m scenarios, all passed" \
        grep -q "$m scenarios, $m passed, 0 failed" "$T_TMP/half$h.txt"
done
for f in "${suites[@]}"; do
    name=$(sed -n 's/^name: *//p' "$f")
    line=$(grep -h "^$name  *[A-Z]" "$T_TMP/half0.txt" "$T_TMP/half1.txt" || true)
    if [ -f "$T_TMP/runs/$name/result.json" ] && [[ "$line" == "$name"*" PASS "* ]]; then
        ok "$name: PASS"
    else
        fail "$name: ${line:-no line in the suite output}"
        # what happened, for the CI log: the first violation's story
        # (or, when there is none, the verdict's reasons)
        story=$("$LS" get "$T_TMP/runs/$name" violations.0.story_text 2>/dev/null || true)
        [ -n "$story" ] && [ "$story" != null ] ||
            story=$("$LS" get "$T_TMP/runs/$name" verdict_reasons 2>/dev/null || true)
        printf '%s\n' "$story" | sed 's/^/#   /'

    fi
    check "$name: a library really ran (grants made, an adapter started)" \
        [ "$(get "$T_TMP/runs/$name" counts.grants)" -gt 0 ] 2>/dev/null
done
t_no_leftovers "$T_TMP/runs"

# the gate bites: without its pauses, a suite expecting stale-holder fails
d=$T_TMP/no-pauses
run_ls "$d" "$WL/adapters/ioredis-handrolled-pause-long.yaml" --set 'faults=[]'
check "ioredis-handrolled-pause-long without its pauses: the expectations fail (exit $RC)" \
    [ "$RC" -eq 1 ]
expect_val "$d" checks.mutex.by_class.stale_holder == 0
t_finish
