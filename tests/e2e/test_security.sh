#!/usr/bin/env bash
# Security properties of a run (docs/reliability.md, "Security"):
#   - every socket the run's processes listen on is bound to 127.0.0.1;
#   - run directories (and events/, nodes/) are mode 0700, an existing empty
#     --out directory is made 0700, and --out refuses a symlink or another
#     user's directory (so nobody can plant a symlink for the run to write
#     through);
#   - redis-server is started with an argv array and exactly the environment
#     the harness gives it (PATH; nothing else of the harness's), bound to
#     127.0.0.1 with protected mode on -- seen by a stand-in redis-server
#     placed first on PATH that records its arguments and environment and
#     then runs the real one.
# Workload names that could escape the run directory (../x, /x) are in the
# bad-input catalogue (tests/bad-input/name-*.yaml).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

real=$(command -v redis-server)
mkdir -p "$T_TMP/bin" "$T_TMP/seen"
cat >"$T_TMP/bin/redis-server" <<EOF
#!/bin/bash
# stand-in: record what we were given, then become the real redis-server
printf '%s\n' "\$@" >"$T_TMP/seen/args.\$\$"
env >"$T_TMP/seen/env.\$\$"
exec "$real" "\$@"
EOF
chmod +x "$T_TMP/bin/redis-server"

# arg_is FILE OPT VALUE: in the recorded argv (one per line), OPT is followed by VALUE
arg_is() { grep -A1 -x -- "$2" "$1" | tail -n 1 | grep -qx -- "$3"; }
# refused_with RC FILE FRAGMENT: exit RC and FRAGMENT in FILE
refused_with() { [ "$1" -eq 2 ] && grep -q -- "$3" "$2"; }
under_way() { grep -qs '"event":"start"' "$1/faults.jsonl"; }
d=$T_TMP/run
PATH=$T_TMP/bin:$PATH LS_TEST_SECRET=hunter2 LD_PRELOAD= \
    setsid "$LS" run "$WL/demo.yaml" --out "$d" --quiet --set duration=3s --set 'expect={}' \
    >"$d.stdout" 2>"$d.stderr" &
pid=$!
check "the run got going" wait_for 20 under_way "$d"
procs=$(session_procs "$pid")
addrs=$({ ss -ltnpH 2>/dev/null || true; } | grep -E "$(printf 'pid=%s,|' $procs | sed 's/|$//')" |
        awk '{print $4}' | sort -u)
check "the run listens on some sockets ($(echo $addrs | wc -w))" [ -n "$addrs" ]
bad=$(printf '%s\n' $addrs | grep -v '^127\.0\.0\.1:' || true)
check "every listening socket of the run is on 127.0.0.1 (others: [$bad])" [ -z "$bad" ]
set +e
wait "$pid"
rc=$?
set -e
check "the run ended with a verdict ($rc)" [ "$rc" -le 1 -o "$rc" -eq 4 ]
t_no_session_leftovers "$pid" "the run"

check "run directory is mode 0700" [ "$(stat -c %a "$d")" = 700 ]
check "events/ is mode 0700" [ "$(stat -c %a "$d/events")" = 700 ]
check "nodes/ is mode 0700" [ "$(stat -c %a "$d/nodes")" = 700 ]

n=$(ls "$T_TMP/seen" | grep -c '^args\.' || true)
check "the stand-in saw every redis-server start ($n)" [ "$n" -ge 2 ]
for f in "$T_TMP"/seen/args.*; do
    check "redis-server $(basename "$f"): --bind 127.0.0.1" grep -qx -- '127.0.0.1' "$f"
    check "redis-server $(basename "$f"): --protected-mode yes" arg_is "$f" --protected-mode yes
done
for f in "$T_TMP"/seen/env.*; do
    names=$(cut -d= -f1 "$f" | grep -v -x -E 'PWD|SHLVL|_' | sort | tr '\n' ' ')
    check "redis-server $(basename "$f") got exactly PATH and the run's tag from the harness (got: $names)" \
        [ "$names" = "LOCKSTORM_RUN PATH " ]
done

# a default run directory (runs/NAME-TIME) is 0700 as well
(cd "$T_TMP" && "$LS" run "$WL/demo.yaml" --quiet --set duration=300ms --set 'faults=[]' \
    --set 'expect={}' >/dev/null 2>&1) || true
rd=$(ls -d "$T_TMP"/runs/demo-* | head -n 1)
check "runs/NAME-TIME is mode 0700" [ "$(stat -c %a "$rd")" = 700 ]

# --out: an existing empty directory is taken and made 0700; a symlink or
# another user's directory is refused before anything starts
mkdir -m 0777 "$T_TMP/open"
set +e
"$LS" run "$WL/demo.yaml" --out "$T_TMP/open" --quiet --set duration=300ms --set 'faults=[]' \
    --set 'expect={}' >/dev/null 2>"$T_TMP/err"
set -e
check "an existing empty --out directory is made 0700" [ "$(stat -c %a "$T_TMP/open")" = 700 ]
mkdir "$T_TMP/target"
ln -s "$T_TMP/target" "$T_TMP/link"
set +e
"$LS" run "$WL/demo.yaml" --out "$T_TMP/link" --quiet >/dev/null 2>"$T_TMP/err"
rc=$?
set -e
check "--out through a symlink is refused (exit $rc)" refused_with "$rc" "$T_TMP/err" "symbolic link"
check "... and nothing was written through it" [ -z "$(ls -A "$T_TMP/target")" ]
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir "$T_TMP/theirs"
    chown nobody "$T_TMP/theirs"
    set +e
    "$LS" run "$WL/demo.yaml" --out "$T_TMP/theirs" --quiet >/dev/null 2>"$T_TMP/err"
    rc=$?
    set -e
    check "--out into another user's empty directory is refused (exit $rc)" \
        refused_with "$rc" "$T_TMP/err" "another user"
else
    echo "ok - # SKIP another user's directory: needs root and user nobody"
fi
t_finish
