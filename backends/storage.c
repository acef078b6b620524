/*
 * storage.c: protected-resource ops on the storage node. See storage.h.
 * The fenced check runs as Lua so that check and write are one atomic step
 * on the storage, as a fencing-aware database would do it.
 */
#include "backends/storage.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "util/secret.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

static const char FENCED_READ[] =
    "local hwm = tonumber(redis.call('GET', KEYS[2]) or '0') "
    "local f = tonumber(ARGV[1]) "
    "if f < hwm then return {0, hwm} end "
    "redis.call('SET', KEYS[2], ARGV[1]) "
    "return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}";

static const char FENCED_WRITE[] =
    "local hwm = tonumber(redis.call('GET', KEYS[2]) or '0') "
    "if tonumber(ARGV[1]) < hwm then return 0 end "
    "redis.call('SET', KEYS[2], ARGV[1]) "
    "redis.call('SET', KEYS[1], ARGV[2]) "
    "return 1";

struct storage {
    char host[64];
    int port;
    char password[LS_PASSWORD_MAX]; /* "" = none */
    struct timeval tv;
    redisContext *c;
};

static void drop(struct storage *s)
{
    if (s->c) {
        redisFree(s->c);
        s->c = NULL;
    }
}

static int ensure(struct storage *s)
{
    if (s->c)
        return 0;
    s->c = ls_redis_connect(s->host, s->port, s->tv, s->password);
    if (!s->c || s->c->err) {
        drop(s);
        return -1;
    }
    redisSetTimeout(s->c, s->tv);
    redisEnableKeepAlive(s->c);
    return 0;
}

int storage_open(struct storage **out, const char *host, int port, const char *password,
                 int64_t timeout_ns, struct ls_err *err)
{
    struct storage *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (!s)
        return ls_err_set(err, LS_ENOMEM, "storage: out of memory");
    snprintf(s->host, sizeof(s->host), "%s", host);
    s->port = port;
    snprintf(s->password, sizeof(s->password), "%s", password ? password : "");
    s->tv.tv_sec = timeout_ns / LS_NS_PER_S;
    s->tv.tv_usec = (timeout_ns % LS_NS_PER_S) / 1000;
    if (ensure(s) < 0) {
        storage_close(s);
        return ls_err_set(err, LS_EENV, "storage node %s:%d: connect failed", host, port);
    }
    *out = s;
    return 0;
}

void storage_close(struct storage *s)
{
    if (!s)
        return;
    drop(s);
    ls_wipe(s->password, sizeof(s->password));
    free(s);
}

static int64_t reply_int(const redisReply *r, int *ok)
{
    if (!r) {
        *ok = 0;
        return 0;
    }
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type == REDIS_REPLY_NIL)
        return 0;
    if (r->type == REDIS_REPLY_STRING) {
        char *end;
        errno = 0;
        long long v = strtoll(r->str, &end, 10);
        if (errno == 0 && *end == '\0')
            return v;
    }
    *ok = 0;
    return 0;
}

/* Run a script by EVAL (storage scripts are tiny; the storage node is not
 * what is measured, and EVAL keeps this free of NOSCRIPT handling). */
static void append_script(struct storage *s, const char *script, const char *k1, const char *k2,
                          const char *a1, const char *a2)
{
    if (a2)
        redisAppendCommand(s->c, "EVAL %s 2 %s %s %s %s", script, k1, k2, a1, a2);
    else
        redisAppendCommand(s->c, "EVAL %s 2 %s %s %s", script, k1, k2, a1);
}

void storage_read(struct storage *s, int res, int has_fence, uint64_t fence,
                  struct store_op *plain, struct store_op *fenced)
{
    memset(plain, 0, sizeof(*plain));
    memset(fenced, 0, sizeof(*fenced));
    if (ensure(s) < 0)
        return;
    char kp[48], kf[48], kh[48], fs[24];
    snprintf(kp, sizeof(kp), "lsstore:plain:r%d", res);
    snprintf(kf, sizeof(kf), "lsstore:fenced:r%d", res);
    snprintf(kh, sizeof(kh), "lsstore:hwm:r%d", res);
    snprintf(fs, sizeof(fs), "%llu", (unsigned long long)fence);
    redisAppendCommand(s->c, "GET %s", kp);
    if (has_fence)
        append_script(s, FENCED_READ, kf, kh, fs, NULL);
    redisReply *r = NULL;
    if (redisGetReply(s->c, (void **)&r) != REDIS_OK) {
        drop(s);
        return;
    }
    int ok = 1;
    plain->value = reply_int(r, &ok);
    plain->ok = ok;
    plain->accepted = ok;
    freeReplyObject(r);
    if (!has_fence)
        return;
    r = NULL;
    if (redisGetReply(s->c, (void **)&r) != REDIS_OK) {
        drop(s);
        return;
    }
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
        ok = 1;
        int64_t acc = reply_int(r->element[0], &ok);
        int64_t v = reply_int(r->element[1], &ok);
        fenced->ok = ok;
        fenced->accepted = ok && acc == 1;
        fenced->value = v;
    }
    freeReplyObject(r);
}

void storage_write(struct storage *s, int res, int64_t pval, int do_fenced, uint64_t fence,
                   int64_t fval, struct store_op *plain, struct store_op *fenced)
{
    memset(plain, 0, sizeof(*plain));
    memset(fenced, 0, sizeof(*fenced));
    plain->value = pval;
    fenced->value = fval;
    if (ensure(s) < 0)
        return;
    char kp[48], kf[48], kh[48], fs[24], vs[24];
    snprintf(kp, sizeof(kp), "lsstore:plain:r%d", res);
    snprintf(kf, sizeof(kf), "lsstore:fenced:r%d", res);
    snprintf(kh, sizeof(kh), "lsstore:hwm:r%d", res);
    snprintf(fs, sizeof(fs), "%llu", (unsigned long long)fence);
    snprintf(vs, sizeof(vs), "%lld", (long long)fval);
    redisAppendCommand(s->c, "SET %s %lld", kp, (long long)pval);
    if (do_fenced)
        append_script(s, FENCED_WRITE, kf, kh, fs, vs);
    redisReply *r = NULL;
    if (redisGetReply(s->c, (void **)&r) != REDIS_OK) {
        drop(s);
        return;
    }
    plain->ok = r->type == REDIS_REPLY_STATUS;
    plain->accepted = plain->ok;
    freeReplyObject(r);
    if (!do_fenced)
        return;
    r = NULL;
    if (redisGetReply(s->c, (void **)&r) != REDIS_OK) {
        drop(s);
        return;
    }
    int ok = 1;
    int64_t acc = reply_int(r, &ok);
    fenced->ok = ok;
    fenced->accepted = ok && acc == 1;
    freeReplyObject(r);
}

int storage_dump(const char *host, int port, const char *password, int nres, int fencing,
                 const char *path, struct ls_err *err)
{
    struct timeval tv = {2, 0};
    redisContext *c = ls_redis_connect(host, port, tv, password);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return ls_err_set(err, LS_EENV, "storage node %s:%d: connect for the final dump failed",
                          host, port);
    }
    redisSetTimeout(c, tv);
    struct strbuf sb = STRBUF_INIT;
    int rc = 0;
    for (int i = 0; i < nres && rc == 0; i++) {
        redisAppendCommand(c, "GET lsstore:plain:r%d", i);
        redisAppendCommand(c, "GET lsstore:fenced:r%d", i);
        redisAppendCommand(c, "GET lsstore:hwm:r%d", i);
        int64_t v[3];
        for (int k = 0; k < 3; k++) {
            redisReply *r = NULL;
            int ok = 1;
            if (redisGetReply(c, (void **)&r) != REDIS_OK) {
                rc = ls_err_set(err, LS_EENV, "storage node %s:%d: final dump: %s", host, port,
                                c->errstr);
                break;
            }
            v[k] = reply_int(r, &ok);
            freeReplyObject(r);
        }
        if (rc)
            break;
        sb_printf(&sb, "{\"res\":\"r%d\",\"plain\":%lld", i, (long long)v[0]);
        if (fencing)
            sb_printf(&sb, ",\"fenced\":%lld,\"fence_hwm\":%lld", (long long)v[1], (long long)v[2]);
        sb_puts(&sb, "}\n");
    }
    redisFree(c);
    if (rc == 0) {
        int w = sb_write_file(&sb, path);
        if (w < 0)
            rc = ls_err_errno(err, LS_EIO, -w, "write %s", path);
    }
    sb_free(&sb);
    return rc;
}

/* ---- struct store_ops ------------------------------------------------- */

static int op_open(void **out, const char *host, int port, const char *password,
                   int64_t timeout_ns, struct ls_err *err)
{
    struct storage *s = NULL;
    int rc = storage_open(&s, host, port, password, timeout_ns, err);
    *out = s;
    return rc;
}

static void op_close(void *s)
{
    storage_close(s);
}

static void op_read(void *s, struct lock *lk, int res, int has_fence, uint64_t fence,
                    struct store_op *plain, struct store_op *fenced)
{
    (void)lk;
    storage_read(s, res, has_fence, fence, plain, fenced);
}

static void op_write(void *s, struct lock *lk, int res, int64_t pval, int do_fenced,
                     uint64_t fence, int64_t fval, struct store_op *plain,
                     struct store_op *fenced)
{
    (void)lk;
    storage_write(s, res, pval, do_fenced, fence, fval, plain, fenced);
}

const struct store_ops store_redis = {
    .name = "redis",
    .open = op_open,
    .close = op_close,
    .read = op_read,
    .write = op_write,
};
