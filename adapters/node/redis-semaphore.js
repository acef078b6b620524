#!/usr/bin/env node
'use strict';
// redis-semaphore: the npm `redis-semaphore` package's Mutex (one node: the
// first of hello.nodes) or RedlockMutex (every node), chosen by
// hello.options.kind: "mutex" (default) or "redlock-mutex". One Mutex object
// per grant with lockTimeout = the request's ttl_ms and one acquire attempt
// (acquireAttemptsLimit 1: the harness retries). The library refreshes the
// lock by itself every refreshInterval (default 0.8 * lockTimeout, its own
// default; refresh_interval_ms overrides, 0 turns it off) and calls
// onLockLost when a refresh finds the lock gone: reported as `lost`.
// on_lock_lost: "report" (default) or "library" (its default handler, which
// throws from a timer: the process dies).
// Each refresh the library makes by itself is reported as `renewed`: the
// adapter wraps the Mutex's _refresh (what Lock._processRefresh awaits in
// node_modules/redis-semaphore/lib/Lock.js, from its setInterval), and a
// true result is a refresh that set the key's PEXPIRE to lockTimeout; the
// validity reported is lockTimeout less the time since the refresh was sent.
// Written on the SDK (adapters/node/sdk), which serves `stall` and `clock`.
// hello.options: kind, refresh_interval_ms, on_lock_lost, command_timeout_ms.
// Keys: the library prefixes "mutex:" (resource lockstorm:r0 is key
// mutex:lockstorm:r0). Release: the library's release() does not say
// whether the lock was still ours, so the adapter stops the refresh and runs
// the library's own compare-and-delete script (delIfEqualLua, exported by
// the package) to answer released:true/false.
const { performance } = require('node:perf_hooks');
const { serve, BUSY } = require('./sdk');
const { makeClients, waitReady, isUnknown, quitAll } = require('./lib/redis');
const { Mutex, RedlockMutex } = require('redis-semaphore');
const { delIfEqualLua } = require('redis-semaphore/lib/mutex/release');
const { expireIfEqualLua } = require('redis-semaphore/lib/mutex/refresh');
const version = require('redis-semaphore/package.json').version;

serve({
  version,
  definite: (err) => !isUnknown(err),
  async hello({ nodes, options = {}, emit }) {
    const redlock = options.kind === 'redlock-mutex';
    const clients = makeClients(redlock ? nodes : nodes.slice(0, 1), options);
    await waitReady(clients);
    const quorum = Math.floor(clients.length / 2) + 1;
    const held = new Map(); // identifier -> { mutex, res }
    const refreshInterval = (ttl) => (options.refresh_interval_ms === undefined
      ? Math.round(ttl * 0.8) : Number(options.refresh_interval_ms));

    // Run a compare-and-X script of the library on every client: true with
    // a quorum of yes, else the first error (thrown), else false.
    async function onAll(script, args) {
      const results = await Promise.all(clients.map((c) => script(c, args).then(
        (r) => ({ r: +r }), (e) => ({ e }))));
      if (results.filter((x) => x.r === 1).length >= quorum) return true;
      const failed = results.find((x) => x.e);
      if (failed) throw failed.e;
      return false;
    }

    return {
      name: redlock ? 'redis-semaphore RedlockMutex' : 'redis-semaphore Mutex',
      autoRenew: refreshInterval(1000) > 0,
      async acquire({ res, ttl_ms: ttl }) {
        let token = null;
        const opts = {
          lockTimeout: ttl,
          acquireAttemptsLimit: 1,
          retryInterval: 0,
          refreshInterval: refreshInterval(ttl),
        };
        if (options.on_lock_lost !== 'library') {
          opts.onLockLost = () => {
            if (token && held.has(token)) emit.lost(res, token);
          };
        }
        const mutex = redlock ? new RedlockMutex(clients, res, opts) : new Mutex(clients[0], res, opts);
        // RedlockMutex swallows node errors: unreachable nodes look busy
        if (!(await mutex.tryAcquire())) return BUSY;
        token = mutex.identifier;
        held.set(token, { mutex, res });
        const refresh = mutex._refresh;
        mutex._refresh = async function refreshReported() {
          const sent = performance.now();
          const ok = await refresh.call(this);
          if (ok && held.has(token)) emit.renewed(res, token, ttl - (performance.now() - sent));
          return ok;
        };
        return token;
      },
      async extend({ token, ttl_ms: ttl }) {
        const h = held.get(token);
        if (!h) return { ok: false, error: 'unknown token' };
        return onAll(expireIfEqualLua, [`mutex:${h.res}`, token, ttl]);
      },
      async release({ token }) {
        const h = held.get(token);
        held.delete(token);
        if (!h) return false;
        h.mutex.stopRefresh();
        h.mutex._acquired = false; // what release() sets: a refresh in flight is not a loss
        return onAll(delIfEqualLua, [`mutex:${h.res}`, token]);
      },
      async close() {
        for (const h of held.values()) h.mutex.stopRefresh();
        await quitAll(clients);
      },
    };
  },
});
