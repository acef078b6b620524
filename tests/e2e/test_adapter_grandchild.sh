#!/usr/bin/env bash
# Processes an adapter starts itself (grandchildren of the harness, with no
# death signal of their own) die with the run (docs/reliability.md "Nothing
# left behind"): the fixture adapter tests/fixtures/spawning_adapter.py
# starts a process that ignores SIGTERM, SIGHUP and SIGINT and sleeps 300 s.
# After a normal run, and within 2 s of a SIGKILL of the harness mid-run,
# that process is gone (the reaper kills the workers' process groups,
# harness/reaper.h); a stop fault (SIGTERM) on the worker SIGKILLs what its
# group left behind before the worker restarts in a new group. The grandchild is seen alive first, so the test can fail.
# `lockstorm adapter-test` (no worker, no reaper) gives the adapter a process
# group of its own and kills it at the end: the grandchild is gone there too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { fail "python3 is needed for the fixture adapter"; t_finish; }
FIX=$SRC/tests/fixtures/spawning_adapter.py

# alive PID: a live process (a zombie is dead: nobody may reap it in a container)
alive() { [ -r "/proc/$1/stat" ] && ! grep -qs '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }
# all_gone PIDFILE: no pid of the file is alive
all_gone() { local p; for p in $(cat "$1"); do alive "$p" && return 1; done; return 0; }
# any_alive PIDFILE: some pid of the file is alive
any_alive() { local p; for p in $(cat "$1" 2>/dev/null); do alive "$p" && return 0; done; return 1; }

wl() { # wl PIDFILE DURATION
    cat <<YAML
name: grandchild
duration: $2
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 1s
  options: {command: [python3, "$FIX", "$1"]}
workers: {count: 1, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
}

# ---- a normal end ----
pf=$T_TMP/normal.pids
: >"$pf"
wl "$pf" 1500ms >"$T_TMP/normal.yaml"
d=$T_TMP/normal
"$LS" run "$T_TMP/normal.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
pid=$!
check "the adapter started its own process, alive during the run" wait_for 20 any_alive "$pf"
set +e; wait "$pid"; rc=$?; set -e
check "normal run: exit 0 ($rc; $(tail -c 300 "$d.stderr"))" [ "$rc" -eq 0 ]
expect_val "$d" counts.grants ">" 5
check "normal run: the adapter's own process is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" \
    wait_for 2 all_gone "$pf"
t_no_leftovers "$d"

# ---- the harness SIGKILLed mid-run ----
pf=$T_TMP/killed.pids
: >"$pf"
wl "$pf" 30s >"$T_TMP/killed.yaml"
d=$T_TMP/killed
setsid "$LS" run "$T_TMP/killed.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
pid=$!
check "killed run: the adapter's own process is alive" wait_for 20 any_alive "$pf"
check "killed run: the run has begun" wait_for 20 grep -qs '"go_ms"\|"workers"' "$d/run.json"
sid=$(awk '{print $6}' "/proc/$pid/stat" 2>/dev/null || echo "")
procs=$(session_procs "$sid")
ports=$(listen_ports $procs)
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "killed run: the adapter's own process is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" \
    wait_for 2 all_gone "$pf"
t_no_session_leftovers "$sid" "killed run" $ports

# ---- a stop fault (SIGTERM) on the worker, restarted ----
# The worker exits on SIGTERM; its adapter's child ignores SIGTERM and stays
# in the old process group, which the restarted worker no longer uses (the
# reaper knows only the latest group): the fault SIGKILLs what is left.
pf=$T_TMP/stop.pids
: >"$pf"
wl "$pf" 6s >"$T_TMP/stop.yaml" # the leftover is gone ~2.3 s in: time to see it while the run goes on
cat >>"$T_TMP/stop.yaml" <<'YAML'
faults:
  - {kind: stop, target: "worker:0", at: 1s, duration: 300ms, grace: 2s}
YAML
d=$T_TMP/stop
"$LS" run "$T_TMP/stop.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
pid=$!
check "stop fault: the first adapter's own process is alive" wait_for 20 any_alive "$pf"
first=$(head -n1 "$pf")
check "stop fault: the worker was restarted (a second adapter started its own process)" \
    wait_for 20 sh -c "[ \$(wc -l <'$pf') -ge 2 ]"
check "stop fault: the first epoch's leftover ($first) is gone while the run goes on" \
    wait_for 2 sh -c "! kill -0 $first 2>/dev/null || grep -qs '^[0-9]* ([^)]*) Z' /proc/$first/stat"
check "stop fault: the run is still going when it is checked" kill -0 "$pid"
set +e; wait "$pid"; rc=$?; set -e
check "stop fault: exit 0 ($rc; $(tail -c 300 "$d.stderr"))" [ "$rc" -eq 0 ]
check "stop fault: faults.jsonl says the leftover of the old group was SIGKILLed" \
    grep -q '"process_group_killed":true' "$d/faults.jsonl"
check "stop fault: every adapter's own process is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" \
    wait_for 2 all_gone "$pf"
t_no_leftovers "$d"

# ---- adapter-test ----
pf=$T_TMP/at.pids
: >"$pf"
set +e
timeout 120 "$LS" adapter-test -- python3 "$FIX" "$pf" >"$T_TMP/at.out" 2>&1
rc=$?
set -e
check "adapter-test ran the fixture (exit $rc, it speaks the protocol)" \
    grep -q "^PASS handshake" "$T_TMP/at.out"
check "adapter-test: the adapter had started its own process" [ -s "$pf" ]
check "adapter-test: the adapter's own process is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" \
    wait_for 2 all_gone "$pf"
t_finish
