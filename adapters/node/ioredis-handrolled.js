#!/usr/bin/env node
'use strict';
// ioredis-handrolled: the lock Node.js articles on Redis locks build by
// hand with ioredis (e.g. "Beyond SETNX: Implementing a Production-Grade
// Distributed Lock with Node.js and Redis Lua Scripts", dev.to), written fresh from their
// description: acquire = SET NX PX in a Lua script, release = Lua
// compare-and-delete, renew = Lua compare-and-pexpire, optionally on a
// timer (auto_renew_ms) that reports `lost` when an extension fails and
// `renewed` when one succeeds (with the validity left: the TTL less the time
// since the extension was sent). One Redis node: the first address of
// hello.nodes. Extension `stall` is served by lib/protocol.js.
//
// hello.options: command_timeout_ms (500), auto_renew_ms (0 = off),
// fencing (false: a fence from INCR in the acquire script when true).
const { randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { run, definite } = require('./lib/protocol');
const { makeClients, waitReady, errorReply, quitAll } = require('./lib/redis');
const ioredisVersion = require('ioredis/package.json').version;

const ACQUIRE = `
local key   = KEYS[1]
local token = ARGV[1]
local ttl   = tonumber(ARGV[2])
return redis.call('SET', key, token, 'NX', 'PX', ttl)
`;
// With fencing: the fence is issued in the same script as the grant, so
// grants and fences have one order.
const ACQUIRE_FENCED = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', tonumber(ARGV[2])) then
  return redis.call('INCR', KEYS[2])
end
return false
`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
else
  return 0
end
`;
const EXTEND = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  return 0
end
`;

run(async ({ nodes, options = {}, emit }) => {
  const [redis] = makeClients(nodes.slice(0, 1), options);
  await waitReady([redis]);
  const autoRenew = Number(options.auto_renew_ms || 0);
  const fencing = options.fencing === true;
  const timers = new Map(); // token -> renewal timer

  const stopTimer = (token) => {
    clearInterval(timers.get(token));
    timers.delete(token);
  };

  return {
    name: 'ioredis-handrolled',
    version: `ioredis ${ioredisVersion}`,
    caps: ['ttl', 'renew', ...(fencing ? ['fencing'] : []),
           ...(autoRenew > 0 ? ['auto_renew', 'renewed'] : []), 'stall'],

    async acquire({ res, ttl_ms: ttl }) {
      const token = randomUUID();
      let r;
      try {
        r = fencing
          ? await redis.eval(ACQUIRE_FENCED, 2, res, `lockstorm:fence:${res}`, token, ttl)
          : await redis.eval(ACQUIRE, 1, res, token, ttl);
      } catch (err) {
        return errorReply(err);
      }
      if (r === null) return { ok: false, busy: true };
      if (autoRenew > 0) {
        // the articles' renewal timer: extend every auto_renew_ms; a refused
        // or failed extension means the lock is lost
        timers.set(token, setInterval(async () => {
          let lost = false;
          const sent = performance.now();
          try {
            lost = (await redis.eval(EXTEND, 1, res, token, ttl)) !== 1;
          } catch (err) {
            lost = true;
          }
          if (lost && timers.has(token)) {
            stopTimer(token);
            emit.lost(res, token);
          } else if (!lost && timers.has(token)) {
            emit.renewed(res, token, ttl - (performance.now() - sent));
          }
        }, autoRenew));
      }
      return { ok: true, token, fence: fencing ? r : null, validity_ms: ttl };
    },

    async renew({ res, token, ttl_ms: ttl }) {
      let r;
      try {
        r = await redis.eval(EXTEND, 1, res, token, ttl);
      } catch (err) {
        return errorReply(err);
      }
      if (r !== 1) throw definite('lock lost');
      return { ok: true, validity_ms: ttl };
    },

    async release({ res, token }) {
      stopTimer(token);
      try {
        const r = await redis.eval(RELEASE, 1, res, token);
        return { ok: true, released: r === 1 };
      } catch (err) {
        return errorReply(err);
      }
    },

    async close() {
      for (const t of timers.keys()) stopTimer(t);
      await quitAll([redis]);
    },
  };
});
