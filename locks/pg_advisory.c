/*
 * pg_advisory.c: PostgreSQL advisory locks (reference article 05, "the
 * quiet workhorse"), against the server `cluster.topology: postgres`
 * starts (backends/postgres.h), through the fault proxy. The key is
 * pga_key(res): FNV-1a 64 of the resource's key, lock_key (lock.key_prefix
 * and its name; "lockstorm:r<res>" by default, pgc_key of locks/pg_conn.h).
 *
 * mode session: pg_try_advisory_lock(key) on the worker's connection, held
 * until pg_advisory_unlock(key) or until the session ends. mode xact:
 * BEGIN; pg_try_advisory_xact_lock(key), held until COMMIT (the release).
 * There is no TTL: a grant lasts as long as the server keeps the session
 * (a paused client keeps it; a dead or reset connection loses it, and the
 * client learns that only at its next statement). No fences, no renewal.
 */
#include "locks/pg_advisory.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "locks/lock.h"
#include "locks/pg_conn.h"
#include "util/timeutil.h"

enum pga_mode { PGA_SESSION, PGA_XACT };

struct pga_options {
    int mode;          /* enum pga_mode */
    int64_t timeout;   /* ns: connect and per-statement client deadline */
};

static const char *const mode_choices[] = {"session", "xact", NULL};

static const struct opt_def pga_options_tab[] = {
    {"mode", OPT_ENUM, offsetof(struct pga_options, mode), "session", 0, 0, mode_choices, NULL,
     "session: pg_try_advisory_lock / pg_advisory_unlock on the worker's connection; xact: "
     "BEGIN; pg_try_advisory_xact_lock, released by COMMIT (the hold's storage ops run in that "
     "transaction)"},
    {"timeout", OPT_DURATION, offsetof(struct pga_options, timeout), "1s", 1e6, 60e9, NULL, NULL,
     "connect and per-statement deadline (client side); a reply later than this is an unknown "
     "outcome and the connection is dropped"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

struct pga {
    char host[64];
    int port;
    int mode;
    int64_t timeout;
    PGconn *c;
    int in_txn;        /* xact: the transaction holding the grant is open */
    char cmd[32];      /* command tag of the last statement ("COMMIT", "ROLLBACK") */
    char why[256];
};

/* The advisory lock number of resource res: FNV-1a 64 of its key. */
static int64_t pga_key(const struct lock *lk, int res)
{
    char key[LOCK_KEY_MAX];
    lock_key(lk->cfg, res, 0, key, sizeof(key));
    return pgc_key_of_name(key);
}

static void pga_drop(struct pga *s)
{
    if (s->c) {
        PQfinish(s->c);
        s->c = NULL;
    }
    s->in_txn = 0;
}

/* A live connection, reconnecting when there is none or the old one died.
 * Returns 0, or -1 (nothing was sent). */
static int pga_ensure(struct pga *s)
{
    if (s->c && !pgc_dead(s->c))
        return 0;
    pga_drop(s);
    s->c = pgc_connect(s->host, s->port, ls_now_ns() + s->timeout, s->why, sizeof(s->why));
    return s->c ? 0 : -1;
}

static int pga_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    struct pga *s = calloc(1, sizeof(*s));
    if (!s)
        return ls_err_set(err, LS_ENOMEM, "pg-advisory: out of memory");
    lk->ctx = s;
    if (cfg->nnodes < 1)
        return ls_err_set(err, LS_EUSAGE, "pg-advisory: needs the PostgreSQL server "
                          "(cluster.topology: postgres)");
    const struct pga_options *o = cfg->options;
    s->mode = o ? o->mode : PGA_SESSION;
    s->timeout = o && o->timeout > 0 ? o->timeout : LS_NS_PER_S;
    snprintf(s->host, sizeof(s->host), "%s", cfg->nodes[0].host);
    s->port = cfg->nodes[0].port;
    if (pga_ensure(s) < 0)
        return ls_err_set(err, LS_EENV, "pg-advisory: %s:%d: %s", s->host, s->port, s->why);
    return 0;
}

static void pga_destroy(struct lock *lk)
{
    struct pga *s = lk ? lk->ctx : NULL;
    if (!s)
        return;
    pga_drop(s);
    free(s);
    lk->ctx = NULL;
}

/* Run sql; a boolean first column is *val, the command tag is s->cmd.
 * With reconnect, a missing or dead connection is replaced first (acquire);
 * without it (what must run in the session or transaction that holds the
 * grant: unlock, COMMIT, ROLLBACK) a dead connection is LOCK_FAIL. Maps the
 * outcome to the lock outcomes: LOCK_OK (ran), LOCK_FAIL (error reply or no
 * connection: nothing happened), LOCK_UNKNOWN (timeout or lost connection
 * after sending; the connection is dropped, which ends the session on the
 * server). */
static int pga_run(struct pga *s, const char *sql, int reconnect, int *val, int *err_kind)
{
    s->cmd[0] = '\0';
    if (reconnect ? pga_ensure(s) < 0 : (!s->c || pgc_dead(s->c))) {
        *err_kind = EVE_CONN;
        if (!reconnect)
            pga_drop(s);
        return LOCK_FAIL;
    }
    PGresult *r = NULL;
    int st = pgc_exec(s->c, sql, ls_now_ns() + s->timeout, &r, s->why, sizeof(s->why));
    if (st == PGC_TIMEOUT || st == PGC_CONN) {
        *err_kind = st == PGC_TIMEOUT ? EVE_TIMEOUT : EVE_CONN;
        pga_drop(s);
        return LOCK_UNKNOWN;
    }
    if (st == PGC_ERROR) {
        *err_kind = EVE_REPLY;
        PQclear(r);
        return LOCK_FAIL;
    }
    if (val) {
        *val = -1;
        if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) >= 1)
            *val = strcmp(PQgetvalue(r, 0, 0), "t") == 0 ? 1
                   : strcmp(PQgetvalue(r, 0, 0), "f") == 0 ? 0 : -1;
    }
    snprintf(s->cmd, sizeof(s->cmd), "%s", r ? PQcmdStatus(r) : "");
    PQclear(r);
    if (val && *val < 0) {
        *err_kind = EVE_PROTO;
        return LOCK_UNKNOWN;
    }
    return LOCK_OK;
}

static int pga_acquire(struct lock *lk, struct grant *g, int *err_kind)
{
    struct pga *s = lk->ctx;
    char sql[128];
    g->has_fence = 0;
    g->no_lease = 1;
    g->validity_ns = 0;
    if (s->mode == PGA_XACT && s->in_txn) { /* a transaction left open: not ours any more */
        int e = EVE_NONE;
        if (pga_run(s, "ROLLBACK", 0, NULL, &e) != LOCK_OK)
            pga_drop(s);
        s->in_txn = 0;
    }
    if (s->mode == PGA_XACT)
        snprintf(sql, sizeof(sql), "BEGIN; SELECT pg_try_advisory_xact_lock(%lld)",
                 (long long)pga_key(lk, g->res));
    else
        snprintf(sql, sizeof(sql), "SELECT pg_try_advisory_lock(%lld)",
                 (long long)pga_key(lk, g->res));
    int got = -1;
    int o = pga_run(s, sql, 1, &got, err_kind);
    if (o != LOCK_OK) {
        if (s->mode == PGA_XACT && s->c) { /* an error inside BEGIN leaves it aborted */
            int e = EVE_NONE;
            if (pga_run(s, "ROLLBACK", 0, NULL, &e) != LOCK_OK)
                pga_drop(s);
        }
        return o;
    }
    if (got == 1) {
        s->in_txn = s->mode == PGA_XACT;
        return LOCK_OK;
    }
    if (s->mode == PGA_XACT) {
        int e = EVE_NONE;
        if (pga_run(s, "ROLLBACK", 0, NULL, &e) != LOCK_OK)
            pga_drop(s);
    }
    return LOCK_BUSY;
}

static int pga_release(struct lock *lk, const struct grant *g, int *err_kind)
{
    struct pga *s = lk->ctx;
    if (s->mode == PGA_XACT) {
        if (!s->in_txn) { /* the transaction went with its connection */
            *err_kind = EVE_CONN;
            return LOCK_FAIL;
        }
        int o = pga_run(s, "COMMIT", 0, NULL, err_kind); /* never on a new connection */
        s->in_txn = 0;
        if (o != LOCK_OK)
            return o;
        /* COMMIT of an aborted transaction answers ROLLBACK: nothing of it held */
        return strcmp(s->cmd, "COMMIT") == 0 ? LOCK_OK : LOCK_NOT_OWNER;
    }
    /* the session that holds it, or none: a new session holds nothing */
    char sql[96];
    snprintf(sql, sizeof(sql), "SELECT pg_advisory_unlock(%lld)", (long long)pga_key(lk, g->res));
    int got = -1;
    int o = pga_run(s, sql, 0, &got, err_kind);
    if (o != LOCK_OK)
        return o;
    return got == 1 ? LOCK_OK : LOCK_NOT_OWNER;
}

PGconn *pg_advisory_txn(struct lock *lk)
{
    if (!lk || lk->ops != &lock_pg_advisory || !lk->ctx)
        return NULL;
    struct pga *s = lk->ctx;
    return s->mode == PGA_XACT && s->in_txn ? s->c : NULL;
}

const struct lock_ops lock_pg_advisory = {
    .version = LOCK_OPS_VERSION,
    .name = "pg-advisory",
    .model = "PostgreSQL advisory lock (cluster.topology: postgres): held by the session or the "
             "transaction, no TTL; the key is FNV-1a 64 of the lock name",
    .caps = 0,
    .options = pga_options_tab,
    .options_size = sizeof(struct pga_options),
    .init = pga_init,
    .destroy = pga_destroy,
    .acquire = pga_acquire,
    .renew = NULL,
    .release = pga_release,
};
