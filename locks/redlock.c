/*
 * redlock.c: Redlock as antirez specified it, on N independent nodes. An
 * acquire is one round of SET NX PX (a Lua script, optionally INCRing a
 * per-node fence counter) sent to every node at once (redis_multi.c) under
 * one short node_timeout: granted on a quorum while ttl - elapsed - drift is
 * positive, else a compare-and-delete round on every node. Release is that
 * round; renew a compare-and-pexpire round judged like an acquire. One
 * attempt per call: the worker applies retries and their random delay.
 */
#include "locks/redlock.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/options.h"
#include "locks/lock.h"
#include "locks/redis_conn.h"
#include "locks/redis_multi.h"
#include "util/clockctl.h"
#include "util/timeutil.h"

#define REDLOCK_DEFAULT_NODE_TIMEOUT (50 * LS_NS_PER_MS)

enum { S_ACQUIRE, S_RELEASE, S_RENEW };

static const struct rscript scripts[] = {
    {"acquire", RLUA_ACQUIRE_NX_PX},
    {"release", RLUA_COMPARE_DEL},
    {"renew", RLUA_COMPARE_PEXPIRE},
};

static const char *const clock_choices[] = {"monotonic", "realtime", NULL};
static const char *const fencing_choices[] = {"none", "max-of-quorum", NULL};

#define OFF(m) offsetof(struct redlock_options, m)

static const struct opt_def redlock_tab[] = {
    {"node_timeout", OPT_DURATION, OFF(node_timeout), "50ms", 1e6, 60e9, NULL, NULL,
     "connect + reply budget of one round on all nodes (sent concurrently); keep it much "
     "smaller than lock.ttl"},
    {"drift_factor", OPT_DOUBLE, OFF(drift_factor), "0.01", 0, 0.5, NULL, NULL,
     "clock drift allowance: validity = ttl - elapsed - (ttl * drift_factor + 2ms)"},
    {"quorum", OPT_INT, OFF(quorum), "0", 0, REDLOCK_MAX_NODES, NULL, NULL,
     "nodes that must grant; 0 = a majority (N/2+1); below a majority only with unsafe: true"},
    {"unsafe", OPT_BOOL, OFF(unsafe), "false", 0, 0, NULL, NULL,
     "allow a quorum below a majority (a negative control: two holders at once)"},
    {"clock", OPT_ENUM, OFF(clock), "monotonic", 0, 0, clock_choices, NULL,
     "clock measuring a round's elapsed time for the validity check; realtime is the "
     "negative control for clock jumps on the client (a clock fault on a worker shifts it)"},
    {"fencing", OPT_ENUM, OFF(fencing), "none", 0, 0, fencing_choices, NULL,
     "max-of-quorum: INCR a fence counter on each granting node, fence = the largest (shows "
     "that Redlock cannot issue monotonic fences); none: no fences"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* ---- arithmetic (redlock.h) ---- */

int redlock_quorum(int n, int override)
{
    if (n < 1)
        return 0;
    return override > 0 ? override : n / 2 + 1;
}

int64_t redlock_drift(int64_t ttl_ns, double drift_factor)
{
    return (int64_t)((double)ttl_ns * drift_factor) + 2 * LS_NS_PER_MS;
}

int64_t redlock_validity(int64_t ttl_ns, int64_t elapsed_ns, double drift_factor)
{
    return ttl_ns - elapsed_ns - redlock_drift(ttl_ns, drift_factor);
}

int redlock_check(const struct redlock_options *opts, int n, char *why, size_t len)
{
    int q = opts ? (int)opts->quorum : 0;
    int majority = redlock_quorum(n, 0);
    if (n < 1 || n > REDLOCK_MAX_NODES) {
        snprintf(why, len, "needs 1..%d nodes (cluster.nodes), got %d", REDLOCK_MAX_NODES, n);
        return -1;
    }
    if (q < 0 || q > n) {
        snprintf(why, len,
                 "quorum %d is more than the %d nodes (cluster.nodes): nothing could be granted",
                 q, n);
        return -1;
    }
    if (q > 0 && q < majority && !(opts && opts->unsafe)) {
        snprintf(why, len,
                 "quorum %d is below a majority of %d nodes (%d): two clients could hold the "
                 "lock at once; set unsafe: true to run it as a negative control",
                 q, n, majority);
        return -1;
    }
    return 0;
}

/* ---- the lock ---- */

struct redlock {
    const struct lock_config *cfg; /* borrowed: the lock's (keys: lock_key) */
    int n;
    int quorum;
    int64_t ttl_ns;
    int64_t node_timeout;
    double drift_factor;
    int realtime;               /* clock: realtime */
    struct ls_clockctl *cclock; /* realtime: the worker's client clock (clock faults), or NULL */
    int64_t pid;
    int fence;                  /* fences asked for (lock.fencing) and offered (max-of-quorum) */
    char ttl_ms[24];            /* ceil(ttl) in ms: the PX / PEXPIRE argument */
    size_t ttl_ms_len;
    struct rconn conn[REDLOCK_MAX_NODES];
};

/* A node's answer in one round. */
enum { R_YES, R_NO, R_FAIL, R_UNKNOWN };

struct round {
    int res[REDLOCK_MAX_NODES];     /* R_* */
    int kind[REDLOCK_MAX_NODES];    /* enum ev_err for R_FAIL / R_UNKNOWN */
    int yes, no, fail, unknown;
    uint64_t max_fence;             /* acquire: the largest fence among the yes nodes */
};

/* The clock of the validity check (the I/O deadline is always monotonic).
 * clock: realtime reads the worker's client clock, which a clock fault on
 * the worker shifts (faults/clock.c); the true CLOCK_REALTIME otherwise. */
static int64_t check_clock(const struct redlock *rl, int64_t mono)
{
    if (!rl->realtime)
        return mono;
    int64_t t = ls_realtime_ns();
    return rl->cclock ? ls_clockctl_read(rl->cclock, t, rl->pid) : t;
}

/* Classify node i's reply: acquire yes = a fence >= 0, no = -1; release and
 * renew yes = 1, no = 0 (not our token). Anything else goes through
 * rconn_unexpected (error reply = nothing ran, other shapes = unknown).
 * Frees reply. */
static void classify(struct redlock *rl, struct round *r, int i, redisReply *reply, int acquire)
{
    if (reply->type == REDIS_REPLY_INTEGER) {
        long long v = reply->integer;
        if (acquire ? v >= 0 : v == 1) {
            r->res[i] = R_YES;
            if (acquire && (uint64_t)v > r->max_fence)
                r->max_fence = (uint64_t)v;
            freeReplyObject(reply);
            return;
        }
        if (acquire ? v == -1 : v == 0) {
            r->res[i] = R_NO;
            freeReplyObject(reply);
            return;
        }
    }
    int o = rconn_unexpected(&rl->conn[i], reply, &r->kind[i]);
    r->res[i] = o == LOCK_FAIL ? R_FAIL : R_UNKNOWN;
}

/* One round of script on every node, for grant g. */
static void run_round(struct redlock *rl, int script, const struct grant *g, struct round *r)
{
    char key[RCONN_KEY_MAX], fkey[RCONN_KEY_MAX];
    size_t klen = lock_key(rl->cfg, g->res, 0, key, sizeof(key));
    size_t tlen = strnlen(g->token, EVLOG_TOKEN_LEN);
    const char *args[6];
    size_t lens[6];
    int nargs;
    if (script == S_ACQUIRE) {
        size_t flen = lock_key(rl->cfg, g->res, 1, fkey, sizeof(fkey));
        const char *a[6] = {"2", key, fkey, g->token, rl->ttl_ms, rl->fence ? "1" : "0"};
        size_t l[6] = {1, klen, flen, tlen, rl->ttl_ms_len, 1};
        memcpy(args, a, sizeof(a));
        memcpy(lens, l, sizeof(l));
        nargs = 6;
    } else {
        const char *a[4] = {"1", key, g->token, rl->ttl_ms};
        size_t l[4] = {1, klen, tlen, rl->ttl_ms_len};
        memcpy(args, a, sizeof(a));
        memcpy(lens, l, sizeof(l));
        nargs = script == S_RENEW ? 4 : 3;
    }
    struct rmulti_call calls[REDLOCK_MAX_NODES];
    memset(calls, 0, sizeof(calls));
    for (int i = 0; i < rl->n; i++) {
        calls[i].script = script;
        calls[i].nargs = nargs;
        calls[i].args = args;
        calls[i].lens = lens;
    }
    rmulti_eval(rl->conn, calls, rl->n, rl->node_timeout);

    memset(r, 0, sizeof(*r));
    for (int i = 0; i < rl->n; i++) {
        if (calls[i].outcome == LOCK_OK) {
            classify(rl, r, i, calls[i].reply, script == S_ACQUIRE);
        } else {
            r->res[i] = calls[i].outcome == LOCK_FAIL ? R_FAIL : R_UNKNOWN;
            r->kind[i] = calls[i].err_kind ? calls[i].err_kind : EVE_OTHER;
        }
        r->yes += r->res[i] == R_YES;
        r->no += r->res[i] == R_NO;
        r->fail += r->res[i] == R_FAIL;
        r->unknown += r->res[i] == R_UNKNOWN;
    }
}

/* The error kind of the first node whose answer was `what`, or dflt. */
static int first_kind(const struct redlock *rl, const struct round *r, int what, int dflt)
{
    for (int i = 0; i < rl->n; i++)
        if (r->res[i] == what)
            return r->kind[i];
    return dflt;
}

/* Outcome of a round that granted nothing (release, renew): OK on a quorum,
 * NOT_OWNER when too many nodes said "not ours" for a quorum ever to have
 * held our key, else UNKNOWN when a node may have acted, else FAIL. */
static int owner_outcome(const struct redlock *rl, const struct round *r, int *err_kind)
{
    if (r->yes >= rl->quorum)
        return LOCK_OK;
    if (r->no > rl->n - rl->quorum)
        return LOCK_NOT_OWNER;
    if (r->unknown > 0) {
        *err_kind = first_kind(rl, r, R_UNKNOWN, EVE_OTHER);
        return LOCK_UNKNOWN;
    }
    *err_kind = first_kind(rl, r, R_FAIL, EVE_OTHER);
    return LOCK_FAIL;
}

/* One Redlock attempt (see the file comment and docs/locks.md for the
 * outcome rules). LOCK_OK fills validity_ns (and the fence with
 * max-of-quorum); any other outcome has unlocked every node it could. */
static int rl_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    struct redlock *rl = lk->ctx;
    g->no_lease = 0;
    g->has_fence = 0;
    g->fence = 0;
    g->validity_ns = 0;

    int64_t m0 = ls_now_ns();
    int64_t t0 = check_clock(rl, m0);
    struct round r;
    run_round(rl, S_ACQUIRE, g, &r);
    int64_t m1 = ls_now_ns();
    int64_t t1 = check_clock(rl, m1);
    int64_t validity = redlock_validity(rl->ttl_ns, t1 - t0, rl->drift_factor);
    if (r.yes >= rl->quorum && validity > 0) {
        /* lock.h counts validity from the call; Redlock's from the round's
         * end: the lease the client believes in ends at m1 + validity */
        g->validity_ns = (m1 - m0) + validity;
        if (rl->fence) {
            g->has_fence = 1;
            g->fence = r.max_fence;
        }
        return LOCK_OK;
    }

    /* Not granted: unlock everywhere, also where the node said no or
     * nothing (a late SET may have landed). When every answer was a
     * definite no or fail, none of our keys can exist: no round. */
    struct round u;
    memset(&u, 0, sizeof(u));
    if (r.yes > 0 || r.unknown > 0)
        run_round(rl, S_RELEASE, g, &u);
    if (r.no > rl->n - rl->quorum)
        return LOCK_BUSY;               /* others hold enough nodes */
    if (r.unknown > 0) {
        /* that node may hold our key now or later (a late SET can overtake
         * the unlock, which travels on another connection) */
        *err_kind = first_kind(rl, &r, R_UNKNOWN, EVE_OTHER);
        return LOCK_UNKNOWN;
    }
    for (int i = 0; i < rl->n; i++) {
        if (r.res[i] == R_YES && (u.res[i] == R_FAIL || u.res[i] == R_UNKNOWN)) {
            *err_kind = u.kind[i];      /* our key stays there until its TTL */
            return LOCK_UNKNOWN;
        }
    }
    *err_kind = r.yes >= rl->quorum ? EVE_TIMEOUT : first_kind(rl, &r, R_FAIL, EVE_OTHER);
    return LOCK_FAIL;
}

/* Compare-and-delete on every node; judged by owner_outcome. */
static int rl_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    struct redlock *rl = lk->ctx;
    struct round r;
    run_round(rl, S_RELEASE, g, &r);
    return owner_outcome(rl, &r, err_kind);
}

/* Compare-and-pexpire on every node; LOCK_OK recomputes validity_ns.
 * A quorum that extended too late is LOCK_FAIL (timeout). */
static int rl_renew(struct lock *lk, struct grant *g, int *err_kind)
{
    struct redlock *rl = lk->ctx;
    int64_t m0 = ls_now_ns();
    int64_t t0 = check_clock(rl, m0);
    struct round r;
    run_round(rl, S_RENEW, g, &r);
    int64_t m1 = ls_now_ns();
    int64_t t1 = check_clock(rl, m1);
    int64_t validity = redlock_validity(rl->ttl_ns, t1 - t0, rl->drift_factor);
    if (r.yes >= rl->quorum && validity <= 0) {
        *err_kind = EVE_TIMEOUT;        /* extended, but too late to count on */
        return LOCK_FAIL;
    }
    int o = owner_outcome(rl, &r, err_kind);
    if (o == LOCK_OK)
        g->validity_ns = (m1 - m0) + validity;
    return o;
}

/* Close every connection and free the context; accepts a half-built one. */
static void rl_destroy(struct lock *lk)
{
    if (!lk || !lk->ctx)
        return;
    struct redlock *rl = lk->ctx;
    for (int i = 0; i < rl->n; i++)
        rconn_close(&rl->conn[i]);
    clockctl_unmap(rl->cclock);
    free(rl);
    lk->ctx = NULL;
}

/* Connections are made by the first round (concurrently); a node that is
 * down is no init error. */
static int rl_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    struct redlock_options defaults;
    const struct redlock_options *o = cfg->options;
    char why[256];
    if (!o) {
        memset(&defaults, 0, sizeof(defaults));
        if (opt_fill_defaults(redlock_tab, &defaults, err) < 0)
            return err->code;
        o = &defaults;
    }
    if (!cfg->nodes || redlock_check(o, cfg->nnodes, why, sizeof(why)) < 0)
        return ls_err_set(err, LS_EWORKLOAD, "lock redlock: %s",
                          cfg->nodes ? why : "no nodes given");
    if (cfg->ttl_ns < LS_NS_PER_MS)
        return ls_err_set(err, LS_EUSAGE, "lock redlock: ttl must be at least 1ms");
    struct redlock *rl = calloc(1, sizeof(*rl));
    if (!rl)
        return ls_err_set(err, LS_ENOMEM, "lock redlock: out of memory");
    lk->ctx = rl;
    rl->cfg = cfg;
    rl->n = cfg->nnodes;
    rl->quorum = redlock_quorum(rl->n, (int)o->quorum);
    rl->ttl_ns = cfg->ttl_ns;
    rl->node_timeout = o->node_timeout > 0   ? o->node_timeout
                       : cfg->timeout_ns > 0 ? cfg->timeout_ns
                                             : REDLOCK_DEFAULT_NODE_TIMEOUT;
    rl->drift_factor = o->drift_factor;
    rl->realtime = o->clock == REDLOCK_CLOCK_REALTIME;
    if (rl->realtime && cfg->rundir) {
        /* a run with clock faults has a client clock per worker: read it */
        char path[4096];
        clockctl_worker_path(path, sizeof(path), cfg->rundir, cfg->worker);
        if (access(path, F_OK) == 0) {
            int rc = clockctl_map(path, &rl->cclock, err);
            if (rc < 0)
                return rc;
            rl->pid = (int64_t)getpid();
            ls_clockctl_read(rl->cclock, ls_realtime_ns(), rl->pid); /* says: read here */
        }
    }
    rl->fence = cfg->fencing && o->fencing == REDLOCK_FENCE_MAX_OF_QUORUM;
    int64_t ttl_ms = (cfg->ttl_ns + LS_NS_PER_MS - 1) / LS_NS_PER_MS;
    rl->ttl_ms_len = rconn_u64(rl->ttl_ms, sizeof(rl->ttl_ms), (uint64_t)ttl_ms);

    char client[32] = "lockstorm-w";
    rconn_u64(client + 11, sizeof(client) - 11, (uint64_t)(cfg->worker < 0 ? 0 : cfg->worker));
    for (int i = 0; i < rl->n; i++) {
        int rc = rconn_init(&rl->conn[i], &cfg->nodes[i], rl->node_timeout, client, scripts, 3,
                            err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The loader's hook (lock.h): the quorum rules before anything starts. */
static int rl_validate(const struct lock_config *cfg, char *why, size_t n)
{
    return redlock_check(cfg->options, cfg->nnodes, why, n);
}

const struct lock_ops lock_redlock = {
    .version = LOCK_OPS_VERSION,
    .name = "redlock",
    .model = "Redlock on N independent nodes: SET NX PX sent to all at once, granted on a "
             "majority within validity = ttl - elapsed - drift, else compare-and-delete "
             "everywhere; release everywhere; extend by quorum; fences only with "
             "fencing: max-of-quorum (not monotonic)",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEW | LOCK_CAP_QUORUM,
    .options = redlock_tab,
    .options_size = sizeof(struct redlock_options),
    .init = rl_init,
    .destroy = rl_destroy,
    .acquire = rl_acquire,
    .renew = rl_renew,
    .release = rl_release,
    .validate = rl_validate,
};
