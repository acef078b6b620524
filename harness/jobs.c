/*
 * jobs.c: the duplicate-job workload's keys, job stream, storage ops and
 * final dump (see jobs.h). The storage node plays the database the job
 * writes to: lsjob:done:<k> is the "done" mark (and the idempotency key),
 * lsjob:eff:<k> the list of workers whose side effect landed, lsjob:ref:<k>
 * the count of side effects the constraint refused. The conditional insert
 * runs as Lua so that check and insert are one step on the storage, as a
 * unique constraint is in a database. Nothing here decides a verdict.
 */
#include "harness/jobs.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/workload.h"
#include "model/jobs.h"
#include "model/yamltree.h"
#include "util/json.h"
#include "util/secret.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define NS_MS 1e6
#define NS_H 3600e9
#define JOBS_MAX 200000 /* jobs per run: the dump reads each one back */

/* ---- workload keys ---- */

#define JSUB(m) (offsetof(struct workload, workers.jobs.m) - offsetof(struct workload, workers.jobs))

const struct opt_def jobs_tab[] = {
    {"interval", OPT_DURATION, JSUB(interval), "50ms", NS_MS, NS_H, NULL, NULL,
     "jobs mode: job k is announced k * interval after the run starts"},
    {"count", OPT_INT, JSUB(count), "0", 0, JOBS_MAX, NULL, NULL,
     "jobs mode: jobs announced; 0 = every interval until the run ends"},
    {"layers", OPT_CUSTOM, 0, "[lock]", 0, 0, NULL, NULL,
     "jobs mode: the defences, any of [lock, idempotency, constraint]; [] = none (see "
     "docs/jobs.md)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};


int jobs_parse_layers(struct workload *w, const struct ynode *v, const struct ynode *where,
                      const char *path, struct ydiag *dg)
{
    char q[64];
    w->workers.jobs.layers = 0;
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind == YN_SCALAR && strcmp(v->text, "none") == 0)
        return 0;
    if (v->kind != YN_SEQ) {
        ydiag_at(dg, v, "%s: expected a list of lock, idempotency, constraint (e.g. [lock, "
                 "constraint]; [] for none), got %s", path, ynode_kind_text(v));
        return -1;
    }
    int bad = 0;
    unsigned layers = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *it = v->vals[i];
        unsigned bit = 0;
        for (size_t k = 0; it->kind == YN_SCALAR && k < JOBS_NLAYERS; k++)
            if (strcmp(it->text, jobs_layers[k].name) == 0)
                bit = jobs_layers[k].bit;
        if (!bit) {
            const char *names[JOBS_NLAYERS];
            for (size_t k = 0; k < JOBS_NLAYERS; k++)
                names[k] = jobs_layers[k].name;
            const char *near = it->kind == YN_SCALAR
                                   ? opt_nearest(it->text, names, (int)JOBS_NLAYERS)
                                   : NULL;
            char hint[64] = "";
            if (near)
                snprintf(hint, sizeof(hint), " did you mean '%s'?", near);
            ydiag_at(dg, it, "%s[%zu]: unknown layer '%s';%s one of: lock, idempotency, "
                     "constraint", path, i,
                     it->kind == YN_SCALAR ? opt_quote(it->text, q, sizeof(q)) : "a collection",
                     hint);
            bad = 1;
        } else if (layers & bit) {
            ydiag_at(dg, it, "%s[%zu]: layer '%s' is listed twice", path, i, it->text);
            bad = 1;
        }
        layers |= bit;
    }
    if (bad)
        return -1;
    w->workers.jobs.layers = layers;
    if (w->workers.mode == WMODE_JOBS && jobs_total(w) >= JOBS_MAX) {
        char a[32], b[32];
        ls_format_duration(w->duration, a, sizeof(a));
        ls_format_duration(w->workers.jobs.interval, b, sizeof(b));
        ydiag_at(dg, where ? where : v,
                 "workers.jobs: a %s run with interval %s announces %lld jobs; at most %d (raise "
                 "the interval or set workers.jobs.count)", a, b, (long long)jobs_total(w),
                 JOBS_MAX - 1);
        return -1;
    }
    return 0;
}

/* ---- worker side ---- */

/* Refuses the insert when the job already has an effect, as a unique
 * constraint on the job id would (INSERT ... ON CONFLICT DO NOTHING), and
 * counts the refusal so the dump can show what the constraint caught. */
static const char CONSTRAINED_INSERT[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('INCR', KEYS[2]) return 0 end "
    "redis.call('RPUSH', KEYS[1], ARGV[1]) return 1";

struct jobstore {
    char host[64];
    int port;
    char password[LS_PASSWORD_MAX]; /* "" = none */
    struct timeval tv;
    redisContext *c;
};

static void js_drop(struct jobstore *js)
{
    if (js->c) {
        redisFree(js->c);
        js->c = NULL;
    }
}

static int js_ensure(struct jobstore *js)
{
    if (js->c)
        return 0;
    js->c = ls_redis_connect(js->host, js->port, js->tv, js->password);
    if (!js->c || js->c->err) {
        js_drop(js);
        return -1;
    }
    redisSetTimeout(js->c, js->tv);
    return 0;
}

int jobstore_open(struct jobstore **out, const char *host, int port, const char *password,
                  int64_t timeout_ns, struct ls_err *err)
{
    struct jobstore *js = calloc(1, sizeof(*js));
    *out = NULL;
    if (!js)
        return ls_err_set(err, LS_ENOMEM, "jobs: out of memory");
    snprintf(js->host, sizeof(js->host), "%s", host);
    js->port = port;
    snprintf(js->password, sizeof(js->password), "%s", password ? password : "");
    js->tv.tv_sec = timeout_ns / LS_NS_PER_S;
    js->tv.tv_usec = (timeout_ns % LS_NS_PER_S) / 1000;
    if (js_ensure(js) < 0) {
        free(js);
        return ls_err_set(err, LS_EENV, "storage node %s:%d: connect failed (jobs)", host, port);
    }
    *out = js;
    return 0;
}

void jobstore_close(struct jobstore *js)
{
    if (!js)
        return;
    js_drop(js);
    free(js);
}

/* One command; the reply (caller frees) or NULL after dropping the
 * connection (the next call reconnects). */
static redisReply *js_cmd(struct jobstore *js, const char *fmt, ...)
{
    if (js_ensure(js) < 0)
        return NULL;
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(js->c, fmt, ap);
    va_end(ap);
    if (!r)
        js_drop(js);
    return r;
}

int jobstore_check(struct jobstore *js, int64_t job)
{
    redisReply *r = js_cmd(js, "GET lsjob:done:%lld", (long long)job);
    if (!r)
        return JOBR_ERROR;
    int out = r->type == REDIS_REPLY_NIL ? JOBR_FREE
              : r->type == REDIS_REPLY_STRING ? JOBR_DONE : JOBR_ERROR;
    freeReplyObject(r);
    return out;
}

int jobstore_claim(struct jobstore *js, int64_t job, int worker)
{
    redisReply *r = js_cmd(js, "SET lsjob:done:%lld %d NX", (long long)job, worker);
    if (!r)
        return JOBR_ERROR;
    int out = r->type == REDIS_REPLY_STATUS ? JOBR_FREE
              : r->type == REDIS_REPLY_NIL ? JOBR_DONE : JOBR_ERROR;
    freeReplyObject(r);
    return out;
}

int jobstore_effect(struct jobstore *js, int64_t job, int worker, int constraint)
{
    redisReply *r;
    if (constraint)
        r = js_cmd(js, "EVAL %s 2 lsjob:eff:%lld lsjob:ref:%lld %d", CONSTRAINED_INSERT,
                   (long long)job, (long long)job, worker);
    else
        r = js_cmd(js, "RPUSH lsjob:eff:%lld %d", (long long)job, worker);
    if (!r)
        return JOBR_ERROR;
    int out = JOBR_ERROR;
    if (r->type == REDIS_REPLY_INTEGER)
        out = constraint && r->integer == 0 ? JOBR_REFUSED : JOBR_APPLIED;
    freeReplyObject(r);
    return out;
}

int jobstore_mark_done(struct jobstore *js, int64_t job, int worker)
{
    redisReply *r = js_cmd(js, "SET lsjob:done:%lld %d", (long long)job, worker);
    if (!r)
        return JOBR_ERROR;
    int ok = r->type == REDIS_REPLY_STATUS;
    freeReplyObject(r);
    return ok ? 0 : JOBR_ERROR;
}

/* ---- harness side ---- */

static int64_t reply_num(const redisReply *r, int64_t dflt)
{
    if (r && r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r && r->type == REDIS_REPLY_STRING) {
        char *end;
        errno = 0;
        long long v = strtoll(r->str, &end, 10);
        if (errno == 0 && *end == '\0')
            return v;
    }
    return dflt;
}

int jobs_dump(const char *host, int port, const char *password, const struct workload *w,
              const char *path, struct ls_err *err)
{
    struct timeval tv = {5, 0};
    redisContext *c = ls_redis_connect(host, port, tv, password);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return ls_err_set(err, LS_EENV, "storage node %s:%d: connect for the jobs dump failed",
                          host, port);
    }
    redisSetTimeout(c, tv);
    struct strbuf sb = STRBUF_INIT;
    int rc = 0;
    int64_t n = jobs_total(w);
    const int64_t batch = 256; /* pipelined, a batch at a time */
    for (int64_t k0 = 0; k0 < n && rc == 0; k0 += batch) {
        int64_t k1 = k0 + batch < n ? k0 + batch : n;
        for (int64_t k = k0; k < k1; k++) {
            redisAppendCommand(c, "LRANGE lsjob:eff:%lld 0 -1", (long long)k);
            redisAppendCommand(c, "GET lsjob:ref:%lld", (long long)k);
            redisAppendCommand(c, "GET lsjob:done:%lld", (long long)k);
        }
        for (int64_t k = k0; k < k1 && rc == 0; k++) {
            redisReply *rep[3] = {NULL, NULL, NULL};
            for (int i = 0; i < 3; i++) {
                if (redisGetReply(c, (void **)&rep[i]) != REDIS_OK) {
                    rc = ls_err_set(err, LS_EENV, "storage node %s:%d: jobs dump: %s", host,
                                    port, c->errstr);
                    break;
                }
            }
            if (rc == 0) {
                sb_printf(&sb, "{\"job\":%lld,\"effects\":[", (long long)k);
                if (rep[0]->type == REDIS_REPLY_ARRAY)
                    for (size_t i = 0; i < rep[0]->elements; i++)
                        sb_printf(&sb, "%s%lld", i ? "," : "",
                                  (long long)reply_num(rep[0]->element[i], -1));
                int64_t done = reply_num(rep[2], -1);
                sb_printf(&sb, "],\"refused\":%lld,\"done\":", (long long)reply_num(rep[1], 0));
                if (done >= 0)
                    sb_printf(&sb, "%lld}\n", (long long)done);
                else
                    sb_puts(&sb, "null}\n");
            }
            for (int i = 0; i < 3; i++)
                if (rep[i])
                    freeReplyObject(rep[i]);
        }
    }
    redisFree(c);
    if (rc == 0) {
        int wr = sb_write_file(&sb, path);
        if (wr < 0)
            rc = ls_err_errno(err, LS_EIO, -wr, "write %s", path);
    }
    sb_free(&sb);
    return rc;
}
