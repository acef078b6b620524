#!/usr/bin/env bash
# Record mode (lock.impl record, docs/adapters.md "Record mode"): the user's
# own program (tests/fixtures/record_program.py: a Redis lock with SET NX PX
# and a compare-and-delete release, speaking the record extension directly)
# runs as each worker under holder pauses past the TTL. The correct program
# shows stale-holder only and the pauses bite; the same program with an
# unconditional DEL release is caught (lock-broken); one that skips the lock
# is recorded as holds with no grant, its sequence errors counted; one that
# crashes holding is recorded as a crash and restarted (at most once a
# second); a program
# that does not list `record` fails the run with one line (exit 3); bad
# workload input is refused before anything starts (exit 2); SIGTERM
# mid-run leaves no process of the run. Needs Debian's python3-redis.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$SRC" # the workloads' commands are relative to the source tree

for f in "$WL"/record/*.yaml; do
    check "$(basename "$f") loads" "$LS" validate "$f" >/dev/null
done
if ! /usr/bin/python3 -c 'import redis' 2>/dev/null; then
    fail "python3-redis is not installed (apt-get install python3-redis)"
    t_finish
    exit 1
fi

# the correct program: stale-holder only, the pauses bit
d=$T_TMP/correct
run_ls "$d" "$WL/record/redis-pause-long.yaml"
check "correct program: its expectations hold (exit $RC; $(tail -c 300 "$d.stderr"))" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
expect_val "$d" checks.mutex.by_class.lock_broken == 0
expect_val "$d" counts.grants ">" 10
expect_val "$d" coverage.faults.bit == 2
expect_val "$d" adapter.processes == 4
expect_val "$d" adapter.record_events ">" 100
expect_val "$d" adapter.record_sequence_errors == 0
expect_val "$d" adapter.record_bad_events == 0
expect_val "$d" adapter.record_stamps_ignored == 0
expect_val "$d" adapter.exits == 0
check "correct program: summary names it" grep -q "^adapter    record-program 1.0 caps=ttl,record" "$d/summary.txt"
t_no_leftovers "$d"

# the unconditional DEL: caught
d=$T_TMP/del
run_ls "$d" "$WL/record/redis-del-bug.yaml"
check "DEL on release: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
expect_val "$d" adapter.record_sequence_errors == 0
t_no_leftovers "$d"

# a program whose hello lists no `ttl`: its grants never expire by its own
# account, so they are recorded without a lease (the harness once gave
# them lock.ttl and called such overlaps stale-holder)
d=$T_TMP/nottl
run_ls "$d" "$WL/record/redis-pause-long.yaml" --set 'lock.options.command=[tests/fixtures/record_program.py, --no-ttl-cap]' --set 'expect={}' --set duration=3s
check "no ttl cap: grants recorded without a lease" \
    sh -c "'$LS' log export '$d' | grep -m1 '\"type\":\"acquire_ok\"' | grep -q '\"valid_until\":null'"
expect_val "$d" checks.mutex.by_class.stale_holder == 0
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
t_no_leftovers "$d"

# the SDKs' record(): the same loop written on the Node SDK
# (adapters/node/examples/record-worker.js) and on the Python SDK
# (adapters/python/record_worker.py), correct and with a DEL release
d=$T_TMP/node-sdk
run_ls "$d" "$WL/record/node-sdk-pause-long.yaml"
check "Node SDK, correct loop: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" adapter.record_sequence_errors == 0
expect_val "$d" adapter.record_stamps_ignored == 0
expect_val "$d" coverage.faults.not_bit == 0
t_no_leftovers "$d"
d=$T_TMP/node-sdk-del
# (the workload's three pauses: a woken holder's DEL that lands between two
# holds frees nothing, about 1 pause in 30; with one pause both SDKs' runs
# missed lock-broken, 1 run in 18 here and once in CI)
run_ls "$d" "$WL/record/node-sdk-del-bug.yaml"
check "Node SDK, DEL release: caught (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
d=$T_TMP/py-sdk
run_ls "$d" "$WL/record/node-sdk-pause-long.yaml" --set duration=3s \
    --set 'lock.options.command=[adapters/python/record_worker.py]'
check "Python SDK, correct loop: its expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" adapter.record_sequence_errors == 0
expect_val "$d" checks.mutex.by_class.stale_holder ">" 0
d=$T_TMP/py-sdk-del
run_ls "$d" "$WL/record/node-sdk-del-bug.yaml" \
    --set 'lock.options.command=[adapters/python/record_worker.py, --bug, del]'
check "Python SDK, DEL release: caught (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
t_no_leftovers "$d"

# no lock at all: enter/exit only, recorded as they came and counted
d=$T_TMP/nolock
run_ls "$d" "$WL/record/redis-pause-long.yaml" --set 'lock.options.command=[tests/fixtures/record_program.py, --bug, no-lock]' --set 'expect={}' --set duration=2s
check "no lock: the run fails (exit $RC)" [ "$RC" -eq 1 ]
expect_val "$d" checks.mutex.violations ">" 0
expect_val "$d" adapter.record_sequence_errors ">" 0
t_no_leftovers "$d"

# a program that crashes inside its critical section: the hold ends there
# (a crash record), the program is restarted, no overlap is made up; a kill
# of the holder's worker takes its program too, and the restarted worker
# (epoch 1) starts a new one, whose counters are kept apart
d=$T_TMP/crash
run_ls "$d" "$WL/record/redis-pause-long.yaml" --set 'lock.options.command=[tests/fixtures/record_program.py, --crash-after, "3"]' --set 'faults=[{kind: kill, target: holder, at: 500ms}]' --set 'expect={}' --set duration=3s
check "crashing program: exit 0 ($RC)" [ "$RC" -eq 0 ]
expect_val "$d" counts.crashes ">" 1
expect_val "$d" adapter.processes == 5
expect_val "$d" coverage.faults.bit == 1
expect_val "$d" adapter.restarts ">" 0
expect_val "$d" checks.mutex.violations == 0
t_no_leftovers "$d"

# stamps of another clock: refused, counted, timed by the read, and the run
# warns that its order of steps is only as good as the pipe delay (with
# read times, a release read late can overlap the next grant by a fraction
# of a millisecond: seen 1 in 8 runs before stamps, so no violation count
# is asserted here)
d=$T_TMP/badstamps
run_ls "$d" "$WL/record/redis-pause-long.yaml" --set 'lock.options.command=[tests/fixtures/record_program.py, --stamp-offset-ms, "100000"]' --set 'faults=[]' --set 'expect={}' --set duration=1s
expect_val "$d" adapter.record_stamps_ignored ">" 0
check "bad stamps: the run warns that it was timed by reads" \
    sh -c "'$LS' get '$d' adapter.warnings | grep -q 'timed when the worker read them'"
t_no_leftovers "$d"

# a program that crashes at its first grant, over and over: restarted at
# once the first time, then at most once a second (docs/protocol.md), so
# 2.5 s hold at most 4 restarts (without the pacing: one every ~0.4 s, 6
# or more). At the deadline the program is gone (crashed at ~2 s, its next
# restart due at ~3 s): the worker stops then, it does not wait the 2 s
# stop_grace for a `stopped` nothing can send (the run lasted 4.5 s, and
# the open wait counted to its end made liveness call r0 stuck)
d=$T_TMP/pacing
run_ls "$d" "$WL/record/redis-pause-long.yaml" --set 'lock.options.command=[tests/fixtures/record_program.py, --crash-after, "1", --hold-ms, "1-1"]' --set 'faults=[]' --set 'expect={}' --set duration=2500ms --set workers.count=1
r=$(get "$d" adapter.restarts)
check "crash at every first grant: restarted, at most once a second ($r restarts in 2.5 s, exit $RC)" \
    bash -c '[ "$1" -ge 1 ] && [ "$1" -le 4 ]' _ "$r"
ran=$(get "$d" duration_s)
check "program gone at the deadline: the run ends without the stop grace (ran $ran s for 2.5 s)" \
    num_cmp "$ran" "<" 3.5
t_no_leftovers "$d"

# a program without the record cap: one clear line, exit 3 (found when it answers)
d=$T_TMP/nocap
run_ls "$d" "$WL/record/redis-pause-long.yaml" --set 'lock.options.command=[tests/fixtures/record_program.py, --no-record-cap]'
check "no record cap: exit 3 ($RC)" [ "$RC" -eq 3 ]
check "no record cap: stderr names what to do ($(grep -m1 "caps" "$d.stderr" | head -c 300))" \
    grep -q "does not list 'record' in its caps: lock.impl record runs a program that speaks the record extension" "$d.stderr"
t_no_leftovers "$d"

# bad input: FILE:LINE:COL, exit 2, nothing started
cat >"$T_TMP/jobs.yaml" <<YAML
name: record-jobs
duration: 2s
lock:
  impl: record
  options: {command: [tests/fixtures/record_program.py]}
workers: {count: 2, mode: jobs}
YAML
set +e
"$LS" run "$T_TMP/jobs.yaml" --out "$T_TMP/jobs-run" --quiet >"$T_TMP/jobs.stdout" 2>"$T_TMP/jobs.err"
rc=$?
set -e
check "jobs mode with record: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "jobs mode with record: FILE:LINE:COL ($(head -c 200 "$T_TMP/jobs.err"))" \
    grep -q "jobs.yaml:6:27: workers.mode: jobs is not available with lock.impl record" "$T_TMP/jobs.err"
check "jobs mode with record: nothing started" [ ! -e "$T_TMP/jobs-run/run.json" ]

# SIGTERM mid-run: no process of the run remains (programs included: by session)
d=$T_TMP/term
setsid "$LS" run "$WL/record/redis-pause-long.yaml" --out "$d" --quiet >"$d.stdout" 2>"$d.stderr" &
pid=$!
wait_for 20 grep -qs "start sent" "$d/adapters/worker-003.log" || true
check "the programs were started" grep -qs "start sent" "$d/adapters/worker-000.log"
kill -TERM "$pid"
for i in $(seq 1 400); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
set +e
wait "$pid"
rc=$?
set -e
check "SIGTERM: the run ended (exit $rc)" [ "$rc" -ne 0 ]
t_no_session_leftovers "$pid" "SIGTERM mid-run"
t_no_leftovers "$d"
t_finish
