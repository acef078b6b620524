#!/usr/bin/env bash
# Process limits checked up front (harness/limits.h, docs/reliability.md):
# 1,000 workers under `ulimit -n 256` are refused before anything starts --
# exit 3, one line naming the limit and the number of descriptors needed, no
# run directory, no process forked; a low soft limit under a high hard one is
# simply raised and the run goes ahead; a file-size limit too small for the
# event logs is refused the same way.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# refused DESC FRAGMENT ULIMIT-ARGS -- LOCKSTORM-ARGS
refused() {
    local desc=$1 frag=$2; shift 2
    local ul=()
    while [ "$1" != -- ]; do ul+=("$1"); shift; done
    shift
    local cwd
    cwd=$(mktemp -d "$T_TMP/cwd-XXXXXX")
    set +e
    (cd "$cwd" && ulimit "${ul[@]}" && exec "$LS" run "$@" >"$T_TMP/out" 2>"$T_TMP/err")
    local rc=$?
    set -e
    if [ "$rc" -eq 3 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] && grep -qF -- "$frag" "$T_TMP/err" &&
       [ -z "$(ls -A "$cwd")" ]; then
        ok "$desc"
    else
        fail "$desc (exit $rc): $(head -c 300 "$T_TMP/err"); created: $(ls -A "$cwd")"
    fi
}

refused "1000 workers under ulimit -n 256: exit 3 with the number needed" \
    "open files: 1000 workers need about 3064 descriptors in the proxy, but the limit is 256" \
    -n 256 -- "$WL/demo.yaml" --set workers.count=1000 --set cluster.proxy=true
refused "1000 workers, no proxy, under ulimit -n 256: the nodes' need" \
    "descriptors in each redis-server node" \
    -n 256 -- "$WL/demo.yaml" --set workers.count=1000 --set cluster.proxy=false --set 'faults=[]'
refused "a file-size limit below the event logs' growth" "file size: event logs grow in 4 MiB steps" \
    -f 1000 -- "$WL/demo.yaml"

# soft limit low, hard limit high enough: raised, and the run goes ahead
d=$T_TMP/raised
set +e
(ulimit -Sn 128 && exec "$LS" run "$WL/demo.yaml" --out "$d" --quiet --set workers.count=100 \
    --set duration=1500ms --set 'expect={}' >"$d.out" 2>"$d.err")
rc=$?
set -e
check "100 workers under a soft ulimit -n 128 (hard higher) run (exit $rc: $(head -c 200 "$d.err"))" [ "$rc" -le 1 -o "$rc" -eq 4 ]
check "... and every worker logged" [ "$(ls "$d/events" | wc -l)" -eq 100 ]
t_no_leftovers "$d"
t_finish
