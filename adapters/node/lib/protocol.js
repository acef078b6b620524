'use strict';
// lib/protocol.js: the lockstorm adapter protocol (docs/protocol.md,
// version 1) for Node.js adapters. run(setup) reads the harness's hello,
// calls setup(hello) to build the adapter, answers the hello, then serves
// requests (concurrently: a request the harness gave up on must not delay
// the next one) until bye or the end of stdin. setup returns:
//   { name, version, caps: [...], acquire(req), renew(req), release(req), close() }
// where each op returns the reply fields (without id) or throws; a thrown
// error becomes {ok:false, error, unknown:true} unless it carries
// err.definite = true (nothing was granted or changed).
// Events: hello.emit.lost(res, token), hello.emit.log(msg), and
// hello.emit.renewed(res, token, validity_ms) for a renewal the library made
// by itself (extension `renewed`: list 'renewed' in caps; sent only when
// the harness's hello lists 'renewed' in its extensions, so an older
// harness never sees an event it does not know).
// Extension `stall` is served here for every adapter that lists 'stall' in
// its caps: {"op":"stall","ms":N} blocks the event loop for N ms
// synchronously (Atomics.wait on a SharedArrayBuffer: no timer, no I/O
// callback runs meanwhile) and answers with the measured stalled_ms.
// Extension `clock` is implemented here for every adapter (the runtime's
// clock; listed in caps when the harness's hello lists it).
const readline = require('node:readline');
const { performance } = require('node:perf_hooks');

function write(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// the extensions the harness listed in its hello (docs/protocol.md)
let harnessExtensions = new Set();

const emit = {
  lost: (res, token) => write({ event: 'lost', res, token }),
  log: (msg) => write({ event: 'log', msg: String(msg) }),
  // validity_ms counts from this write; host_mono_ms says when it was, on
  // the host's CLOCK_MONOTONIC (libuv's hrtime), so a line that waits in
  // the pipe does not lengthen the lease the harness records
  renewed: (res, token, validityMs) => {
    if (harnessExtensions.has('renewed')) {
      const hostMonoMs = Number(process.hrtime.bigint()) / 1e6;
      write({ event: 'renewed', res, token, validity_ms: validityMs, host_mono_ms: hostMonoMs });
    }
  },
};

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
  const i = s.lastIndexOf(':');
  return { host: s.slice(0, i), port: Number(s.slice(i + 1)) };
}

// The `clock` extension (docs/protocol.md): the wall clock as the library
// reads it (Date.now(), which the clock shim moves under client clock
// faults) and the monotonic clock (performance.now(), which it does not).
function clockReply() {
  return { ok: true, wall_ms: Date.now(), mono_ms: performance.now() };
}

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

  async function serve(msg) {
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
      write({ id, ...reply });
    } catch (err) {
      const reply = { id, ok: false, error: String((err && err.message) || err) };
      if (!(err && err.definite)) reply.unknown = true;
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
    serve(msg);
  });
  rl.on('close', () => shutdown(0));
}

// An error that means "definitely nothing happened".
function definite(message) {
  const e = new Error(message);
  e.definite = true;
  return e;
}

module.exports = { run, emit, definite, parseNode, stallLoop };
