/*
 * workload_cluster.h: the loader's cross-key rules for cluster.topology
 * replicated (cluster.nodes = 1 + replicas, min_replicas_*, which lock
 * implementations and wait_replicas values fit a replicated set) and for
 * the nodes' password (cluster.password_env: external only, a variable
 * name; an external adapter on protected nodes needs the proxy). Kept out
 * of workload.c, which holds the tables; called from its entry checks.
 */
#ifndef LS_WORKLOAD_CLUSTER_H
#define LS_WORKLOAD_CLUSTER_H

#include "harness/workload.h"

struct ynode;
struct ydiag;

/* Called after every non-custom entry got its value (path "cluster.nodes",
 * "lock.impl", ...; at: the node to blame; root: the whole document). Acts
 * on the paths it knows, reporting to dg; may normalise w->cluster.nodes. */
void workload_replicated_check(struct workload *w, const char *path, const struct ynode *at,
                               const struct ynode *root, struct ydiag *dg);

#endif
