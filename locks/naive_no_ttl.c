/*
 * naive_no_ttl.c: negative control for a lock without expiry. Acquire is
 * SET key token NX with no PX (in a script, so the fence INCR is still
 * issued with the grant); release is a plain DEL. A holder that pauses
 * blocks everyone for the whole pause, and one that dies blocks the
 * resource for the rest of the run: the checker must report it under
 * liveness (longest stall, stuck resource). Grants carry no lease. Release
 * is naive-del's unconditional DEL (naive.h).
 */
#include "locks/naive.h"
#include "locks/redis_conn.h"

enum { S_ACQUIRE };

/* KEYS lock, fence; ARGV token, (unused ttl), fencing. Same answers as
 * RLUA_ACQUIRE_NX_PX. */
static const struct rscript scripts[] = {
    {"acquire",
     "if redis.call('SET', KEYS[1], ARGV[1], 'NX') then\n"
     "  if ARGV[3] == '1' then return redis.call('INCR', KEYS[2]) end\n"
     "  return 0\n"
     "end\n"
     "return -1\n"},
};

static int nnt_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    (void)cfg;
    return rsingle_init(lk, scripts, 1, 0, err);
}

static int nnt_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    int o = rsingle_acquire_call(lk->ctx, S_ACQUIRE, g, err_kind);
    g->no_lease = 1;
    g->validity_ns = 0;
    return o;
}

const struct lock_ops lock_naive_no_ttl = {
    .version = LOCK_OPS_VERSION,
    .name = "naive-no-ttl",
    .model = "SET NX without expiry, release by DEL: a paused or dead holder blocks the "
             "resource (stall, stuck)",
    .caps = LOCK_CAP_FENCING | LOCK_CAP_NEGATIVE,
    .options = rlock_timeout_options,
    .options_size = sizeof(struct rlock_options),
    .init = nnt_init,
    .destroy = rsingle_destroy,
    .acquire = nnt_acquire,
    .renew = NULL,
    .release = naive_release_del,
};
