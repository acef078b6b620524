/*
 * workload_pg.c: the cross-key rules of a topology whose lock nodes are not
 * redis servers (postgres: backends/postgres.c, which adds its own) and of
 * the pg-advisory lock (locks/pg_advisory.c), run by the loader once every
 * key is loaded. What a fault may do to such a server is what the proxy
 * can do to its links (latency, partition, bandwidth, slicer): the process
 * faults of a Redis node (pause, kill, stop, stall, failover, clock) are
 * refused for node targets, as is everything that needs Redis there.
 */
#include "harness/workload_pg.h"

#include <string.h>

#include "backends/backend.h"
#include "faults/fault.h"
#include "locks/lock.h"
#include "model/yamltree.h"

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
    const struct backend_ops *be = w->cluster.backend;
    int redis_nodes = !be || (be->caps & BACKEND_CAP_REDIS);
    int pg_lock = w->lock.ops && strcmp(w->lock.ops->name, "pg-advisory") == 0;
    if (pg_lock && redis_nodes)
        ydiag_at(dg, at_key(root, "lock", "impl"),
                 "lock.impl: pg-advisory needs the PostgreSQL server of cluster.topology: "
                 "postgres");
    if (be && be->check)
        be->check(w, root, dg); /* the topology's own rules (backends/) */
    if (redis_nodes)
        return;
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        if (fs->target == TARGET_NODE && !link_kind(fs->ops))
            ydiag_pos(dg, fs->line, fs->col,
                      "faults[%d]: kind '%s' on node:%d is not available with topology %s "
                      "(it acts on a redis-server process); use a link fault (latency, partition, "
                      "bandwidth, slicer) on the node", i, fs->ops ? fs->ops->name : "?",
                      fs->target_index, be->name);
    }
}
