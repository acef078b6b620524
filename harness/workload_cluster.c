/*
 * workload_cluster.c: cross-key rules of cluster.topology replicated, of
 * the nodes' password and of cluster.proxy auto (see workload_cluster.h).
 * A replicated set has 1 + replicas nodes (node 0 starts as the primary),
 * so cluster.nodes follows replicas and every later rule (fault targets
 * node:N, link keys) sees the real node count.
 */
#include "harness/workload_cluster.h"

#include <stdio.h>
#include <string.h>

#include "faults/fault.h"
#include "model/options.h"
#include "model/yamltree.h"
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

/* Contract: whether w runs an external adapter (lock.impl external) on
 * password-protected Redis nodes. An adapter learns only host:port
 * (PROTOCOL.md hello): it reaches such nodes only through the proxy, which
 * authenticates for it. */
static int adapter_needs_proxy(const struct workload *w)
{
    int protected_nodes = w->cluster.topology == TOPO_EXTERNAL
                              ? w->cluster.password_env && w->cluster.password_env[0]
                              : w->cluster.password == PASSWORD_AUTO;
    return protected_nodes && w->lock.ops && strcmp(w->lock.ops->name, "external") == 0 &&
           w->cluster.topology != TOPO_POSTGRES;
}

int workload_parse_proxy(struct workload *w, const struct ynode *v, const char *path,
                         struct ydiag *dg)
{
    static const struct opt_def as_bool = {"proxy", OPT_BOOL, 0, NULL, 0, 0, NULL, NULL, NULL};
    char why[128], q[64];
    w->cluster.proxy = w->cluster.proxy_setting = PROXY_AUTO;
    if (!v || ynode_is_null(v) || (v->kind == YN_SCALAR && strcmp(v->text, "auto") == 0))
        return 0;
    if (v->kind == YN_SCALAR && opt_parse_text(&as_bool, &w->cluster.proxy, v->text, why,
                                               sizeof(why)) == 0) {
        w->cluster.proxy_setting = w->cluster.proxy;
        return 0;
    }
    w->cluster.proxy = PROXY_AUTO;
    ydiag_at(dg, v, "%s: expected auto, true or false, got '%s'", path,
             v->kind == YN_SCALAR ? opt_quote(v->text, q, sizeof(q)) : ynode_kind_text(v));
    return -1;
}

/* A fault kind that acts on proxy links (the check of faults[] refuses it
 * with cluster.proxy: false). */
static int acts_on_links(const struct fault_ops *ops)
{
    return ops && (ops->targets & (1u << TARGET_LINKS));
}

const char *workload_proxy_setting(const struct workload *w)
{
    int set = w->cluster.proxy_setting;
    return set == PROXY_AUTO ? "auto" : set ? "true" : "false";
}

void workload_resolve_proxy(struct workload *w)
{
    char *why = w->cluster.proxy_why;
    size_t n = sizeof(w->cluster.proxy_why);
    if (w->cluster.proxy_setting != PROXY_AUTO) {
        w->cluster.proxy = w->cluster.proxy_setting;
        snprintf(why, n, "set by cluster.proxy");
        return;
    }
    w->cluster.proxy = PROXY_ON;
    for (int i = 0; i < w->nfaults; i++) {
        if (acts_on_links(w->faults[i].ops)) {
            snprintf(why, n, "faults[%d] (%s) acts on proxy links", i, w->faults[i].ops->name);
            return;
        }
    }
    for (int k = 0; w->nemesis.enabled && k < w->nemesis.nkinds; k++) {
        if (acts_on_links(w->nemesis.kinds[k].ops)) {
            snprintf(why, n, "the nemesis draws %s, which acts on proxy links",
                     w->nemesis.kinds[k].ops->name);
            return;
        }
    }
    if (adapter_needs_proxy(w)) {
        snprintf(why, n, "an external adapter on password-protected nodes (the proxy "
                 "authenticates for it)");
        return;
    }
    w->cluster.proxy = PROXY_OFF;
    snprintf(why, n, "no link fault, no adapter needing AUTH: workers connect directly");
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
    if (strcmp(path, "lock.impl") == 0 && !w->cluster.proxy && adapter_needs_proxy(w)) {
        ydiag_at(dg, at,
                 "lock.impl: external adapters cannot authenticate to password-protected nodes "
                 "without the proxy (the adapter protocol carries no password); set "
                 "cluster.proxy: true or auto, or cluster.password: none");
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
