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

Written on the Python SDK (lockstorm_adapter.py, next to this file), which
serves the extensions `stall` (blocks the main thread, the only one the
library runs on: time.sleep, no request read or answered meanwhile) and
`clock` (time.time() and time.monotonic(), for client clock faults).

The interpreter is /usr/bin/python3 on purpose: the Debian package
python3-redis installs the library for it.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lockstorm_adapter import BUSY, serve  # noqa: E402  (the SDK, next to this file)

import redis  # noqa: E402
from redis.exceptions import ConnectionError as RedisConnectionError  # noqa: E402
from redis.exceptions import LockError, LockNotOwnedError, TimeoutError as RedisTimeout  # noqa: E402


def definite(err):
    """Nothing was sent (connection refused) or Redis refused the command."""
    if type(err).__name__ == "ResponseError":
        return True
    return isinstance(err, RedisConnectionError) and not isinstance(err, RedisTimeout) and (
        "connecting" in str(err) or "refused" in str(err))


def hello(h):
    opts = h.get("options") or {}
    host, port = h["nodes"][0]
    client = redis.Redis(
        host=host,
        port=port,
        socket_timeout=opts.get("socket_timeout_ms", 500) / 1000,
        socket_connect_timeout=opts.get("connect_timeout_ms", 1000) / 1000,
    )
    held = {}  # token -> Lock

    def acquire(req):
        lock = client.lock(req["res"], timeout=req["ttl_ms"] / 1000, blocking=False,
                           thread_local=False)
        if not lock.acquire(blocking=False):
            return BUSY
        token = lock.local.token
        token = token.decode() if isinstance(token, bytes) else str(token)
        held[token] = lock
        return token

    def extend(req):
        lock = held.get(req["token"])
        if lock is None:
            return {"ok": False, "error": "unknown token"}
        try:
            lock.extend(req["ttl_ms"] / 1000, replace_ttl=True)
        except LockNotOwnedError:
            return {"ok": False, "error": "lock lost (LockNotOwnedError)"}
        return True

    def release(req):
        lock = held.pop(req["token"], None)
        if lock is None:
            return False
        try:
            lock.release()
        except LockNotOwnedError:
            return False
        except LockError as err:
            return {"ok": False, "error": str(err)}
        return True

    return {"acquire": acquire, "extend": extend, "release": release, "close": client.close}


if __name__ == "__main__":
    serve(hello=hello, name="redis-py Lock", version=redis.__version__, definite=definite)
