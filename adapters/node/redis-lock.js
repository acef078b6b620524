#!/usr/bin/env node
'use strict';
// redis-lock: the npm `redis-lock` package, 1.0.0 (with the node-redis 4
// client it is written for). One Redis node: the first of hello.nodes.
// The library's code does the work: lock(name, ttl) runs its acquireLock
// (SET lock.<name> <Date.now() + ttl + 1> PX ttl NX) and resolves with its
// release function, which DELs the key, unconditionally, when its own
// clock says the lease is still valid (lockTimeoutValue > Date.now()) and
// does nothing otherwise. It compares no token: a slow client clock makes it
// delete the lock of whoever holds the key now.
//
// One attempt per request: lock() retries forever (a setTimeout loop of
// retryDelay ms), which the library offers no way to switch off. The
// adapter hands it a client whose `set` makes one real attempt per
// acquire and leaves any later call of that acquire pending forever, so the
// retry loop stops at its first retry; a refused SET NX is `busy`.
// Token: our own id for the release function the library returned.
// validity_ms: the library's lockTimeoutValue minus Date.now() (its view),
// at most ttl (the library adds 1 ms to the key's PX ttl).
// hello.options: command_timeout_ms (500), retry_delay_ms (50).
const { randomUUID } = require('node:crypto');
const { createClient } = require('redis');
const redisLock = require('redis-lock');
const { run, definite } = require('./lib/protocol');

const version = require('redis-lock/package.json').version;
const clientVersion = require('redis/package.json').version;

// Did the command possibly run? node-redis rejects at once while
// disconnected (disableOfflineQueue) with ClientClosedError or
// "The client is closed"; a timeout or a lost connection may have run it.
function errorReply(err) {
  const error = String((err && err.message) || err);
  const reply = { ok: false, error };
  const before = /closed|offline queue|ECONNREFUSED|ErrorReply/i.test(error) ||
                 (err && err.constructor && err.constructor.name === 'ErrorReply');
  if (!before) reply.unknown = true;
  return reply;
}

run(async ({ nodes, options = {} }) => {
  const [node] = nodes;
  const timeout = Number(options.command_timeout_ms ?? 500);
  const client = createClient({
    socket: { host: node.host, port: node.port, connectTimeout: timeout,
              reconnectStrategy: (n) => Math.min(50 * n, 500) },
    disableOfflineQueue: true,
    commandsQueueMaxLength: 1000,
  });
  client.on('error', () => {}); // reconnects by itself; errors reach the commands
  await Promise.race([client.connect(), new Promise((r) => setTimeout(r, 5000))]);
  const retryDelay = Number(options.retry_delay_ms ?? 50);
  const held = new Map(); // token -> the library's release function

  // A command with the adapter's timeout (node-redis 4 has none per command).
  const withTimeout = (p) => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`command timed out after ${timeout} ms`)), timeout);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });

  return {
    name: 'redis-lock',
    version: `${version} (redis ${clientVersion})`,
    caps: ['ttl'],

    async acquire({ res, ttl_ms: ttl }) {
      const t0 = Date.now();
      let settle;
      const settled = new Promise((r) => { settle = r; }); // what the one real SET said
      let attempted = false;
      // the client the library sees for this acquire: one real SET, then
      // its retry loop waits forever on a promise that never settles
      const once = {
        v4: true,
        set: async (...args) => {
          if (attempted) return new Promise(() => {});
          attempted = true;
          try {
            const r = await withTimeout(client.set(...args));
            settle(r === null ? { busy: true } : { ok: true });
            return r;
          } catch (err) {
            settle({ err });
            throw err;
          }
        },
        del: (...args) => withTimeout(client.del(...args)),
      };
      const lock = redisLock(once, retryDelay);
      const granted = lock(res, ttl).then((release) => ({ release }));
      // the SET settles first; a granted lock resolves lock() right after
      const outcome = await settled;
      if (outcome.busy) return { ok: false, busy: true };
      if (outcome.err) return errorReply(outcome.err);
      const { release } = await granted;
      const token = randomUUID();
      held.set(token, release);
      // lockTimeoutValue = (Date.now() at its SET) + ttl + 1: the library
      // believes 1 ms more than the key's PX ttl, so an answer within the
      // millisecond of the request would claim ttl + 1; reported as at most
      // ttl, the lease the server keeps (adapter-test: 0 < validity <= ttl)
      return { ok: true, token, validity_ms: Math.min(ttl, ttl + 1 - (Date.now() - t0)) };
    },

    async release({ token }) {
      const release = held.get(token);
      held.delete(token);
      if (!release) throw definite('unknown token');
      try {
        // the library's release: DEL when its clock says the lease is
        // valid (resolves DEL's count), else nothing (undefined)
        const r = await release();
        return { ok: true, released: r === 1 };
      } catch (err) {
        return errorReply(err);
      }
    },

    async close() {
      await client.quit().catch(() => client.disconnect());
    },
  };
});
