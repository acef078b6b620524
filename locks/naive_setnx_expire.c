/*
 * naive_setnx_expire.c: negative control for the pre-2.6.12 idiom SETNX
 * then EXPIRE as two commands (here PEXPIRE, after an optional `gap` sleep
 * that widens the window). A client that dies between the two leaves a key
 * with no TTL: nobody is granted the resource again. The checker must report
 * it under liveness (stuck resource / longest stall), not as a mutex bug.
 * The fence, when asked for, is a separate INCR after the grant.
 */
#include "locks/redis_conn.h"

#include <string.h>

#include "util/timeutil.h"

enum { S_RELEASE };

static const struct rscript scripts[] = {
    {"release", RLUA_COMPARE_DEL},
};

static int nse_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    (void)cfg;
    return rsingle_init(lk, scripts, 1, 1, err);
}

/* Once SETNX answered 1 the lock is ours, whatever happens to the PEXPIRE
 * and the INCR: like the code it models, a failed follow-up is ignored
 * (the grant stands, with no fence when the INCR failed). */
static int nse_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    struct rsingle *s = lk->ctx;
    char key[RCONN_KEY_MAX];
    size_t klen = rsingle_key(s, g, key);
    const char *argv[3] = {"SETNX", key, g->token};
    size_t lens[3] = {5, klen, strnlen(g->token, EVLOG_TOKEN_LEN)};
    redisReply *reply;
    g->has_fence = 0;
    g->fence = 0;
    g->no_lease = 0;
    int o = rconn_command(&s->conn, 3, argv, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    if (reply->type != REDIS_REPLY_INTEGER || (reply->integer != 0 && reply->integer != 1))
        return rconn_unexpected(&s->conn, reply, err_kind);
    int got = reply->integer == 1;
    freeReplyObject(reply);
    if (!got)
        return LOCK_BUSY;

    if (s->gap_ns > 0)
        ls_sleep_ns(s->gap_ns);   /* the crash window */
    const char *pargv[3] = {"PEXPIRE", key, s->ttl_ms};
    size_t plens[3] = {7, klen, s->ttl_ms_len};
    int ignored;
    if (rconn_command(&s->conn, 3, pargv, plens, &reply, &ignored) == LOCK_OK)
        freeReplyObject(reply);
    if (s->fencing)
        (void)rsingle_incr_fence(s, g, &ignored);
    g->validity_ns = s->ttl_ns;
    return LOCK_OK;
}

static int nse_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    return rsingle_owner_call(lk->ctx, S_RELEASE, g, 0, err_kind);
}

const struct lock_ops lock_naive_setnx_expire = {
    .version = LOCK_OPS_VERSION,
    .name = "naive-setnx-expire",
    .model = "SETNX then PEXPIRE as two commands: a client dying in between leaves a lock "
             "with no TTL (stuck resource)",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING | LOCK_CAP_NEGATIVE,
    .options = rlock_gap_options,
    .options_size = sizeof(struct rlock_options),
    .init = nse_init,
    .destroy = rsingle_destroy,
    .acquire = nse_acquire,
    .renew = NULL,
    .release = nse_release,
};
