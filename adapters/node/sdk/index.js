'use strict';
// @lockstorm/adapter: the Node.js SDK for lockstorm adapters. A lockstorm
// adapter puts one lock library under lockstorm's workers through the
// adapter protocol (docs/protocol.md, version 1 and its extensions `clock`,
// `stall`, `renewed`). This module speaks the protocol; its user writes the
// lock: serve({hello, acquire, release, extend}) with promises.
// Two layers: serve() (the lock API: return values and errors are mapped
// to protocol outcomes, per-request timeouts, logging to stderr) and run()
// (the protocol loop; ops return raw protocol replies), which serve() is
// built on and adapters/node/lib/protocol.js re-exports.
// No dependencies beyond Node.js (>= 18).
const path = require('node:path');
const fs = require('node:fs');
const readline = require('node:readline');
const { inspect } = require('node:util');
const { performance } = require('node:perf_hooks');

// ---- missing npm packages: one line that says what to do ----------------

// The command that installs what the adapter being run needs: the bundled
// adapters (adapters/node/*.js of a lockstorm checkout) are installed by
// scripts/install-adapters.sh; anyone else's by npm install in the
// adapter's package directory.
function installHint() {
  const main = (require.main && require.main.filename) || process.argv[1] || '';
  const dir = path.dirname(main);
  if (fs.existsSync(path.join(dir, '..', '..', 'scripts', 'install-adapters.sh'))) {
    return 'run scripts/install-adapters.sh';
  }
  for (let d = dir, i = 0; i < 20; i++, d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return `run npm install in ${d}`;
    if (path.dirname(d) === d) break;
  }
  return `run npm install in ${dir}`;
}

// A package the adapter requires is not installed: the stack first (for
// whoever reads the stderr file), then the line the harness quotes (the
// last line naming an error: locks/adapter.c), then exit 1 as Node would.
// Any other uncaught error: printed and exit 1, as Node's default does.
process.on('uncaughtException', (err) => {
  const text = inspect(err);
  if (err && err.code === 'MODULE_NOT_FOUND') {
    const m = /Cannot find module '([^']+)'/.exec(String(err.message));
    const name = m ? m[1] : 'a package';
    process.stderr.write(`${text}\nlockstorm adapter error: npm package '${name}' is not ` +
                         `installed: ${installHint()}\n`);
  } else {
    process.stderr.write(`Uncaught ${text}\n`);
  }
  process.exit(1);
});

// ---- output ----------------------------------------------------------------

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// Diagnostics go to stderr (kept in the run directory as
// adapters/worker-NNN.stderr), never to stdout, which carries the protocol.
let workerNo = null;
function log(...args) {
  const who = workerNo === null ? 'adapter' : `adapter worker ${workerNo}`;
  const msg = args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ');
  process.stderr.write(`${new Date().toISOString()} ${who}: ${msg}\n`);
}
const debug = process.env.LOCKSTORM_ADAPTER_DEBUG === '1';

// the extensions the harness listed in its hello (docs/protocol.md)
let harnessExtensions = new Set();

// Events (lines without an id) the user's code may send at any time.
const emit = {
  // the library says the grant is gone (a failed automatic extension)
  lost: (res, token) => write({ event: 'lost', res, token: String(token) }),
  // free text for the worker's log
  log: (msg) => write({ event: 'log', msg: String(msg) }),
  // the library extended the grant by itself (extension `renewed`): sent
  // only when the harness's hello lists it, so an older harness never
  // sees an event it does not know. validity_ms counts from this write;
  // host_mono_ms says when it was, on the host's CLOCK_MONOTONIC (libuv's
  // hrtime), so a line that waits in the pipe does not lengthen the lease
  // the harness records (protocol revision 3)
  renewed: (res, token, validityMs) => {
    if (harnessExtensions.has('renewed')) {
      const hostMonoMs = Number(process.hrtime.bigint()) / 1e6;
      write({ event: 'renewed', res, token: String(token), validity_ms: validityMs,
        host_mono_ms: hostMonoMs });
    }
  },
};

// ---- extensions served for every adapter -----------------------------------

// Block this thread (the event loop) for ms milliseconds; returns how long
// it really blocked. Atomics.wait sleeps without yielding to the loop; a
// spurious early return (none is expected: nobody notifies) waits again.
const stallCell = new Int32Array(new SharedArrayBuffer(4));
function stallLoop(ms) {
  const t0 = performance.now();
  const end = t0 + ms;
  for (let left = ms; left > 0; left = end - performance.now()) {
    Atomics.wait(stallCell, 0, 0, left);
  }
  return performance.now() - t0;
}

// "127.0.0.1:41001" -> { host, port }
function parseNode(s) {
  const i = String(s).lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
}

// The `clock` extension: the wall clock as the library reads it
// (Date.now(), which the clock shim moves under client clock faults) and
// the monotonic clock (performance.now(), which it does not).
function clockReply() {
  return { ok: true, wall_ms: Date.now(), mono_ms: performance.now() };
}

// ---- run(): the protocol loop ------------------------------------------------

// Contract: reads the harness's hello, calls setup(hello) (hello.nodes as
// {host, port}, hello.emit) to build the adapter
//   { name, version, caps: [...], acquire(req), renew(req), release(req), close() }
// whose ops return the reply fields (without id) or throw; a thrown error
// becomes {ok:false, error, unknown:true} unless it carries err.definite.
// Answers the hello (caps + `clock` when the hello lists it), then serves
// requests concurrently (a request the harness gave up on must not delay
// the next one) until bye or the end of stdin. `stall` is served for an
// adapter that lists it in caps. Never returns an error: a failed setup
// exits 1 with the reason on stderr.
function run(setup) {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let adapter = null;
  let closing = false;

  async function shutdown(code) {
    if (closing) return;
    closing = true;
    const done = () => process.exit(code);
    setTimeout(done, 500).unref(); // never outstay the harness's 1 s
    try {
      if (adapter && adapter.close) await adapter.close();
    } catch (e) {
      // the process ends either way
    }
    done();
  }

  async function serveOne(msg) {
    const id = msg.id;
    if (msg.op === 'clock') {
      write({ id, ...clockReply() });
      return;
    }
    if (msg.op === 'stall' && (adapter.caps || []).includes('stall')) {
      const ms = Number(msg.ms);
      if (!Number.isFinite(ms) || ms < 0 || ms > 600000) {
        write({ id, ok: false, error: `stall: 'ms' must be 0..600000, got ${msg.ms}` });
        return;
      }
      // synchronous: nothing else of this process runs until the reply is written
      write({ id, ok: true, stalled_ms: Math.round(stallLoop(ms) * 1000) / 1000 });
      return;
    }
    const op = adapter[msg.op];
    if (!['acquire', 'renew', 'release'].includes(msg.op) || typeof op !== 'function') {
      write({ id, ok: false, error: `unknown op '${msg.op}'` });
      return;
    }
    try {
      const reply = await op.call(adapter, msg);
      if (debug) log(`${msg.op} ${JSON.stringify(msg)} -> ${JSON.stringify(reply)}`);
      write({ id, ...reply });
    } catch (err) {
      const reply = { id, ok: false, error: String((err && err.message) || err) };
      if (!(err && err.definite)) reply.unknown = true;
      if (debug) log(`${msg.op} ${JSON.stringify(msg)} threw: ${reply.error}`);
      write(reply);
    }
  }

  rl.on('line', async (line) => {
    if (!line.trim()) return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      emit.log(`ignored a line that is not JSON: ${line.slice(0, 80)}`);
      return;
    }
    if (msg === null || typeof msg !== 'object') {
      emit.log('ignored a line that is not a JSON object');
      return;
    }
    if (msg.op === 'bye') return shutdown(0);
    if (msg.op === 'hello') {
      if (adapter) return emit.log('ignored a second hello');
      if (Array.isArray(msg.extensions)) harnessExtensions = new Set(msg.extensions.map(String));
      if (typeof msg.worker === 'number') workerNo = msg.worker;
      try {
        adapter = await setup({ ...msg, nodes: (msg.nodes || []).map(parseNode), emit });
        const exts = Array.isArray(msg.extensions) ? msg.extensions : [];
        const caps = [...adapter.caps, ...(exts.includes('clock') ? ['clock'] : [])];
        write({ op: 'hello', protocol: 1, name: adapter.name, version: adapter.version, caps });
      } catch (err) {
        process.stderr.write(`adapter setup failed: ${(err && err.stack) || err}\n`);
        process.exit(1);
      }
      return;
    }
    if (typeof msg.id !== 'number') return emit.log('ignored a request without an integer id');
    if (!adapter) {
      write({ id: msg.id, ok: false, error: 'no hello yet' });
      return;
    }
    serveOne(msg);
  });
  rl.on('close', () => shutdown(0));
}

// An error that means "definitely nothing happened" (nothing was granted
// or changed): a failed reply without `unknown`.
function definite(message) {
  const e = new Error(message);
  e.definite = true;
  return e;
}

// ---- serve(): the lock API ---------------------------------------------------

// acquire's answer "someone else holds it" ({ok:false, busy:true}).
const BUSY = Object.freeze({ busy: true });

// release: thrown or returned, "the lock was no longer ours"
// ({ok:true, released:false}).
class NotOwner extends Error {
  constructor(message = 'not the owner') {
    super(message);
    this.name = 'NotOwner';
    this.notOwner = true;
    this.definite = true;
  }
}
const notOwner = (message) => new NotOwner(message);

const isRaw = (r) => r !== null && typeof r === 'object' && typeof r.ok === 'boolean';

// The user's return values as protocol replies (docs/protocol.md "The SDKs").
// An object with a boolean `ok` is a raw reply, sent as it is.
function acquireReply(r, req) {
  if (isRaw(r)) return r;
  if (r === BUSY || r === false || r === null) return { ok: false, busy: true };
  if (typeof r === 'string' || typeof r === 'number') {
    return { ok: true, token: String(r), validity_ms: req.ttl_ms };
  }
  if (r && typeof r === 'object' && r.token !== undefined && r.token !== null) {
    return { ok: true, validity_ms: req.ttl_ms, ...r, token: String(r.token) };
  }
  // a library that answers `true` on success: granted, under a token of ours
  if (r === true) return { ok: true, token: `sdk-${++madeUpTokens}`, validity_ms: req.ttl_ms };
  // anything else: the library was called and may hold the lock now, so
  // the outcome is unknown (never "definitely not granted")
  throw new Error(`acquire returned ${r === undefined ? 'nothing' : inspect(r)}: return a token ` +
                  'string, {token, fence, validity_ms}, true, or BUSY (adapter bug; outcome unknown)');
}
let madeUpTokens = 0;

function extendReply(r, req) {
  if (isRaw(r)) return r;
  if (r === false || r === null) return { ok: false, error: 'lock lost' };
  if (r === undefined || r === true) return { ok: true, validity_ms: req.ttl_ms };
  if (typeof r === 'number') return { ok: true, validity_ms: r };
  if (typeof r === 'object') return { ok: true, validity_ms: req.ttl_ms, ...r };
  throw definite(`extend returned ${inspect(r)}: return true, false or {validity_ms} (adapter bug)`);
}

function releaseReply(r) {
  if (isRaw(r)) return r;
  if (r instanceof NotOwner) return { ok: true, released: false };
  return { ok: true, released: r !== false && r !== null };
}

// Contract: spec = { name, version, hello(h), acquire(req), release(req),
// extend(req), close(), caps, fencing, autoRenew, stall, timeoutMs,
// definite(err) }; every key optional but acquire and release (which may
// also come from the object hello returns: its keys override spec's).
// Serves the protocol until bye (run() above). Each op's promise is raced
// against timeoutMs (default 1500, under the harness's 2 s request
// timeout; 0: none): past it the reply is unknown. A thrown error is an
// unknown outcome unless err.definite or spec.definite(err) says nothing
// happened; NotOwner from release is released:false.
function serve(spec) {
  if (!spec || typeof spec !== 'object') throw new TypeError('serve({acquire, release, ...}) needs an object');
  run(async (hello) => {
    let user = { ...spec };
    if (typeof spec.hello === 'function') {
      const more = await spec.hello(hello);
      if (more && typeof more === 'object') user = { ...user, ...more };
    }
    const extend = user.extend || user.renew;
    for (const k of ['acquire', 'release']) {
      if (typeof user[k] !== 'function') throw new TypeError(`serve: '${k}' must be a function`);
    }
    const timeoutMs = user.timeoutMs === undefined ? 1500 : Number(user.timeoutMs);
    const isDefinite = (err) => Boolean(err && (err.definite ||
                                               (user.definite && user.definite(err))));

    // the user's op, bounded in time, errors mapped to outcomes
    function wrap(name, fn, toReply) {
      return async (req) => {
        let timer = null;
        let late = false;
        const call = Promise.resolve().then(() => fn(req));
        const bounded = timeoutMs > 0
          ? Promise.race([call, new Promise((resolve) => {
            timer = setTimeout(() => { late = true; resolve(); }, timeoutMs);
          })])
          : call;
        try {
          const r = await bounded;
          if (late) {
            log(`${name}: no answer within ${timeoutMs} ms (reported unknown)`);
            call.then((v) => log(`${name} ${req.res} answered after the ${timeoutMs} ms timeout: ` +
                                 `${inspect(v)} (reported unknown)`),
                      (e) => log(`${name} ${req.res} failed after the ${timeoutMs} ms timeout: ` +
                                 `${(e && e.message) || e}`));
            return { ok: false, error: `${name}: no answer within ${timeoutMs} ms`, unknown: true };
          }
          return toReply(r, req);
        } catch (err) {
          if (name === 'release' && err instanceof NotOwner) return { ok: true, released: false };
          const reply = { ok: false, error: String((err && err.message) || err) };
          if (!isDefinite(err)) reply.unknown = true;
          if (debug || !reply.unknown) return reply;
          log(`${name} ${req.res}: ${reply.error} (unknown outcome)`);
          return reply;
        } finally {
          clearTimeout(timer);
        }
      };
    }

    const autoRenew = Boolean(user.autoRenew);
    const caps = Array.isArray(user.caps) ? [...user.caps] : [
      ...(user.ttl === false ? [] : ['ttl']),
      ...(extend ? ['renew'] : []),
      ...(user.fencing ? ['fencing'] : []),
      ...(autoRenew ? ['auto_renew', 'renewed'] : []),
      ...(user.stall === false ? [] : ['stall']),
    ];
    return {
      name: String(user.name || path.basename(process.argv[1] || 'adapter')),
      version: String(user.version || '0'),
      caps,
      acquire: wrap('acquire', user.acquire, acquireReply),
      release: wrap('release', user.release, releaseReply),
      ...(extend ? { renew: wrap('extend', extend, extendReply) } : {}),
      close: user.close,
    };
  });
}

// ---- record mode (docs/protocol.md "record", revision 4) -------------------
//
// record({hello, loop, close, name, version, ttl, fencing}) runs the user's
// own worker code as a lockstorm worker (workload `lock.impl: record`):
// after the harness's hello, hello(h) sets up (h.record.res: the keys to
// lock, h.record.ttl_ms, h.nodes, h.options); at `start`, loop(rec) runs
// the user's loop until rec.stopping. The loop wraps its own lock calls:
//   const g = await rec.acquire(key, () => lib.lock(key, ttl));  // null: not granted
//   await rec.critical(key, async () => { ... the work ... });
//   await rec.release(key, () => lib.unlock(g));
// and each wrapper reports its steps, stamped with the host's monotonic
// clock, so the harness records them as its own worker would. acquire's fn
// returns what serve's acquire returns (a token, {token, fence,
// validity_ms}, BUSY/false/null, or any object: its token is made up);
// release's fn returns true/nothing, or false / throws NotOwner when the
// lock was no longer the program's; a thrown error is an unknown outcome
// unless definite.
const monoMs = () => Number(process.hrtime.bigint()) / 1e6;

function recordEvent(what, fields) {
  write({ event: 'record', what, ...fields, host_mono_ms: monoMs() });
}

function makeRecorder(hello, isDefinite) {
  const keys = (hello.record && Array.isArray(hello.record.res)) ? hello.record.res.map(String) : [];
  let serial = 0;
  const tokens = new Map(); // key -> the program's token of its current grant
  const tokenOf = (r) => {
    if (typeof r === 'string' || typeof r === 'number') return String(r);
    if (r && typeof r === 'object' && r.token !== undefined) return String(r.token);
    serial += 1;
    return `p${hello.worker}.${serial}`;
  };
  const failure = (err) => ({
    unknown: !isDefinite(err), error: String((err && err.message) || err),
  });
  const rec = {
    stopping: false,
    keys,
    ttlMs: hello.record ? Number(hello.record.ttl_ms) : undefined,
    // a key drawn uniformly (the workload's `workers.pick` is not applied:
    // the program chooses its resources)
    pick: () => keys[Math.floor(Math.random() * keys.length)],
    async acquire(res, fn) {
      recordEvent('acquire', { res });
      let r;
      try {
        r = await fn();
      } catch (err) {
        recordEvent('acquire_failed', { res, ...failure(err) });
        return null;
      }
      if (r === null || r === undefined || r === false || r === BUSY) {
        recordEvent('busy', { res });
        return null;
      }
      const token = tokenOf(r);
      tokens.set(res, token);
      const f = { res, token };
      if (r && typeof r === 'object' && r.fence !== undefined && r.fence !== null) f.fence = r.fence;
      if (r && typeof r === 'object' && typeof r.validity_ms === 'number') f.validity_ms = r.validity_ms;
      recordEvent('acquired', f);
      return r;
    },
    async critical(res, fn) {
      recordEvent('enter', { res, token: tokens.get(res) });
      try {
        return await fn();
      } finally {
        recordEvent('exit', { res, token: tokens.get(res) });
      }
    },
    async release(res, fn) {
      const token = tokens.get(res);
      tokens.delete(res);
      recordEvent('release', { res, token });
      let r;
      try {
        r = await fn();
      } catch (err) {
        if (err instanceof NotOwner) {
          recordEvent('released', { res, token, released: false });
          return false;
        }
        recordEvent('release_failed', { res, token, ...failure(err) });
        return false;
      }
      const released = r !== false;
      recordEvent('released', { res, token, released });
      return released;
    },
    // the library's own news about the current grant of res
    lost: (res) => emit.lost(res, tokens.get(res)),
    renewed: (res, validityMs) => emit.renewed(res, tokens.get(res), validityMs),
  };
  return rec;
}

function record(spec) {
  if (!spec || typeof spec.loop !== 'function') throw new TypeError('record({loop, ...}) needs a loop function');
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let rec = null;
  let started = false;
  let closing = false;
  let user = { ...spec };
  const isDefinite = (err) => Boolean(err && (err.definite || (user.definite && user.definite(err))));

  async function shutdown(code) {
    if (closing) return;
    closing = true;
    const done = () => process.exit(code);
    setTimeout(done, 500).unref();
    try {
      if (user.close) await user.close();
    } catch (e) {
      // the process ends either way
    }
    done();
  }

  async function runLoop() {
    try {
      await user.loop(rec);
    } catch (err) {
      log(`record: the loop threw: ${(err && err.stack) || err}`);
      process.exitCode = 1;
    }
    recordEvent('stopped', {});
  }

  rl.on('line', async (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (e) {
      return;
    }
    if (msg === null || typeof msg !== 'object') return;
    if (msg.op === 'bye') return shutdown(0);
    if (msg.op === 'hello') {
      if (rec) return;
      if (Array.isArray(msg.extensions)) harnessExtensions = new Set(msg.extensions.map(String));
      if (typeof msg.worker === 'number') workerNo = msg.worker;
      if (!harnessExtensions.has('record')) {
        process.stderr.write('record: this lockstorm does not offer record mode ' +
                             '(its hello lists no `record` extension)\n');
        process.exit(1);
      }
      try {
        const h = { ...msg, nodes: (msg.nodes || []).map(parseNode), emit };
        if (typeof spec.hello === 'function') {
          const more = await spec.hello(h);
          if (more && typeof more === 'object') user = { ...user, ...more };
        }
        rec = makeRecorder(msg, isDefinite);
        const caps = ['record', ...(user.ttl === false ? [] : ['ttl']),
          ...(user.fencing ? ['fencing'] : []), ...(user.autoRenew ? ['auto_renew', 'renewed'] : [])];
        write({ op: 'hello', protocol: 1, name: String(user.name || path.basename(process.argv[1] || 'program')),
          version: String(user.version || '0'), caps });
      } catch (err) {
        process.stderr.write(`record: setup failed: ${(err && err.stack) || err}\n`);
        process.exit(1);
      }
      return;
    }
    if (msg.op === 'start' && rec && !started) {
      started = true;
      runLoop();
      return;
    }
    if (msg.op === 'stop' && rec) rec.stopping = true;
  });
  rl.on('close', () => {
    if (rec) rec.stopping = true;
    shutdown(0);
  });
}

module.exports = {
  serve, run, record, emit, log, definite, BUSY, NotOwner, notOwner, parseNode, stallLoop,
  clockReply,
};
