#!/usr/bin/env bash
# The adapter SDKs (adapters/node/sdk, adapters/python/lockstorm_adapter.py)
# map the user's return values and errors to protocol replies as
# docs/protocol.md "The SDKs" says, in both languages alike: a token, a
# fenced grant, BUSY, a thrown error (unknown), a definite one, an adapter
# bug (nothing returned), a call past the SDK's timeout (unknown, answered
# at the timeout, its late result dropped), release false / NotOwner,
# extend false, clock, an unknown op, bye. Driven line by line through a
# coprocess (tests/fixtures/sdk_probe.*), each reply waited for with a bound.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# one reply line, error texts and clock values replaced, keys sorted
norm() {
    python3 -c 'import json, sys
o = json.loads(sys.stdin.read())
for k in ("wall_ms", "mono_ms"):
    if isinstance(o.get(k), (int, float)): o[k] = "N"
if "error" in o: o["error"] = "E"
print(json.dumps(o, sort_keys=True, separators=(",", ":")))'
}

for lang in node python; do
    if [ "$lang" = node ]; then cmd=(node "$SRC/tests/fixtures/sdk_probe.js"); else
        cmd=(/usr/bin/python3 "$SRC/tests/fixtures/sdk_probe.py"); fi
    coproc PROBE { "${cmd[@]}" 2>"$T_TMP/$lang.err"; }
    pid=$PROBE_PID
    out=${PROBE[0]} in=${PROBE[1]}
    # ask REQUEST EXPECTED: send one line, read one reply within 5 s
    ask() {
        local line="" t0
        t0=$(date +%s%N)
        printf '%s\n' "$1" >&"$in"
        IFS= read -r -t 5 line <&"$out" || true
        ASK_MS=$((($(date +%s%N) - t0) / 1000000))
        local got
        got=$(printf '%s' "$line" | norm 2>/dev/null || echo "unreadable: $line")
        check "$lang: $1 -> $2 (got $got)" [ "$got" = "$2" ]
    }
    ask '{"op":"hello","protocol":1,"worker":0,"nodes":["127.0.0.1:1"],"options":{},"extensions":["clock","stall"]}' \
        '{"caps":["ttl","renew","stall","clock"],"name":"sdk-probe","op":"hello","protocol":1,"version":"1"}'
    ask '{"id":1,"op":"acquire","res":"grant","ttl_ms":500}' '{"id":1,"ok":true,"token":"tok-1","validity_ms":500}'
    ask '{"id":2,"op":"acquire","res":"fenced","ttl_ms":500}' '{"fence":42,"id":2,"ok":true,"token":"7","validity_ms":99}'
    ask '{"id":3,"op":"acquire","res":"busy","ttl_ms":500}' '{"busy":true,"id":3,"ok":false}'
    ask '{"id":4,"op":"acquire","res":"throw","ttl_ms":500}' '{"error":"E","id":4,"ok":false,"unknown":true}'
    ask '{"id":5,"op":"acquire","res":"definite","ttl_ms":500}' '{"error":"E","id":5,"ok":false}'
    # an adapter bug (nothing, or no token): the library was called and may
    # hold the lock: unknown, never "definitely not granted"
    ask '{"id":6,"op":"acquire","res":"bug","ttl_ms":500}' '{"error":"E","id":6,"ok":false,"unknown":true}'
    ask '{"id":61,"op":"acquire","res":"yes","ttl_ms":500}' '{"id":61,"ok":true,"token":"sdk-1","validity_ms":500}'
    ask '{"id":7,"op":"acquire","res":"hang","ttl_ms":500}' '{"error":"E","id":7,"ok":false,"unknown":true}'
    check "$lang: ... answered at the SDK's 300 ms timeout, not after the call (1.5 s or never; ${ASK_MS} ms)" \
        sh -c "[ $ASK_MS -ge 250 ] && [ $ASK_MS -lt 1400 ]"
    ask '{"id":8,"op":"release","res":"gone","token":"t"}' '{"id":8,"ok":true,"released":false}'
    ask '{"id":9,"op":"release","res":"notowner","token":"t"}' '{"id":9,"ok":true,"released":false}'
    ask '{"id":10,"op":"release","res":"grant","token":"t"}' '{"id":10,"ok":true,"released":true}'
    ask '{"id":11,"op":"renew","res":"lost","token":"t","ttl_ms":300}' '{"error":"E","id":11,"ok":false}'
    ask '{"id":12,"op":"renew","res":"grant","token":"t","ttl_ms":300}' '{"id":12,"ok":true,"validity_ms":300}'
    ask '{"id":13,"op":"clock"}' '{"id":13,"mono_ms":"N","ok":true,"wall_ms":"N"}'
    ask '{"id":14,"op":"frob"}' '{"error":"E","id":14,"ok":false}'
    printf '{"op":"bye"}\n' >&"$in"
    exec {in}>&-
    # bye: the probe exits by itself (bounded wait on our own child: 50
    # rounds of at most 0.2 s; its output drained, and once that is at its
    # end, which a read sees at once, a pause: the probe may close its output
    # a little before it is gone, and a round that returned at once left
    # no time for that, so the check ran early, seen once in CI)
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        rc=0
        read -r -t 0.1 _ <&"$out" || rc=$?
        [ "$rc" -gt 128 ] || [ "$rc" -eq 0 ] || sleep 0.2
    done
    check "$lang: the probe exits after bye" sh -c "! kill -0 $pid 2>/dev/null"
    t_kill TERM "$pid"
    wait "$pid" 2>/dev/null || true
    check "$lang: the timed-out call is logged on stderr ($(head -c 200 "$T_TMP/$lang.err" | tr '\n' ' '))" \
        grep -q 'acquire: no answer within 300 ms' "$T_TMP/$lang.err"
done
t_finish
