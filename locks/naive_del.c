/*
 * naive_del.c: negative control for the stolen-lock bug. Acquire is the
 * correct one (the redis-single script); release is a plain DEL that never
 * checks the token. A holder that overstays its TTL (paused, slow) deletes
 * the NEXT holder's key on release, so a third client is granted while the
 * second still holds: the checker must report lock-broken overlaps.
 */
#include "locks/naive.h"
#include "locks/redis_conn.h"

enum { S_ACQUIRE };

static const struct rscript scripts[] = {
    {"acquire", RLUA_ACQUIRE_NX_PX},
};

static int nd_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    (void)cfg;
    return rsingle_init(lk, scripts, 1, 1, err);
}

static int nd_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    g->no_lease = 0;
    return rsingle_acquire_call(lk->ctx, S_ACQUIRE, g, err_kind);
}

/* The bug: DEL whatever is there, whoever it belongs to. */
int naive_release_del(struct lock *lk, const struct grant *g, int *err_kind)
{
    struct rsingle *s = lk->ctx;
    char key[RCONN_KEY_MAX];
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, rsingle_key(s, g, key)};
    redisReply *reply;
    int o = rconn_command(&s->conn, 2, argv, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    if (reply->type != REDIS_REPLY_INTEGER)
        return rconn_unexpected(&s->conn, reply, err_kind);
    freeReplyObject(reply);
    return LOCK_OK;
}

const struct lock_ops lock_naive_del = {
    .version = LOCK_OPS_VERSION,
    .name = "naive-del",
    .model = "stolen lock: release is an unconditional DEL, so a holder past its TTL deletes "
             "the next holder's lock",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING | LOCK_CAP_NEGATIVE,
    .options = rlock_timeout_options,
    .options_size = sizeof(struct rlock_options),
    .init = nd_init,
    .destroy = rsingle_destroy,
    .acquire = nd_acquire,
    .renew = NULL,
    .release = naive_release_del,
};
