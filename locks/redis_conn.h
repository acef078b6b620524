/*
 * redis_conn.h: the hiredis plumbing every Redis-backed lock shares. A
 * struct rconn is one blocking connection to one node with a connect and a
 * per-command timeout, connected lazily: any I/O error or timeout frees the
 * hiredis context and the next call reconnects. Calls answer with the lock
 * outcome vocabulary (lock.h): LOCK_OK with a reply in hand, LOCK_FAIL when
 * nothing was sent, LOCK_UNKNOWN when the command may have run. Scripts are
 * called by EVALSHA with a transparent EVAL fallback on NOSCRIPT.
 *
 * Also here: struct rsingle, the context of the single-node implementations
 * (redis-single and the negative controls), and their shared options.
 * Not here: any lock algorithm. Not thread-safe: one rconn per thread.
 * Writes to a closed socket raise SIGPIPE; processes using this ignore it.
 */
#ifndef LS_REDIS_CONN_H
#define LS_REDIS_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "locks/lock.h"
#include "locks/replset.h"
#include "util/err.h"

#define RCONN_MAX_SCRIPTS 4
#define RCONN_MAX_ARGS 16
#define RCONN_DEFAULT_TIMEOUT_NS (200 * 1000000LL)
/* A connection that answered less than this ago is used without the
 * staleness poll (rconn_connect): a hammering worker's next command follows
 * its last reply within microseconds, and a node that closes in that gap
 * could as well close between the poll and the write. */
#define RCONN_FRESH_NS (1000000LL)
/* Replies a connection may still owe for calls that already ended (timed
 * out with their bytes on the wire, locks/redis_multi.c); past this many
 * the connection is dropped instead of kept. */
#define RCONN_LATE_MAX 32

/* Keys: the lock of resource N is lock_key(cfg, N, 0) ("lockstorm:r<N>"
 * with the default lock.key_prefix and no names), its fence counter
 * lock_key(cfg, N, 1) ("lockstorm:fence:r<N>"). */
#define RCONN_KEY_MAX LOCK_KEY_MAX

/* A Lua script; tables of these are static const in each implementation. */
struct rscript {
    const char *name;   /* for messages */
    const char *body;
};

struct rconn {
    redisContext *c;                /* owned; NULL while disconnected */
    char host[64];
    int port;
    char password[LS_PASSWORD_MAX]; /* AUTH first on every connect; "" = none */
    struct timeval tv;              /* connect and per-command timeout */
    char client_name[32];           /* CLIENT SETNAME on connect; "" = none */
    const struct rscript *scripts;  /* borrowed (static) */
    int nscripts;
    char sha[RCONN_MAX_SCRIPTS][41]; /* "" until SCRIPT LOAD answered */
    char errstr[128];               /* the last failure, for messages */
    uint64_t connects;              /* successful connects so far */
    int64_t last_reply_ns;          /* CLOCK_MONOTONIC of the last reply (rconn_connect) */
    signed char late[RCONN_LATE_MAX]; /* redis_multi.c: what each reply still owed
                                     * answers, oldest first (its Q_* codes) */
    int nlate;                      /* how many; 0 after every close */
    struct replset_resolver *follow; /* replicated set: resolve the primary on each
                                     * connect (borrowed), or NULL: the fixed host:port */
};

/* Prepare rc for node (no I/O). timeout_ns <= 0 means the default 200ms.
 * client_name may be NULL. scripts (at most RCONN_MAX_SCRIPTS) are borrowed
 * for rc's life. Returns 0 or LS_EUSAGE with err set. */
int rconn_init(struct rconn *rc, const struct lock_node *node, int64_t timeout_ns,
               const char *client_name, const struct rscript *scripts, int nscripts,
               struct ls_err *err);
/* Drop the connection (the next call reconnects). Accepts a zeroed rc. */
void rconn_close(struct rconn *rc);
/* Whether rc's idle connection is no use any more: the node closed or
 * reset it (a restart, a timeout, a proxy reset) or sent bytes nobody asked
 * for. One poll(2) without waiting; 0 when not connected. Checked before
 * each command, so a restarted node costs a reconnect, not an unknown
 * outcome (locks/redis_multi.c checks its connections the same way). */
int rconn_stale(const struct rconn *rc);
/* Follow the primary of a replicated set (locks/replset.h): every connect
 * first resolves the node (host:port become that node's link), the
 * handshake adds ROLE and a node that is not a primary is refused
 * (LOCK_FAIL, EVE_NO_PRIMARY), and an error reply that says the node is no
 * longer a writable primary (READONLY, NOREPLICAS) drops the connection so
 * the next call resolves again. rs is borrowed for rc's life. */
void rconn_follow(struct rconn *rc, struct replset_resolver *rs);

/* Connect unless connected (a connection the node closed or reset while
 * idle, rconn_stale, is dropped first; one that answered within the last
 * RCONN_FRESH_NS is not polled): TCP connect with timeout,
 * TCP_NODELAY, command timeout, then one pipelined handshake (AUTH with
 * the node's password, CLIENT SETNAME, SCRIPT LOAD of every script whose
 * sha is still unknown; a refused AUTH fails the connect). Returns LOCK_OK or LOCK_FAIL
 * (*err_kind EVE_CONN for the connect, EVE_TIMEOUT/EVE_CONN for the
 * handshake; nothing of a caller's command was sent either way). */
int rconn_connect(struct rconn *rc, int *err_kind);

/* Send one command and wait for its reply. LOCK_OK: *reply is set (caller
 * frees with freeReplyObject; it may be an error reply). LOCK_FAIL: could
 * not connect, nothing sent. LOCK_UNKNOWN: the command may have reached
 * the node (send error, timeout, connection lost); the connection is
 * dropped. *err_kind is set on FAIL/UNKNOWN. */
int rconn_command(struct rconn *rc, int argc, const char **argv, const size_t *argvlen,
                  redisReply **reply, int *err_kind);

/* Run script number `script` with args = numkeys, keys..., argv... (what
 * follows the sha of EVALSHA; at most RCONN_MAX_ARGS - 2). EVALSHA when the
 * sha is known, EVAL otherwise or after a NOSCRIPT reply (nothing ran then).
 * Same outcomes and ownership as rconn_command. */
int rconn_eval(struct rconn *rc, int script, int nargs, const char **args, const size_t *lens,
               redisReply **reply, int *err_kind);

/* Decimal of v into buf; returns the length. */
size_t rconn_u64(char *buf, size_t n, uint64_t v);

/* Map a reply to an outcome when the command's own reply shapes have been
 * handled: an error reply is LOCK_FAIL/EVE_REPLY, anything else unexpected
 * LOCK_UNKNOWN/EVE_PROTO. Frees reply. */
int rconn_unexpected(struct rconn *rc, redisReply *reply, int *err_kind);

/* ---- single-node implementations (redis-single, naive-*, busted) ---- */

/* Options struct shared by the single-node implementations; each one's
 * options table lists the keys it accepts (naive-setnx-expire and
 * naive-get-set add `gap`). */
struct rlock_options {
    int64_t timeout;    /* ns: connect and per-command timeout */
    int64_t gap;        /* ns: sleep between the two halves of a non-atomic acquire */
};

extern const struct opt_def rlock_timeout_options[];  /* timeout */
extern const struct opt_def rlock_gap_options[];      /* timeout, gap */

struct rsingle {
    struct rconn conn;
    const struct lock_config *cfg; /* borrowed: the lock's (keys: lock_key) */
    int64_t ttl_ns;
    char ttl_ms[24];        /* ceil(ttl) in ms, decimal: the PX/PEXPIRE argument */
    size_t ttl_ms_len;
    int fencing;
    int64_t gap_ns;
    struct replset_resolver follow; /* replicated set (cfg->replset): conn follows it */
    int wait_replicas;      /* WAIT for this many replicas after a grant; 0 = no WAIT */
    char wait_ms[24];       /* the WAIT timeout in ms, decimal: half the command timeout */
    size_t wait_ms_len;
};

/* Common init: allocate a struct rsingle as lk->ctx (freed by
 * rsingle_destroy), resolve the timeout (options, else cfg->timeout_ns,
 * else 200ms), check the TTL when need_ttl, and try to connect to
 * cfg->nodes[0] (a node that is down now is not an error: calls reconnect).
 * Returns 0 or a negative code with err set. */
int rsingle_init(struct lock *lk, const struct rscript *scripts, int nscripts, int need_ttl,
                 struct ls_err *err);
void rsingle_destroy(struct lock *lk);

/* Scripts several implementations share. Acquire scripts take KEYS lock,
 * fence and ARGV token, ttl ms, fencing "1"/"0" and return the fence (0
 * without fencing) when granted, -1 when busy. SET ... NX answers false
 * (not nil) to Lua when the key exists. */
#define RLUA_ACQUIRE_NX_PX                                           \
    "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n" \
    "  if ARGV[3] == '1' then return redis.call('INCR', KEYS[2]) end\n"  \
    "  return 0\n"                                                  \
    "end\n"                                                         \
    "return -1\n"
/* KEYS lock; ARGV token. 1 = deleted, 0 = not ours. */
#define RLUA_COMPARE_DEL                                \
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"   \
    "  return redis.call('DEL', KEYS[1])\n"             \
    "end\n"                                            \
    "return 0\n"
/* KEYS lock; ARGV token, ttl ms. 1 = extended, 0 = not ours. */
#define RLUA_COMPARE_PEXPIRE                            \
    "if redis.call('GET', KEYS[1]) == ARGV[1] then\n"   \
    "  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\n" \
    "end\n"                                            \
    "return 0\n"

/* Run an acquire script (the RLUA_ACQUIRE_NX_PX protocol) for g. LOCK_OK
 * fills fence (when fencing) and validity_ns = ttl; -1 is LOCK_BUSY. With
 * wait_replicas, a grant is then confirmed by WAIT on the same connection:
 * one that fewer replicas acknowledged within the WAIT timeout is deleted
 * again (compare-and-delete) and answered LOCK_FAIL / EVE_NOT_REPLICATED;
 * a WAIT without a reply is LOCK_UNKNOWN (the grant may stand, unreplicated). */
int rsingle_acquire_call(struct rsingle *s, int script, struct grant *g, int *err_kind);

/* Classify the reply of a compare-and-delete / compare-and-pexpire script
 * (1 = done, 0 = not ours) and free it. */
int rsingle_owner_reply(struct rsingle *s, redisReply *reply, int *err_kind);

/* Fence of a separate INCR of the fence key: LOCK_OK with g->fence set and
 * g->has_fence = 1, else the failure outcome. */
int rsingle_incr_fence(struct rsingle *s, struct grant *g, int *err_kind);

/* Run the script's compare-and-delete/pexpire: args = key, token[, ttl]. */
int rsingle_owner_call(struct rsingle *s, int script, const struct grant *g, int with_ttl,
                       int *err_kind);

/* The lock key of g->res into buf (RCONN_KEY_MAX): lock_key of the
 * lock's config; rsingle_fence_key its fence counter's. */
size_t rsingle_key(const struct rsingle *s, const struct grant *g, char *buf);
size_t rsingle_fence_key(const struct rsingle *s, const struct grant *g, char *buf);

#endif
