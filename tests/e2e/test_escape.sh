#!/usr/bin/env bash
# Nothing escapes the run (docs/reliability.md "Nothing escapes the run",
# issue 16): every process the run starts carries LOCKSTORM_RUN=<run id>
# in its environment, the harness is its descendants' child subreaper, and
# the reaper (harness/reaper.h) kills what carries the tag by pid when the
# harness is gone. The fixture adapter tests/fixtures/escaping_adapter.py
# starts a process that leaves the worker's process group (setsid: a new
# session; setpgid(0,0): a new group) and ignores SIGTERM, SIGHUP and SIGINT.
# Cases: a normal end (setsid), the harness SIGKILLed mid-run (setpgid),
# the reaper SIGKILLed first and then the harness (setsid): each time the
# escaper is seen alive and tagged first, and nothing carrying the run's tag
# is alive within 2 s of the end. The last case also checks that run.json
# records the reaper's death and restart and says which containment is in use.
# Then: a child the harness had before the run (a wrapper's `sleep 300 &
# exec lockstorm`) survives a run and an adapter-test; an adapter's
# short-lived detached helpers leave no zombie child of the harness for
# more than 1 s; a reaper killed 11 times is restarted 10 times, no more.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { fail "python3 is needed for the fixture adapter"; t_finish; }
FIX=$SRC/tests/fixtures/escaping_adapter.py

# alive PID: a live process (a zombie is dead)
alive() { [ -r "/proc/$1/stat" ] && ! grep -qs '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }
all_gone() { local p; for p in $(cat "$1"); do alive "$p" && return 1; done; return 0; }
any_alive() { local p; for p in $(cat "$1" 2>/dev/null); do alive "$p" && return 0; done; return 1; }
# run_id DIR: the run's id from run.json
run_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$1/run.json"; }
# rj DIR EXPR: a value of run.json (EXPR in Python over j)
rj() { python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
    "$1/run.json" "$2" 2>/dev/null; }
# tagged ID: pids of live processes whose environment carries LOCKSTORM_RUN=ID
tagged() {
    local f p
    for f in /proc/[0-9]*/environ; do
        p=${f#/proc/}; p=${p%/environ}
        tr "\\0" "\\n" 2>/dev/null <"$f" | grep -qx "LOCKSTORM_RUN=$1" && alive "$p" && echo "$p"
    done
    return 0
}
none_tagged() { [ -z "$(tagged "$1")" ]; }
# escaped PID MODE: PID has left its parent's group (setpgid) or session (setsid)
escaped() {
    local st; st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    set -- "$1" "$2" $st # state ppid pgrp session ...
    if [ "$2" = setsid ]; then [ "$6" = "$1" ]; else [ "$5" = "$1" ] && [ "$6" != "$1" ]; fi
}
carries() { tr "\\0" "\\n" 2>/dev/null <"/proc/$1/environ" | grep -qx "LOCKSTORM_RUN=$2"; }

wl() { # wl MODE PIDFILE DURATION
    cat <<YAML
name: escape
duration: $3
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 1s
  options: {command: [python3, "$FIX", "$1", "$2"]}
workers: {count: 1, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
}

# start MODE NAME DURATION: a run in the background; sets pid, d, pf, id
start() {
    pf=$T_TMP/$2.pids
    : >"$pf"
    wl "$1" "$pf" "$3" >"$T_TMP/$2.yaml"
    d=$T_TMP/$2
    "$LS" run "$T_TMP/$2.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
    pid=$!
    # run.json (with the run's id) is written before the workers start
    check "$2: the run has begun" wait_for 20 grep -qs '"run_id"' "$d/run.json"
    id=$(run_id "$d" 2>/dev/null || echo none)
    check "$2: the adapter's escaper is alive" wait_for 20 any_alive "$pf"
    local e; e=$(head -n1 "$pf")
    check "$2: the escaper carries LOCKSTORM_RUN=<run id> ($id)" carries "$e" "$id"
    check "$2: it left the worker's $([ "$1" = setsid ] && echo session || echo group)" \
        escaped "$e" "$1"
}

# ---- setsid, a normal end ----
start setsid normal 3s
set +e; wait "$pid"; rc=$?; set -e
check "normal: exit 0 ($rc; $(tail -c 300 "$d.stderr"))" [ "$rc" -eq 0 ]
check "normal: the escaper is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" wait_for 2 all_gone "$pf"
check "normal: nothing tagged with the run is alive ($(tagged "$id" | tr '\n' ' '))" \
    wait_for 2 none_tagged "$id"
check "normal: run.json says how the run is contained" \
    [ "$(rj "$d" 'j["containment"]')" = "subreaper+environ" ]
t_no_leftovers "$d"

# ---- setpgid, the harness SIGKILLed mid-run ----
start setpgid killed 30s
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "killed: the escaper is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" wait_for 2 all_gone "$pf"
check "killed: nothing tagged with the run is alive ($(tagged "$id" | tr '\n' ' '))" \
    wait_for 2 none_tagged "$id"

# ---- setsid, the reaper SIGKILLed first, then the harness ----
start setsid reaper 30s
rp=$(rj "$d" 'j["reaper"]["pid"]' || echo "")
check "reaper: run.json names the reaper ($rp)" sh -c '[ -n "$1" ] && [ "$1" -gt 1 ]' _ "$rp"
if [ -n "$rp" ] && [ "$rp" -gt 1 ] 2>/dev/null && alive "$rp"; then
    kill -KILL "$rp"
    check "reaper: run.json records its death and restart" \
        wait_for 5 sh -c "[ \"\$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j[\"reaper\"]; print(len(r[\"restarts\"]), r[\"pid\"] != $rp)' '$d/run.json' 2>/dev/null)\" = '1 True' ]"
    check "reaper: the restart says how the first one ended" \
        [ "$(rj "$d" 'j["reaper"]["restarts"][0]["exit"]')" = "killed by signal 9 (Killed)" ]
fi
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
check "reaper: the escaper is gone within 2 s ($(cat "$pf" | tr '\n' ' '))" wait_for 2 all_gone "$pf"
check "reaper: nothing tagged with the run is alive ($(tagged "$id" | tr '\n' ' '))" \
    wait_for 2 none_tagged "$id"

# ---- adapter-test: an escaper is found, killed and reported ----
pf=$T_TMP/at.pids
: >"$pf"
set +e
timeout 120 "$LS" adapter-test -- python3 "$FIX" setsid "$pf" >"$T_TMP/at.out" 2>&1
rc=$?
set -e
check "adapter-test: the fixture escaped its session ($(cat "$pf" | tr '\n' ' '))" [ -s "$pf" ]
check "adapter-test: the escaper is gone at its end ($(cat "$pf" | tr '\n' ' '))" \
    wait_for 2 all_gone "$pf"
check "adapter-test: it fails 'nothing left behind' and exits 1 (exit $rc)" \
    sh -c '[ "$1" -eq 1 ] && grep -q "^FAIL nothing left behind *1 process the adapter started outlived it" "$2"' \
    _ "$rc" "$T_TMP/at.out"

# ---- a wrapper's child from before exec lockstorm is not the run's ----
# bash starts `sleep 300` and execs lockstorm: the sleep is the harness's
# child from its first instant; the run's sweep and adapter-test's leave it
# alone (and adapter-test counts only the escaper)
wpf=$T_TMP/wrapper.pids
: >"$wpf"
pf=$T_TMP/wrapped.pids
: >"$pf"
wl setsid "$pf" 2s >"$T_TMP/wrapped.yaml"
set +e
timeout 120 bash -c 'sleep 300 & echo $! >>"$1"; exec "$2" run "$3" --out "$4" --quiet' \
    _ "$wpf" "$LS" "$T_TMP/wrapped.yaml" "$T_TMP/wrapped" >/dev/null 2>"$T_TMP/wrapped.stderr"
rc=$?
set -e
check "wrapped run: exit 0 ($rc; $(tail -c 300 "$T_TMP/wrapped.stderr"))" [ "$rc" -eq 0 ]
check "wrapped run: the wrapper's sleep survives the run ($(cat "$wpf"))" \
    alive "$(head -n1 "$wpf")"
check "wrapped run: the escaper is gone" wait_for 2 all_gone "$pf"
pf=$T_TMP/wrapped_at.pids
: >"$pf"
set +e
timeout 120 bash -c 'sleep 300 & echo $! >>"$1"; exec "$2" adapter-test -- python3 "$3" setsid "$4"' \
    _ "$wpf" "$LS" "$FIX" "$pf" >"$T_TMP/wrapped_at.out" 2>&1
rc=$?
set -e
check "wrapped adapter-test: the wrapper's sleep survives ($(tail -n1 "$wpf"))" \
    alive "$(tail -n1 "$wpf")"
check "wrapped adapter-test: only the escaper is left behind (exit $rc)" \
    grep -q "^FAIL nothing left behind *1 process the adapter started outlived it" \
    "$T_TMP/wrapped_at.out"
for p in $(cat "$wpf"); do alive "$p" && kill -KILL "$p" 2>/dev/null; done

# ---- adopted orphans are reaped during the run ----
# the adapter's shell keeps starting `sh -c 'sleep 0.1 & exit 0'`: each
# sleep is orphaned, adopted by the harness (subreaper) and dies; no such
# zombie child of the harness may stay more than about 1 s
# zombie_ages PID SECONDS: polls every 20 ms; prints "SIGHTINGS WORST_MS",
# the longest any zombie child of PID was seen a zombie
zombie_ages() {
    python3 - "$1" "$2" <<'PY'
import os, sys, time
harness, until = sys.argv[1], time.monotonic() + float(sys.argv[2])
first, worst, seen = {}, 0.0, 0
while time.monotonic() < until:
    now = time.monotonic()
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            st = open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if st[0] == "Z" and st[1] == harness:
            seen += 1
            first.setdefault(p, now)
            worst = max(worst, now - first[p])
    time.sleep(0.02)
print(seen, int(worst * 1000))
PY
}
pf=$T_TMP/zombie.pids
: >"$pf"
cat >"$T_TMP/zombie.yaml" <<YAML
name: zombies
duration: 5s
cluster: {nodes: 1}
lock:
  impl: external
  ttl: 1s
  options:
    command: [sh, -c, "(while :; do sh -c 'sleep 0.1 & echo \$! >>\"\$0\"' \"\$2\"; sleep 0.05; done) & exec python3 \"\$0\" setsid \"\$1\"", "$FIX", "$pf", "$T_TMP/helpers"]
workers: {count: 1, resources: 1, hold: {dist: uniform, min: 5ms, max: 20ms}, think: 5ms}
YAML
"$LS" run "$T_TMP/zombie.yaml" --out "$T_TMP/zombie" --quiet >/dev/null 2>"$T_TMP/zombie.stderr" &
pid=$!
check "zombies: the run has begun" wait_for 20 grep -qs '"run_id"' "$T_TMP/zombie/run.json"
check "zombies: the adapter is running" wait_for 20 any_alive "$pf"
set -- $(zombie_ages "$pid" 3)
check "zombies: the helpers ran ($(wc -l <"$T_TMP/helpers") started)" \
    [ "$(wc -l <"$T_TMP/helpers")" -gt 5 ]
check "zombies: none stayed a zombie child of the harness over 1 s ($1 sightings, worst $2 ms)" \
    [ "$2" -le 1000 ]
set +e; wait "$pid"; rc=$?; set -e
check "zombies: exit 0 ($rc; $(tail -c 300 "$T_TMP/zombie.stderr"))" [ "$rc" -eq 0 ]

# ---- a reaper that keeps dying is restarted 10 times, no more ----
start setsid cap 120s
for i in $(seq 11); do
    rp=$(rj "$d" 'j["reaper"]["pid"]' || echo "")
    [ -n "$rp" ] && [ "$rp" -gt 1 ] 2>/dev/null && alive "$rp" || break
    kill -KILL "$rp"
    [ "$i" -le 10 ] && wait_for 5 sh -c "[ \"\$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))[\"reaper\"][\"restarts\"]))' '$d/run.json' 2>/dev/null)\" = $i ]"
done
check "cap: 11 reapers were killed ($i)" [ "$i" -eq 11 ]
sleep 1
kill -INT "$pid" # the end of the run: the harness's own sweep ends the escaper
check "cap: no 11th restart (restarts $(rj "$d" 'len(j["reaper"]["restarts"])'))" \
    [ "$(rj "$d" 'len(j["reaper"]["restarts"])')" = 10 ]
set +e; wait "$pid"; rc=$?; set -e
check "cap: run.json has restarts 10 and one incident saying so" \
    [ "$(rj "$d" 'str(len(j["reaper"]["restarts"])) + " " + str(sum("not restarted again" in str(x) for x in j["incidents"]))')" = "10 1" ]

# what the test's runs left (the code before the fix): stopped by pid
for f in "$T_TMP"/*.pids; do
    for p in $(cat "$f"); do alive "$p" && kill -KILL "$p" 2>/dev/null; done
done
t_finish
