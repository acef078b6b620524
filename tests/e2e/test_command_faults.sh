#!/usr/bin/env bash
# Per-command faults (kind command, docs/faults.md "Per-command faults"),
# end to end: the bundled workloads each meet their `expect:` and say what
# the rule met. The stolen lock with only the release DEL late: lock-broken
# on naive-del (the negative control the checker must catch), none on
# redis-single's compare-and-delete; a reply dropped after the node applied
# the acquire: one unknown outcome, no violation; an error reply to
# node-redis-warlock's unlock: the harness sees a release that did not
# happen (no release_failed, the next acquirer waits the TTL), and the same
# error on ioredis-handrolled gives release_failed. Also: a rule that
# matches nothing did not bite (verdict unknown), and bad values are refused
# at FILE:LINE:COL with exit 2 before anything starts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/adapters.sh"

FW=$WL/faults

# --- the stolen lock, only the release late ---
d=$T_TMP/delay-release
run_ls "$d" "$FW/command-delay-release.yaml"
check "command-delay-release meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.by_class.lock_broken ">" 0
expect_val "$d" 'faults[0].requests.delayed' ">" 0
check "faults.jsonl names the rule" grep -q '"command":"DEL","action":"delay","delay_ms":150' "$d/faults.jsonl"
t_no_leftovers "$d"

d=$T_TMP/delay-release-clean
run_ls "$d" "$FW/command-delay-release-clean.yaml"
check "command-delay-release-clean meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" 'faults[0].requests.delayed' ">" 0
t_no_leftovers "$d"

# --- a rule that matches nothing did not bite ---
d=$T_TMP/no-bite
sed '/^expect:/,$d; s/impl: naive-del/impl: redis-single/' "$FW/command-delay-release.yaml" >"$d.yaml"
run_ls "$d" "$d.yaml"
check "a DEL rule on redis-single (no DEL sent) did not bite" \
    grep -q '"bit":false,"bit_why":"no DEL request matched its rule' "$d/faults.jsonl"
check "so the verdict is unknown (exit $RC)" grep -q 'no fault occurrence bit' "$d.stdout" "$d/summary.txt"

# --- a reply dropped after the node applied the command ---
d=$T_TMP/lost-grant-reply
run_ls "$d" "$FW/command-lost-grant-reply.yaml"
check "command-lost-grant-reply meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" 'faults[0].requests.replies_dropped' == 1
expect_val "$d" counts.unknown ">=" 1
expect_val "$d" checks.mutex.violations == 0

# --- bad values: FILE:LINE:COL, exit 2, nothing started ---
bad=$T_TMP/bad.yaml
sed 's/command: DEL, action: delay/command: DEL, sha: ab, action: delay/' \
    "$FW/command-delay-release.yaml" >"$bad"
set +e
out=$("$LS" run "$bad" --out "$T_TMP/bad" 2>&1)
rc=$?
set -e
check "sha without EVALSHA is refused with exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "at FILE:LINE:COL of the key: $out" sh -c "printf '%s' \"\$1\" | grep -Eq '^$bad:[0-9]+:[0-9]+: faults\\[0\\]\\.sha: only applies with command: EVALSHA'" _ "$out"
check "nothing started" [ ! -e "$T_TMP/bad/run.json" ]

# --- adapters: an error reply swallowed, and one reported ---
need_adapters || t_finish
cd "$SRC" # the adapters' commands are relative to the source tree
d=$T_TMP/warlock
run_ls "$d" "$WL/adapters/warlock-unlock-error.yaml"
check "warlock-unlock-error meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" counts.release_failed == 0
expect_val "$d" 'faults[0].requests.answered' ">=" 1
expect_val "$d" checks.liveness.longest_stall_ms ">=" 900
t_no_leftovers "$d"

d=$T_TMP/handrolled
run_ls "$d" "$WL/adapters/ioredis-handrolled-unlock-error.yaml"
check "ioredis-handrolled-unlock-error meets its expectations (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" counts.release_failed ">=" 1
t_no_leftovers "$d"

t_finish
