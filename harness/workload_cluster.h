/*
 * workload_cluster.h: the loader's cross-key rules of the cluster section:
 * the nodes' password (cluster.password_env: only for a backend whose nodes
 * are cluster.addresses, a variable name; an external adapter on protected
 * nodes needs the proxy), min_replicas_* only with replicas, cluster.proxy:
 * auto (resolved once everything is loaded), and each key handed to the
 * topology's own check_key (backends/backend.h). Kept out of workload.c,
 * which holds the tables; called from its entry checks.
 */
#ifndef LS_WORKLOAD_CLUSTER_H
#define LS_WORKLOAD_CLUSTER_H

#include "harness/workload.h"

struct ynode;
struct ydiag;

/* Called after every non-custom entry got its value (path "cluster.nodes",
 * "lock.impl", ...; at: the node to blame; root: the whole document), with
 * w->cluster.backend set. Acts on the paths it knows, reporting to dg; the
 * topology's check_key may normalise w->cluster.nodes. */
void workload_replicated_check(struct workload *w, const char *path, const struct ynode *at,
                               const struct ynode *root, struct ydiag *dg);

/* The cluster.proxy entry (OPT_CUSTOM): auto, or a boolean (true/false,
 * yes/no, on/off). v NULL: auto. Returns 0, or -1 after reporting to dg. */
int workload_parse_proxy(struct workload *w, const struct ynode *v, const char *path,
                         struct ydiag *dg);
/* Once the whole workload is loaded: resolve cluster.proxy auto to 1 when
 * the workload can need the proxy (a fault kind acting on proxy links in
 * faults: or among the nemesis kinds; an external adapter on
 * password-protected nodes, for which the proxy authenticates), else 0,
 * and fill w->cluster.proxy_why with the reason (an explicit true/false:
 * the setting). */
void workload_resolve_proxy(struct workload *w);
/* cluster.proxy as written: "auto", "true" or "false" (static text). */
const char *workload_proxy_setting(const struct workload *w);

#endif
