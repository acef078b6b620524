#!/usr/bin/env bash
# pg-advisory against a real PostgreSQL server the harness starts
# (cluster.topology: postgres): the server runs from the run directory, as a
# non-root user when the harness is root (the run directory staying 0700 and
# root's, the data directory inside it), on 127.0.0.1 only, and is gone
# after the run; while a holder is paused the server really holds the
# advisory lock under the documented key (FNV-1a 64 of "lockstorm:r0"),
# seen from outside in pg_locks; the loader refuses what cannot work. The
# findings themselves (pause -> stall, kill -> release, reset -> lock-broken
# in session mode, no lost update in xact mode) are the stories
# 14-17 of workloads/stories/, run by test_stories.sh.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v psql >/dev/null || { echo "psql missing: scripts/install-deps.sh installs it"; exit 1; }

# FNV-1a 64 of $1, as a signed 64-bit integer (bash arithmetic wraps)
fnv1a64() {
    local s=$1 h=$((0xcbf29ce484222325)) i c
    for ((i = 0; i < ${#s}; i++)); do
        printf -v c '%d' "'${s:i:1}"
        h=$(( (h ^ c) * 0x100000001b3 ))
    done
    echo "$h"
}
want_key=$(fnv1a64 "lockstorm:r0")

d=$T_TMP/paused
set +e
"$LS" run "$WL/stories/14-pg-paused-client.yaml" --out "$d" --quiet --set duration=4s \
    --set 'faults=[{kind: pause, target: holder, at: 1s, duration: 2s}]' >"$d.stdout" 2>"$d.stderr" &
pid=$!
set -e
paused() { grep -q '"event":"start"' "$1/faults.jsonl" 2>/dev/null; }
check "the holder pause started" wait_for 20 paused "$d"
port=$("$LS" get "$d/run.json" nodes.0.port)
lock_keys() {
    psql -h 127.0.0.1 -p "$port" -U lockstorm -d postgres -Atc \
        "select (classid::bigint << 32) | objid::bigint from pg_locks
         where locktype = 'advisory' and granted" 2>/dev/null
}
got_key=$(lock_keys || true)
check "the paused holder's lock is held by the server under FNV-1a 64 of lockstorm:r0 ($want_key; pg_locks: $got_key)" \
    [ "$(( got_key ))" = "$want_key" ]
check "the server listens on 127.0.0.1 only" \
    grep -q 'listening on IPv4 address "127.0.0.1"' "$d/nodes/pg.log"
check "no Unix socket" bash -c "! grep -q 'listening on Unix socket' '$d/nodes/pg.log'"
if [ "$(id -u)" = 0 ]; then
    owner=$(stat -L -c %U "$d/nodes/pg")
    check "as root, the data directory belongs to a non-root user ($owner)" [ "$owner" != root ]
    spid=$(head -1 "$d/nodes/pg/postmaster.pid")
    check "the server does not run as root" [ "$(ps -o user= -p "$spid" | tr -d ' ')" != root ]
    # the data stay in the run directory, which is not loosened for that user
    # (T_TMP is a private 0700 directory the user cannot even reach)
    check "as root, nodes/pg is a directory inside the run directory, not a link elsewhere" \
        bash -c '[ -d "$1/nodes/pg" ] && [ ! -L "$1/nodes/pg" ] && [ -f "$1/nodes/pg/PG_VERSION" ]' _ "$d"
    check "as root, the run directory and nodes/ stay 0700 ($(stat -c %a "$d") $(stat -c %a "$d/nodes"))" \
        bash -c '[ "$(stat -c %a "$1")" = 700 ] && [ "$(stat -c %a "$1/nodes")" = 700 ] &&
                 [ "$(stat -c %a "$1/nodes/pg")" = 700 ]' _ "$d"
fi
set +e
wait "$pid"
RC=$?
set -e
check "paused run: expectations hold (exit $RC)" [ "$RC" -eq 0 ]
expect_val "$d" checks.mutex.violations == 0
expect_val "$d" checks.liveness.longest_stall_ms ">=" 1950
check "storage.jsonl comes from the table" grep -q '"res":"r0","plain":' "$d/storage.jsonl"
check "the server logged its shutdown" grep -q "database system is shut down" "$d/nodes/pg.log"
if [ -L "$d/nodes/pg" ]; then # a run directory the server's user could not reach
    check "the private data directory under /tmp is gone" [ ! -e "$(readlink "$d/nodes/pg")" ]
fi
t_no_leftovers "$d"

# the loader refuses what cannot work
v() { "$LS" validate "$WL/stories/14-pg-paused-client.yaml" "$@" 2>&1 >/dev/null; }
set +e
out=$(v --set cluster.topology=independent); rc=$?
check "pg-advisory without topology postgres: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "... says why" grep -q "pg-advisory needs the PostgreSQL server" <<<"$out"
out=$(v --set lock.impl=redis-single); rc=$?
check "a Redis lock on topology postgres: exit 2 ($rc)" [ "$rc" -eq 2 ]
out=$(v --set 'faults=[{kind: kill, target: "node:0", at: 1s}]'); rc=$?
check "a process fault on the server node: exit 2 ($rc)" [ "$rc" -eq 2 ]
check "... says to use a link fault" grep -q "use a link fault" <<<"$out"
out=$(v --set lock.options.mode=advisory); rc=$?
check "an unknown mode: exit 2 ($rc)" [ "$rc" -eq 2 ]

# libpq is loaded at the first connection (locks/pq.c), not linked: a
# lockstorm process that uses no PostgreSQL never loads its 22 libraries;
# one that needs it and cannot load it says so before starting anything
check "lockstorm is not linked with libpq" bash -c '! ldd "$1" | grep -q libpq' _ "$LS"
out=$(LS_LIBPQ=/nonexistent/libpq.so.5 "$LS" run "$WL/stories/14-pg-paused-client.yaml" \
      --out "$T_TMP/nolib" --quiet --set duration=2s --set 'faults=[]' 2>&1 >/dev/null); rc=$?
check "libpq not loadable: exit 3 ($rc)" [ "$rc" -eq 3 ]
check "... one line says what to install" \
    bash -c '[ "$(grep -c "cannot load libpq.*apt-get install libpq5" <<<"$1")" = 1 ]' _ "$out"
check "... and no server was started" [ ! -e "$T_TMP/nolib/nodes/pg" ]
set -e
t_finish
