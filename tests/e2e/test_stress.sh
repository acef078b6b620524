#!/usr/bin/env bash
# `lockstorm stress` end to end (docs/stress.md): a negative control (the
# unconditional-DEL lock of workloads/naive-del.yaml without its expect:
# block, holders paused past the TTL) stressed --until lock_broken is found
# at once and reduced to fewer workers and/or a shorter duration; the
# reduced.yaml it writes loads, says where it came from, and FAILs with
# lock_broken when run again (up to 3 seeds: timing varies); stress.json
# records every run; two runs at once, the one still going at the hit is
# stopped by pid. A correct lock over 3 seeds exits 0 with the "not a
# proof" line; --until a class no run shows, with a run FAILed otherwise,
# names that run (never "no failure"); runs that cannot be judged (UNKNOWN) exit 4, never clean; a
# run that cannot run (no such adapter) exit 3. A bad --until, a bad workload and a pipe are refused (exit
# 2, one line, nothing created). SIGINT mid-stress: exit 130, the running
# run stopped by pid (its run directory readable), stress.json written,
# nothing of the session left. Bounded: about 50 s on 2 busy cores.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# ---- bad input: exit 2, one line, nothing started ----------------------------------
mkdir "$T_TMP/empty"
set +e
(cd "$T_TMP/empty" && "$LS" stress naive-del --until lock-broken) >"$T_TMP/bad.out" 2>"$T_TMP/bad.err"
rc=$?
set -e
check "bad --until: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "bad --until: one line naming the classes" \
    bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^lockstorm: --until .lock-broken.: not a class; one of lock_broken, .*stale_holder.*, mutex, .*fail;" "$1"' _ "$T_TMP/bad.err"
check "bad --until: nothing created" [ -z "$(ls -A "$T_TMP/empty")" ]
# the completion offers exactly the classes the error lists
classes=$(sed -n 's/.*not a class; one of \(.*\); see.*/\1/p' "$T_TMP/bad.err" | tr -d ',')
comp=$("$LS" help --bash-completion | grep -o 'lock_broken stale_holder[^"]*\|lock_broken fenced[^"]*' | head -n 1)
check "the bash completion of --until lists the same classes" \
    [ "$(echo $classes | tr ' ' '\n' | sort | tr '\n' ' ')" = "$(echo $comp | tr ' ' '\n' | sort | tr '\n' ' ')" ]

printf 'name: broken\nduration: 2s\nworkers: {count: many}\n' >"$T_TMP/broken.yaml"
set +e
(cd "$T_TMP/empty" && "$LS" stress "$T_TMP/broken.yaml") >"$T_TMP/bw.out" 2>"$T_TMP/bw.err"
rc=$?
set -e
check "bad workload: exit 2 ($rc), one line FILE:LINE:COL" \
    bash -c '[ "$1" -eq 2 ] && [ "$(wc -l <"$2")" -eq 1 ] && grep -q "broken.yaml:3:[0-9]*: " "$2"' _ "$rc" "$T_TMP/bw.err"
check "bad workload: nothing created" [ -z "$(ls -A "$T_TMP/empty")" ]
set +e
"$LS" stress /dev/stdin --out "$T_TMP/pipe" </dev/null >/dev/null 2>"$T_TMP/pipe.err"
rc=$?
set -e
check "a pipe is refused: exit 2 ($rc), nothing created" \
    bash -c '[ "$1" -eq 2 ] && grep -q "give a workload file" "$2" && [ ! -e "$3" ]' _ "$rc" "$T_TMP/pipe.err" "$T_TMP/pipe"

# ---- a negative control: found, reduced, the reduction reproduces ----------------------
# naive-del as bundled, without its expect: block (which turns its violations
# into a PASS), 4 workers, 2 s
sed -e '/^expect:/,$d' -e 's/^duration: 8s/duration: 2s/' -e 's/^  count: 6/  count: 4/' \
    "$WL/naive-del.yaml" >"$T_TMP/nd.yaml"
check "the negative control has no expect: block" bash -c '! grep -q "^expect:" "$1"' _ "$T_TMP/nd.yaml"
s=$T_TMP/s1
set +e
"$LS" stress "$T_TMP/nd.yaml" --until lock_broken --out "$s" --jobs 2 --tries 2 --confirm 1 \
    --max-runs 8 >"$s.stdout" 2>"$s.stderr"
rc=$?
set -e
J=$s/stress.json
check "stress finds lock_broken: exit 1 ($rc)" [ "$rc" -eq 1 ]
check "stress.json: format and outcome" \
    [ "$(get "$J" format)/$(get "$J" outcome)/$(get "$J" class)" = "lockstorm-stress/failure found/lock_broken" ]
check "stress.json: started_at, ended_at, duration_s in that order" t_times_in_order "$J"
seed=$(get "$J" found.seed || true)
fdir=$s/$(get "$J" found.dir || true)
check "the failing run ($seed) is a run directory with lock_broken" \
    num_cmp "$(get "$fdir" checks.mutex.by_class.lock_broken)" '>' 0
k=$(get "$J" found.run || true)
check "its stress.json entry says so" \
    [ "$(get "$J" runs.$k.hit)/$(get "$J" runs.$k.phase)/$(get "$J" runs.$k.verdict)" = "true/stress/fail" ]
# stress.json read once (python3 starts slowly on a busy machine): the
# stress phase's states, stopped runs whose run.json is not final, the
# accepted steps, runs not stopped without a result.json
facts=$(python3 -c '
import json, os, sys
d = json.load(open(sys.argv[1]))
runs = d["runs"]
print(",".join(sorted(r["state"] for r in runs if r["phase"] == "stress")))
stopped = [r["dir"] for r in runs if r["state"] == "stopped"]
print(" ".join(x for x in stopped if json.load(open(os.path.join(sys.argv[2], x, "run.json")))
               ["state"] not in ("interrupted", "finished")) or "-")
print(sum(1 for x in (d["reduction"] or {}).get("steps", []) if x["accepted"]))
print(" ".join(r["dir"] for r in runs if r["state"] != "stopped" and
               not os.path.isfile(os.path.join(sys.argv[2], r["dir"], "result.json"))) or "-")
' "$J" "$s" 2>&1 || true)
echo "# stress.json facts: $(echo $facts)"
line() { sed -n "${1}p" <<<"$facts"; }
# two at once: the run still going when the first hit came in was stopped by
# pid and no further seed started. A stopped run wound down through its
# teardown: run.json is final, interrupted (stopped mid-run) or finished
# (stopped in its checking or after it: `lockstorm check` judges it).
check "the stress phase started 2 runs, one of them stopped at the hit ($(line 1))" \
    [ "$(line 1)" = "done,stopped" ]
check "every stopped run wound down and is readable (not: $(line 2))" [ "$(line 2)" = - ]
check "summary names the failing seed" grep -q "^stress naive-del: lock_broken at seed $seed" "$s.stdout"
check "summary says where reduced.yaml is" grep -q "run it: lockstorm run $s/reduced.yaml" "$s.stdout"
nacc=$(line 3)
check "at least one reduction step accepted ($nacc)" [ "${nacc:-0}" -ge 1 ]
check "reduction within its budget of 8 runs" num_cmp "$(get "$J" reduction.runs)" '<=' 8
R=$s/reduced.yaml
check "reduced.yaml written" [ -s "$R" ]
set +e
"$LS" validate "$R" >"$T_TMP/r.resolved" 2>/dev/null
rc=$?
set -e
check "reduced.yaml loads (lockstorm validate exit $rc)" [ "$rc" -eq 0 ]
w=$(sed -n '/^workers:/,/^[a-z]/s/^  count: //p' "$T_TMP/r.resolved")
d=$(sed -n 's/^duration: //p' "$T_TMP/r.resolved")
check "reduced to fewer workers (4 -> $w) or a shorter duration (2s -> $d)" \
    bash -c '[ "$1" -lt 4 ] || [ "$2" != 2s ]' _ "$w" "$d"
check "its header says what it was reduced from" grep -q "^# Reduced from: $T_TMP/nd.yaml (workload naive-del), which showed lock_broken at seed $seed" "$R"
check "its header names the class" grep -q '^# Class: lock_broken\.' "$R"
check "its header lists the changes and the evidence" \
    bash -c 'grep -q "^# Changes accepted ([0-9]* of [0-9]* candidates run" "$1" && grep -q "^# Evidence: this file showed lock_broken in [01] of 1 confirmation runs" "$1" && grep -q "^# Rule: a candidate is accepted when lock_broken appears in at least 1 of up to 2 runs" "$1"' _ "$R"
check "every run not stopped has a run directory with result.json (not: $(line 4))" \
    [ "$(line 4)" = - ]
# the reduced workload, run as a user would: FAIL with lock_broken (3 seeds at most)
got=none
for k in 0 1 2; do
    r=$T_TMP/rerun$k
    run_ls "$r" "$R" --seed $((seed + k))
    if [ "$RC" -eq 1 ] && num_cmp "$(get "$r" checks.mutex.by_class.lock_broken || true)" '>' 0; then
        got=$k
        break
    fi
done
check "reduced.yaml FAILs with lock_broken when run again (try $got)" [ "$got" != none ]

# ---- a correct lock: no failure in 3 runs, not a proof -----------------------------------
cat >"$T_TMP/ok.yaml" <<'EOF'
name: stress-correct
description: a correct single-node lock, holders paused well inside the TTL
seed: 5
duration: 1s
lock:
  impl: redis-single
  ttl: 2s
  retry: {attempts: 200, delay: 5ms, jitter: 5ms}
workers:
  count: 3
  resources: 1
  hold: {dist: uniform, min: 10ms, max: 30ms}
  think: {dist: fixed, value: 2ms}
faults:
  - {kind: pause, target: holder, at: 300ms, duration: 100ms, every: 400ms}
EOF
o=$T_TMP/s2
set +e
"$LS" stress "$T_TMP/ok.yaml" --seeds 3 --jobs 2 --out "$o" >"$o.stdout" 2>"$o.stderr"
rc=$?
set -e
check "a correct lock: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "a correct lock: 'no failure in 3 runs ...; this is not a proof'" \
    grep -q "^stress stress-correct: no failure in 3 runs (seeds 5..7, every one judged); this is not a proof$" "$o.stdout"
check "a correct lock: stress.json outcome 'no failure', 3 runs, no reduction" \
    [ "$(get "$o/stress.json" outcome)/$(get "$o/stress.json" stress_runs)/$(get "$o/stress.json" reduction)" = "no failure/3/null" ]
check "a correct lock: no reduced.yaml" [ ! -e "$o/reduced.yaml" ]

# ---- --until CLASS: runs that FAILed otherwise are named, never "no failure" -----------
o=$T_TMP/s2x
set +e
"$LS" stress "$T_TMP/ok.yaml" --seeds 1 --until lock_broken --set 'expect={counts.grants: "< 0"}' \
    --out "$o" >"$o.stdout" 2>"$o.stderr"
rc=$?
set -e
check "--until lock_broken, a run FAILed by an expectation: exit 0 ($rc)" [ "$rc" -eq 0 ]
check "--until: 'no lock_broken in 1 run (...; 1 FAILed otherwise ...)' ($(head -n 1 "$o.stdout"))" \
    grep -q "^stress stress-correct: no lock_broken in 1 run (seeds 5..5, every one judged; 1 FAILed otherwise, the first at seed 5: .*); this is not a proof$" "$o.stdout"
check "--until: stress.json outcome 'no hit, other failures', failed_otherwise 1" \
    [ "$(get "$o/stress.json" outcome)/$(get "$o/stress.json" failed_otherwise)" = "no hit, other failures/1" ]

# ---- runs that cannot be judged are not clean: exit 4 ---------------------------------------
# each worker does one short cycle, then thinks past the end: the pause of
# worker 0 bites nothing, so the run is UNKNOWN (docs/checkers.md coverage)
cat >"$T_TMP/nobite.yaml" <<'EOF'
name: no-bite
duration: 2s
lock: {impl: redis-single, ttl: 1s}
workers: {count: 2, resources: 2, hold: 1ms, think: 10s}
faults:
  - {kind: pause, target: "worker:0", at: 800ms, duration: 300ms}
EOF
u=$T_TMP/s4
set +e
"$LS" stress "$T_TMP/nobite.yaml" --seeds 1 --out "$u" >"$u.stdout" 2>"$u.stderr"
rc=$?
set -e
check "runs not judged: exit 4 ($rc)" [ "$rc" -eq 4 ]
check "runs not judged: the summary says so and never calls it clean" \
    grep -q "^stress no-bite: no FAIL in 1 run, but 1 could not be judged (UNKNOWN: no fault occurrence bit.*that is not a clean result$" "$u.stdout"
check "runs not judged: stress.json outcome" [ "$(get "$u/stress.json" outcome)" = "not judged" ]

# ---- a run that cannot run stops the stress: exit 3 ------------------------------------------
cat >"$T_TMP/noadapter.yaml" <<'EOF'
name: no-adapter
duration: 1s
lock: {impl: external, ttl: 500ms, options: {command: [/nonexistent/adapter]}}
EOF
e=$T_TMP/s5
set +e
"$LS" stress "$T_TMP/noadapter.yaml" --seeds 3 --out "$e" >"$e.stdout" 2>"$e.stderr"
rc=$?
set -e
check "a run that cannot run: exit 3 ($rc), no further run" \
    bash -c '[ "$1" -eq 3 ] && [ "$("$2" get "$3" outcome)" = error ] && [ ! -e "$4/runs/seed-2" ]' _ "$rc" "$LS" "$e/stress.json" "$e"
check "a run that cannot run: the summary names its error" \
    grep -q "^stress no-adapter: stopped: runs/seed-1 could not run: exited 3: .*cannot run /nonexistent/adapter" "$e.stdout"

# ---- SIGINT: children stopped by pid, stress.json written, exit 130 ------------------------
i=$T_TMP/s3
setsid "$LS" stress "$T_TMP/ok.yaml" --seeds 50 --jobs 1 --out "$i" >"$i.stdout" 2>"$i.stderr" &
pid=$!
check "a run started" wait_for 20 grep -qs '"state": "running"' "$i/runs/seed-5/run.json"
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
check "interrupted stress exits 130 ($rc)" [ "$rc" -eq 130 ]
check "it said so on stderr" grep -q '^lockstorm: SIGINT: stopping (1 run stopped by pid' "$i.stderr"
check "the stopped run is named on stderr" \
    grep -q '^lockstorm: stress seed 5: stopped (the stress was interrupted)' "$i.stderr"
check "stress.json: interrupted, outcome interrupted" \
    [ "$(get "$i/stress.json" interrupted)/$(get "$i/stress.json" outcome)/$(get "$i/stress.json" exit_code)" = "true/interrupted/130" ]
check "the running run was stopped and is readable" \
    bash -c '[ "$("$1" get "$2" runs.0.state)" = stopped ] && grep -q "\"state\": \"interrupted\"" "$3/runs/seed-5/run.json"' _ "$LS" "$i/stress.json" "$i"
check "no second run started" [ ! -e "$i/runs/seed-6" ]
t_no_session_leftovers "$pid" "interrupted stress"

t_finish
