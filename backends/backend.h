/*
 * backend.h: one ops table per cluster.topology (independent, replicated,
 * external, postgres), looked up by the name written in the workload from a
 * static registry, as locks/lock.h and faults/fault.h do for lock
 * implementations and fault kinds. A table says what its topology offers
 * (caps), starts and stops the lock nodes and the storage into a struct
 * cluster (backends/cluster.h), writes the final storage state, names the
 * worker-side store of the protected resource, and adds its own load-time
 * rules. The replicated set's run-time side (sentinels, replication
 * proxy, cuts) is backends/replset.h, started by the harness for a backend
 * with BACKEND_CAP_REPLICAS. Not here: every rule about fault kinds (the
 * loader's, keyed on caps).
 */
#ifndef LS_BACKENDS_BACKEND_H
#define LS_BACKENDS_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cluster.h"
#include "model/workload.h"
#include "util/err.h"

#define BACKEND_OPS_VERSION 1

/* What a topology offers: BACKEND_CAP_* (model/workload.h, where layers
 * below this one read them as workload.cluster.caps). */

struct ynode;
struct ydiag;
struct lock;
struct store_op;

/* The protected resource as a worker sees it (backends/storage.h for the
 * Redis storage node, backends/pgstore.h for the PostgreSQL table). */
struct store_ops {
    const char *name;
    /* Connect to the storage at host:port (password: NULL or "" = none;
     * copied). Caller frees *out with close. Returns 0 or a negative code
     * with err set. */
    int (*open)(void **out, const char *host, int port, const char *password,
                int64_t timeout_ns, struct ls_err *err);
    void (*close)(void *s);
    /* As storage_read / storage_write; lk is the worker's lock instance
     * (borrowed for the call: a store that lives in the lock's own
     * transaction takes it from there). */
    void (*read)(void *s, struct lock *lk, int res, int has_fence, uint64_t fence,
                 struct store_op *plain, struct store_op *fenced);
    void (*write)(void *s, struct lock *lk, int res, int64_t pval, int do_fenced,
                  uint64_t fence, int64_t fval, struct store_op *plain, struct store_op *fenced);
};

struct backend_ops {
    int version;              /* BACKEND_OPS_VERSION */
    const char *name;         /* as written in cluster.topology */
    const char *help;         /* one line for `lockstorm list` and the docs */
    unsigned caps;            /* BACKEND_CAP_* */

    /* Start w's lock nodes and storage under basedir/nodes/ into c (zeroed
     * by the caller). interrupted, when not NULL, is polled during waits
     * (non-zero: give up with LS_EINTR). On failure returns a negative
     * code with err set and c is left for stop. */
    int (*start)(struct cluster *c, const struct workload *w, const char *basedir,
                 int (*interrupted)(void *), void *arg, struct ls_err *err);
    /* Stop whatever start started (by pid) and free c. Accepts a zeroed or
     * half-started c. */
    void (*stop)(struct cluster *c);
    /* Write the final state of the protected resource (storage.jsonl, one
     * line per resource) to path. Returns 0 (also when there is nothing to
     * read: no storage was started), LS_EIO when path could not be
     * written, another negative code when the storage failed us; err set. */
    int (*dump_storage)(const struct cluster *c, const struct workload *w, const char *path,
                        struct ls_err *err);
    /* The worker side of the protected resource. */
    const struct store_ops *store;

    /* Load-time rules, NULL when none. check_key: called by the loader
     * after each key got its value (path "cluster.nodes", "lock.impl", ...;
     * at: the node to blame; root: the document); may normalise
     * w->cluster.nodes. check: once every key is loaded. Errors go to dg. */
    void (*check_key)(struct workload *w, const char *path, const struct ynode *at,
                      const struct ynode *root, struct ydiag *dg);
    void (*check)(const struct workload *w, const struct ynode *root, struct ydiag *dg);
};

/* Registry: the table named name, or NULL. */
const struct backend_ops *backend_find(const char *name);
/* All backends, NULL-terminated, in cluster.topology's order. */
const struct backend_ops *const *backend_all(void);

/* For the tables: the Redis nodes the harness starts for w (cluster.nodes
 * nodes with cluster.persistence and cluster.password, plus the storage
 * node), as cluster_start. */
int backend_redis_start(struct cluster *c, const struct workload *w, const char *basedir,
                        int (*interrupted)(void *), void *arg, struct ls_err *err);
/* For the tables: storage_dump of c's storage node when it was started
 * (pid > 0), else 0. */
int backend_redis_dump(const struct cluster *c, const struct workload *w, const char *path,
                       struct ls_err *err);

#endif
