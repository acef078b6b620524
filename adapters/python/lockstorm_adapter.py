"""lockstorm_adapter: the Python SDK for lockstorm adapters.

A lockstorm adapter puts one lock library under lockstorm's workers through
the adapter protocol (docs/protocol.md, version 1 and its extensions
`clock`, `stall`, `renewed`). This module speaks the protocol; its user
writes the lock: serve(hello=..., acquire=..., release=..., extend=...).
Return values and exceptions are mapped to protocol outcomes (docs/protocol.md
"The SDKs"), each request is bounded in time (timeout_ms), diagnostics go
to stderr. Standard library only (no pip); put this file next to your
adapter or on PYTHONPATH.

Requests are served one at a time on the main thread (the one the library
runs on), so `stall` blocks the library for real; a request past
timeout_ms is answered unknown by a watchdog thread and its late result
is logged and dropped.
"""
import json
import os
import sys
import threading
import time
import traceback

__all__ = ["serve", "emit", "log", "Definite", "NotOwner", "BUSY"]

_out_lock = threading.Lock()
_harness_extensions = set()
_worker = None
_debug = os.environ.get("LOCKSTORM_ADAPTER_DEBUG") == "1"


def _write(obj):
    line = json.dumps(obj) + "\n"
    with _out_lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def log(*args):
    """A diagnostic line on stderr (kept as adapters/worker-NNN.stderr)."""
    who = "adapter" if _worker is None else f"adapter worker {_worker}"
    msg = " ".join(a if isinstance(a, str) else repr(a) for a in args)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    sys.stderr.write(f"{stamp} {who}: {msg}\n")
    sys.stderr.flush()


class _Emit:
    """Events (lines without an id) the user's code may send at any time."""

    @staticmethod
    def lost(res, token):
        """The library says the grant is gone."""
        _write({"event": "lost", "res": res, "token": str(token)})

    @staticmethod
    def log(msg):
        """Free text for the worker's log."""
        _write({"event": "log", "msg": str(msg)})

    @staticmethod
    def renewed(res, token, validity_ms):
        """The library extended the grant by itself (extension `renewed`);
        sent only when the harness's hello lists it. validity_ms counts
        from this write; host_mono_ms (the host's CLOCK_MONOTONIC) says
        when that was (protocol revision 3)."""
        if "renewed" in _harness_extensions:
            _write({"event": "renewed", "res": res, "token": str(token),
                    "validity_ms": validity_ms,
                    "host_mono_ms": time.monotonic_ns() / 1e6})


emit = _Emit()


class Definite(Exception):
    """Raised (or subclassed): definitely nothing happened; a failed reply
    without `unknown`."""


class NotOwner(Definite):
    """Raised by release: the lock was no longer ours (released: false)."""


class _Busy:
    def __repr__(self):
        return "BUSY"


BUSY = _Busy()  # acquire's answer "someone else holds it"


def _stall(req):
    """Block the main thread for req["ms"] milliseconds; answer how long."""
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


def _clock():
    """The `clock` extension: time.time() (moved by the clock shim under
    client clock faults) and time.monotonic() (not moved)."""
    return {"ok": True, "wall_ms": time.time() * 1000.0, "mono_ms": time.monotonic() * 1000.0}


def _is_raw(r):
    return isinstance(r, dict) and isinstance(r.get("ok"), bool)


def _acquire_reply(r, req):
    if _is_raw(r):
        return r
    if r is BUSY or r is False or r is None:
        return {"ok": False, "busy": True}
    if isinstance(r, bytes):
        r = r.decode()
    if isinstance(r, (str, int)) and not isinstance(r, bool):
        return {"ok": True, "token": str(r), "validity_ms": req["ttl_ms"]}
    if isinstance(r, dict) and r.get("token") is not None:
        return {"ok": True, "validity_ms": req["ttl_ms"], **r, "token": str(r["token"])}
    if r is True:  # a library that answers True on success: granted, under a token of ours
        global _made_up_tokens
        _made_up_tokens += 1
        return {"ok": True, "token": f"sdk-{_made_up_tokens}", "validity_ms": req["ttl_ms"]}
    # anything else: the library was called and may hold the lock now, so the
    # outcome is unknown (never "definitely not granted")
    raise RuntimeError(f"acquire returned {r!r}: return a token string, a dict with 'token', "
                       "True, or BUSY (adapter bug; outcome unknown)")


_made_up_tokens = 0


def _extend_reply(r, req):
    if _is_raw(r):
        return r
    if r is False:
        return {"ok": False, "error": "lock lost"}
    if r is None or r is True:
        return {"ok": True, "validity_ms": req["ttl_ms"]}
    if isinstance(r, (int, float)):
        return {"ok": True, "validity_ms": r}
    if isinstance(r, dict):
        return {"ok": True, "validity_ms": req["ttl_ms"], **r}
    raise Definite(f"extend returned {r!r}: return True, False or a dict (adapter bug)")


def _release_reply(r, _req):
    if _is_raw(r):
        return r
    return {"ok": True, "released": r is not False}


class _Watchdog:
    """Answers a request unknown when the user's op outlives timeout_ms.
    The op runs on the main thread (the library's); only the reply moves."""

    def __init__(self):
        self._cv = threading.Condition()
        self._job = None  # (id, name, deadline, answered-flag list)
        threading.Thread(target=self._loop, daemon=True).start()

    def start(self, rid, name, timeout_s):
        flag = [False]
        with self._cv:
            self._job = (rid, name, time.monotonic() + timeout_s, flag, timeout_s)
            self._cv.notify()
        return flag

    def finish(self, flag):
        """True when the reply is still ours to send."""
        with self._cv:
            mine = not flag[0]
            flag[0] = True
            self._job = None
            return mine

    def _loop(self):
        with self._cv:
            while True:
                job = self._job
                if job is None:
                    self._cv.wait()
                    continue
                rid, name, deadline, flag, timeout_s = job
                left = deadline - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                if not flag[0]:
                    flag[0] = True
                    _write({"id": rid, "ok": False, "unknown": True,
                            "error": f"{name}: no answer within {round(timeout_s * 1000)} ms"})
                    log(f"{name}: no answer within {round(timeout_s * 1000)} ms (reported unknown)")
                self._job = None


def serve(hello=None, acquire=None, release=None, extend=None, close=None, name=None,
          version="0", fencing=False, auto_renew=False, stall=True, ttl=True, caps=None,
          timeout_ms=1500, definite=None):
    """Serve the adapter protocol on stdin/stdout until bye; returns then.

    hello(h): called with the harness's hello (h["nodes"] as (host, port)
    tuples, h["options"], h["worker"]); may return a dict whose keys
    (acquire, release, extend, close, name, version, fencing, auto_renew,
    caps, ...) override these arguments. acquire(req) returns a token (or a
    dict with "token", "fence", "validity_ms") or BUSY; release(req) returns
    True, or False / raises NotOwner when the lock was not ours;
    extend(req) returns True, or False when the lock is lost. An exception
    is an unknown outcome unless it is a Definite or definite(exc) is true.
    timeout_ms bounds each op (0: no bound).
    """
    global _worker, _harness_extensions
    spec = dict(acquire=acquire, release=release, extend=extend, close=close, name=name,
                version=version, fencing=fencing, auto_renew=auto_renew, stall=stall, ttl=ttl,
                caps=caps, timeout_ms=timeout_ms, definite=definite)
    ready = False
    dog = None

    def call(rid, opname, fn, to_reply, req):
        timeout_s = (spec["timeout_ms"] or 0) / 1000.0
        flag = dog.start(rid, opname, timeout_s) if timeout_s > 0 else [False]
        try:
            reply = to_reply(fn(req), req)
        except NotOwner:
            reply = {"ok": True, "released": False} if opname == "release" else \
                {"ok": False, "error": "not the owner"}
        except Exception as err:  # every failure is an outcome, never a crash
            reply = {"ok": False, "error": f"{type(err).__name__}: {err}"}
            is_definite = isinstance(err, Definite) or bool(spec["definite"] and
                                                            spec["definite"](err))
            if not is_definite:
                reply["unknown"] = True
                log(f"{opname} {req.get('res')}: {reply['error']} (unknown outcome)")
        mine = dog.finish(flag) if timeout_s > 0 else True
        if mine:
            _write({"id": rid, **reply})
        else:
            log(f"{opname} {req.get('res')} answered after the timeout: {reply!r} (dropped)")
        if _debug:
            log(f"{opname} {json.dumps(req)} -> {reply!r}")

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise ValueError("not an object")
        except ValueError:
            emit.log("ignored a line that is not a JSON object")
            continue
        op = msg.get("op")
        if op == "bye":
            break
        if op == "hello":
            if ready:
                emit.log("ignored a second hello")
                continue
            exts = msg.get("extensions") if isinstance(msg.get("extensions"), list) else []
            _harness_extensions = {str(e) for e in exts}
            _worker = msg.get("worker")
            h = dict(msg)
            h["nodes"] = [(n.rsplit(":", 1)[0], int(n.rsplit(":", 1)[1]))
                          for n in msg.get("nodes") or []]
            h["emit"] = emit
            try:
                more = hello(h) if hello else None
                if isinstance(more, dict):
                    spec.update(more)
                for k in ("acquire", "release"):
                    if not callable(spec[k]):
                        raise TypeError(f"serve: '{k}' must be a function")
            except Exception:  # setup failed: say why on stderr and exit 1
                sys.stderr.write("adapter setup failed: " + traceback.format_exc())
                sys.stderr.flush()
                sys.exit(1)
            if spec["caps"] is not None:
                hcaps = list(spec["caps"])
            else:
                hcaps = (["ttl"] if spec["ttl"] else []) + (["renew"] if spec["extend"] else []) \
                    + (["fencing"] if spec["fencing"] else []) \
                    + (["auto_renew", "renewed"] if spec["auto_renew"] else []) \
                    + (["stall"] if spec["stall"] else [])
            if "clock" in exts:
                hcaps.append("clock")
            spec["caps"] = hcaps
            dog = _Watchdog()
            ready = True
            _write({"op": "hello", "protocol": 1,
                    "name": str(spec["name"] or os.path.basename(sys.argv[0])),
                    "version": str(spec["version"]), "caps": hcaps})
            continue
        rid = msg.get("id")
        if isinstance(rid, bool) or not isinstance(rid, int):
            emit.log("ignored a request without an integer id")
            continue
        if not ready:
            _write({"id": rid, "ok": False, "error": "no hello yet"})
        elif op == "clock":
            _write({"id": rid, **_clock()})
        elif op == "stall" and "stall" in spec["caps"]:
            _write({"id": rid, **_stall(msg)})
        elif op == "acquire":
            call(rid, "acquire", spec["acquire"], _acquire_reply, msg)
        elif op == "release":
            call(rid, "release", spec["release"], _release_reply, msg)
        elif op == "renew" and callable(spec["extend"]):
            call(rid, "extend", spec["extend"], _extend_reply, msg)
        else:
            _write({"id": rid, "ok": False, "error": f"unknown op {op!r}"})
    if ready and callable(spec["close"]):
        try:
            spec["close"]()
        except Exception as err:  # the process ends either way
            log(f"close failed: {err}")


# ---- record mode (docs/protocol.md "record", revision 4) -------------------

def _record_event(what, **fields):
    _write({"event": "record", "what": what, **fields,
            "host_mono_ms": time.monotonic_ns() / 1e6})


class Recorder:
    """What record()'s loop gets: wrappers around the program's own lock
    calls that report each step (stamped with the host's monotonic clock)
    so the harness records them as its own worker would."""

    def __init__(self, hello, definite):
        r = hello.get("record") or {}
        self.keys = [str(k) for k in r.get("res") or []]
        self.ttl_ms = r.get("ttl_ms")
        self._worker = hello.get("worker")
        self._definite = definite
        self._tokens = {}
        self._serial = 0
        self._stop = threading.Event()

    @property
    def stopping(self):
        """True once the harness sent `stop` (or went away): end the loop."""
        return self._stop.is_set()

    def pick(self):
        """A resource key drawn uniformly (the program chooses its own)."""
        import random
        return random.choice(self.keys)

    def _failure(self, err):
        unknown = not (isinstance(err, Definite) or bool(self._definite and self._definite(err)))
        return {"unknown": unknown, "error": f"{type(err).__name__}: {err}"}

    def acquire(self, res, fn):
        """Call fn() (the program's lock call) and report it. fn returns a
        token (or a dict with "token", "fence", "validity_ms", or any other
        object: a token is made up), or BUSY / None / False when not
        granted. Returns fn's result, or None when not granted."""
        _record_event("acquire", res=res)
        try:
            r = fn()
        except Exception as err:  # an outcome, never a crash
            _record_event("acquire_failed", res=res, **self._failure(err))
            return None
        if r is None or r is False or r is BUSY:
            _record_event("busy", res=res)
            return None
        if isinstance(r, (str, int)) and not isinstance(r, bool):
            token = str(r)
        elif isinstance(r, dict) and r.get("token") is not None:
            token = str(r["token"])
        else:
            self._serial += 1
            token = f"p{self._worker}.{self._serial}"
        self._tokens[res] = token
        fields = {"res": res, "token": token}
        if isinstance(r, dict) and r.get("fence") is not None:
            fields["fence"] = r["fence"]
        if isinstance(r, dict) and isinstance(r.get("validity_ms"), (int, float)):
            fields["validity_ms"] = r["validity_ms"]
        _record_event("acquired", **fields)
        return r

    def critical(self, res, fn):
        """Run fn() (the work) as the critical section of res; returns its
        result. enter and exit are reported around it, exit even when fn
        raises."""
        _record_event("enter", res=res, token=self._tokens.get(res))
        try:
            return fn()
        finally:
            _record_event("exit", res=res, token=self._tokens.get(res))

    def release(self, res, fn):
        """Call fn() (the program's unlock) and report it: True/None is
        released, False or NotOwner not the program's any more, another
        exception a failed release. Returns whether it was released."""
        token = self._tokens.pop(res, None)
        _record_event("release", res=res, token=token)
        try:
            r = fn()
        except NotOwner:
            _record_event("released", res=res, token=token, released=False)
            return False
        except Exception as err:  # an outcome, never a crash
            _record_event("release_failed", res=res, token=token, **self._failure(err))
            return False
        released = r is not False
        _record_event("released", res=res, token=token, released=released)
        return released

    def lost(self, res):
        """The library says the current grant of res is gone."""
        emit.lost(res, self._tokens.get(res))

    def renewed(self, res, validity_ms):
        """The library extended the current grant of res by itself."""
        emit.renewed(res, self._tokens.get(res), validity_ms)


def record(loop, hello=None, close=None, name=None, version="0", ttl=True, fencing=False,
           auto_renew=False, definite=None):
    """Run the program's own worker loop as a lockstorm worker (workload
    `lock.impl: record`). hello(h) sets up (h["record"]["res"]: the keys to
    lock, h["record"]["ttl_ms"], h["nodes"] as (host, port) tuples,
    h["options"]); at `start`, loop(rec) runs on the main thread until
    rec.stopping, wrapping its lock calls in rec.acquire / rec.critical /
    rec.release. Returns when the loop is over and the harness said bye."""
    global _worker, _harness_extensions
    first = None
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("op") == "hello":
            first = msg
            break
        if isinstance(msg, dict) and msg.get("op") == "bye":
            return
    if first is None:
        return
    _harness_extensions = {str(e) for e in first.get("extensions") or []}
    _worker = first.get("worker")
    if "record" not in _harness_extensions:
        sys.stderr.write("record: this lockstorm does not offer record mode "
                         "(its hello lists no `record` extension)\n")
        sys.exit(1)
    h = dict(first)
    h["nodes"] = [(n.rsplit(":", 1)[0], int(n.rsplit(":", 1)[1])) for n in first.get("nodes") or []]
    h["emit"] = emit
    try:
        if hello:
            hello(h)
    except Exception:  # setup failed: say why on stderr and exit 1
        sys.stderr.write("record: setup failed: " + traceback.format_exc())
        sys.stderr.flush()
        sys.exit(1)
    rec = Recorder(first, definite)
    caps = ["record"] + (["ttl"] if ttl else []) + (["fencing"] if fencing else []) \
        + (["auto_renew", "renewed"] if auto_renew else [])
    _write({"op": "hello", "protocol": 1, "name": str(name or os.path.basename(sys.argv[0])),
            "version": str(version), "caps": caps})
    started = threading.Event()
    bye = threading.Event()

    def reader():  # start, stop, bye arrive while the loop runs
        for line in sys.stdin:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            op = m.get("op") if isinstance(m, dict) else None
            if op == "start":
                started.set()
            elif op == "stop":
                rec._stop.set()
            elif op == "bye":
                break
        rec._stop.set()
        bye.set()
        started.set()

    threading.Thread(target=reader, daemon=True).start()
    started.wait()
    if not bye.is_set():
        try:
            loop(rec)
        except Exception:  # the loop's own failure: on stderr, then stopped
            log("record: the loop raised: " + traceback.format_exc())
        _record_event("stopped")
        bye.wait()
    if callable(close):
        try:
            close()
        except Exception as err:  # the process ends either way
            log(f"close failed: {err}")


__all__ += ["record", "Recorder"]
