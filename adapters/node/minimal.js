#!/usr/bin/env node
// minimal.js: a complete lockstorm adapter in one file, the worked example of
// docs/adapters.md. The lock is the plain single-node Redis lock (SET NX PX,
// compare-and-delete, compare-and-pexpire) on the first node of the hello.
'use strict';
const readline = require('node:readline');
const { randomUUID } = require('node:crypto');
const Redis = require('ioredis');

const DEL = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1]) else return 0 end`;
const PEXPIRE = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

let redis = null;
const send = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

// A failed command: did it possibly run? (a timeout after sending: yes)
function failure(err) {
  const sentNothing = /Stream isn't writeable|ECONNREFUSED/.test(err.message);
  return { ok: false, error: err.message, ...(sentNothing ? {} : { unknown: true }) };
}

const ops = {
  async acquire({ res, ttl_ms }) {
    const token = randomUUID();
    const r = await redis.set(res, token, 'PX', ttl_ms, 'NX');
    if (r !== 'OK') return { ok: false, busy: true };
    return { ok: true, token, fence: null, validity_ms: ttl_ms };
  },
  async renew({ res, token, ttl_ms }) {
    const r = await redis.eval(PEXPIRE, 1, res, token, ttl_ms);
    return r === 1 ? { ok: true, validity_ms: ttl_ms } : { ok: false, error: 'lock lost' };
  },
  async release({ res, token }) {
    const r = await redis.eval(DEL, 1, res, token);
    return { ok: true, released: r === 1 };
  },
};

async function hello(msg) {
  const [host, port] = msg.nodes[0].split(':');
  redis = new Redis({
    host, port: Number(port),
    commandTimeout: 500,        // never wait forever (a blackhole partition)
    enableOfflineQueue: false,  // fail at once while disconnected
    maxRetriesPerRequest: 0,    // the harness retries, not the client
  });
  redis.on('error', () => {});  // reconnects by itself
  await new Promise((ok) => redis.once('ready', ok));
  send({ op: 'hello', protocol: 1, name: 'minimal', version: '1', caps: ['ttl', 'renew'] });
}

readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch (e) {
    return send({ event: 'log', msg: 'ignored a line that is not JSON' });
  }
  if (msg.op === 'hello') return hello(msg);
  if (msg.op === 'bye') return process.exit(0);
  const op = ops[msg.op];
  if (!op) return send({ id: msg.id, ok: false, error: `unknown op ${msg.op}` });
  try {
    send({ id: msg.id, ...(await op(msg)) });
  } catch (err) {
    send({ id: msg.id, ...failure(err) });
  }
}).on('close', () => process.exit(0));
