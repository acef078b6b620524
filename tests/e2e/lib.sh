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
T_OUTER_TMP=${TMPDIR:-/tmp} # for what a test keeps on purpose (screenshots)
T_TMP=$(mktemp -d "$T_OUTER_TMP/lse2e-XXXXXX")
# whatever the binaries make under $TMPDIR (adapter-test's scratch
# directories, kept when a check fails; check --history's spills) goes
# with the test's own directory
export TMPDIR=$T_TMP
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

# run_ls DIR WORKLOAD [ARGS...]: lockstorm run into DIR; sets RC. A run
# with unmet expectations has them printed as comments (the run directory
# is gone by the time anyone reads a CI log)
run_ls() {
    local dir=$1 wl=$2; shift 2
    set +e
    "$LS" run "$wl" --out "$dir" --quiet "$@" >"$dir.stdout" 2>"$dir.stderr"
    RC=$?
    set -e
    if [ "$RC" -ne 0 ] && [ -f "$dir/summary.txt" ]; then
        grep -E ' FAILED$' "$dir/summary.txt" | head -n 8 | sed "s|^ *|# ${dir##*/}: unmet: |" || true
    fi
    return 0
}

# t_need_browser: CHROME set to chromium (installed when missing, with
# LS_WITH_CHROMIUM=1 scripts/install-deps.sh) and gnuplot present for the
# charts; else the test fails saying why and exits: it never skips.
t_need_browser() {
    CHROME=$(command -v chromium || command -v chromium-browser || true)
    if [ -z "$CHROME" ]; then
        echo "# chromium missing: installing it (LS_WITH_CHROMIUM=1 scripts/install-deps.sh)"
        if ! LS_WITH_CHROMIUM=1 bash "$SRC/scripts/install-deps.sh" >"$T_TMP/install.log" 2>&1; then
            sed 's/^/# /' "$T_TMP/install.log" | tail -n 20
        fi
        CHROME=$(command -v chromium || command -v chromium-browser || true)
    fi
    if [ -z "$CHROME" ]; then
        fail "chromium is required for the HTML test and could not be installed (see the install log above); install the Debian package chromium"
        t_finish
        exit 1
    fi
    if ! command -v gnuplot >/dev/null 2>&1; then
        fail "gnuplot is required to draw the charts (scripts/install-deps.sh installs gnuplot-nox)"
        t_finish
        exit 1
    fi
}

# t_times_in_order FILE: in JSON FILE, the first object with started_at has
# ended_at and duration_s right after it, started_at <= ended_at and
# duration_s >= 0 (stress.json, sweep.json)
t_times_in_order() {
    python3 -c '
import json, sys
def find(o):
    if isinstance(o, dict):
        k = list(o)
        if "started_at" in k:
            return k[k.index("started_at"):k.index("started_at") + 3], o
        for v in o.values():
            r = find(v)
            if r: return r
    return None
keys, o = find(json.load(open(sys.argv[1])))
assert keys == ["started_at", "ended_at", "duration_s"], keys
assert o["started_at"] <= o["ended_at"] and o["duration_s"] >= 0, o
' "$1"
}

# t_kill SIG PID [NAME]: send SIG to PID only while it is still the process
# this test started: alive, not a zombie, and a child of this shell (or,
# with NAME, a process whose command name is NAME, for a grandchild). A
# process that ended leaves its pid free for another (pids wrap within
# minutes when the suite runs two tests at a time), so a test never
# signals a pid it has not just checked: a second `kill` of a node that
# already exited once ended whatever process of another test had its pid.
t_kill() {
    local sig=$1 p=${2:-} want=${3:-} st comm
    [ -n "$p" ] && [ "$p" -gt 1 ] 2>/dev/null || return 0
    st=$(cat "/proc/$p/stat" 2>/dev/null) || return 0
    comm=${st#*(}
    comm=${comm%%)*}
    set -- ${st##*) } # state ppid ...
    [ "$1" != Z ] || return 0
    if [ -n "$want" ]; then
        [ "$comm" = "$want" ] || return 0
    else
        [ "$2" = "$$" ] || return 0
    fi
    kill "-$sig" "$p" 2>/dev/null || true
}

# processes whose command line mentions the run dir (workers and the proxy,
# forked from `lockstorm run --out DIR`), plus the redis-server pids run.json
# records that are still redis-server processes (redis-server retitles
# itself "redis-server 127.0.0.1:PORT", so its command line never names the
# dir); reading only, never killing
leftovers() {
    pgrep -f -- "$1" || true
    local p
    [ -f "$1/run.json" ] || return 0
    for p in $(grep -o '"pid": *[0-9]*' "$1/run.json" | grep -o '[0-9]*$' | sort -u); do
        [ "$p" -gt 1 ] && grep -qs '^redis-server' "/proc/$p/cmdline" &&
            ! grep -qs '^[^)]*) Z' "/proc/$p/stat" && echo "$p"
    done
    return 0
}

# session_procs SID: live (non-zombie) processes of session SID. A test that
# starts lockstorm under setsid knows every process of that run by it
# (workers, proxy, redis-server, adapters), whatever their command lines.
session_procs() { ps -eo pid=,sid=,stat= | awk -v s="$1" '$2 == s && $3 !~ /^Z/ {print $1}'; }

# listen_ports PID...: the TCP ports those processes listen on
listen_ports() {
    local re
    re=$(printf 'pid=%s,|' "$@")
    { ss -ltnpH 2>/dev/null || true; } | { grep -E "${re%|}" || true; } |
        awk '{n = split($4, a, ":"); print a[n]}' | sort -u
}

# t_no_session_leftovers SID DESC [PORT...]: within 2 s no process of
# session SID remains and none of PORTs is listening (polled)
t_no_session_leftovers() {
    local sid=$1 desc=$2 i left ports; shift 2
    for i in $(seq 1 40); do
        left=$(session_procs "$sid")
        ports=""
        for p in "$@"; do
            ss -ltnH "sport = :$p" 2>/dev/null | grep -q . && ports="$ports $p"
        done
        [ -z "$left" ] && [ -z "$ports" ] && { ok "$desc: nothing left (no process, no port)"; return; }
        sleep 0.05
    done
    fail "$desc: left behind: processes [$(echo $left)] ($(for p in $left; do tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | head -c 60; echo -n '; '; done)) ports [$ports]"
}

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
    if [ "$T_FAIL" -gt 0 ]; then
        # what the test's runs said on stderr goes with its temp dir: show
        # the last lines of each (at most 8 files) so a CI log keeps them
        local f n=0
        for f in "$T_TMP"/*.stderr "$T_TMP"/*.err; do
            [ -s "$f" ] && [ "$n" -lt 8 ] || continue
            n=$((n + 1))
            echo "# $(basename "$f"), last lines:"
            tail -n 3 "$f" | sed 's/^/#   /'
        done
    fi
    [ "$T_FAIL" -eq 0 ]
}
