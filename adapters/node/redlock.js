#!/usr/bin/env node
'use strict';
// redlock: the npm `redlock` package (Redlock on every node of hello.nodes).
// Two lines of it, chosen by hello.options.line:
//   5 (default): redlock 5.0.0-beta.2: acquire / release / extend, retries
//     off (retryCount 0: the harness retries); with auto_extend: true each
//     grant is held inside redlock.using(), whose automatic extension runs
//     until release, and its abort signal is reported as `lost`.
//   4: redlock 4.2.0 (the callback/bluebird era API): lock / unlock / extend.
// hello.options: line (5), drift_factor (0.01), command_timeout_ms (500),
// auto_extend (false; line 5 only), extension_threshold_ms (ttl/3).
// Token: the lock's random value (line 5 with auto_extend: our own id).
// validity_ms: the library's lock.expiration minus the time the request
// arrived (Date.now() based: wall clock, as the library computes it).
const { randomUUID } = require('node:crypto');
const { run } = require('./lib/protocol');
const { makeClients, waitReady, isUnknown, quitAll } = require('./lib/redis');

const reply = (ok, fields) => ({ ok, ...fields });

// Why did a redlock 5 operation fail? Its ExecutionError carries, per
// attempt, a promise of the votes; against-votes hold each node's error.
async function classify5(err) {
  const out = { error: String((err && err.message) || err) };
  const attempts = (err && err.attempts) || [];
  if (!attempts.length) return out; // e.g. "Cannot extend an already-expired lock."
  let locked = 0;
  let unknown = 0;
  let other = 0;
  try {
    const stats = await attempts[attempts.length - 1];
    for (const e of stats.votesAgainst.values()) {
      if (e && e.name === 'ResourceLockedError') locked++;
      else if (isUnknown(e)) unknown++;
      else other++;
    }
    const first = [...stats.votesAgainst.values()].find((e) => e && e.name !== 'ResourceLockedError');
    if (first) out.error += ` (${first.message})`;
  } catch (e) {
    unknown++;
  }
  out.locked = locked > 0 && unknown === 0 && other === 0;
  out.unknown = unknown > 0;
  return out;
}

function line5(clients, options, emit) {
  const Redlock = require('redlock').default;
  // its package.json is not exported: read it next to the entry point
  const pkg = require('node:path').join(require.resolve('redlock'), '../../../package.json');
  const version = JSON.parse(require('node:fs').readFileSync(pkg, 'utf8')).version.replace(/^v/, '');
  const drift = Number(options.drift_factor ?? 0.01);
  const redlock = new Redlock(clients, { driftFactor: drift, retryCount: 0, retryDelay: 0,
                                         retryJitter: 0 });
  const autoExtend = options.auto_extend === true;
  const held = new Map(); // token -> Lock, or (auto_extend) { finish, done }
  const usingToken = new Map(); // auto_extend: resource -> the token of the grant held on it
  if (autoExtend) {
    // using() extends through redlock.extend(lock, ttl): report each success
    // as a `renewed` event with the validity the library now believes in
    // (its expiration, from Date.now(), less Date.now()); protocol.js sends
    // it only to a harness that lists the extension
    const extend = redlock.extend.bind(redlock);
    redlock.extend = async (existing, duration, settings) => {
      const next = await extend(existing, duration, settings);
      const res = existing.resources[0];
      const token = usingToken.get(res);
      if (token && held.has(token)) emit.renewed(res, token, next.expiration - Date.now());
      return next;
    };
  }

  async function acquireUsing(res, ttl) {
    const token = randomUUID();
    const threshold = Number(options.extension_threshold_ms ?? Math.floor(ttl / 3));
    return new Promise((resolveAcquire) => {
      let granted = false;
      let finish;
      const done = redlock.using([res], ttl, { retryCount: 0, automaticExtensionThreshold: threshold },
        async (signal) => {
          granted = true;
          usingToken.set(res, token);
          signal.addEventListener('abort', () => {
            if (held.has(token)) emit.lost(res, token);
          });
          const until = new Promise((r) => { finish = r; });
          held.set(token, { finish: () => finish(), done });
          // using() computes expiration = start + ttl - drift like acquire():
          // valid that long after the request arrived (start ~ t0)
          resolveAcquire(reply(true, { token, validity_ms: ttl - (Math.round(drift * ttl) + 2) }));
          await until;
        });
      done.catch(async (err) => {
        if (granted) return; // the release request reports it
        const c = await classify5(err);
        resolveAcquire(c.locked ? reply(false, { busy: true })
                                : reply(false, { error: c.error, unknown: c.unknown || undefined }));
      });
    });
  }

  return {
    name: 'redlock',
    version,
    caps: autoExtend ? ['ttl', 'auto_renew', 'renewed'] : ['ttl', 'renew'],
    async acquire({ res, ttl_ms: ttl }) {
      const t0 = Date.now();
      if (autoExtend) return acquireUsing(res, ttl);
      try {
        const lock = await redlock.acquire([res], ttl);
        held.set(lock.value, lock);
        return reply(true, { token: lock.value, validity_ms: lock.expiration - t0 });
      } catch (err) {
        const c = await classify5(err);
        if (c.locked) return reply(false, { busy: true });
        return reply(false, { error: c.error, ...(c.unknown ? { unknown: true } : {}) });
      }
    },
    async renew({ token, ttl_ms: ttl }) {
      const lock = held.get(token);
      if (!lock || autoExtend) return reply(false, { error: autoExtend ? 'auto_extend: the library extends' : 'unknown token' });
      const t0 = Date.now();
      try {
        const next = await lock.extend(ttl);
        held.set(token, next);
        return reply(true, { validity_ms: next.expiration - t0 });
      } catch (err) {
        const c = await classify5(err);
        return reply(false, { error: c.error, ...(c.unknown ? { unknown: true } : {}) });
      }
    },
    async release({ token }) {
      const h = held.get(token);
      held.delete(token);
      if (!h) return reply(true, { released: false });
      try {
        if (autoExtend) {
          h.finish();
          await h.done;
        } else {
          await h.release();
        }
        return reply(true, { released: true });
      } catch (err) {
        const c = await classify5(err);
        if (c.locked) return reply(true, { released: false });
        return reply(false, { error: c.error, ...(c.unknown ? { unknown: true } : {}) });
      }
    },
    async close() {
      for (const h of held.values()) if (h.finish) h.finish();
    },
  };
}

function line4(clients, options) {
  const Redlock4 = require('redlock4');
  const version = require('redlock4/package.json').version;
  const redlock = new Redlock4(clients, { driftFactor: Number(options.drift_factor ?? 0.01),
                                          retryCount: 0, retryDelay: 0, retryJitter: 0 });
  // 4.x says nothing but "failed": node errors come as clientError events,
  // so an attempt without any was refused by the nodes (busy / not ours)
  let clientErrors = 0;
  let lastError = null;
  redlock.on('clientError', (e) => { clientErrors++; lastError = e; });
  const held = new Map();
  const failed = (err, before, definiteFields) => {
    if (clientErrors === before) return reply(false, definiteFields);
    return reply(false, { error: `${err.message} (${lastError && lastError.message})`,
                          ...(isUnknown(lastError) ? { unknown: true } : {}) });
  };
  return {
    name: 'redlock',
    version,
    caps: ['ttl', 'renew'],
    async acquire({ res, ttl_ms: ttl }) {
      const t0 = Date.now();
      const before = clientErrors;
      try {
        const lock = await redlock.lock(res, ttl);
        held.set(lock.value, lock);
        return reply(true, { token: lock.value, validity_ms: lock.expiration - t0 });
      } catch (err) {
        return failed(err, before, { busy: true });
      }
    },
    async renew({ token, ttl_ms: ttl }) {
      const lock = held.get(token);
      if (!lock) return reply(false, { error: 'unknown token' });
      const t0 = Date.now();
      const before = clientErrors;
      try {
        await lock.extend(ttl);
        return reply(true, { validity_ms: lock.expiration - t0 });
      } catch (err) {
        return failed(err, before, { error: err.message });
      }
    },
    async release({ token }) {
      const lock = held.get(token);
      held.delete(token);
      if (!lock) return reply(true, { released: false });
      const before = clientErrors;
      try {
        await lock.unlock();
        return reply(true, { released: true });
      } catch (err) {
        if (clientErrors === before) return reply(true, { released: false });
        return failed(err, before, {});
      }
    },
    async close() {},
  };
}

run(async ({ nodes, options = {}, emit }) => {
  const clients = makeClients(nodes, options);
  await waitReady(clients);
  const impl = String(options.line ?? 5) === '4' ? line4(clients, options)
                                                  : line5(clients, options, emit);
  const close = impl.close;
  impl.close = async () => {
    await close();
    await quitAll(clients);
  };
  return impl;
});
