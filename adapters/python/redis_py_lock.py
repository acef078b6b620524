#!/usr/bin/python3
"""redis-py's Lock as a lockstorm adapter (docs/protocol.md, version 1).

One Redis node (the first of hello.nodes). One redis.lock.Lock per grant,
acquire(blocking=False) with an explicit timeout (the request's ttl_ms), so
one attempt per request (the harness retries). Renew is Lock.extend with
replace_ttl=True (the library's compare-and-pexpire script); release is
Lock.release (the library's compare-and-delete; LockNotOwnedError means the
lock was no longer ours: released:false).

hello.options: socket_timeout_ms (500): the client's command timeout, so a
partition never hangs it; connect_timeout_ms (1000).

Extension `stall` (docs/protocol.md): {"op":"stall","ms":N} blocks the main
thread, the only one the library runs on, for N ms (time.sleep: no request
is read or answered meanwhile) and answers the measured stalled_ms.
Extension `clock`: time.time() and time.monotonic(), for client clock
faults.

The interpreter is /usr/bin/python3 on purpose: the Debian package
python3-redis installs the library for it.
"""
import json
import sys
import time

import redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockError, LockNotOwnedError, RedisError, TimeoutError as RedisTimeout


def write(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def failure(err):
    """A redis-py exception as a failed reply: unknown unless nothing was sent."""
    reply = {"ok": False, "error": f"{type(err).__name__}: {err}"}
    definite = isinstance(err, RedisConnectionError) and not isinstance(err, RedisTimeout) and (
        "connecting" in str(err) or "refused" in str(err))
    if not definite and not (isinstance(err, RedisError) and type(err).__name__ == "ResponseError"):
        reply["unknown"] = True
    return reply


class Adapter:
    def __init__(self, hello):
        opts = hello.get("options") or {}
        host, port = hello["nodes"][0].rsplit(":", 1)
        self.client = redis.Redis(
            host=host,
            port=int(port),
            socket_timeout=opts.get("socket_timeout_ms", 500) / 1000,
            socket_connect_timeout=opts.get("connect_timeout_ms", 1000) / 1000,
        )
        self.held = {}  # token -> Lock

    def acquire(self, req):
        ttl = req["ttl_ms"]
        lock = self.client.lock(req["res"], timeout=ttl / 1000, blocking=False, thread_local=False)
        try:
            if not lock.acquire(blocking=False):
                return {"ok": False, "busy": True}
        except RedisError as err:
            return failure(err)
        token = lock.local.token.decode() if isinstance(lock.local.token, bytes) else str(lock.local.token)
        self.held[token] = lock
        return {"ok": True, "token": token, "validity_ms": ttl}

    def renew(self, req):
        lock = self.held.get(req["token"])
        if lock is None:
            return {"ok": False, "error": "unknown token"}
        try:
            lock.extend(req["ttl_ms"] / 1000, replace_ttl=True)
        except LockNotOwnedError:
            return {"ok": False, "error": "lock lost (LockNotOwnedError)"}
        except RedisError as err:
            return failure(err)
        return {"ok": True, "validity_ms": req["ttl_ms"]}

    def release(self, req):
        lock = self.held.pop(req["token"], None)
        if lock is None:
            return {"ok": True, "released": False}
        try:
            lock.release()
        except LockNotOwnedError:
            return {"ok": True, "released": False}
        except LockError as err:
            return {"ok": False, "error": str(err)}
        except RedisError as err:
            return failure(err)
        return {"ok": True, "released": True}

    def close(self):
        try:
            self.client.close()
        except RedisError:
            pass


def stall(req):
    """Block the main thread for req["ms"] milliseconds; answer how long it was."""
    ms = req.get("ms")
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms <= 600000:
        return {"ok": False, "error": f"stall: 'ms' must be 0..600000, got {ms!r}"}
    t0 = time.monotonic()
    end = t0 + ms / 1000.0
    left = end - t0
    while left > 0:  # sleep may return early on a signal: sleep the rest
        time.sleep(left)
        left = end - time.monotonic()
    return {"ok": True, "stalled_ms": round((time.monotonic() - t0) * 1000.0, 3)}


def clock_reply():
    """The `clock` extension (docs/protocol.md): the wall clock as the
    library reads it (time.time(), which the clock shim moves under client
    clock faults) and the monotonic clock (time.monotonic(), which it does
    not)."""
    return {"ok": True, "wall_ms": time.time() * 1000.0, "mono_ms": time.monotonic() * 1000.0}


def main():
    adapter = None
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise ValueError("not an object")
        except ValueError:
            write({"event": "log", "msg": "ignored a line that is not a JSON object"})
            continue
        op = msg.get("op")
        if op == "bye":
            break
        if op == "hello":
            adapter = Adapter(msg)
            exts = msg.get("extensions") if isinstance(msg.get("extensions"), list) else []
            write({"op": "hello", "protocol": 1, "name": "redis-py Lock",
                   "version": redis.__version__,
                   "caps": ["ttl", "renew", "stall"] + (["clock"] if "clock" in exts else [])})
            continue
        rid = msg.get("id")
        if not isinstance(rid, int):
            write({"event": "log", "msg": "ignored a request without an integer id"})
            continue
        if op == "clock":
            write({"id": rid, **clock_reply()})
            continue
        if adapter and op == "stall":
            write({"id": rid, **stall(msg)})
            continue
        handler = getattr(adapter, op, None) if adapter and op in ("acquire", "renew", "release") else None
        if handler is None:
            write({"id": rid, "ok": False, "error": f"unknown op {op!r}"})
            continue
        write({"id": rid, **handler(msg)})
    if adapter:
        adapter.close()


if __name__ == "__main__":
    main()
