/*
 * replicated.c: `cluster.topology: replicated`: one primary (node 0 at
 * first) and cluster.replicas replicas, redis-server processes the harness
 * starts like the independent ones, plus the load-time rules of a
 * replicated set (cluster.nodes = 1 + replicas, min_replicas_*, which lock
 * implementations and wait_replicas values fit). Not here: the set's
 * run-time side (replication proxy, sentinels, cuts, promotions), which
 * the harness starts after its fault proxy (harness/replicated.h) for a
 * backend with BACKEND_CAP_REPLICAS, and the failover fault.
 */
#include "backends/backend.h"

#include <stdio.h>
#include <string.h>

#include "backends/storage.h"
#include "locks/lock.h"
#include "model/workload.h"
#include "model/yamltree.h"
#include "util/timeutil.h"

/* The user's node for cluster.KEY, or NULL when absent. */
static const struct ynode *cluster_key(const struct ynode *root, const char *key)
{
    const struct ynode *c = root ? ymap_get(root, "cluster") : NULL;
    return c && c->kind == YN_MAP ? ymap_get(c, key) : NULL;
}

/* Contract: the rules of the cluster section, once all its keys are
 * loaded (called at its last entry); sets cluster.nodes to 1 + replicas. */
static void check_cluster(struct workload *w, const struct ynode *at, const struct ynode *root,
                          struct ydiag *dg)
{
    const struct ynode *rn = cluster_key(root, "replicas");
    const struct ynode *mn = cluster_key(root, "min_replicas_to_write");
    const struct ynode *ln = cluster_key(root, "min_replicas_max_lag");
    if (w->cluster.replicas < 1) {
        ydiag_at(dg, rn ? rn : at,
                 "cluster.replicas: a replicated topology needs at least 1 replica");
        return;
    }
    const struct ynode *nn = cluster_key(root, "nodes");
    if (nn && w->cluster.nodes != 1 + w->cluster.replicas)
        ydiag_at(dg, nn,
                 "cluster.nodes: %lld, but a replicated set of 1 primary and %lld replicas has "
                 "%lld nodes; leave cluster.nodes out",
                 (long long)w->cluster.nodes, (long long)w->cluster.replicas,
                 (long long)(1 + w->cluster.replicas));
    w->cluster.nodes = 1 + w->cluster.replicas;
    if (w->cluster.min_replicas_to_write > w->cluster.replicas)
        ydiag_at(dg, mn ? mn : at,
                 "cluster.min_replicas_to_write: %lld is more than cluster.replicas %lld: no "
                 "primary could ever write",
                 (long long)w->cluster.min_replicas_to_write, (long long)w->cluster.replicas);
    if (w->cluster.min_replicas_max_lag % LS_NS_PER_S != 0)
        ydiag_at(dg, ln ? ln : at,
                 "cluster.min_replicas_max_lag: Redis counts it in whole seconds; write e.g. 1s");
}

/* Contract: the cluster rules at the cluster section's last key; then
 * lock.impl must follow a primary (LOCK_CAP_REPLICATED) and
 * lock.wait_replicas must not exceed the replicas. */
static void check_key(struct workload *w, const char *path, const struct ynode *at,
                      const struct ynode *root, struct ydiag *dg)
{
    if (strcmp(path, "cluster.min_replicas_max_lag") == 0) {
        check_cluster(w, at, root, dg);
    } else if (strcmp(path, "lock.impl") == 0 && w->lock.ops &&
               !(w->lock.ops->caps & LOCK_CAP_REPLICATED)) {
        char names[256] = "";
        size_t len = 0;
        const struct lock_ops *const *all = lock_all();
        for (int i = 0; all && all[i]; i++) {
            if (!(all[i]->caps & LOCK_CAP_REPLICATED))
                continue;
            int k = snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
                             all[i]->name);
            if (k < 0 || (size_t)k >= sizeof(names) - len)
                break;
            len += (size_t)k;
        }
        ydiag_at(dg, at,
                 "lock.impl: '%s' cannot run on cluster.topology replicated (it does not follow "
                 "a primary through failovers); implementations that can: %s",
                 w->lock.ops->name, names[0] ? names : "none");
    } else if (strcmp(path, "lock.wait_replicas") == 0 &&
               w->lock.wait_replicas > w->cluster.replicas) {
        ydiag_at(dg, at,
                 "lock.wait_replicas: %lld is more than cluster.replicas %lld: no grant could "
                 "ever be acknowledged",
                 (long long)w->lock.wait_replicas, (long long)w->cluster.replicas);
    }
}

const struct backend_ops backend_replicated = {
    .version = BACKEND_OPS_VERSION,
    .name = "replicated",
    .help = "one primary and cluster.replicas replicas (optional sentinels), started by lockstorm",
    .caps = BACKEND_CAP_NODE_CONTROL | BACKEND_CAP_REPLICAS | BACKEND_CAP_REDIS,
    .start = backend_redis_start,
    .stop = cluster_stop,
    .dump_storage = backend_redis_dump,
    .store = &store_redis,
    .check_key = check_key,
};
