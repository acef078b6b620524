#!/usr/bin/env bash
# Run directories (docs/reliability.md "Run directories"): two runs given
# the same empty --out at once never share it (one claims it, the other
# says so in one line, exit 2, and writes nothing there); runs/latest
# moves only to a run that produced a result; SIGUSR1, SIGUSR2 and SIGALRM
# do not end a run (taken and ignored, said once).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mk() { # mk NAME LOCK: a short run
    cat >"$T_TMP/$1.yaml" <<EOF2
name: $1
duration: 300ms
lock: {impl: $2, ttl: 200ms}
workers: {count: $3, resources: 1, hold: 5ms, think: 5ms}
EOF2
}
mk runa redis-single 2
mk runb naive-del 3

# ---- 20 concurrent pairs on one pre-created empty --out ----
bad=0 both=0 none=0
for i in $(seq 1 20); do
    out=$T_TMP/pair$i
    mkdir -m 0700 "$out"
    set +e
    "$LS" run "$T_TMP/runa.yaml" --out "$out" --quiet >"$out.a.out" 2>"$out.a.err" &
    pa=$!
    "$LS" run "$T_TMP/runb.yaml" --out "$out" --quiet >"$out.b.out" 2>"$out.b.err" &
    pb=$!
    wait "$pa"; ra=$?
    wait "$pb"; rb=$?
    set -e
    if [ "$ra" -ne 2 ] && [ "$rb" -ne 2 ]; then both=$((both + 1)); continue; fi
    if [ "$ra" -eq 2 ] && [ "$rb" -eq 2 ]; then none=$((none + 1)); continue; fi
    if [ "$ra" -eq 2 ]; then win=b lose=a; else win=a lose=b; fi
    # the loser: one line naming the directory; the winner: its own workload throughout
    [ "$(wc -l <"$out.$lose.err")" -eq 1 ] && grep -q -- "--out $out" "$out.$lose.err" || {
        bad=$((bad + 1)); echo "# pair $i: loser said: $(cat "$out.$lose.err")"; continue; }
    name=$("$LS" get "$out" workload.name)
    grep -q "^lockstorm: [A-Z]* workload=run$win " "$out.$win.out" &&
        [ "${name//\"/}" = "run$win" ] && grep -q "^name: run$win$" "$out/workload.yaml" || {
        bad=$((bad + 1)); echo "# pair $i: winner run$win, result names $name"; }
done
check "20 pairs: every pair had exactly one run (both ran: $both, none ran: $none)" \
    [ "$both" -eq 0 -a "$none" -eq 0 ]
check "20 pairs: the loser said so in one line and the winner's files are its own ($bad bad)" \
    [ "$bad" -eq 0 ]

# ---- runs/latest moves only to a run with a result ----
cwd=$T_TMP/cwd
mkdir -p "$cwd"
(cd "$cwd" && "$LS" run "$T_TMP/runa.yaml" --quiet >/dev/null 2>&1) || true
first=$(readlink "$cwd/runs/latest" || true)
check "runs/latest points at a run with a result ($first)" [ -n "$first" -a -s "$cwd/runs/$first/result.json" ]
cat >"$T_TMP/nostart.yaml" <<EOF2
name: nostart
duration: 1s
lock: {impl: external, options: {command: [/nonexistent/adapter]}}
workers: {count: 1, resources: 1}
EOF2
set +e
(cd "$cwd" && "$LS" run "$T_TMP/nostart.yaml" --quiet >/dev/null 2>&1)
rc=$?
set -e
check "a run that fails to start exits 3 (got $rc)" [ "$rc" -eq 3 ]
check "... and runs/latest still points at the last run with a result" \
    [ "$(readlink "$cwd/runs/latest")" = "$first" ]

# ---- SIGUSR1, SIGUSR2, SIGALRM do not end a run ----
cat >"$T_TMP/usr.yaml" <<EOF2
name: usr
duration: 2s
workers: {count: 2, resources: 1, hold: 5ms, think: 5ms}
EOF2
d=$T_TMP/usr
setsid "$LS" run "$T_TMP/usr.yaml" --out "$d" --quiet >"$d.out" 2>"$d.err" &
pid=$!
wait_for 20 grep -qs '"state": "running"' "$d/run.json" || true
for s in USR1 USR2 ALRM; do kill -"$s" "$pid" 2>/dev/null || true; done
set +e
wait "$pid"
rc=$?
set -e
check "SIGUSR1/SIGUSR2/SIGALRM: the run went on to its verdict (exit $rc)" [ "$rc" -eq 0 ]
check "... run.json is final" grep -q '"state": "finished"' "$d/run.json"
check "... and it said so once" [ "$(grep -c 'ignored (a run stops on SIGINT' "$d.err")" -eq 1 ]
t_no_session_leftovers "$pid" "usr"
t_finish
