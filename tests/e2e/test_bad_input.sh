#!/usr/bin/env bash
# The bad-input catalogue (tests/bad-input/, docs/reliability.md): every
# broken workload file there, plus a few made here (a directory, a FIFO, a
# file over the size limit, a missing file, a symlink loop), is refused by
# `lockstorm run` with exit 2 and exactly one line on stderr that names
# FILE:LINE:COL (FILE: for a file that cannot be read at all) and contains
# the case's expected fragment ("# expect: ..." on its first line, or
# NAME.expect next to it); and nothing is started: no file or directory
# appears in the (fresh) working directory, and under strace no process is
# forked and no socket is opened (without a usable strace, the empty
# directory is the proof: a run creates its run directory before it starts
# any process). Reading only: this test never signals anything.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CAT=$SRC/tests/bad-input
STRACE=0
if command -v strace >/dev/null 2>&1 && strace -f -qq -o /dev/null true 2>/dev/null; then
    STRACE=1
fi
# without strace the proof is the empty working directory: a run creates
# its run directory before it starts any process
[ "$STRACE" = 1 ] || echo "# strace not usable here: relying on the empty working directory"

# expected fragment of case file $1
fragment_of() {
    local f=$1 base=${1%.yaml}
    if [ -f "$base.expect" ]; then
        head -n 1 "$base.expect"
    else
        head -n 1 "$f" | sed -n 's/^# expect: //p'
    fi
}

# refused DESCRIPTION FILE-AS-GIVEN FRAGMENT POSITIONED(1/0) [LOCKSTORM ARGS...]
# Runs `lockstorm run FILE --quiet ARGS` in a fresh empty directory.
refused() {
    local desc=$1 file=$2 frag=$3 positioned=$4; shift 4
    local cwd out err st
    cwd=$(mktemp -d "$T_TMP/cwd-XXXXXX")
    out=$T_TMP/out err=$T_TMP/err st=$T_TMP/strace
    set +e
    (cd "$cwd" && timeout 20 "$LS" run "$file" --quiet "$@" >"$out" 2>"$err")
    local rc=$?
    if [ "$STRACE" = 1 ]; then
        # once more under strace, for what it starts (LeakSanitizer cannot
        # run under ptrace: leaks are the first run's business)
        local cwd2
        cwd2=$(mktemp -d "$T_TMP/cwd-XXXXXX")
        (cd "$cwd2" && ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" timeout 20 \
            strace -f -qq -o "$st" -e trace=fork,vfork,clone,clone3,socket,bind,listen,mkdir,mkdirat \
            "$LS" run "$file" --quiet "$@" >/dev/null 2>&1)
    fi
    set -e
    local why=""
    local nl
    nl=$(wc -l <"$err")
    local line
    line=$(head -n 1 "$err")
    [ "$rc" -eq 2 ] || why="$why exit $rc;"
    [ "$nl" -eq 1 ] || why="$why $nl lines on stderr;"
    if [ "$positioned" = 1 ]; then
        [[ "$line" == "$file":[0-9]*:[0-9]*:\ * ]] || why="$why no $file:LINE:COL prefix;"
    else
        [[ "$line" == *"$file: "* ]] || why="$why does not name '$file: ';"
    fi
    [ -z "$frag" ] || [[ "$line" == *"$frag"* ]] || why="$why fragment '$frag' missing;"
    [ -z "$(ls -A "$cwd")" ] || why="$why created $(ls -A "$cwd" | tr '\n' ' ');"
    if [ "$STRACE" = 1 ]; then
        # a new process is fork/vfork, or a clone without CLONE_THREAD;
        # CLONE_UNTRACED is LeakSanitizer's stop-the-world helper (ASan builds)
        local bad
        bad=$(grep -E '(fork|clone|clone3|socket|bind|listen|mkdir|mkdirat)\(' "$st" |
              grep -v -e ' = -1 ' -e 'CLONE_THREAD' -e 'CLONE_UNTRACED' | head -n 3 || true)
        [ -z "$bad" ] || why="$why started something: $bad;"
    fi
    if [ -z "$why" ]; then
        ok "$desc"
    else
        fail "$desc:$why stderr: $(head -c 300 "$err")"
    fi
}

n=0
for f in "$CAT"/*.yaml; do
    [ -f "$f" ] || continue
    frag=$(fragment_of "$f")
    if [ -z "$frag" ]; then
        fail "$(basename "$f"): no '# expect:' line and no .expect file"
        continue
    fi
    refused "$(basename "$f")" "$f" "$frag" 1
    n=$((n + 1))
done
check "the catalogue has at least 30 cases ($n)" [ "$n" -ge 30 ]

# made here: what cannot live in git, or would be silly to
mkdir "$T_TMP/a-directory.yaml"
refused "a directory with no workloads in it" "$T_TMP/a-directory.yaml" "no workload files" 0
mkfifo "$T_TMP/a-fifo.yaml"
refused "a FIFO nobody writes to (no hang)" "$T_TMP/a-fifo.yaml" "the workload is empty" 1
{ echo "name: big"; head -c 1100000 /dev/zero | tr '\0' '#'; } >"$T_TMP/huge.yaml"
refused "a file over 1 MiB" "$T_TMP/huge.yaml" "file is too large" 0
refused "a missing file" "$T_TMP/no-such-file.yaml" "No such file or directory" 0
ln -s "$T_TMP/loop-b.yaml" "$T_TMP/loop-a.yaml"
ln -s "$T_TMP/loop-a.yaml" "$T_TMP/loop-b.yaml"
refused "a symlink loop" "$T_TMP/loop-a.yaml" "symbolic links" 0
refused "/dev/zero (endless input)" /dev/zero "file is too large" 0

# the same catalogue through --set: a bad override names the override
printf 'name: fine\nduration: 5s\n' >"$T_TMP/fine.yaml"
refused_set() {
    local desc=$1 frag=$2; shift 2
    local cwd
    cwd=$(mktemp -d "$T_TMP/cwd-XXXXXX")
    set +e
    (cd "$cwd" && "$LS" run "$T_TMP/fine.yaml" --quiet "$@" >"$T_TMP/out" 2>"$T_TMP/err")
    local rc=$?
    set -e
    if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T_TMP/err")" -eq 1 ] &&
       grep -qF -- "$frag" "$T_TMP/err" && [ -z "$(ls -A "$cwd")" ]; then
        ok "$desc"
    else
        fail "$desc (exit $rc): $(head -c 300 "$T_TMP/err")"
    fi
}
refused_set "--set of 10^9 workers" "--set 'workers.count=1000000000'" --set workers.count=1000000000
refused_set "--set of TTL 0" "--set 'lock.ttl=0'" --set lock.ttl=0
refused_set "--set of a 100-year duration" "--set 'duration=52560000m'" --set duration=52560000m
refused_set "--set with a path escape in name" "--set 'name=../x'" --set name=../x
refused_set "--set of an unknown key" "--set 'lock.tll=1s'" --set lock.tll=1s
refused_set "--set without '='" "--set 'duration'" --set duration
refused_set "--set of a huge value" "value is too long" --set "description=$(head -c 5000 /dev/zero | tr '\0' 'x')"
t_finish
