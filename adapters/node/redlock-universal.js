#!/usr/bin/env node
'use strict';
// redlock-universal: the npm `redlock-universal` package's SimpleLock (one
// node: the first of hello.nodes, through its IoredisAdapter), each grant
// held inside lock.using(), whose automatic extension runs until release.
// What its source (dist/index.cjs, executeWithAutoExtension) does, read for
// 0.8.5: after each extension it waits max(0.8 x ttl - elapsed, 1000 ms)
// (MIN_EXTENSION_INTERVAL) but calls the next extension AT ONCE when that
// wait is <= 1000 ms: with a TTL <= 1.25 s every extension is followed
// immediately by the next one, one EVALSHA (its ATOMIC_EXTEND script) per
// round trip for the whole hold (lockstorm's checks.commands shows it).
// The script refuses to extend when less than 10% of the TTL is left
// (SINGLE_NODE_EXTENSION_BUFFER_RATIO; "Extension too late"), and then the
// library gives up on a lock that was still valid: its abort signal is
// reported as `lost`, as is any other failed extension.
// Extensions: `renewed` (docs/protocol.md) after each successful extension,
// when the harness's hello lists it: the adapter wraps the library's
// adapter.atomicExtend (the one call executeWithAutoExtension makes) to see
// them; validity_ms = the TTL it set (PEXPIRE ttl) less the extension's
// round trip (the PEXPIRE ran after the request left: never overstated).
// Release: using() drops the result of its release, so the adapter wraps
// the lock's release() to answer released:true/false.
// hello.options: command_timeout_ms (500), timeout_ms (the library's own
// per-command timeout, 5000 = its default).
// Keys: none of its own prefix (resource lockstorm:r0 is key lockstorm:r0).
const { run } = require('./lib/protocol');
const { makeClients, waitReady, errorReply, quitAll } = require('./lib/redis');
const { createLock, IoredisAdapter } = require('redlock-universal');
const version = require('node:fs').readFileSync(
  require('node:path').join(require.resolve('redlock-universal'), '../../package.json'), 'utf8');

// One JSON line on stdout, as lib/protocol.js writes its own events.
function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

run(async ({ nodes, options = {}, emit, extensions = [] }) => {
  const clients = makeClients(nodes.slice(0, 1), options);
  await waitReady(clients);
  const renewedEvents = Array.isArray(extensions) && extensions.includes('renewed');
  const adapter = new IoredisAdapter(clients[0], { timeout: Number(options.timeout_ms ?? 5000) });
  const held = new Map(); // token (the lock's value) -> { res, finish, done, released, releasing }

  // Every extension of using() goes through atomicExtend: see the successes.
  const atomicExtend = adapter.atomicExtend.bind(adapter);
  adapter.atomicExtend = async (key, value, minTTL, newTTL) => {
    const t0 = Date.now();
    const r = await atomicExtend(key, value, minTTL, newTTL);
    const h = held.get(value);
    // the PEXPIRE ran after t0: the lease lasts at least newTTL from t0
    if (h && !h.releasing && r && r.resultCode === 1 && renewedEvents)
      send({ event: 'renewed', res: h.res, token: value,
             validity_ms: Math.max(0, newTTL - (Date.now() - t0)) });
    if (h && !h.releasing && r && r.resultCode !== 1)
      emit.log(`extension refused: ${r.message}`);
    return r;
  };

  return {
    name: 'redlock-universal SimpleLock.using',
    version: JSON.parse(version).version,
    caps: ['ttl', 'auto_renew', ...(renewedEvents ? ['renewed'] : [])],

    async acquire({ res, ttl_ms: ttl }) {
      const lock = createLock({ adapter, key: res, ttl, retryAttempts: 0, retryDelay: 0,
                                circuitBreaker: false });
      // using() calls this.acquire() and this.release(): the instance's own
      // wrappers see the handle (its value is the token) and the release's
      // result, which using() drops
      let handle = null;
      const acquire = lock.acquire.bind(lock);
      lock.acquire = async () => { handle = await acquire(); return handle; };
      const release = lock.release.bind(lock);
      lock.release = async (hd) => {
        const ok = await release(hd);
        const h = held.get(hd.value);
        if (h) h.released = ok;
        return ok;
      };
      return new Promise((resolveAcquire) => {
        let granted = false;
        const h = { res, finish: null, done: null, released: false, releasing: false };
        h.done = lock.using(async (signal) => {
          granted = true;
          const token = handle.value;
          const until = new Promise((r) => { h.finish = r; });
          held.set(token, h);
          signal.addEventListener('abort', () => {
            if (held.has(token) && !h.releasing) emit.lost(res, token);
          });
          resolveAcquire({ ok: true, token, validity_ms: ttl });
          await until;
        });
        h.done.catch((err) => {
          if (granted) return; // the release request reports it
          const cause = (err && err.cause) || err;
          if (/already held/.test(String((cause && cause.message) || cause)))
            resolveAcquire({ ok: false, busy: true });
          else
            resolveAcquire(errorReply(cause));
        });
      });
    },

    async release({ token }) {
      const h = held.get(token);
      if (!h) return { ok: true, released: false };
      h.releasing = true; // the extension in flight may fail now: not a loss
      h.finish();
      try {
        await h.done;
      } catch (err) {
        // the routine's own result: nothing to report
      }
      held.delete(token);
      return { ok: true, released: h.released };
    },

    async close() {
      for (const h of held.values()) h.finish();
      await quitAll(clients);
    },
  };
});
