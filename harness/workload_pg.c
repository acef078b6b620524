/*
 * workload_pg.c: the cross-key rules of `cluster.topology: postgres` and
 * the pg-advisory lock (backends/postgres.h, locks/pg_advisory.c), run by
 * the loader once every key is loaded. The PostgreSQL server is one
 * process the harness starts; what a fault may do to it is what the proxy
 * can do to its links (latency, partition, bandwidth, slicer): the process
 * faults of a Redis node (pause, kill, stop, stall, failover, clock) are
 * refused for node targets, as is everything that needs Redis there.
 */
#include "harness/workload_pg.h"

#include <string.h>

#include "faults/fault.h"
#include "model/yamltree.h"
#include "locks/lock.h"

/* The node to blame: root.section.key, else root.section, else root. */
static const struct ynode *at_key(const struct ynode *root, const char *section, const char *key)
{
    const struct ynode *s = ymap_get(root, section);
    const struct ynode *k = s ? ymap_get(s, key) : NULL;
    return k ? k : s ? s : root;
}

static int link_kind(const struct fault_ops *ops)
{
    return ops && (ops->targets & (1u << TARGET_LINKS));
}

void workload_pg_check(const struct workload *w, const struct ynode *root, struct ydiag *dg)
{
    int pg_topo = w->cluster.topology == TOPO_POSTGRES;
    int pg_lock = w->lock.ops && strcmp(w->lock.ops->name, "pg-advisory") == 0;
    if (pg_lock && !pg_topo)
        ydiag_at(dg, at_key(root, "lock", "impl"),
                 "lock.impl: pg-advisory needs the PostgreSQL server of cluster.topology: "
                 "postgres");
    if (!pg_topo)
        return;
    if (w->lock.ops && !pg_lock)
        ydiag_at(dg, at_key(root, "lock", "impl"),
                 "lock.impl: '%s' is a Redis lock; cluster.topology postgres runs pg-advisory",
                 w->lock.ops->name);
    if (w->cluster.nodes != 1)
        ydiag_at(dg, at_key(root, "cluster", "nodes"),
                 "cluster.nodes: topology postgres has one server (got %lld)",
                 (long long)w->cluster.nodes);
    if (w->lock.wait_replicas > 0)
        ydiag_at(dg, at_key(root, "lock", "wait_replicas"),
                 "lock.wait_replicas: must be 0 with cluster.topology postgres");
    if (w->workers.mode == WMODE_JOBS)
        ydiag_at(dg, at_key(root, "workers", "mode"),
                 "workers.mode: jobs keeps its records on the Redis storage node; topology "
                 "postgres has none");
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        if (fs->target == TARGET_NODE && !link_kind(fs->ops))
            ydiag_pos(dg, fs->line, fs->col,
                      "faults[%d]: kind '%s' on node:%d is not available with topology postgres "
                      "(it acts on a redis-server process); use a link fault (latency, partition, "
                      "bandwidth, slicer) on the node", i, fs->ops ? fs->ops->name : "?",
                      fs->target_index);
    }
}
