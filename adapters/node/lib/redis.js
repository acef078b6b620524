'use strict';
// lib/redis.js: ioredis clients the way every adapter here needs them. A
// lock under chaos must never wait forever: every command has a timeout
// (commandTimeout), commands are refused at once while disconnected
// (enableOfflineQueue: false) instead of queueing until a partition heals,
// and a command is never retried on another connection behind our back
// (maxRetriesPerRequest: 0). Also here: how an ioredis error maps to the
// protocol's outcome vocabulary.
const Redis = require('ioredis');

function makeClients(nodes, options = {}) {
  const commandTimeout = options.command_timeout_ms ?? 500;
  return nodes.map((n) => {
    const c = new Redis({
      host: n.host,
      port: n.port,
      commandTimeout,
      connectTimeout: options.connect_timeout_ms ?? 1000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(50 * times, 500),
      lazyConnect: false,
    });
    c.on('error', () => {}); // reconnects by itself; errors reach the commands
    return c;
  });
}

// Wait (bounded) until every client is ready, so the first request does not
// fail on a connection still being made.
async function waitReady(clients, ms = 5000) {
  await Promise.all(clients.map((c) => new Promise((resolve) => {
    if (c.status === 'ready') return resolve();
    const t = setTimeout(resolve, ms);
    c.once('ready', () => { clearTimeout(t); resolve(); });
  })));
}

// Did the command possibly run? A timeout or a connection lost after the
// write: unknown. Refused before sending (not connected, offline queue
// off) or a Redis error reply: definitely not run.
function isUnknown(err) {
  if (err && err.name === 'ReplyError') return false;
  const m = String((err && err.message) || err);
  return !/Stream isn't writeable|enableOfflineQueue|ECONNREFUSED/.test(m);
}

function errorReply(err) {
  const reply = { ok: false, error: String((err && err.message) || err) };
  if (isUnknown(err)) reply.unknown = true;
  return reply;
}

async function quitAll(clients) {
  await Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect())));
}

module.exports = { makeClients, waitReady, isUnknown, errorReply, quitAll };
