/*
 * workload_cluster.c: cross-key rules of the cluster section that hold for
 * every topology, keyed on what its backend offers (backends/backend.h
 * caps): the nodes' password, min_replicas_* without replicas, cluster.proxy
 * auto (see workload_cluster.h); then the topology's own rules (its
 * check_key: a replicated set's cluster.nodes = 1 + replicas is set there,
 * so every later rule sees the real node count).
 */
#include "harness/workload_cluster.h"

#include <stdio.h>
#include <string.h>

#include "backends/backend.h"
#include "faults/fault.h"
#include "model/options.h"
#include "model/yamltree.h"
#include "locks/lock.h"

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
    if (!(w->cluster.backend->caps & BACKEND_CAP_ADDRESSES)) {
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

/* Contract: whether w runs an external adapter (lock.impl external, or a
 * record-mode program: lock.impl record) on password-protected Redis nodes. An adapter learns only host:port
 * (the hello message, docs/protocol.md): it reaches such nodes only through the proxy, which
 * authenticates for it. */
static int adapter_needs_proxy(const struct workload *w)
{
    unsigned caps = w->cluster.backend->caps;
    int protected_nodes = caps & BACKEND_CAP_ADDRESSES
                              ? w->cluster.password_env && w->cluster.password_env[0]
                              : w->cluster.password == PASSWORD_AUTO;
    return protected_nodes && w->lock.ops &&
           (strcmp(w->lock.ops->name, "external") == 0 ||
            strcmp(w->lock.ops->name, "record") == 0) &&
           (caps & BACKEND_CAP_REDIS);
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
        snprintf(why, n, "an external adapter or record-mode program on password-protected "
                 "nodes (the proxy authenticates for it)");
        return;
    }
    w->cluster.proxy = PROXY_OFF;
    snprintf(why, n, "no link fault, no adapter needing AUTH: workers connect directly");
}

void workload_replicated_check(struct workload *w, const char *path, const struct ynode *at,
                               const struct ynode *root, struct ydiag *dg)
{
    const struct backend_ops *be = w->cluster.backend;
    if (strcmp(path, "cluster.min_replicas_max_lag") == 0) { /* the cluster section's last key */
        check_password_env(w, at, root, dg);
        if (!(be->caps & BACKEND_CAP_REPLICAS) && w->cluster.min_replicas_to_write > 0) {
            const struct ynode *mn = cluster_key(root, "min_replicas_to_write");
            ydiag_at(dg, mn ? mn : at,
                     "cluster.min_replicas_to_write: only valid with cluster.topology replicated");
        }
    } else if (strcmp(path, "lock.impl") == 0 && !w->cluster.proxy && adapter_needs_proxy(w)) {
        ydiag_at(dg, at,
                 "lock.impl: external adapters and record-mode programs cannot authenticate to "
                 "password-protected nodes "
                 "without the proxy (the adapter protocol carries no password); set "
                 "cluster.proxy: true or auto, or cluster.password: none");
        return;
    }
    if (be->check_key)
        be->check_key(w, path, at, root, dg); /* the topology's own rules (backends/) */
}
