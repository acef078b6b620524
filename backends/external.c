/*
 * external.c: the external topology (see external.h): resolve
 * the given node addresses, wait (bounded) until each answers PING, clear
 * the keys an earlier run left, and start the local storage node. Nothing
 * here ever signals or restarts a node: lockstorm does not own them.
 */
#include "backends/external.h"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "backends/backend.h"
#include "backends/storage.h"
#include "locks/lock.h"
#include "model/workload.h"
#include "util/timeutil.h"

#define PING_TIMEOUT (10 * LS_NS_PER_S) /* a node that is still starting gets this long */
#define CLEAN_TIMEOUT (5 * LS_NS_PER_S)
#define CLEAN_MAX_ROUNDS 10000

int external_split_address(const char *addr, char *host, size_t hostn, int *port)
{
    const char *colon = addr ? strrchr(addr, ':') : NULL;
    if (!colon || colon == addr || !colon[1] || (size_t)(colon - addr) >= hostn)
        return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p < 1 || p > 65535 || colon[1] < '0' || colon[1] > '9')
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    *port = (int)p;
    return 0;
}

/* Contract: host name or IPv4 literal -> dotted IPv4 text in out (16
 * bytes). Returns 0 or LS_EENV with err naming the address. */
static int resolve4(int index, const char *addr, const char *host, char *out, size_t n,
                    struct ls_err *err)
{
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || !res)
        return ls_err_set(err, LS_EENV, "node %d (%s): resolve '%s': %s", index, addr, host,
                          rc ? gai_strerror(rc) : "no IPv4 address");
    const struct sockaddr_in *sa = (const struct sockaddr_in *)(const void *)res->ai_addr;
    const char *ok = inet_ntop(AF_INET, &sa->sin_addr, out, (socklen_t)n);
    freeaddrinfo(res);
    if (!ok)
        return ls_err_set(err, LS_EENV, "node %d (%s): cannot format its address", index, addr);
    return 0;
}

/* Contract: a connected context with a 2 s command timeout once the node
 * answers PING, polled until PING_TIMEOUT; NULL with err set otherwise.
 * Caller frees with redisFree. */
static redisContext *connect_ready(const struct node_proc *n, const char *addr,
                                   int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + PING_TIMEOUT;
    char last[160] = "no answer";
    for (;;) {
        struct timeval tv = {2, 0};
        redisContext *c = node_connect(n, tv);
        if (c && c->err && strncmp(c->errstr, "AUTH:", 5) == 0) { /* a wrong password: no retry */
            ls_err_set(err, LS_EENV, "node %d (%s): %s; check the password in the environment "
                       "variable cluster.password_env names", n->index, addr, c->errstr);
            redisFree(c);
            return NULL;
        }
        if (c && !c->err) {
            redisSetTimeout(c, tv);
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
            if (r && !ok)
                snprintf(last, sizeof(last), "PING: %s", r->type == REDIS_REPLY_ERROR ? r->str
                                                                                  : "unexpected reply");
            if (r)
                freeReplyObject(r);
            if (ok)
                return c;
            if (c->err)
                snprintf(last, sizeof(last), "PING: %s", c->errstr);
        } else {
            snprintf(last, sizeof(last), "connect: %s", c ? c->errstr : "out of memory");
        }
        if (c)
            redisFree(c);
        if (interrupted && interrupted(arg)) {
            ls_err_set(err, LS_EINTR, "interrupted while connecting to node %d (%s)", n->index,
                       addr);
            return NULL;
        }
        if (ls_now_ns() >= deadline) {
            ls_err_set(err, LS_EENV, "node %d (%s = %s:%d): %s (for %llds)", n->index, addr,
                       n->host, n->port, last, (long long)(PING_TIMEOUT / LS_NS_PER_S));
            return NULL;
        }
        ls_sleep_ns(50 * LS_NS_PER_MS);
    }
}

/* Contract: delete every lockstorm:* key on the node (SCAN + DEL, bounded
 * in rounds and time). Returns 0 or LS_EENV with err set. */
static int clean_keys(redisContext *c, const struct node_proc *n, const char *addr,
                      struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + CLEAN_TIMEOUT;
    char cursor[32] = "0";
    for (int round = 0; round < CLEAN_MAX_ROUNDS; round++) {
        redisReply *r = redisCommand(c, "SCAN %s MATCH lockstorm:* COUNT 1000", cursor);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_ARRAY) {
            int rc = ls_err_set(err, LS_EENV, "node %d (%s): SCAN for old lockstorm keys: %s",
                                n->index, addr,
                                !r ? c->errstr : r->type == REDIS_REPLY_ERROR ? r->str
                                                                              : "unexpected reply");
            if (r)
                freeReplyObject(r);
            return rc;
        }
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        const redisReply *keys = r->element[1];
        for (size_t i = 0; i < keys->elements; i++)
            if (keys->element[i]->type == REDIS_REPLY_STRING)
                redisAppendCommand(c, "DEL %b", keys->element[i]->str, keys->element[i]->len);
        for (size_t i = 0; i < keys->elements; i++) {
            redisReply *d = NULL;
            if (keys->element[i]->type == REDIS_REPLY_STRING &&
                redisGetReply(c, (void **)&d) != REDIS_OK) {
                freeReplyObject(r);
                return ls_err_set(err, LS_EENV, "node %d (%s): DEL old lockstorm key: %s",
                                  n->index, addr, c->errstr);
            }
            if (d)
                freeReplyObject(d);
        }
        freeReplyObject(r);
        if (strcmp(cursor, "0") == 0)
            return 0;
        if (ls_now_ns() >= deadline)
            break;
    }
    return ls_err_set(err, LS_ETIMEOUT, "node %d (%s): old lockstorm keys not cleared within %llds",
                      n->index, addr, (long long)(CLEAN_TIMEOUT / LS_NS_PER_S));
}

/* Contract: with a lock.key_prefix of its own the keyspace is shared: delete
 * only this workload's keys (each resource's lock key and fence counter,
 * locks/lock.h lock_key), never a pattern. Returns 0 or LS_EENV with err set. */
static int clean_own_keys(redisContext *c, const struct node_proc *n, const char *addr,
                          const struct workload *w, struct ls_err *err)
{
    struct lock_config kc = {.key_prefix = workload_key_prefix(w),
                             .res_names = (const char *const *)w->workers.resource_names,
                             .nres = w->workers.resource_names ? (int)w->workers.resources : 0};
    for (int64_t r = 0; r < w->workers.resources; r++) {
        char key[LOCK_KEY_MAX], fkey[LOCK_KEY_MAX];
        size_t kl = lock_key(&kc, (int)r, 0, key, sizeof(key));
        size_t fl = lock_key(&kc, (int)r, 1, fkey, sizeof(fkey));
        redisReply *d = redisCommand(c, "DEL %b %b", key, kl, fkey, fl);
        if (!d || d->type == REDIS_REPLY_ERROR) {
            int rc = ls_err_set(err, LS_EENV, "node %d (%s): DEL old lockstorm key %s: %s",
                                n->index, addr, key, d ? d->str : c->errstr);
            if (d)
                freeReplyObject(d);
            return rc;
        }
        freeReplyObject(d);
    }
    return 0;
}

int external_cluster_start(struct cluster *c, const struct workload *w, const char *basedir,
                           int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    memset(c, 0, sizeof(*c));
    int nn = w->cluster.naddresses;
    if (nn < 1)
        return ls_err_set(err, LS_EUSAGE, "topology external: cluster.addresses is empty");
    c->nodes = calloc((size_t)nn, sizeof(*c->nodes));
    if (!c->nodes)
        return ls_err_set(err, LS_ENOMEM, "cluster: out of memory");
    c->nnodes = nn;
    c->nalloc = nn;
    const char *pwenv = w->cluster.password_env;
    const char *pw = pwenv && pwenv[0] ? getenv(pwenv) : NULL; /* never echoed: secret.h */
    if (pwenv && pwenv[0] && (!pw || !pw[0] || strlen(pw) >= LS_PASSWORD_MAX))
        return ls_err_set(err, LS_EENV, "cluster.password_env: the environment variable %s %s; "
                          "export it with the nodes' password", pwenv,
                          pw && pw[0] ? "holds a password longer than 127 bytes"
                                      : "is not set or empty");
    for (int i = 0; i < nn; i++) {
        struct node_proc *n = &c->nodes[i];
        if (pw)
            snprintf(n->password, sizeof(n->password), "%s", pw);
        const char *addr = w->cluster.addresses[i];
        char host[256];
        n->index = i;
        n->persistence = w->cluster.persistence;
        if (external_split_address(addr, host, sizeof(host), &n->port) < 0)
            return ls_err_set(err, LS_EUSAGE, "node %d: '%s' is not host:port", i, addr);
        int rc = resolve4(i, addr, host, n->host, sizeof(n->host), err);
        if (rc < 0)
            return rc;
        redisContext *ctx = connect_ready(n, addr, interrupted, arg, err);
        if (!ctx)
            return err->code ? err->code : LS_EENV;
        rc = strcmp(workload_key_prefix(w), WL_KEY_PREFIX) == 0
                 ? clean_keys(ctx, n, addr, err)
                 : clean_own_keys(ctx, n, addr, w, err);
        redisFree(ctx);
        if (rc < 0)
            return rc;
    }
    c->storage.index = -1;
    int rc = cluster_password(w, c->storage.password, sizeof(c->storage.password), err);
    if (rc < 0)
        return rc;
    rc = node_start(&c->storage, basedir, "storage", PERSIST_NONE, err);
    c->has_storage = 1;
    return rc;
}

const struct backend_ops backend_external = {
    .version = BACKEND_OPS_VERSION,
    .name = "external",
    .help = "redis servers someone else runs, at cluster.addresses; lockstorm starts only its "
            "storage node",
    .caps = BACKEND_CAP_REDIS | BACKEND_CAP_ADDRESSES,
    .start = external_cluster_start,
    .stop = cluster_stop,
    .dump_storage = backend_redis_dump,
    .store = &store_redis,
};
