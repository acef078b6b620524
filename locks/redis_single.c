/*
 * redis_single.c: the correct single-node Redis lock. Acquire is one Lua
 * script (SET NX PX, and INCR of the fence counter in the same script so a
 * fence is issued atomically with its grant); release is a Lua
 * compare-and-delete, renew a Lua compare-and-pexpire. It is the baseline
 * every negative control is a broken copy of. Not here: failover safety (a
 * replica may lose the key) — that is what the checker is for.
 */
#include "locks/redis_conn.h"

enum { S_ACQUIRE, S_RELEASE, S_RENEW };

static const struct rscript scripts[] = {
    {"acquire", RLUA_ACQUIRE_NX_PX},
    {"release", RLUA_COMPARE_DEL},
    {"renew", RLUA_COMPARE_PEXPIRE},
};

static int rs_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    (void)cfg;
    return rsingle_init(lk, scripts, 3, 1, err);
}

static int rs_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    g->no_lease = 0;
    return rsingle_acquire_call(lk->ctx, S_ACQUIRE, g, err_kind);
}

static int rs_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    return rsingle_owner_call(lk->ctx, S_RELEASE, g, 0, err_kind);
}

static int rs_renew(struct lock *lk, struct grant *g, int *err_kind)
{
    struct rsingle *s = lk->ctx;
    int o = rsingle_owner_call(s, S_RENEW, g, 1, err_kind);
    if (o == LOCK_OK)
        g->validity_ns = s->ttl_ns;
    return o;
}

const struct lock_ops lock_redis_single = {
    .version = LOCK_OPS_VERSION,
    .name = "redis-single",
    .model = "one Redis node: SET NX PX, Lua compare-and-delete release, Lua "
             "compare-and-pexpire renew, fence from INCR inside the acquire script",
    .caps = LOCK_CAP_TTL | LOCK_CAP_RENEW | LOCK_CAP_FENCING | LOCK_CAP_REPLICATED,
    .options = rlock_timeout_options,
    .options_size = sizeof(struct rlock_options),
    .init = rs_init,
    .destroy = rsingle_destroy,
    .acquire = rs_acquire,
    .renew = rs_renew,
    .release = rs_release,
};
