/*
 * redis_multi.h: one script call on each of several nodes at once, for the
 * quorum implementations (redlock). All calls are written before any reply
 * is awaited and replies are collected with poll() under one deadline, so a
 * batch costs the slowest node's round trip, not the sum. Connections are
 * non-blocking hiredis contexts in struct rconn (redis_conn.h); connect and
 * handshake are part of the batch. Not here: any lock algorithm or quorum
 * arithmetic. Not thread-safe.
 */
#ifndef LS_REDIS_MULTI_H
#define LS_REDIS_MULTI_H

#include <stddef.h>
#include <stdint.h>

#include "locks/redis_conn.h"

#define RMULTI_MAX 16   /* nodes per batch */

/* One node's part of a batch. */
struct rmulti_call {
    /* in */
    int skip;               /* send nothing to this node (outcome stays LOCK_FAIL, EVE_NONE) */
    int script;             /* index into the rconn's scripts */
    int nargs;              /* numkeys, keys..., argv... (as rconn_eval; at most RCONN_MAX_ARGS - 2) */
    const char *const *args;    /* borrowed for the call */
    const size_t *lens;
    /* out */
    int outcome;            /* LOCK_OK (reply set), LOCK_FAIL (nothing ran), LOCK_UNKNOWN */
    int err_kind;           /* enum ev_err when not LOCK_OK */
    redisReply *reply;      /* LOCK_OK only; caller frees with freeReplyObject (may be an
                             * error reply other than NOSCRIPT) */
};

/* Run calls[i] on conns[i] for every i < n (n <= RMULTI_MAX) concurrently,
 * all bounded by one deadline timeout_ns from now. A node without a
 * connection is connected first (non-blocking; refused or not connected in
 * time = LOCK_FAIL/EVE_CONN, nothing sent). An idle connection the node has
 * closed since the last batch (restart, kill) is noticed before sending
 * and replaced. EVALSHA when the sha is known, EVAL otherwise or after a
 * NOSCRIPT reply (nothing ran; retried within the same deadline).
 * LOCK_UNKNOWN when the call was written but no reply came in time or the
 * connection broke after writing (EVE_TIMEOUT / EVE_CONN / EVE_PROTO); the
 * connection is dropped then, so a late reply cannot be mistaken for the
 * next call's. The conns must only be used through this function (their
 * contexts are non-blocking). */
void rmulti_eval(struct rconn *conns, struct rmulti_call *calls, int n, int64_t timeout_ns);

#endif
