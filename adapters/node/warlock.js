#!/usr/bin/env node
'use strict';
// warlock.js: node-redis-warlock 1.0.2 ("battle-hardened distributed
// locking using redis") over node-redis 3.1.2, the callback client its
// script helper (node-redis-script 2.0.1, nodeRedis wrapper) is written
// for. One Redis node: the first address of hello.nodes.
// acquire = warlock.lock(res, ttl): SET res:lock <uuid> PX ttl NX;
// release = the unlock function it hands back: EVALSHA of its parityDel
// script (compare-and-delete).
// What the source shows (node_modules/node-redis-script/src/index.js,
// runScript): an error reply to the EVALSHA is caught and dropped unless
// its message contains NOSCRIPT; runScript then returns undefined, and
// warlock.unlock calls back (null, undefined): a release that failed looks
// like one that succeeded. This adapter reports what the library reports:
// released: true unless the script said 0 (not ours).
// node-redis 3 has no command timeout: each call here races
// command_timeout_ms (default 1000) and reports an unknown outcome when it
// loses. hello.options: command_timeout_ms.
const redis = require('redis3');
const Warlock = require('node-redis-warlock');
const { run, definite } = require('./lib/protocol');
const warlockVersion = require('node-redis-warlock/package.json').version;
const redisVersion = require('redis3/package.json').version;

// Resolve with what the callback API hands back, or { timeout: true }.
function call(fn, ms) {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve({ timeout: true }), ms);
    fn((...args) => {
      clearTimeout(t);
      resolve({ args });
    });
  });
}

// A Redis error reply: the command did not run.
function replyError(err) {
  return err && (err.name === 'ReplyError' || err.code === 'ERR' || /^[A-Z]+ /.test(err.message || ''));
}

function failure(err) {
  const reply = { ok: false, error: String((err && err.message) || err) };
  if (!replyError(err)) reply.unknown = true;
  return reply;
}

run(async ({ nodes, options = {} }) => {
  const ms = Number(options.command_timeout_ms || 1000);
  const client = redis.createClient({
    host: nodes[0].host,
    port: nodes[0].port,
    enable_offline_queue: false, // refused at once while disconnected, never queued
    retry_strategy: () => 100,
  });
  client.on('error', () => {}); // reconnects by itself; errors reach the commands
  await new Promise((resolve) => {
    const t = setTimeout(resolve, 5000);
    client.once('ready', () => { clearTimeout(t); resolve(); });
  });
  const warlock = Warlock(client);
  const unlocks = new Map(); // token -> the unlock function warlock handed back

  return {
    name: 'node-redis-warlock',
    version: `node-redis-warlock ${warlockVersion}, redis ${redisVersion}`,
    caps: ['ttl'],

    async acquire({ res, ttl_ms: ttl }) {
      const r = await call((cb) => warlock.lock(res, ttl, cb), ms);
      if (r.timeout) return { ok: false, error: 'timeout', unknown: true };
      const [err, unlock, id] = r.args;
      if (err) return failure(err);
      if (typeof unlock !== 'function') return { ok: false, busy: true };
      unlocks.set(id, unlock);
      return { ok: true, token: id, validity_ms: ttl };
    },

    async renew() {
      throw definite('renew not offered (warlock.touch takes no token here)');
    },

    async release({ token }) {
      const unlock = unlocks.get(token);
      unlocks.delete(token);
      if (!unlock) throw definite('unknown token');
      const r = await call((cb) => unlock(cb), ms);
      if (r.timeout) return { ok: false, error: 'timeout', unknown: true };
      const [err, result] = r.args;
      if (err) return failure(err);
      // 1: deleted; 0: not ours; undefined: the script failed and the
      // library swallowed the error (it called back with no error)
      return { ok: true, released: result !== 0 };
    },

    async close() {
      await new Promise((resolve) => client.quit(() => resolve()));
    },
  };
});
