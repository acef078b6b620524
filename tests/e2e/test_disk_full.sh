#!/usr/bin/env bash
# A full disk or an unwritable run directory (docs/reliability.md): the run
# stops with one clear error line, exit 3, and nothing of it is left
# running. Needs root to mount small tmpfs file systems (it is skipped with
# a line saying so otherwise): one of 1 MiB (no event log can even be
# preallocated), one of 9 MiB where two fast workers fill the disk mid-run
# (their logs cannot grow), and a read-only one. Every mount is removed at
# exit. Runs are started under setsid so their session names all their
# processes.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mnt=$T_TMP/mnt
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
    echo "ok - # SKIP cannot mount a tmpfs here (not root?)"
    t_finish
    exit 0
fi
trap 'umount "$mnt" 2>/dev/null || true; t_cleanup' EXIT

# full_run DESC FRAGMENT ARGS...: lockstorm run ARGS under setsid: exit 3,
# one error line containing FRAGMENT, nothing left behind
full_run() {
    local desc=$1 frag=$2; shift 2
    set +e
    setsid "$LS" run "$WL/demo.yaml" --quiet "$@" >"$T_TMP/out" 2>"$T_TMP/err" &
    local pid=$!
    wait "$pid"
    local rc=$?
    set -e
    local errs
    errs=$(grep -c '^lockstorm: error: ' "$T_TMP/err" || true)
    if [ "$rc" -eq 3 ] && [ "$errs" -eq 1 ] && grep -qF -- "$frag" "$T_TMP/err"; then
        ok "$desc: exit 3, one error line"
    else
        fail "$desc (exit $rc, $errs error lines): $(head -c 400 "$T_TMP/err")"
    fi
    t_no_session_leftovers "$pid" "$desc"
}

full_run "disk full at start-up (1 MiB)" "No space left on device" --out "$mnt/a" --set duration=2s
umount "$mnt"

mount -t tmpfs -o size=9m tmpfs "$mnt"
full_run "disk full mid-run (9 MiB, logs cannot grow)" "cannot grow (disk full?)" \
    --out "$mnt/b" --set duration=5s --set workers.count=2 --set lock.impl=busted \
    --set workers.hold=0 --set workers.think=0 --set workers.store=false \
    --set 'faults=[]' --set 'expect={}'
set +e
"$LS" check "$mnt/b" >/dev/null 2>"$T_TMP/cerr"
crc=$?
set -e
check "the disk-full run is still checkable (exit $crc)" [ "$crc" -eq 1 -o "$crc" -eq 4 ]
umount "$mnt"

mount -t tmpfs -o ro,size=1m tmpfs "$mnt"
full_run "read-only run directory" "Read-only file system" --out "$mnt/c"
umount "$mnt"
t_finish
