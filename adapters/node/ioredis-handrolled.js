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
// hello.nodes. Written on the SDK (adapters/node/sdk), which serves `stall`
// and `clock`.
//
// hello.options: command_timeout_ms (500), auto_renew_ms (0 = off),
// fencing (false: a fence from INCR in the acquire script when true).
const { randomUUID } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { serve, BUSY } = require('./sdk');
const { makeClients, waitReady, isUnknown, quitAll } = require('./lib/redis');
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

serve({
  name: 'ioredis-handrolled',
  version: `ioredis ${ioredisVersion}`,
  definite: (err) => !isUnknown(err),
  async hello({ nodes, options = {}, emit }) {
    const [redis] = makeClients(nodes.slice(0, 1), options);
    await waitReady([redis]);
    const autoRenew = Number(options.auto_renew_ms || 0);
    const fencing = options.fencing === true;
    const timers = new Map(); // token -> renewal timer
    const stopTimer = (token) => {
      clearInterval(timers.get(token));
      timers.delete(token);
    };
    // the articles' renewal timer: extend every auto_renew_ms; a refused
    // or failed extension means the lock is lost
    const renewEvery = (res, token, ttl) => setInterval(async () => {
      const sent = performance.now();
      const lost = await redis.eval(EXTEND, 1, res, token, ttl).then((r) => r !== 1, () => true);
      if (!timers.has(token)) return;
      if (lost) {
        stopTimer(token);
        emit.lost(res, token);
      } else {
        emit.renewed(res, token, ttl - (performance.now() - sent));
      }
    }, autoRenew);

    return {
      fencing,
      autoRenew: autoRenew > 0,
      async acquire({ res, ttl_ms: ttl }) {
        const token = randomUUID();
        const r = fencing
          ? await redis.eval(ACQUIRE_FENCED, 2, res, `lockstorm:fence:${res}`, token, ttl)
          : await redis.eval(ACQUIRE, 1, res, token, ttl);
        if (r === null) return BUSY;
        if (autoRenew > 0) timers.set(token, renewEvery(res, token, ttl));
        return { token, fence: fencing ? r : null };
      },
      async extend({ res, token, ttl_ms: ttl }) {
        return (await redis.eval(EXTEND, 1, res, token, ttl)) === 1;
      },
      async release({ res, token }) {
        stopTimer(token);
        return (await redis.eval(RELEASE, 1, res, token)) === 1;
      },
      async close() {
        for (const t of timers.keys()) stopTimer(t);
        await quitAll([redis]);
      },
    };
  },
});
