/*
 * workload_cluster.c: cross-key rules of cluster.topology replicated and of
 * the nodes' password (see workload_cluster.h). A replicated set has 1 +
 * replicas nodes (node 0 starts as the primary), so cluster.nodes follows
 * replicas and every later rule (fault targets node:N, link keys) sees the
 * real node count.
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

/* Contract: cluster.password_env names an environment variable (only
 * the name is checked: the value is read at run time). */
static void check_password_env(const struct workload *w, const struct ynode *at,
                               const struct ynode *root, struct ydiag *dg)
{
    const char *name = w->cluster.password_env;
    if (!name || !name[0])
        return;
    const struct ynode *pn = cluster_key(root, "password_env");
    if (w->cluster.topology != TOPO_EXTERNAL) {
        ydiag_at(dg, pn ? pn : at,
                 "cluster.password_env: only valid with cluster.topology external (the nodes "
                 "the harness starts get a random password: cluster.password)");
        return;
    }
    int ok = strlen(name) <= 64 && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; ok && *p; p++)
        ok = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
             *p == '_';
    if (!ok)
        ydiag_at(dg, pn ? pn : at,
                 "cluster.password_env: '%.64s' is not an environment variable name; write its "
                 "name (e.g. REDIS_PASSWORD), never the password itself", name);
}

/* Contract: the rules of the cluster section, once all its keys are
 * loaded (called at its last entry). */
static void check_cluster(struct workload *w, const struct ynode *at, const struct ynode *root,
                          struct ydiag *dg)
{
    check_password_env(w, at, root, dg);
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
    /* An adapter learns only host:port (PROTOCOL.md hello): it reaches
     * password-protected nodes only through the proxy, which authenticates
     * for it. */
    int protected_nodes = w->cluster.topology == TOPO_EXTERNAL
                              ? w->cluster.password_env && w->cluster.password_env[0]
                              : w->cluster.password == PASSWORD_AUTO;
    if (strcmp(path, "lock.impl") == 0 && w->lock.ops && !w->cluster.proxy && protected_nodes &&
        strcmp(w->lock.ops->name, "external") == 0 && w->cluster.topology != TOPO_POSTGRES) {
        ydiag_at(dg, at,
                 "lock.impl: external adapters cannot authenticate to password-protected nodes "
                 "without the proxy (the adapter protocol carries no password); set "
                 "cluster.proxy: true, or cluster.password: none");
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
