/*
 * pgstore.c: the protected resource on PostgreSQL (see pgstore.h). The
 * fenced read is one statement (a data-modifying CTE raises the high-water
 * mark when the fence is not below it and returns the counter); the write
 * is two UPDATEs in one round trip, the fenced one conditional on the mark,
 * so that check and write are one step on the server, as on the Redis
 * storage node.
 */
#include "backends/pgstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "locks/pg_advisory.h"
#include "locks/pg_conn.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

struct pgstore {
    char host[64];
    int port;
    int64_t timeout;
    PGconn *c;
    char why[256];
};

static int ps_ensure(struct pgstore *s)
{
    if (s->c && !pgc_dead(s->c))
        return 0;
    if (s->c)
        PQfinish(s->c);
    s->c = pgc_connect(s->host, s->port, ls_now_ns() + s->timeout, s->why, sizeof(s->why));
    return s->c ? 0 : -1;
}

int pgstore_open(struct pgstore **out, const char *host, int port, int64_t timeout_ns,
                 struct ls_err *err)
{
    struct pgstore *s = calloc(1, sizeof(*s));
    *out = NULL;
    if (!s)
        return ls_err_set(err, LS_ENOMEM, "storage: out of memory");
    snprintf(s->host, sizeof(s->host), "%s", host);
    s->port = port;
    s->timeout = timeout_ns;
    if (ps_ensure(s) < 0) {
        int rc = ls_err_set(err, LS_EENV, "storage (postgres) %s:%d: %s", host, port, s->why);
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void pgstore_close(struct pgstore *s)
{
    if (!s)
        return;
    if (s->c)
        PQfinish(s->c);
    free(s);
}

/* Run sql on txn or on s's connection. Returns the result (caller clears)
 * or NULL (failed: outcome unknown); s's own connection is dropped after a
 * timeout or a connection failure, a borrowed one never. */
static PGresult *ps_exec(struct pgstore *s, PGconn *txn, const char *sql)
{
    PGconn *c = txn;
    if (!c) {
        if (ps_ensure(s) < 0)
            return NULL;
        c = s->c;
    }
    PGresult *r = NULL;
    int st = pgc_exec(c, sql, ls_now_ns() + s->timeout, &r, s->why, sizeof(s->why));
    if (st == PGC_OK)
        return r;
    PQclear(r);
    if (!txn && (st == PGC_TIMEOUT || st == PGC_CONN)) {
        PQfinish(s->c);
        s->c = NULL;
    }
    return NULL;
}

static int64_t cell(const PGresult *r, int row, int col, int *ok)
{
    if (!r || row >= PQntuples(r) || col >= PQnfields(r) || PQgetisnull(r, row, col)) {
        *ok = 0;
        return 0;
    }
    char *end;
    long long v = strtoll(PQgetvalue(r, row, col), &end, 10);
    if (*end)
        *ok = 0;
    return v;
}

void pgstore_read(struct pgstore *s, PGconn *txn, int res, int has_fence, uint64_t fence,
                  struct store_op *plain, struct store_op *fenced)
{
    memset(plain, 0, sizeof(*plain));
    memset(fenced, 0, sizeof(*fenced));
    char sql[512];
    if (has_fence)
        snprintf(sql, sizeof(sql),
                 "WITH f AS (UPDATE lockstorm_store SET hwm = %llu WHERE res = %d AND hwm <= %llu "
                 "RETURNING fenced) SELECT plain, (SELECT count(*) FROM f), "
                 "(SELECT fenced FROM f) FROM lockstorm_store WHERE res = %d",
                 (unsigned long long)fence, res, (unsigned long long)fence, res);
    else
        snprintf(sql, sizeof(sql), "SELECT plain FROM lockstorm_store WHERE res = %d", res);
    PGresult *r = ps_exec(s, txn, sql);
    if (!r)
        return;
    int ok = 1;
    plain->value = cell(r, 0, 0, &ok);
    plain->ok = plain->accepted = ok;
    if (has_fence) {
        int fok = 1;
        int64_t acc = cell(r, 0, 1, &fok);
        fenced->ok = fok;
        fenced->accepted = fok && acc == 1;
        if (fenced->accepted)
            fenced->value = cell(r, 0, 2, &fenced->ok);
    }
    PQclear(r);
}

void pgstore_write(struct pgstore *s, PGconn *txn, int res, int64_t pval, int do_fenced,
                   uint64_t fence, int64_t fval, struct store_op *plain, struct store_op *fenced)
{
    memset(plain, 0, sizeof(*plain));
    memset(fenced, 0, sizeof(*fenced));
    plain->value = pval;
    fenced->value = fval;
    char sql[512];
    int n = snprintf(sql, sizeof(sql), "UPDATE lockstorm_store SET plain = %lld WHERE res = %d",
                     (long long)pval, res);
    if (do_fenced)
        snprintf(sql + n, sizeof(sql) - (size_t)n,
                 "; UPDATE lockstorm_store SET hwm = %llu, fenced = %lld WHERE res = %d AND "
                 "hwm <= %llu RETURNING 1",
                 (unsigned long long)fence, (long long)fval, res, (unsigned long long)fence);
    PGresult *r = ps_exec(s, txn, sql);
    if (!r)
        return;
    plain->ok = plain->accepted = 1;
    if (do_fenced) {
        fenced->ok = 1;
        fenced->accepted = PQntuples(r) == 1;
    }
    PQclear(r);
}

/* One statement on a fresh connection (harness side). */
static int admin_exec(const char *host, int port, const char *sql, PGresult **res,
                      struct ls_err *err)
{
    char why[256];
    PGconn *c = pgc_connect(host, port, ls_now_ns() + 5 * LS_NS_PER_S, why, sizeof(why));
    if (!c)
        return ls_err_set(err, LS_EENV, "postgres %s:%d: %s", host, port, why);
    PGresult *r = NULL;
    int st = pgc_exec(c, sql, ls_now_ns() + 10 * LS_NS_PER_S, &r, why, sizeof(why));
    PQfinish(c);
    if (st != PGC_OK) {
        PQclear(r);
        return ls_err_set(err, LS_EENV, "postgres %s:%d: %s", host, port, why);
    }
    if (res)
        *res = r;
    else
        PQclear(r);
    return 0;
}

int pgstore_setup(const char *host, int port, int nres, struct ls_err *err)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "CREATE TABLE lockstorm_store (res int PRIMARY KEY, plain bigint NOT NULL DEFAULT 0, "
             "fenced bigint NOT NULL DEFAULT 0, hwm bigint NOT NULL DEFAULT 0); "
             "INSERT INTO lockstorm_store (res) SELECT generate_series(0, %d)", nres - 1);
    return admin_exec(host, port, sql, NULL, err);
}

int pgstore_dump(const char *host, int port, int nres, int fencing, const char *path,
                 struct ls_err *err)
{
    PGresult *r = NULL;
    int rc = admin_exec(host, port,
                        "SELECT res, plain, fenced, hwm FROM lockstorm_store ORDER BY res", &r, err);
    if (rc < 0)
        return rc;
    struct strbuf sb = STRBUF_INIT;
    for (int i = 0; i < PQntuples(r) && i < nres; i++) {
        int ok = 1;
        int64_t res = cell(r, i, 0, &ok), plain = cell(r, i, 1, &ok);
        int64_t fenced = cell(r, i, 2, &ok), hwm = cell(r, i, 3, &ok);
        sb_printf(&sb, "{\"res\":\"r%lld\",\"plain\":%lld", (long long)res, (long long)plain);
        if (fencing)
            sb_printf(&sb, ",\"fenced\":%lld,\"fence_hwm\":%lld", (long long)fenced,
                      (long long)hwm);
        sb_puts(&sb, "}\n");
    }
    PQclear(r);
    int w = sb_write_file(&sb, path);
    sb_free(&sb);
    if (w < 0)
        return ls_err_errno(err, LS_EIO, -w, "write %s", path);
    return 0;
}

/* ---- struct store_ops ------------------------------------------------- */

static int op_open(void **out, const char *host, int port, const char *password,
                   int64_t timeout_ns, struct ls_err *err)
{
    (void)password;
    struct pgstore *s = NULL;
    int rc = pgstore_open(&s, host, port, timeout_ns, err);
    *out = s;
    return rc;
}

static void op_close(void *s)
{
    pgstore_close(s);
}

static void op_read(void *s, struct lock *lk, int res, int has_fence, uint64_t fence,
                    struct store_op *plain, struct store_op *fenced)
{
    pgstore_read(s, pg_advisory_txn(lk), res, has_fence, fence, plain, fenced);
}

static void op_write(void *s, struct lock *lk, int res, int64_t pval, int do_fenced,
                     uint64_t fence, int64_t fval, struct store_op *plain,
                     struct store_op *fenced)
{
    pgstore_write(s, pg_advisory_txn(lk), res, pval, do_fenced, fence, fval, plain, fenced);
}

const struct store_ops store_pg = {
    .name = "postgres",
    .open = op_open,
    .close = op_close,
    .read = op_read,
    .write = op_write,
};
