#!/usr/bin/env node
// minimal.js: a complete lockstorm adapter, the worked example of
// docs/adapters.md, on the SDK (adapters/node/sdk). The lock is the plain
// single-node Redis lock (SET NX PX, compare-and-delete,
// compare-and-pexpire) on the first node of the hello.
'use strict';
const { randomUUID } = require('node:crypto');
const { serve, BUSY } = require('./sdk');
const Redis = require('ioredis');

const DEL = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) else return 0 end`;
const PEXPIRE = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
let redis = null;

serve({
  name: 'minimal',
  version: '1',
  async hello({ nodes }) {
    redis = new Redis({
      ...nodes[0],
      commandTimeout: 500,        // never wait forever (a blackhole partition)
      enableOfflineQueue: false,  // fail at once while disconnected
      maxRetriesPerRequest: 0,    // the harness retries, not the client
    });
    redis.on('error', () => {});  // reconnects by itself
    await new Promise((ok) => redis.once('ready', ok));
  },
  // a command refused before it was sent did nothing; any other failure
  // (a timeout after sending) may have run: unknown
  definite: (err) => /Stream isn't writeable|ECONNREFUSED/.test(err.message),
  async acquire({ res, ttl_ms }) {
    const token = randomUUID();
    return (await redis.set(res, token, 'PX', ttl_ms, 'NX')) === 'OK' ? token : BUSY;
  },
  async extend({ res, token, ttl_ms }) {
    return (await redis.eval(PEXPIRE, 1, res, token, ttl_ms)) === 1;
  },
  async release({ res, token }) {
    return (await redis.eval(DEL, 1, res, token)) === 1;
  },
});
