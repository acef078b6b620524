/*
 * independent.c: `cluster.topology: independent` (the default): the
 * harness starts cluster.nodes redis-server processes of its own, each on
 * its own loopback port, plus the storage node (backends/cluster.h). The
 * nodes know nothing of each other; a lock over several of them (redlock)
 * is the lock's business. Not here: the node processes themselves
 * (backends/cluster.c).
 */
#include "backends/backend.h"

#include <string.h>

#include "backends/storage.h"
#include "model/workload.h"
#include "model/yamltree.h"

/* Contract: lock.wait_replicas is 0 (there are no replicas). */
static void check_key(struct workload *w, const char *path, const struct ynode *at,
                      const struct ynode *root, struct ydiag *dg)
{
    (void)root;
    if (strcmp(path, "lock.wait_replicas") == 0 && w->lock.wait_replicas > 0)
        ydiag_at(dg, at,
                 "lock.wait_replicas: must be 0 with cluster.topology independent (there are "
                 "no replicas to wait for)");
}

const struct backend_ops backend_independent = {
    .version = BACKEND_OPS_VERSION,
    .name = "independent",
    .help = "lockstorm starts cluster.nodes redis-server processes of its own on loopback",
    .caps = BACKEND_CAP_NODE_CONTROL | BACKEND_CAP_REDIS,
    .start = backend_redis_start,
    .stop = cluster_stop,
    .dump_storage = backend_redis_dump,
    .store = &store_redis,
    .check_key = check_key,
};
