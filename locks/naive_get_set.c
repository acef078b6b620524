/*
 * naive_get_set.c: negative control for check-then-set in application code.
 * Acquire is GET; when the key is absent, (after an optional `gap` sleep)
 * SET key token PX ttl without NX. Two clients that both GET nil both SET
 * and both believe they hold the lock: the checker must report lock-broken
 * overlaps even without faults (more with a gap). Fence: a separate INCR
 * after the SET.
 */
#include "locks/redis_conn.h"

#include <string.h>

#include "util/timeutil.h"

enum { S_RELEASE };

static const struct rscript scripts[] = {
    {"release", RLUA_COMPARE_DEL},
};

static int ngs_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    (void)cfg;
    return rsingle_init(lk, scripts, 1, 1, err);
}

static int ngs_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    struct rsingle *s = lk->ctx;
    char key[RCONN_KEY_MAX];
    size_t klen = rsingle_key(s, g, key);
    const char *argv[5] = {"GET", key};
    size_t lens[5] = {3, klen};
    redisReply *reply;
    g->has_fence = 0;
    g->fence = 0;
    g->no_lease = 0;
    int o = rconn_command(&s->conn, 2, argv, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    if (reply->type == REDIS_REPLY_STRING) {
        freeReplyObject(reply);
        return LOCK_BUSY;
    }
    if (reply->type != REDIS_REPLY_NIL)
        return rconn_unexpected(&s->conn, reply, err_kind);
    freeReplyObject(reply);

    if (s->gap_ns > 0)
        ls_sleep_ns(s->gap_ns);   /* the race window */
    argv[0] = "SET";
    lens[0] = 3;
    argv[2] = g->token;
    lens[2] = strnlen(g->token, EVLOG_TOKEN_LEN);
    argv[3] = "PX";
    lens[3] = 2;
    argv[4] = s->ttl_ms;
    lens[4] = s->ttl_ms_len;
    o = rconn_command(&s->conn, 5, argv, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    if (reply->type != REDIS_REPLY_STATUS)
        return rconn_unexpected(&s->conn, reply, err_kind);
    freeReplyObject(reply);
    if (s->fencing) {
        int ignored;
        (void)rsingle_incr_fence(s, g, &ignored);   /* the grant stands without a fence */
    }
    g->validity_ns = s->ttl_ns;
    return LOCK_OK;
}

static int ngs_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    return rsingle_owner_call(lk->ctx, S_RELEASE, g, 0, err_kind);
}

const struct lock_ops lock_naive_get_set = {
    .version = LOCK_OPS_VERSION,
    .name = "naive-get-set",
    .model = "check-then-set: GET, then SET PX without NX; two clients that both saw nil both "
             "hold the lock",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING | LOCK_CAP_NEGATIVE,
    .options = rlock_gap_options,
    .options_size = sizeof(struct rlock_options),
    .init = ngs_init,
    .destroy = rsingle_destroy,
    .acquire = ngs_acquire,
    .renew = NULL,
    .release = ngs_release,
};
