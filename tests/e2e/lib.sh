# lib.sh: helpers for lockstorm's end-to-end tests (sourced). Each test runs
# the real binary against real redis-server processes the harness starts on
# free loopback ports, in a temporary directory removed at exit. Tests print
# "ok - ..." / "not ok - ..." lines and end with "N passed, N failed".
set -u
LS=${LS_BINARY:?LS_BINARY must point at the lockstorm binary}
SRC=${LS_SOURCE_DIR:?LS_SOURCE_DIR must point at the source tree}
WL=$SRC/workloads
T_PASS=0
T_FAIL=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/lse2e-XXXXXX")
trap 't_cleanup' EXIT

t_cleanup() {
    # processes of our runs still alive would be a test failure; they are
    # reported by t_no_leftovers. Only our own temp dir is removed here.
    rm -rf "$T_TMP"
}

ok() { T_PASS=$((T_PASS + 1)); echo "ok - $*"; }
fail() { T_FAIL=$((T_FAIL + 1)); echo "not ok - $*"; }

# check DESCRIPTION COMMAND...: passes when the command succeeds
check() {
    local d=$1; shift
    if "$@"; then ok "$d"; else fail "$d"; fi
}

# get RUN_DIR PATH: a value of result.json
get() { "$LS" get "$1" "$2"; }

# num_cmp A OP B (integers or decimals)
num_cmp() { awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
    if (op == ">") exit !(a > b); if (op == ">=") exit !(a >= b);
    if (op == "<") exit !(a < b); if (op == "<=") exit !(a <= b);
    if (op == "==") exit !(a == b); exit 1 }'; }

# expect_val RUN_DIR PATH OP VALUE
expect_val() {
    local v
    v=$(get "$1" "$2")
    if [ -n "$v" ] && [ "$v" != null ] && num_cmp "$v" "$3" "$4"; then
        ok "$2 = $v $3 $4"
    else
        fail "$2 = $v, wanted $3 $4"
    fi
}

# run_ls DIR WORKLOAD [ARGS...]: lockstorm run into DIR; sets RC
run_ls() {
    local dir=$1 wl=$2; shift 2
    set +e
    "$LS" run "$wl" --out "$dir" --quiet "$@" >"$dir.stdout" 2>"$dir.stderr"
    RC=$?
    set -e
    return 0
}

# processes whose command line mentions the run dir (redis-server --dir,
# workers forked from `lockstorm run --out DIR`); reading only, never killing
leftovers() { pgrep -f -- "$1" || true; }

# t_no_leftovers DIR: no process of that run remains (polled, at most 2 s)
t_no_leftovers() {
    local i
    for i in $(seq 1 40); do
        [ -z "$(leftovers "$1")" ] && { ok "no process of $(basename "$1") remains"; return; }
        sleep 0.05
    done
    fail "processes of $(basename "$1") remain: $(leftovers "$1" | tr '\n' ' ')"
}

# wait_for SECONDS COMMAND...: poll until the command succeeds (bounded)
wait_for() {
    local limit=$1; shift
    local end=$(( $(date +%s%N) + limit * 1000000000 ))
    while [ "$(date +%s%N)" -lt "$end" ]; do
        "$@" && return 0
        sleep 0.02
    done
    return 1
}

t_finish() {
    echo "$T_PASS passed, $T_FAIL failed"
    [ "$T_FAIL" -eq 0 ]
}
