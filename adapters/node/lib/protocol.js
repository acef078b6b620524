'use strict';
// lib/protocol.js: the protocol loop the bundled adapters were first written
// on, kept for them and for adapters written against it: a re-export of the
// SDK (adapters/node/sdk, docs/protocol.md "The SDKs"). run(setup) is the
// low-level loop (ops return raw protocol replies); new adapters use the
// SDK's serve({hello, acquire, release, extend}).
module.exports = require('../sdk');
