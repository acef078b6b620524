#!/usr/bin/python3
"""A team's own worker loop run by lockstorm in record mode (workload
`lock.impl: record`, docs/protocol.md "record"), on the Python SDK's
record(). It stands for a real job handler: take the Redis lock on a
resource (SET NX PX with a random token), do the work, release with a
compare-and-delete. The three rec.* wrappers are the only lockstorm code:
they report each step, and the harness judges this loop under its faults.
`--bug del` releases with an unconditional DEL (frees whoever holds the key
now): lockstorm must catch it. Debian's python3-redis.
"""
import os
import random
import sys
import time

import redis
from redis.exceptions import ConnectionError as RedisConnectionError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lockstorm_adapter import BUSY, record  # noqa: E402

BUG_DEL = sys.argv[1:3] == ["--bug", "del"]
RELEASE = """if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1]) else return 0 end"""
client = None
ttl_ms = 500


def setup(h):
    global client, ttl_ms
    ttl_ms = h["record"]["ttl_ms"]
    host, port = h["nodes"][0]
    client = redis.Redis(host=host, port=port, socket_timeout=0.5, socket_connect_timeout=1.0)


# the team's lock, as their code has it
def lock(key):
    token = os.urandom(10).hex()
    return token if client.set(key, token, nx=True, px=ttl_ms) else BUSY


def unlock(key, token):
    if BUG_DEL:
        return client.delete(key) == 1
    return client.eval(RELEASE, 1, key, token) == 1


def loop(rec):
    while not rec.stopping:
        key = rec.pick()
        token = rec.acquire(key, lambda: lock(key))
        if token:
            rec.critical(key, lambda: time.sleep(random.uniform(0.05, 0.15)))  # the job
            rec.release(key, lambda: unlock(key, token))
        time.sleep(0.005)


record(loop, hello=setup, name="record-worker-py", version="del-bug" if BUG_DEL else "1",
       definite=lambda err: isinstance(err, RedisConnectionError) and "refused" in str(err))
