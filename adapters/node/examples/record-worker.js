#!/usr/bin/env node
// record-worker.js: a team's own worker loop run by lockstorm in record mode
// (workload `lock.impl: record`, docs/protocol.md "record"), on the SDK's
// record(). It stands for a real job handler: take the Redis lock on a
// resource (SET NX PX with a random token), do the work, release with a
// compare-and-delete. The three `rec.*` wrappers are the only lockstorm
// code: they report each step, and the harness judges this loop's real
// behaviour under its faults. `--bug del` releases with an unconditional
// DEL (frees whoever holds the key now): lockstorm must catch it.
'use strict';
const { randomUUID } = require('node:crypto');
const { setTimeout: sleep } = require('node:timers/promises');
const { record, BUSY } = require('../sdk');
const Redis = require('ioredis');

const BUG_DEL = process.argv.includes('--bug') && process.argv[process.argv.indexOf('--bug') + 1] === 'del';
const DEL = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) else return 0 end`;
let redis = null;
let ttlMs = 500;

// the team's lock, as their code has it
async function lock(key) {
  const token = randomUUID();
  return (await redis.set(key, token, 'PX', ttlMs, 'NX')) === 'OK' ? token : BUSY;
}
async function unlock(key, token) {
  if (BUG_DEL) return (await redis.del(key)) === 1;
  return (await redis.eval(DEL, 1, key, token)) === 1;
}
// the job: some work while holding the lock
const work = () => sleep(50 + Math.random() * 100);

record({
  name: 'record-worker',
  version: BUG_DEL ? 'del-bug' : '1',
  async hello({ nodes, record: r }) {
    ttlMs = r.ttl_ms;
    redis = new Redis({ ...nodes[0], commandTimeout: 500, enableOfflineQueue: false,
      maxRetriesPerRequest: 0 });
    redis.on('error', () => {});
    await new Promise((ok) => redis.once('ready', ok));
  },
  definite: (err) => /Stream isn't writeable|ECONNREFUSED/.test(err.message),
  async loop(rec) {
    while (!rec.stopping) {
      const key = rec.pick();
      const token = await rec.acquire(key, () => lock(key));
      if (token) {
        await rec.critical(key, work);
        await rec.release(key, () => unlock(key, token));
      }
      await sleep(5);
    }
  },
  close: () => redis && redis.disconnect(),
});
