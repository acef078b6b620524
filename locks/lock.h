/*
 * lock.h: the lock implementation interface. One const ops table per
 * implementation (one file each under locks/), looked up by name in a static
 * registry (lock.c). Ops tables are never written at run time; per-worker
 * state lives in struct lock (ctx). The harness keeps its own record of who
 * holds what (the event log) and never asks the lock: an implementation only
 * answers acquire/renew/release with an outcome.
 *
 * Threading: one struct lock is used by one thread at a time. A worker that
 * renews in a background thread opens a second struct lock for it (its own
 * connections).
 */
#ifndef LS_LOCK_H
#define LS_LOCK_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "util/rng.h"
#include "util/secret.h"
#include "model/options.h"
#include "model/evlog.h"
#include "model/node.h"

#define LOCK_OPS_VERSION 1

/* Capabilities. */
#define LOCK_CAP_TTL 0x1      /* grants expire */
#define LOCK_CAP_RENEW 0x2    /* explicit extend */
#define LOCK_CAP_FENCING 0x4  /* grants carry a fence */
#define LOCK_CAP_QUORUM 0x8   /* several nodes, majority */
#define LOCK_CAP_REPLICATED 0x10 /* runs on a replicated set: follows the primary
                                  * (lock_config.replset), honours wait_replicas */
#define LOCK_CAP_NEGATIVE 0x100 /* a deliberately broken negative control */

/* Outcome of one acquire / renew / release call. */
enum lock_outcome {
    LOCK_OK = 0,        /* granted / renewed / released */
    LOCK_BUSY = 1,      /* acquire: definitely not granted, held by someone else */
    LOCK_NOT_OWNER = 2, /* release/renew: the lock was no longer this grant's */
    LOCK_FAIL = 3,      /* definite failure: nothing changed (error reply, connect refused) */
    LOCK_UNKNOWN = 4,   /* outcome unknown: timeout or connection lost after sending */
};

struct replset_map;

/* What an implementation is given at init; borrowed for the lock's life. */
struct lock_config {
    const struct lock_node *nodes;  /* the lock cluster (through the proxy when present) */
    int nnodes;
    int worker;                     /* worker id, for tokens and client names */
    int64_t ttl_ns;
    int fencing;                    /* the workload asks for fences */
    int64_t timeout_ns;             /* per-command timeout (connect and reply) */
    const void *options;            /* impl-specific options struct, or NULL */
    uint64_t seed;                  /* for tokens and any randomness of the impl */
    const char *rundir;             /* run directory (external: adapters/), or NULL */
    uint32_t epoch;                 /* the worker's epoch (restarts), for file names */
    struct lock *primary;           /* a second instance of one worker (its renewal thread):
                                     * the first, whose state (an adapter process) an impl
                                     * may share; NULL for the first */
    const struct replset_map *replset; /* cluster.topology replicated: nodes[0..nnodes) are
                                     * the set's nodes and the impl must follow the primary
                                     * (locks/replset.h); NULL: independent nodes */
    int wait_replicas;              /* lock.wait_replicas: WAIT for this many replicas after
                                     * a grant; an unacknowledged grant is released, failed */
    const char *client_clock;       /* the worker's client clock file (clocks/worker-NNN.clock)
                                     * when the workload has client clock faults
                                     * (faults/clock.h clockfault_client), else NULL: an impl
                                     * that runs processes (external) starts them with the
                                     * clock shim reading it */
    int resources;                  /* workers.resources (record: the names in its hello) */
    int64_t duration_ns;            /* the run's duration (record: its hello) */
    const char *key_prefix;         /* lock.key_prefix: every key the lock uses starts with it;
                                     * NULL: LOCK_KEY_PREFIX (lock_key) */
    const char *const *res_names;   /* workers.resources as names, nres of them (borrowed);
                                     * NULL: resource N is "r<N>" */
    int nres;
};

/* The default lock.key_prefix: keys are "lockstorm:r0", "lockstorm:fence:r0". */
#define LOCK_KEY_PREFIX "lockstorm:"
/* Room for any key lock_key makes (a 64-character prefix, "fence:", a
 * 64-character name). */
#define LOCK_KEY_MAX 160

/* Contract: the key of resource res into buf (n bytes, NUL-terminated):
 * the prefix, "fence:" when fence, and the resource's name; returns its
 * length. Every implementation names its keys with it, so lock.key_prefix
 * and named resources reach Redis, PostgreSQL and the adapters alike. */
size_t lock_key(const struct lock_config *cfg, int res, int fence, char *buf, size_t n);

/* News an implementation learns on its own, not as the answer to a call
 * (lock_ops.wait_news). */
enum lock_news_kind {
    LOCK_NEWS_LOST = 1,             /* the grant (res, token) is gone (adapter `lost` event,
                                     * or the adapter died while holding it) */
    LOCK_NEWS_RENEWED = 2,          /* the library renewed the grant by itself (adapter
                                     * `renewed` event): validity_ns from at_ns */
};

struct lock_news {
    int kind;                       /* enum lock_news_kind */
    int res;
    char token[EVLOG_TOKEN_LEN + 1]; /* the grant's token as the worker set it */
    int64_t validity_ns;            /* LOCK_NEWS_RENEWED: the validity the library reported */
    int64_t at_ns;                  /* LOCK_NEWS_RENEWED: CLOCK_MONOTONIC the validity counts
                                     * from (written by the adapter, else read here) */
};

/* What lock_ops.stall returns. */
enum lock_stall_rc {
    LOCK_STALLED = 0,               /* the library's thread was blocked (*stalled_ns) */
    LOCK_STALL_UNSUPPORTED = 1,     /* the implementation (adapter) offers no stall */
    LOCK_STALL_FAILED = 2,          /* asked, no stall: an error reply, a timeout, gone */
};

/* One grant. The worker fills res and token before acquire (the
 * implementation may replace the token); acquire fills the rest. */
struct grant {
    int res;                        /* resource index; its key is lock_key(cfg, res) */
    char token[EVLOG_TOKEN_LEN + 1];
    int has_fence;
    uint64_t fence;
    int64_t validity_ns;            /* from when acquire/renew was invoked; ignored with no_lease */
    int no_lease;                   /* the grant never expires (no TTL) */
};

/* Record mode (lock_ops.record_next, docs/protocol.md extension `record`):
 * what the user's own program reported doing, one event at a time. */
enum lock_rec_what {
    LREC_ACQUIRE = 1,       /* it is about to ask its lock library for res */
    LREC_ACQUIRED,          /* granted: token, validity, fence */
    LREC_BUSY,              /* definitely not granted: held by someone else */
    LREC_ACQUIRE_FAILED,    /* not granted (unknown: maybe granted) */
    LREC_ENTER,             /* its critical section begins */
    LREC_EXIT,              /* its critical section ends */
    LREC_RELEASE,           /* it is about to release */
    LREC_RELEASED,          /* released (released 0: it was no longer its lock) */
    LREC_RELEASE_FAILED,    /* the release failed (unknown: maybe released) */
    LREC_STOPPED,           /* it ended its loop after stop (or closed its stdout) */
    LREC_LOST,              /* a `lost` event: the grant named by token is gone */
    LREC_RENEWED,           /* a `renewed` event: the library extended the grant */
    LREC_GONE,              /* the program exited unexpectedly (it is restarted) */
};

#define LOCK_REC_TOKEN_MAX 128      /* program tokens compare by their first 127 bytes */

struct lock_rec {
    int what;                       /* enum lock_rec_what */
    int res;                        /* resource index, -1 when the event names none */
    int has_token;
    char token[LOCK_REC_TOKEN_MAX]; /* the program's token (not the worker's) */
    int has_validity;
    int64_t validity_ns;
    int has_fence;
    uint64_t fence;
    int no_lease;                   /* LREC_ACQUIRED: the program's hello lists no `ttl`:
                                     * its grants never expire by themselves */
    int released;                   /* LREC_RELEASED */
    int unknown;                    /* LREC_ACQUIRE_FAILED, LREC_RELEASE_FAILED */
    int err_kind;                   /* enum ev_err for the failures */
    int64_t at_ns;                  /* CLOCK_MONOTONIC of the event (docs/protocol.md
                                     * `record`: its stamp, or when it was read); never
                                     * before the previous event's */
};

/* lock_ops.record_ctl */
enum lock_rec_ctl {
    LOCK_REC_START = 1,             /* the run's go: {"op":"start"} */
    LOCK_REC_STOP = 2,              /* the run's deadline: {"op":"stop"} */
};

struct lock;

struct lock_ops {
    int version;                    /* LOCK_OPS_VERSION */
    const char *name;
    const char *model;              /* one line: what it models (and the bug, for negative controls) */
    unsigned caps;                  /* LOCK_CAP_* */
    const struct opt_def *options;  /* impl-specific `lock.options` keys, or NULL */
    size_t options_size;            /* size of the struct those options fill */

    /* Connect/prepare. On failure returns a negative code with err set; the
     * caller still calls destroy. */
    int (*init)(struct lock *lk, const struct lock_config *cfg, struct ls_err *err);
    void (*destroy)(struct lock *lk);
    /* One attempt (the worker applies the retry policy). Returns enum
     * lock_outcome; on LOCK_FAIL/LOCK_UNKNOWN sets *err_kind (enum ev_err). */
    int (*acquire)(struct lock *lk, struct grant *g, int *err_kind);
    /* Extend g by ttl. LOCK_OK fills g->validity_ns. NULL when not offered. */
    int (*renew)(struct lock *lk, struct grant *g, int *err_kind);
    /* LOCK_OK (released), LOCK_NOT_OWNER, LOCK_FAIL, LOCK_UNKNOWN. */
    int (*release)(struct lock *lk, const struct grant *g, int *err_kind);
    /* Cross-key checks of the options that an options table cannot express,
     * run by the workload loader before anything starts (init repeats them).
     * cfg has nnodes, ttl_ns, fencing and options (never NULL) set; nodes is
     * NULL. Returns 0, or -1 with a one-line reason in why. NULL: none. */
    int (*validate)(const struct lock_config *cfg, char *why, size_t n);
    /* Hooks for the OPT_CUSTOM entries of options (parse, echo, reference
     * type), handed to the options machinery with the table. NULL: none. */
    const struct opt_hooks *option_hooks;
    /* Sleep until the absolute CLOCK_MONOTONIC time until_ns, returning
     * early with 1 and *news filled as soon as the implementation learns
     * something on its own (see struct lock_news); 0 at until_ns or when a
     * signal interrupted the wait. The worker calls it for the sleep of a
     * hold and ignores news about other grants than the held one. May run
     * while another thread uses a lock instance opened with primary = lk.
     * NULL: the implementation never learns anything between calls. */
    int (*wait_news)(struct lock *lk, int64_t until_ns, struct lock_news *news);
    /* Block the thread that runs the lock library (an adapter's event loop,
     * docs/protocol.md extension `stall`) for ns, synchronously, and return
     * once it is free again: enum lock_stall_rc, *stalled_ns how long it
     * was blocked (LOCK_STALLED), why says what happened otherwise (one
     * line). NULL: the implementation has no such thread to block. */
    int (*stall)(struct lock *lk, int64_t ns, int64_t *stalled_ns, char *why, size_t n);
    /* Record mode: the implementation runs the user's own program, which
     * locks by itself and reports what it did (locks/record.c). The worker
     * calls record_ctl(LOCK_REC_START) at go, then record_next until the
     * deadline, record_ctl(LOCK_REC_STOP), and record_next until
     * LREC_STOPPED or its grace ends (when the stop fails, the program
     * being gone, only until what is queued is read); never
     * acquire/renew/release.
     * record_ctl returns 0, or -1 with why (one line). record_next waits
     * until the absolute CLOCK_MONOTONIC until_ns: 1 with *rec filled, 0 at
     * until_ns or on a signal. NULL (both) for every other implementation. */
    int (*record_ctl)(struct lock *lk, int ctl, char *why, size_t n);
    int (*record_next)(struct lock *lk, int64_t until_ns, struct lock_rec *rec);
};

struct lock {
    const struct lock_ops *ops;
    const struct lock_config *cfg;
    void *ctx;                      /* the implementation's state */
};

/* Registry. */
const struct lock_ops *lock_find(const char *name);
/* All implementations, NULL-terminated. */
const struct lock_ops *const *lock_all(void);
/* "redis-single, redlock, ..." for error messages. */
void lock_names(char *buf, size_t n);
/* `lockstorm list locks`. */
void lock_print_list(FILE *out);

/* Open/close a lock instance: lock_open calls ops->init; lock_close calls
 * ops->destroy (accepts NULL and half-initialised locks). */
int lock_open(struct lock *lk, const struct lock_ops *ops, const struct lock_config *cfg,
              struct ls_err *err);
void lock_close(struct lock *lk);

#endif
