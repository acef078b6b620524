#!/usr/bin/env bash
# The failover fault's `cut: iptables` (faults/failover.c, util/iptables.c):
# the lost write of failover-lost-write.yaml with replication cut by tagged
# iptables DROP rules instead of the replication proxy. Checks the refusal
# at load (not root; cut without cut_before), the lost grants and the
# verified cut, that `iptables -S OUTPUT` holds no rule of the run after a
# normal run and within 10 s of a SIGKILL of the harness mid-cut (the rules
# reaper), and that a later run removes (with a warning) the rules of a
# harness that is gone and no other rule. Not root: only the refusal is
# checked ("skipped: not root"); root without iptables: a failure
# (scripts/test.sh installs it: scripts/install-deps.sh).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SC=$WL/scenarios
WLI=$SC/failover-lost-write-iptables.yaml

# refused DESC FRAGMENT CMD...: exit 2, one FILE:LINE:COL error naming FRAGMENT
refused() {
    local desc=$1 frag=$2 rc=0; shift 2
    "$@" >"$T_TMP/ref.out" 2>"$T_TMP/ref.err" || rc=$?
    if [ "$rc" -eq 2 ] && grep -qE "failover-[a-z-]*\.yaml:[0-9]+:[0-9]+: .*$frag" "$T_TMP/ref.err"; then
        ok "$desc: exit 2 with the file:line:col error"
    else
        fail "$desc: exit $rc: $(head -c 400 "$T_TMP/ref.err")"
    fi
}

if [ "$(id -u)" -ne 0 ]; then
    refused "not root: cut: iptables refused at load" "needs root" "$LS" validate "$WLI"
    echo "ok - skipped: not root"
    t_finish
    exit 0
fi
if ! command -v iptables >/dev/null 2>&1 && [ ! -x /usr/sbin/iptables ] && [ ! -x /sbin/iptables ]; then
    fail "running as root but the iptables command is missing: install it (apt-get install iptables; scripts/install-deps.sh does)"
    t_finish
    exit 1
fi
IPT=$(command -v iptables || echo /usr/sbin/iptables)

# rules_of TAG: the OUTPUT rules carrying comment TAG
rules_of() { "$IPT" -w 5 -S OUTPUT | grep -F -- "\"$1\"" || true; }
no_rules_of() { [ -z "$(rules_of "$1")" ]; }
has_rules_of() { [ -n "$(rules_of "$1")" ]; }
no_lockstorm_rule() { ! "$IPT" -w 5 -S OUTPUT | grep -q 'lockstorm:'; }
fault_line() { grep "\"id\":$2,\"event\":\"$3\"" "$1/faults.jsonl" | head -n1; }
jfield() { printf '%s' "$1" | sed -n "s/.*\"$2\":\(\"[^\"]*\"\|[-0-9.a-z]*\).*/\1/p" | head -n1 | tr -d '"'; }

# ---- bad input: refused at load -----------------------------------------
sed 's/cut_before: 700ms, cut: iptables/cut: iptables/' "$WLI" >"$T_TMP/failover-nocut.yaml"
refused "cut: iptables without cut_before" "cut: iptables without cut_before" \
    "$LS" validate "$T_TMP/failover-nocut.yaml"
if command -v setpriv >/dev/null 2>&1 && setpriv --reuid 65534 --regid 65534 --clear-groups \
        test -x "$LS" 2>/dev/null && setpriv --reuid 65534 --regid 65534 --clear-groups \
        test -r "$WLI" 2>/dev/null; then
    refused "as an unprivileged user: cut: iptables refused at load" "needs root" \
        setpriv --reuid 65534 --regid 65534 --clear-groups "$LS" validate "$WLI"
else
    echo "ok - # SKIP the binary or workload is not readable by uid 65534"
fi
{ sed '/^expect:/,$d' "$WLI"
  echo "  - {kind: failover, mode: manual, cut_before: 100ms, at: 4s, duration: 50ms}"
} >"$T_TMP/failover-mixed.yaml"
refused "cut: iptables and cut: proxy mixed in one workload" "in an earlier failover fault" \
    "$LS" validate "$T_TMP/failover-mixed.yaml"

# ---- the lost write with an iptables cut ----------------------------------
d=$T_TMP/lost
run_ls "$d" "$WLI"
check "failover-lost-write-iptables meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
tag=$(grep -o '"comment": "lockstorm:[0-9]*"' "$d/run.json" | head -n1 | sed 's/.*: "\(.*\)"/\1/')
check "run.json names the rules' comment ($tag)" [ -n "$tag" ]
for k in 0 1; do
    s=$(fault_line "$d" $k start); e=$(fault_line "$d" $k end)
    check "failover $k: cut with iptables ($(jfield "$s" cut_rules) rules), verified on 2 replicas" \
        [ "$(jfield "$s" cut)" = iptables -a "$(jfield "$s" cut_rules)" = 4 \
          -a -n "$(jfield "$s" cut_verified)" -a "$(jfield "$s" cut_replicas_checked)" = 2 ]
    check "failover $k: old primary reaped, replica promoted" \
        [ "$(jfield "$s" verified)" = "old primary reaped" -a "$(jfield "$e" promoted)" = true ]
done
first=$(get "$d" violations.0.holders.0.acquired_ms)
in_cut=0
for k in 0 1; do
    s=$(fault_line "$d" $k start)
    c=$(jfield "$s" cut_ms); t=$(awk -v ns="$(jfield "$s" t_ns)" 'BEGIN { print ns / 1e6 }')
    awk -v c="$c" -v t="$t" -v a="$first" 'BEGIN { exit !(a > c && a < t) }' && in_cut=1
done
check "the lost grant ($first ms) was made while replication was cut" [ "$in_cut" = 1 ]
check "no rule of the run ($tag) is left after a normal run" no_rules_of "$tag"
t_no_leftovers "$d"
echo "# iptables cut: lock-broken $(get "$d" checks.mutex.by_class.lock_broken)"

# ---- SIGKILL of the harness mid-cut: the rules reaper removes the rules ---
d=$T_TMP/killed
setsid "$LS" run "$WLI" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
pid=$!
tag=lockstorm:$pid
if wait_for 10 has_rules_of "$tag"; then
    ok "the cut's rules ($tag) are in place mid-run"
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    # (the kill lands as the first rule shows, so usually in the middle of
    # the harness's `iptables -A` calls: one of them may commit its rule
    # after the rules reaper's first sweep. The reaper sweeps again until
    # nothing carrying the run's tag is left (the process reaper kills those
    # within 2 s); test_reaper holds that race open on purpose. 10 s: the
    # bound, not the expected time)
    check "no rule of the killed run is left within 10 s of its SIGKILL" wait_for 10 no_rules_of "$tag"
else
    fail "the cut's rules ($tag) never appeared: $(head -c 300 "$d.stderr")"
    t_kill KILL "$pid"
    wait "$pid" 2>/dev/null || true
fi
t_no_session_leftovers "$pid" "harness killed mid-cut"

# ---- stale rules of a dead harness: removed with a warning, others kept ---
sleep 0 & dead=$!
wait "$dead" || true
"$IPT" -w 5 -A OUTPUT -p tcp -s 127.0.0.250 -d 127.0.0.1 --dport 9 -m comment \
    --comment "lockstorm:$dead" -j DROP
"$IPT" -w 5 -A OUTPUT -p tcp -s 127.0.0.251 -d 127.0.0.1 --dport 9 -m comment \
    --comment "lockstorm:$$" -j DROP
"$IPT" -w 5 -A OUTPUT -p tcp -s 127.0.0.252 -d 127.0.0.1 --dport 9 -m comment \
    --comment "not-lockstorm:$dead" -j DROP
cleanup_test_rules() {
    "$IPT" -w 5 -D OUTPUT -p tcp -s 127.0.0.250 -d 127.0.0.1 --dport 9 -m comment \
        --comment "lockstorm:$dead" -j DROP 2>/dev/null || true
    "$IPT" -w 5 -D OUTPUT -p tcp -s 127.0.0.251 -d 127.0.0.1 --dport 9 -m comment \
        --comment "lockstorm:$$" -j DROP 2>/dev/null || true
    "$IPT" -w 5 -D OUTPUT -p tcp -s 127.0.0.252 -d 127.0.0.1 --dport 9 -m comment \
        --comment "not-lockstorm:$dead" -j DROP 2>/dev/null || true
}
trap 'cleanup_test_rules; t_cleanup' EXIT
d=$T_TMP/stale
run_ls "$d" "$WLI"
check "a run after a dead harness's rules succeeds (exit $RC)" [ "$RC" -eq 0 ]
check "it warned about the stale rules of pid $dead" \
    grep -q "removing stale iptables rules .*lockstorm:$dead" "$d.stderr"
check "the dead harness's rule is gone" no_rules_of "lockstorm:$dead"
check "a live process's lockstorm rule is kept" has_rules_of "lockstorm:$$"
check "a rule with another comment is kept" has_rules_of "not-lockstorm:$dead"
cleanup_test_rules
check "iptables -S OUTPUT shows no lockstorm rule at the end" no_lockstorm_rule
t_no_leftovers "$d"

t_finish
