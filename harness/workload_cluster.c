/*
 * workload_cluster.c: cross-key rules of cluster.topology replicated (see
 * workload_cluster.h). A replicated set has 1 + replicas nodes (node 0
 * starts as the primary), so cluster.nodes follows replicas and every
 * later rule (fault targets node:N, link keys) sees the real node count.
 */
#include "harness/workload_cluster.h"

#include <string.h>

#include "harness/yamltree.h"
#include "locks/lock.h"
#include "util/timeutil.h"

/* The user's node for cluster.KEY, or NULL when absent. */
static const struct ynode *cluster_key(const struct ynode *root, const char *key)
{
    const struct ynode *c = root ? ymap_get(root, "cluster") : NULL;
    return c && c->kind == YN_MAP ? ymap_get(c, key) : NULL;
}

/* Contract: the rules of the cluster section, once all its keys are
 * loaded (called at its last entry). */
static void check_cluster(struct workload *w, const struct ynode *at, const struct ynode *root,
                          struct ydiag *dg)
{
    const struct ynode *rn = cluster_key(root, "replicas");
    const struct ynode *mn = cluster_key(root, "min_replicas_to_write");
    const struct ynode *ln = cluster_key(root, "min_replicas_max_lag");
    if (w->cluster.topology != TOPO_REPLICATED) {
        if (w->cluster.min_replicas_to_write > 0)
            ydiag_at(dg, mn ? mn : at,
                     "cluster.min_replicas_to_write: only valid with cluster.topology replicated");
        return;
    }
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

void workload_replicated_check(struct workload *w, const char *path, const struct ynode *at,
                               const struct ynode *root, struct ydiag *dg)
{
    if (strcmp(path, "cluster.min_replicas_max_lag") == 0) {
        check_cluster(w, at, root, dg);
        return;
    }
    if (w->cluster.topology != TOPO_REPLICATED)
        return;
    if (strcmp(path, "lock.impl") == 0 && w->lock.ops &&
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
