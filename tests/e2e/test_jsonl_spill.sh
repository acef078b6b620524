#!/usr/bin/env bash
# The streaming JSONL loader at its edges (docs/checkers.md "JSONL
# histories"): a line longer than a read chunk is measured, never read past
# the chunk (valgrind, when installed, sees no invalid read), and skipped
# when blank; a check killed while its history spills to disk leaves
# nothing in $TMPDIR (the spill files never have a name); a history with
# more spilling workers than open files allowed gives the same report (the
# spilled streams share one file; those out of time order are written out
# whole one at a time, and past the limit each is mapped and its file let
# go); tokens, fences and counters spilled (packed as differences from the
# record before) give the result they give in memory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# run_check NAME CMD...: run, stderr to $T_TMP/NAME.err, exit code in $rc
run_check() {
    local name=$1; shift
    set +e
    timeout 60 "$@" >"$T_TMP/$name.out" 2>"$T_TMP/$name.err"
    rc=$?
    set -e
}
lines() { wc -l <"$1"; }
# all DESC 'SHELL TEST': passes when the test (several joined by &&) holds
all() { if eval "$2"; then ok "$1"; else fail "$1: $(head -c 300 "$T_TMP/$3.err" 2>/dev/null)"; fi; }

good='{"t":1,"w":0,"type":"acquire_invoke","res":"r0","attempt":1}
{"t":2,"w":0,"type":"acquire_ok","res":"r0","token":"a","fence":1,"valid_until":100000000}
{"t":3,"w":0,"type":"enter","res":"r0"}
{"t":4,"w":0,"type":"exit","res":"r0"}
{"t":5,"w":0,"type":"release_invoke","res":"r0"}
{"t":6,"w":0,"type":"release_ok","res":"r0"}'

# ---- over-long lines ----
# 9 MB of spaces, no final newline: blank (so "no events"), and the blank
# scan stays inside the 4 MB read buffer. Each case twice: the file read
# where it is mapped (the loader's way) and read into a buffer
# (LS_JSONL_READ=read: the way of a file that cannot be mapped).
head -c 9437184 /dev/zero | tr '\0' ' ' >"$T_TMP/spaces.jsonl"
# the same blank line, then events: skipped like any blank line
{ cat "$T_TMP/spaces.jsonl"; printf '\n%s\n' "$good"; } >"$T_TMP/blank-then.jsonl"
# 5 MB of spaces and a byte, no final newline: refused by its length, as FILE:LINE
{ printf '%s\n' "$good"; head -c 5242880 /dev/zero | tr '\0' ' '; printf x; } >"$T_TMP/long.jsonl"
# (not under AddressSanitizer: valgrind cannot run an ASan build, and ASan
# itself reports an invalid read; ldd's output read whole: `| grep -q` would
# let ldd die of SIGPIPE and pipefail turn the test round)
libs=$(ldd "$LS" 2>/dev/null || true)
for how in map read; do
    export LS_JSONL_READ=$how
    if command -v valgrind >/dev/null && [[ $libs != *libasan* ]]; then
        run_check spaces valgrind -q --error-exitcode=99 "$LS" check --history "$T_TMP/spaces.jsonl"
    else
        run_check spaces "$LS" check --history "$T_TMP/spaces.jsonl"
    fi
    all "$how: 9 MB blank line at EOF: no events, no invalid read (exit $rc)" \
        '[ "$rc" -eq 2 ] && grep -q "spaces.jsonl: no events" "$T_TMP/spaces.err" &&
         ! grep -q "Invalid read" "$T_TMP/spaces.err"' spaces
    run_check blank-then "$LS" check --history "$T_TMP/blank-then.jsonl"
    check "$how: 9 MB blank line then events: checked, PASS (exit $rc)" [ "$rc" -eq 0 ]
    run_check long "$LS" check --history "$T_TMP/long.jsonl"
    all "$how: 5 MB line at EOF: FILE:7 line too long, one line (exit $rc)" \
        '[ "$rc" -eq 2 ] && [ "$(lines "$T_TMP/long.err")" -eq 1 ] &&
         grep -q "long.jsonl:7: line is 5242881 bytes, over the 65536-byte limit" "$T_TMP/long.err"' long
done
unset LS_JSONL_READ

# ---- a check killed while spilling leaves nothing behind ----
td=$T_TMP/td
mkdir "$td"
awk 'BEGIN { for (i = 0; i < 400000; i++) {
    w = i % 500; t = int(i / 500) * 10
    printf "{\"t\":%d,\"w\":%d,\"type\":\"%s\",\"res\":\"r%d\"}\n", t, w, (i % 1000 < 500) ? "enter" : "exit", w } }' \
    >"$T_TMP/big.jsonl"
spilling() { # the check has a file open in $td
    ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF -- "$td/"
}
TMPDIR=$td LS_JSONL_MEM_BOUND=65536 "$LS" check --history "$T_TMP/big.jsonl" \
    >/dev/null 2>"$T_TMP/killed.err" &
pid=$!
if wait_for 10 spilling; then
    kill -TERM "$pid" 2>/dev/null || true
else
    fail "the check never had a spill file open in \$TMPDIR"
    kill -TERM "$pid" 2>/dev/null || true
fi
set +e
wait "$pid"
krc=$?
set -e
check "the check was killed while it spilled (exit $krc)" [ "$krc" -eq 143 ]
check "nothing left in \$TMPDIR after SIGTERM: $(ls -A "$td" | head -3 | tr '\n' ' ')" \
    [ -z "$(ls -A "$td")" ]
# ... and a finished check leaves nothing either
run_check spilled env TMPDIR="$td" LS_JSONL_MEM_BOUND=65536 "$LS" check --history "$T_TMP/big.jsonl"
all "a spilled check gives a verdict (exit $rc) and leaves nothing in \$TMPDIR" \
    '{ [ "$rc" -le 1 ] || [ "$rc" -eq 4 ]; } && grep -q "verdict" "$T_TMP/spilled.out" &&
     [ -z "$(ls -A "$td")" ]' spilled

# ---- a spilled history's streams read back packed: the same report ----
# 500 workers in time order: spilled, each stream stays packed in its file
# and is decoded by the pass, the stories and the report's timeline (its
# holds are in result.json with --format html); the same files as in memory
run_check packed-mem "$LS" check --history "$T_TMP/big.jsonl" --format json,html \
    --out "$T_TMP/packed-mem"
run_check packed env TMPDIR="$td" LS_JSONL_MEM_BOUND=65536 "$LS" check \
    --history "$T_TMP/big.jsonl" --format json,html --out "$T_TMP/packed"
all "spilled and packed: the same result.json (holds too) and report.html as in memory" \
    '[ "$rc" -lt 128 ] && grep -q "\"holds\"" "$T_TMP/packed/result.json" &&
     diff <(grep -v duration "$T_TMP/packed-mem/result.json") \
          <(grep -v duration "$T_TMP/packed/result.json") >&2 &&
     cmp "$T_TMP/packed-mem/report.html" "$T_TMP/packed/report.html" >&2' packed
check "... and nothing left in \$TMPDIR" [ -z "$(ls -A "$td")" ]

# ---- the fields the spill packs as differences: the same result ----
# 50 workers' holds: a grant with a token (1 to 16 bytes, the same one
# again at the release: a repeated token of 15 bytes once packed wrong),
# fences and counters moving on, store ops repeating the grant's fence
awk 'BEGIN { for (i = 0; i < 60000; i++) {
    w = i % 50; k = int(i / 50); h = int(k / 6); s = k % 6; t = k * 10 + w
    tok = substr(sprintf("t%02d%013d", w, h), 1, 1 + h % 16); f = 3 * h + 1
    base = sprintf("{\"t\":%d,\"w\":%d,\"type\":\"%%s\",\"res\":\"r%d\"", t, w, w)
    if (s == 0) printf base ",\"attempt\":1}\n", "acquire_invoke"
    else if (s == 1) printf base ",\"token\":\"%s\",\"fence\":%d,\"valid_until\":%d}\n", "acquire_ok", tok, f, t + 1000000
    else if (s == 2) printf base ",\"fence\":%d,\"fenced\":true,\"counter\":%d,\"accepted\":true}\n", "store_read", f, h
    else if (s == 3) printf base ",\"fence\":%d,\"fenced\":true,\"counter\":%d,\"accepted\":true}\n", "store_write", f, h + 1
    else printf base ",\"token\":\"%s\"}\n", s == 4 ? "release_invoke" : "release_ok", tok } }' \
    >"$T_TMP/fields.jsonl"
run_check fields-mem "$LS" check --history "$T_TMP/fields.jsonl" --format json --out "$T_TMP/fields-mem"
run_check fields env TMPDIR="$td" LS_JSONL_MEM_BOUND=65536 "$LS" check \
    --history "$T_TMP/fields.jsonl" --format json --out "$T_TMP/fields"
all "tokens, fences, counters spilled: the same result.json as in memory (exit $rc)" \
    '[ "$rc" -lt 2 ] && grep -q "\"holds\"" "$T_TMP/fields/result.json" &&
     diff <(grep -v duration "$T_TMP/fields-mem/result.json") \
          <(grep -v duration "$T_TMP/fields/result.json") >&2' fields

# ---- more spilling workers than open files allowed ----
# 200 workers, out of time order, under `ulimit -n 64`: the verdict is the
# one without the limit
awk 'BEGIN { for (w = 0; w < 200; w++) for (j = 0; j < 5; j++) {
    printf "{\"t\":%d,\"w\":%d,\"type\":\"enter\",\"res\":\"r%d\"}\n", 1000 - j * 100, w, w
    printf "{\"t\":%d,\"w\":%d,\"type\":\"exit\",\"res\":\"r%d\"}\n", 1050 - j * 100, w, w } }' \
    >"$T_TMP/wide.jsonl"
run_check wide-free "$LS" check --history "$T_TMP/wide.jsonl"
cp "$T_TMP/wide-free.out" "$T_TMP/wide-free.keep"
run_check wide env TMPDIR="$td" LS_JSONL_MEM_BOUND=4096 LS_JSONL_SORT_MEM=256 \
    bash -c 'ulimit -n 64 && exec "$@"' _ "$LS" check --history "$T_TMP/wide.jsonl"
all "200 spilling workers under ulimit -n 64: the same report as in memory (exit $rc)" \
    '[ "$rc" -lt 128 ] && [ -s "$T_TMP/wide.out" ] &&
     diff <(grep -v duration "$T_TMP/wide-free.keep") <(grep -v duration "$T_TMP/wide.out") >&2' wide
check "... and nothing left in \$TMPDIR" [ -z "$(ls -A "$td")" ]

t_finish
