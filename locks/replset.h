/*
 * replset.h: how a lock client follows the primary of a replicated set. The
 * harness describes the set once (struct replset_map, copied into every
 * worker at fork); each connection keeps a resolver naming the node to use,
 * from Sentinel (get-master-addr-by-name) or, with no sentinels, from the
 * harness's shared page, confirmed by ROLE and resolved again after every
 * reconnect and every READONLY / NOREPLICAS / MASTERDOWN reply. Not here:
 * the lock algorithm (redis_conn.h), starting the set (backends/replset.h).
 */
#ifndef LS_REPLSET_H
#define LS_REPLSET_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/time.h>

#include <hiredis/hiredis.h>

#include "locks/lock.h"

#define REPLSET_MAX_NODES 16
#define REPLSET_MAX_SENTINELS 8
#define REPLSET_MASTER_NAME "lockstorm"

/* The replicated set as the harness describes it to its workers. */
struct replset_map {
    int nnodes;                               /* primary + replicas */
    int names[REPLSET_MAX_NODES];             /* the port Sentinel knows node n by (its
                                               * replication-proxy listener) */
    int real[REPLSET_MAX_NODES];              /* node n's own port (also accepted) */
    int nsentinels;                           /* 0: the harness names the primary */
    struct lock_node sentinels[REPLSET_MAX_SENTINELS]; /* reached directly, not proxied */
    char master_name[32];
    const _Atomic int32_t *primary;           /* nsentinels == 0: index of the current primary
                                               * (shared memory the harness writes) */
};

/* Per connection: which node to use. */
struct replset_resolver {
    const struct replset_map *map;            /* borrowed */
    const struct lock_node *links;            /* borrowed: this client's address of node n */
    struct timeval tv;                        /* connect/command timeout for sentinels */
    redisContext *sc;                         /* connection to sentinel `cur`, or NULL */
    int cur;                                  /* the sentinel asked next */
    int node;                                 /* the node resolved last, -1 none */
    char why[160];                            /* why the last resolution failed */
};

/* Prepare rs (no I/O): map and links borrowed for rs's life. */
void replset_resolver_init(struct replset_resolver *rs, const struct replset_map *map,
                           const struct lock_node *links, struct timeval tv);
/* Close the sentinel connection. Accepts a zeroed rs. */
void replset_resolver_close(struct replset_resolver *rs);

/* The index of the node that is primary now, as Sentinel (asking each
 * sentinel in turn, starting with the one that answered last) or the
 * harness says; rs->node is set. -1 with rs->why set when no sentinel
 * answered with a node of the set. */
int replset_resolve(struct replset_resolver *rs);
/* The node resolved last turned out not to be a primary (ROLE): ask
 * another sentinel next time, whose view may be newer. */
void replset_resolve_stale(struct replset_resolver *rs);

/* Index of the node that port names (a replication-proxy listener or a
 * node's own port), or -1. */
int replset_node_of_port(const struct replset_map *map, int port);

/* 1 when an error reply says the node is not a writable primary (READONLY,
 * NOREPLICAS, MASTERDOWN; also inside a script error). */
int replset_role_error(const char *str, size_t len);

/* 1 when a ROLE reply says master. */
int replset_role_is_master(const redisReply *r);

#endif
