/*
 * busted.c: the negative control that grants every request (locktorture's
 * lock_busted). Acquire really talks to Redis, SET key token PX ttl without
 * NX plus the fence INCR in one script, so its latency is real; it never
 * answers busy. Release is the correct compare-and-delete. With more than
 * one worker per resource the checker must report lock-broken overlaps with
 * no faults at all; fences still increase, so fenced lost updates stay 0.
 */
#include "locks/redis_conn.h"

enum { S_ACQUIRE, S_RELEASE };

/* Same KEYS/ARGV as RLUA_ACQUIRE_NX_PX; never returns -1. */
static const struct rscript scripts[] = {
    {"acquire",
     "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n"
     "if ARGV[3] == '1' then return redis.call('INCR', KEYS[2]) end\n"
     "return 0\n"},
    {"release", RLUA_COMPARE_DEL},
};

static int bu_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    (void)cfg;
    return rsingle_init(lk, scripts, 2, 1, err);
}

static int bu_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    g->no_lease = 0;
    return rsingle_acquire_call(lk->ctx, S_ACQUIRE, g, err_kind);
}

static int bu_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    return rsingle_owner_call(lk->ctx, S_RELEASE, g, 0, err_kind);
}

const struct lock_ops lock_busted = {
    .version = LOCK_OPS_VERSION,
    .name = "busted",
    .model = "grants every request (SET PX without NX): no mutual exclusion at all",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING | LOCK_CAP_NEGATIVE,
    .options = rlock_timeout_options,
    .options_size = sizeof(struct rlock_options),
    .init = bu_init,
    .destroy = rsingle_destroy,
    .acquire = bu_acquire,
    .renew = NULL,
    .release = bu_release,
};
