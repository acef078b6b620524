/*
 * redis_conn.c: one lazily (re)connected hiredis connection per node, with
 * outcome classification (see redis_conn.h), script calls with NOSCRIPT
 * fallback, and the common parts of the single-node implementations.
 * Hot path rule: no allocation per call beyond what hiredis itself does;
 * keys and numbers are written into stack buffers without printf.
 */
#include "locks/redis_conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/timeutil.h"

const struct opt_def rlock_timeout_options[] = {
    {"timeout", OPT_DURATION, offsetof(struct rlock_options, timeout), "200ms", 1e6, 60e9,
     NULL, NULL, "connect and per-command timeout; a reply later than this is an unknown outcome"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

const struct opt_def rlock_gap_options[] = {
    {"timeout", OPT_DURATION, offsetof(struct rlock_options, timeout), "200ms", 1e6, 60e9,
     NULL, NULL, "connect and per-command timeout; a reply later than this is an unknown outcome"},
    {"gap", OPT_DURATION, offsetof(struct rlock_options, gap), "0", 0, 10e9, NULL, NULL,
     "sleep between the two commands of the acquire (widens the race/crash window)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* Copy at most n-1 bytes of s into buf, always terminated. */
static void copy_str(char *buf, size_t n, const char *s)
{
    size_t len = strlen(s);
    if (len >= n)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
}

size_t rconn_u64(char *buf, size_t n, uint64_t v)
{
    char tmp[24];
    size_t len = 0;
    do {
        tmp[len++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (len >= n)
        len = n - 1;
    for (size_t i = 0; i < len; i++)
        buf[i] = tmp[len - 1 - i];
    buf[len] = '\0';
    return len;
}

int rconn_init(struct rconn *rc, const struct lock_node *node, int64_t timeout_ns,
               const char *client_name, const struct rscript *scripts, int nscripts,
               struct ls_err *err)
{
    memset(rc, 0, sizeof(*rc));
    if (!node || !node->host[0] || node->port <= 0 || node->port > 65535)
        return ls_err_set(err, LS_EUSAGE, "redis connection: no valid node address");
    if (nscripts < 0 || nscripts > RCONN_MAX_SCRIPTS)
        return ls_err_set(err, LS_EUSAGE, "redis connection: too many scripts (%d)", nscripts);
    if (timeout_ns <= 0)
        timeout_ns = RCONN_DEFAULT_TIMEOUT_NS;
    copy_str(rc->host, sizeof(rc->host), node->host);
    rc->port = node->port;
    copy_str(rc->password, sizeof(rc->password), node->password);
    rc->tv.tv_sec = (time_t)(timeout_ns / LS_NS_PER_S);
    rc->tv.tv_usec = (suseconds_t)((timeout_ns % LS_NS_PER_S) / LS_NS_PER_US);
    if (rc->tv.tv_sec == 0 && rc->tv.tv_usec == 0)
        rc->tv.tv_usec = 1;
    if (client_name)
        copy_str(rc->client_name, sizeof(rc->client_name), client_name);
    rc->scripts = scripts;
    rc->nscripts = nscripts;
    return 0;
}

void rconn_close(struct rconn *rc)
{
    if (rc && rc->c) {
        redisFree(rc->c);
        rc->c = NULL;
    }
    if (rc)
        rc->nlate = 0;
}

int rconn_stale(const struct rconn *rc)
{
    if (!rc->c || rc->c->fd < 0)
        return 0;
    struct pollfd pf = {.fd = rc->c->fd, .events = POLLIN};
    return poll(&pf, 1, 0) > 0 && pf.revents != 0; /* EOF, reset, or unasked bytes */
}

void rconn_follow(struct rconn *rc, struct replset_resolver *rs)
{
    rconn_close(rc);
    rc->follow = rs;
}

/* Record why the context failed, classify it, drop it. errnum is errno as
 * saved right after the failing hiredis call. */
static int drop(struct rconn *rc, int errnum)
{
    int kind = EVE_CONN;
    if (rc->c) {
        copy_str(rc->errstr, sizeof(rc->errstr), rc->c->errstr);
        if (rc->c->err == REDIS_ERR_IO && (errnum == EAGAIN || errnum == EWOULDBLOCK ||
                                           errnum == ETIMEDOUT))
            kind = EVE_TIMEOUT;
        else if (rc->c->err == REDIS_ERR_PROTOCOL)
            kind = EVE_PROTO;
        else if (rc->c->err == REDIS_ERR_OOM)
            kind = EVE_OTHER;
    }
    rconn_close(rc);
    return kind;
}

/* Pipeline AUTH, CLIENT SETNAME, the missing SCRIPT LOADs and (following a
 * replicated set) ROLE, read every reply. Returns 0, or the error kind
 * after dropping the connection (EVE_NO_PRIMARY: ROLE is not master;
 * EVE_CONN: AUTH refused). */
static int handshake(struct rconn *rc)
{
    int sent = 0, auth = rc->password[0] != '\0', refused = 0;
    int loading[RCONN_MAX_SCRIPTS];
    if (auth) {
        if (redisAppendCommand(rc->c, "AUTH %s", rc->password) != REDIS_OK)
            return drop(rc, errno);
        sent++;
    }
    if (rc->client_name[0]) {
        if (redisAppendCommand(rc->c, "CLIENT SETNAME %s", rc->client_name) != REDIS_OK)
            return drop(rc, errno);
        sent++;
    }
    for (int i = 0; i < rc->nscripts; i++) {
        loading[i] = 0;
        if (rc->sha[i][0])
            continue;
        if (redisAppendCommand(rc->c, "SCRIPT LOAD %s", rc->scripts[i].body) != REDIS_OK)
            return drop(rc, errno);
        loading[i] = 1;
        sent++;
    }
    if (rc->follow && redisAppendCommand(rc->c, "ROLE") != REDIS_OK)
        return drop(rc, errno);
    int script = -1;
    for (int k = 0; k < sent; k++) {
        void *r = NULL;
        if (redisGetReply(rc->c, &r) != REDIS_OK)
            return drop(rc, errno);
        redisReply *reply = r;
        if (k == 0 && auth) {
            if (!reply || reply->type != REDIS_REPLY_STATUS) {
                refused = 1;            /* the node's words, never the password */
                snprintf(rc->errstr, sizeof(rc->errstr), "%s:%d: AUTH: %.80s", rc->host, rc->port,
                         reply && reply->type == REDIS_REPLY_ERROR ? reply->str : "no reply");
            }
            freeReplyObject(reply);
            continue;
        }
        if (k == auth && rc->client_name[0]) {
            freeReplyObject(reply);     /* a proxy may refuse SETNAME: harmless */
            continue;
        }
        do
            script++;
        while (!loading[script]);
        if (reply && reply->type == REDIS_REPLY_STRING && reply->len == 40)
            memcpy(rc->sha[script], reply->str, 41);
        freeReplyObject(reply);         /* on an error reply EVAL is used instead */
    }
    if (refused) {
        if (rc->follow) {               /* its ROLE reply: read, unused */
            void *r = NULL;
            if (redisGetReply(rc->c, &r) == REDIS_OK)
                freeReplyObject(r);
        }
        rconn_close(rc);
        return EVE_CONN;
    }
    if (rc->follow) {
        void *r = NULL;
        if (redisGetReply(rc->c, &r) != REDIS_OK)
            return drop(rc, errno);
        int master = replset_role_is_master(r);
        freeReplyObject(r);
        if (!master) {
            snprintf(rc->errstr, sizeof(rc->errstr), "%s:%d: ROLE is not master", rc->host,
                     rc->port);
            replset_resolve_stale(rc->follow);
            rconn_close(rc);
            return EVE_NO_PRIMARY;
        }
    }
    return 0;
}

int rconn_connect(struct rconn *rc, int *err_kind)
{
    /* The poll of rconn_stale is one syscall of the three (poll, write,
     * read) a hammering worker makes per command; skipped for a connection
     * that just answered: worker CPU per command at W = 8 12.4 -> 10.6 us
     * (docs/performance.md "Worker loop"). */
    if (rc->c && (ls_now_ns() - rc->last_reply_ns < RCONN_FRESH_NS || !rconn_stale(rc)))
        return LOCK_OK;
    rconn_close(rc);
    if (rc->follow) {
        /* every (re)connect asks afresh which node is the primary */
        int n = replset_resolve(rc->follow);
        if (n < 0) {
            copy_str(rc->errstr, sizeof(rc->errstr), rc->follow->why);
            *err_kind = EVE_NO_PRIMARY;
            return LOCK_FAIL;
        }
        copy_str(rc->host, sizeof(rc->host), rc->follow->links[n].host);
        rc->port = rc->follow->links[n].port;
        copy_str(rc->password, sizeof(rc->password), rc->follow->links[n].password);
    }
    rc->c = redisConnectWithTimeout(rc->host, rc->port, rc->tv);
    if (!rc->c || rc->c->err) {
        if (rc->c)
            copy_str(rc->errstr, sizeof(rc->errstr), rc->c->errstr);
        else
            copy_str(rc->errstr, sizeof(rc->errstr), "out of memory");
        rconn_close(rc);
        *err_kind = EVE_CONN;
        return LOCK_FAIL;
    }
    int one = 1;
    (void)setsockopt(rc->c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (redisSetTimeout(rc->c, rc->tv) != REDIS_OK) {
        *err_kind = drop(rc, errno);
        return LOCK_FAIL;
    }
    int kind = handshake(rc);
    if (kind) {
        *err_kind = kind;
        return LOCK_FAIL;
    }
    rc->connects++;
    return LOCK_OK;
}

/* Contract: the RESP framing of argv (what redisFormatCommandArgv makes)
 * written into buf by hand; its length, or 0 when it does not fit in n.
 * hiredis formats through sdscatfmt and two allocations per command; this
 * is a few memcpy into a stack buffer (with the single staleness check of
 * rconn_eval: user CPU per command at W = 8 2.56 -> 2.05 us, perf,
 * docs/performance.md "Worker loop"). */
static size_t frame(char *buf, size_t n, int argc, const char **argv, const size_t *argvlen)
{
    size_t len = 0;
    char num[24];
    for (int i = -1; i < argc; i++) {
        size_t nl = rconn_u64(num, sizeof(num), (uint64_t)(i < 0 ? argc : (int)argvlen[i]));
        size_t body = i < 0 ? 0 : argvlen[i] + 2;
        if (len + 1 + nl + 2 + body > n)
            return 0;
        buf[len++] = i < 0 ? '*' : '$';
        memcpy(buf + len, num, nl);
        memcpy(buf + len + nl, "\r\n", 2);
        len += nl + 2;
        if (i >= 0) {
            memcpy(buf + len, argv[i], argvlen[i]);
            memcpy(buf + len + argvlen[i], "\r\n", 2);
            len += body;
        }
    }
    return len;
}

/* Contract: send argv on rc's live connection (the caller connected it)
 * and wait for the reply; rconn_command's outcomes. */
static int send_command(struct rconn *rc, int argc, const char **argv, const size_t *argvlen,
                        redisReply **reply, int *err_kind)
{
    char buf[1024];
    size_t n = frame(buf, sizeof(buf), argc, argv, argvlen);
    int sent = n > 0 ? redisAppendFormattedCommand(rc->c, buf, n)
                     : redisAppendCommandArgv(rc->c, argc, argv, argvlen);
    void *got = NULL;
    if (sent != REDIS_OK || redisGetReply(rc->c, &got) != REDIS_OK || !got) {
        *err_kind = drop(rc, errno);
        return LOCK_UNKNOWN;
    }
    redisReply *r = got;
    rc->last_reply_ns = ls_now_ns();
    /* a demoted or fenced-off primary: resolve again on the next call */
    if (rc->follow && r->type == REDIS_REPLY_ERROR && replset_role_error(r->str, r->len))
        rconn_close(rc);
    *reply = r;
    return LOCK_OK;
}

int rconn_command(struct rconn *rc, int argc, const char **argv, const size_t *argvlen,
                  redisReply **reply, int *err_kind)
{
    *reply = NULL;
    if (rconn_connect(rc, err_kind) != LOCK_OK)
        return LOCK_FAIL;
    return send_command(rc, argc, argv, argvlen, reply, err_kind);
}

/* The node does not know the sha: nothing ran. */
static int is_noscript(const redisReply *r)
{
    return r->type == REDIS_REPLY_ERROR && r->len >= 8 && memcmp(r->str, "NOSCRIPT", 8) == 0;
}

int rconn_eval(struct rconn *rc, int script, int nargs, const char **args, const size_t *lens,
               redisReply **reply, int *err_kind)
{
    const char *argv[RCONN_MAX_ARGS];
    size_t argvlen[RCONN_MAX_ARGS];
    *reply = NULL;
    if (script < 0 || script >= rc->nscripts || nargs < 0 || nargs > RCONN_MAX_ARGS - 2) {
        *err_kind = EVE_OTHER;
        return LOCK_FAIL;
    }
    memcpy(argv + 2, args, (size_t)nargs * sizeof(*args));
    memcpy(argvlen + 2, lens, (size_t)nargs * sizeof(*lens));
    /* Connect first: the handshake may learn the sha. */
    if (rconn_connect(rc, err_kind) != LOCK_OK)
        return LOCK_FAIL;
    if (rc->sha[script][0]) {
        argv[0] = "EVALSHA";
        argvlen[0] = 7;
        argv[1] = rc->sha[script];
        argvlen[1] = 40;
        /* connected just above: rconn_command would poll for staleness a
         * second time (strace: 2 poll per command before, 1 now) */
        int o = send_command(rc, nargs + 2, argv, argvlen, reply, err_kind);
        if (o != LOCK_OK || !is_noscript(*reply))
            return o;
        /* The node lost its script cache (restart, SCRIPT FLUSH): nothing
         * ran, so sending the body now is safe. */
        freeReplyObject(*reply);
        *reply = NULL;
    }
    argv[0] = "EVAL";
    argvlen[0] = 4;
    argv[1] = rc->scripts[script].body;
    argvlen[1] = strlen(argv[1]);
    return rconn_command(rc, nargs + 2, argv, argvlen, reply, err_kind);
}

int rconn_unexpected(struct rconn *rc, redisReply *reply, int *err_kind)
{
    int o = LOCK_UNKNOWN;
    *err_kind = EVE_PROTO;
    if (reply && reply->type == REDIS_REPLY_ERROR) {
        o = LOCK_FAIL;
        *err_kind = EVE_REPLY;
    }
    if (reply && (reply->type == REDIS_REPLY_ERROR || reply->type == REDIS_REPLY_STATUS ||
                  reply->type == REDIS_REPLY_STRING))
        copy_str(rc->errstr, sizeof(rc->errstr), reply->str);
    freeReplyObject(reply);
    return o;
}

/* ---- single-node implementations ---- */

int rsingle_init(struct lock *lk, const struct rscript *scripts, int nscripts, int need_ttl,
                 struct ls_err *err)
{
    const struct lock_config *cfg = lk->cfg;
    const char *name = lk->ops->name;
    if (!cfg || cfg->nnodes < 1 || !cfg->nodes)
        return ls_err_set(err, LS_EUSAGE, "lock %s: needs one node", name);
    if (need_ttl && cfg->ttl_ns < LS_NS_PER_MS)
        return ls_err_set(err, LS_EUSAGE, "lock %s: ttl must be at least 1ms", name);
    struct rsingle *s = calloc(1, sizeof(*s));
    if (!s)
        return ls_err_set(err, LS_ENOMEM, "lock %s: out of memory", name);
    lk->ctx = s;
    s->cfg = cfg;

    const struct rlock_options *o = cfg->options;
    int64_t timeout = cfg->timeout_ns > 0 ? cfg->timeout_ns : RCONN_DEFAULT_TIMEOUT_NS;
    if (o) {
        timeout = o->timeout > 0 ? o->timeout : timeout;
        s->gap_ns = o->gap > 0 ? o->gap : 0;
    }
    s->ttl_ns = cfg->ttl_ns;
    s->fencing = cfg->fencing != 0;
    int64_t ttl_ms = (cfg->ttl_ns + LS_NS_PER_MS - 1) / LS_NS_PER_MS;
    if (ttl_ms < 1)
        ttl_ms = 1;
    s->ttl_ms_len = rconn_u64(s->ttl_ms, sizeof(s->ttl_ms), (uint64_t)ttl_ms);

    char client[32] = "lockstorm-w";
    rconn_u64(client + 11, sizeof(client) - 11, (uint64_t)(cfg->worker < 0 ? 0 : cfg->worker));
    int rc = rconn_init(&s->conn, &cfg->nodes[0], timeout, client, scripts, nscripts, err);
    if (rc)
        return rc;
    if (cfg->replset) {
        if (cfg->nnodes != cfg->replset->nnodes)
            return ls_err_set(err, LS_EUSAGE, "lock %s: %d node addresses for a set of %d", name,
                              cfg->nnodes, cfg->replset->nnodes);
        replset_resolver_init(&s->follow, cfg->replset, cfg->nodes, s->conn.tv);
        rconn_follow(&s->conn, &s->follow);
    }
    if (cfg->wait_replicas > 0) {
        s->wait_replicas = cfg->wait_replicas;
        int64_t ms = timeout / 2 / LS_NS_PER_MS;
        s->wait_ms_len = rconn_u64(s->wait_ms, sizeof(s->wait_ms), (uint64_t)(ms < 1 ? 1 : ms));
    }
    int kind = 0;
    (void)rconn_connect(&s->conn, &kind);   /* best effort; calls reconnect */
    return 0;
}

void rsingle_destroy(struct lock *lk)
{
    if (!lk || !lk->ctx)
        return;
    struct rsingle *s = lk->ctx;
    rconn_close(&s->conn);
    replset_resolver_close(&s->follow);
    free(s);
    lk->ctx = NULL;
}

size_t rsingle_key(const struct rsingle *s, const struct grant *g, char *buf)
{
    return lock_key(s->cfg, g->res, 0, buf, RCONN_KEY_MAX);
}

size_t rsingle_fence_key(const struct rsingle *s, const struct grant *g, char *buf)
{
    return lock_key(s->cfg, g->res, 1, buf, RCONN_KEY_MAX);
}

int rsingle_owner_reply(struct rsingle *s, redisReply *reply, int *err_kind)
{
    if (reply->type == REDIS_REPLY_INTEGER && (reply->integer == 0 || reply->integer == 1)) {
        int o = reply->integer == 1 ? LOCK_OK : LOCK_NOT_OWNER;
        freeReplyObject(reply);
        return o;
    }
    return rconn_unexpected(&s->conn, reply, err_kind);
}

int rsingle_owner_call(struct rsingle *s, int script, const struct grant *g, int with_ttl,
                       int *err_kind)
{
    char key[RCONN_KEY_MAX];
    const char *args[4] = {"1", key, g->token, s->ttl_ms};
    size_t lens[4] = {1, rsingle_key(s, g, key), strnlen(g->token, EVLOG_TOKEN_LEN),
                      s->ttl_ms_len};
    redisReply *reply;
    int o = rconn_eval(&s->conn, script, with_ttl ? 4 : 3, args, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    return rsingle_owner_reply(s, reply, err_kind);
}

int rsingle_incr_fence(struct rsingle *s, struct grant *g, int *err_kind)
{
    char key[RCONN_KEY_MAX];
    const char *argv[2] = {"INCR", key};
    size_t lens[2] = {4, rsingle_fence_key(s, g, key)};
    redisReply *reply;
    int o = rconn_command(&s->conn, 2, argv, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    if (reply->type == REDIS_REPLY_INTEGER && reply->integer > 0) {
        g->fence = (uint64_t)reply->integer;
        g->has_fence = 1;
        freeReplyObject(reply);
        return LOCK_OK;
    }
    return rconn_unexpected(&s->conn, reply, err_kind);
}

/* Contract: confirm the grant g just made on s->conn with WAIT (the
 * replicas must acknowledge the connection's last write). LOCK_OK when at
 * least s->wait_replicas did; else the grant is deleted again
 * (compare-and-delete, sent as EVAL: the impl may not have loaded it) and
 * the answer is LOCK_FAIL / EVE_NOT_REPLICATED; LOCK_UNKNOWN when WAIT got
 * no answer (the grant may stand on the primary, unreplicated). */
static int wait_replicas(struct rsingle *s, const struct grant *g, int *err_kind)
{
    char n[24];
    const char *argv[3] = {"WAIT", n, s->wait_ms};
    size_t lens[3] = {4, rconn_u64(n, sizeof(n), (uint64_t)s->wait_replicas), s->wait_ms_len};
    redisReply *reply;
    int o = rconn_command(&s->conn, 3, argv, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return LOCK_UNKNOWN; /* the grant was made: its fate is unknown */
    if (reply->type != REDIS_REPLY_INTEGER) {
        rconn_unexpected(&s->conn, reply, err_kind);
        return LOCK_UNKNOWN;
    }
    long long acked = reply->integer;
    freeReplyObject(reply);
    if (acked >= s->wait_replicas)
        return LOCK_OK;
    char key[RCONN_KEY_MAX];
    const char *dargv[5] = {"EVAL", RLUA_COMPARE_DEL, "1", key, g->token};
    size_t dlens[5] = {4, strlen(RLUA_COMPARE_DEL), 1, rsingle_key(s, g, key),
                       strnlen(g->token, EVLOG_TOKEN_LEN)};
    int dk = 0;
    if (rconn_command(&s->conn, 5, dargv, dlens, &reply, &dk) == LOCK_OK)
        freeReplyObject(reply); /* best effort: the TTL frees it otherwise */
    snprintf(s->conn.errstr, sizeof(s->conn.errstr), "WAIT %d: %lld replicas acknowledged",
             s->wait_replicas, acked);
    *err_kind = EVE_NOT_REPLICATED;
    return LOCK_FAIL;
}

int rsingle_acquire_call(struct rsingle *s, int script, struct grant *g, int *err_kind)
{
    char key[RCONN_KEY_MAX], fkey[RCONN_KEY_MAX];
    const char *args[6] = {"2", key, fkey, g->token, s->ttl_ms, s->fencing ? "1" : "0"};
    size_t lens[6] = {1, rsingle_key(s, g, key), rsingle_fence_key(s, g, fkey),
                      strnlen(g->token, EVLOG_TOKEN_LEN), s->ttl_ms_len, 1};
    redisReply *reply;
    g->has_fence = 0;
    g->fence = 0;
    int o = rconn_eval(&s->conn, script, 6, args, lens, &reply, err_kind);
    if (o != LOCK_OK)
        return o;
    if (reply->type != REDIS_REPLY_INTEGER || reply->integer < -1)
        return rconn_unexpected(&s->conn, reply, err_kind);
    long long v = reply->integer;
    freeReplyObject(reply);
    if (v < 0)
        return LOCK_BUSY;
    if (s->fencing) {
        g->has_fence = 1;
        g->fence = (uint64_t)v;
    }
    g->validity_ns = s->ttl_ns;
    return s->wait_replicas > 0 ? wait_replicas(s, g, err_kind) : LOCK_OK;
}
