/*
 * replset.c: following the primary of a replicated set (see replset.h).
 * Resolution costs one SENTINEL query per reconnect, never one per call:
 * a connection keeps its node until it drops (timeout, reset) or a reply
 * says the node is no longer a writable primary.
 */
#include "locks/replset.h"

#include <stdlib.h>
#include <string.h>

void replset_resolver_init(struct replset_resolver *rs, const struct replset_map *map,
                           const struct lock_node *links, struct timeval tv)
{
    memset(rs, 0, sizeof(*rs));
    rs->map = map;
    rs->links = links;
    rs->tv = tv;
    rs->node = -1;
}

void replset_resolver_close(struct replset_resolver *rs)
{
    if (rs && rs->sc) {
        redisFree(rs->sc);
        rs->sc = NULL;
    }
}

int replset_node_of_port(const struct replset_map *map, int port)
{
    for (int n = 0; n < map->nnodes; n++)
        if (map->names[n] == port || map->real[n] == port)
            return n;
    return -1;
}

/* Contract: ask sentinel rs->cur for the master's address; the node index
 * or -1 with rs->why set (the connection is dropped on I/O errors). */
static int ask_sentinel(struct replset_resolver *rs)
{
    const struct replset_map *m = rs->map;
    const struct lock_node *s = &m->sentinels[rs->cur];
    if (!rs->sc) {
        rs->sc = ls_redis_connect(s->host, s->port, rs->tv, s->password); /* util/secret.h */
        if (!rs->sc || rs->sc->err || redisSetTimeout(rs->sc, rs->tv) != REDIS_OK) {
            snprintf(rs->why, sizeof(rs->why), "sentinel %s:%d: %s", s->host, s->port,
                     rs->sc ? rs->sc->errstr : "out of memory");
            replset_resolver_close(rs);
            return -1;
        }
    }
    redisReply *r = redisCommand(rs->sc, "SENTINEL get-master-addr-by-name %s", m->master_name);
    if (!r) {
        snprintf(rs->why, sizeof(rs->why), "sentinel %s:%d: %s", s->host, s->port,
                 rs->sc->errstr);
        replset_resolver_close(rs);
        return -1;
    }
    int node = -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        char *end;
        long port = strtol(r->element[1]->str, &end, 10);
        node = *end ? -1 : replset_node_of_port(m, (int)port);
        if (node < 0)
            snprintf(rs->why, sizeof(rs->why), "sentinel %s:%d names %s:%s, not a node of the set",
                     s->host, s->port,
                     r->element[0]->type == REDIS_REPLY_STRING ? r->element[0]->str : "?",
                     r->element[1]->str);
    } else {
        snprintf(rs->why, sizeof(rs->why), "sentinel %s:%d does not know master %s", s->host,
                 s->port, m->master_name);
    }
    freeReplyObject(r);
    return node;
}

int replset_resolve(struct replset_resolver *rs)
{
    const struct replset_map *m = rs->map;
    rs->node = -1;
    if (m->nsentinels == 0) {
        int n = m->primary ? atomic_load(m->primary) : 0;
        if (n < 0 || n >= m->nnodes) {
            snprintf(rs->why, sizeof(rs->why), "the harness names no primary (%d)", n);
            return -1;
        }
        return rs->node = n;
    }
    for (int k = 0; k < m->nsentinels; k++) {
        int n = ask_sentinel(rs);
        if (n >= 0)
            return rs->node = n;
        replset_resolver_close(rs);
        rs->cur = (rs->cur + 1) % m->nsentinels;
    }
    return -1;
}

void replset_resolve_stale(struct replset_resolver *rs)
{
    if (rs->map->nsentinels > 1) {
        replset_resolver_close(rs);
        rs->cur = (rs->cur + 1) % rs->map->nsentinels;
    }
}

/* Contract: 1 when word occurs in str[0..len). */
static int has_word(const char *str, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (size_t i = 0; i + wl <= len; i++)
        if (memcmp(str + i, word, wl) == 0)
            return 1;
    return 0;
}

int replset_role_error(const char *str, size_t len)
{
    if (!str)
        return 0;
    /* a script's error carries the inner command's error code, e.g.
     * "READONLY You can't write against a read only replica. script: ..." */
    return has_word(str, len, "READONLY") || has_word(str, len, "NOREPLICAS") ||
           has_word(str, len, "MASTERDOWN");
}

int replset_role_is_master(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
           r->element[0]->type == REDIS_REPLY_STRING && strcmp(r->element[0]->str, "master") == 0;
}
