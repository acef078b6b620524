/*
 * backend.c: the registry of topologies (a static const array in
 * cluster.topology's order, as locks/lock.c keeps the lock
 * implementations) and the two helpers the Redis-node tables share. Not
 * here: any topology; each lives in its own file under backends/.
 */
#include "backends/backend.h"

#include <string.h>

#include "backends/storage.h"
#include "model/workload.h"
#include "util/secret.h"

extern const struct backend_ops backend_independent;
extern const struct backend_ops backend_replicated;
extern const struct backend_ops backend_external;
extern const struct backend_ops backend_postgres;

/* The order of enum topology (model/workload.h) and of the loader's
 * cluster.topology choices. */
static const struct backend_ops *const registry[] = {
    &backend_independent,
    &backend_replicated,
    &backend_external,
    &backend_postgres,
    NULL,
};

const struct backend_ops *backend_find(const char *name)
{
    if (!name)
        return NULL;
    for (const struct backend_ops *const *p = registry; *p; p++)
        if (strcmp((*p)->name, name) == 0)
            return *p;
    return NULL;
}

const struct backend_ops *const *backend_all(void)
{
    return registry;
}

int backend_redis_start(struct cluster *c, const struct workload *w, const char *basedir,
                        int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    char pw[LS_PASSWORD_MAX]; /* cluster.password: backends/cluster.h */
    int rc = cluster_password(w, pw, sizeof(pw), err);
    if (rc == 0)
        rc = cluster_start(c, basedir, (int)w->cluster.nodes, w->cluster.persistence, 1, pw,
                           interrupted, arg, err);
    ls_wipe(pw, sizeof(pw));
    return rc;
}

int backend_redis_dump(const struct cluster *c, const struct workload *w, const char *path,
                       struct ls_err *err)
{
    if (!c->has_storage || c->storage.pid <= 0)
        return 0;
    return storage_dump(c->storage.host, c->storage.port, c->storage.password,
                        (int)w->workers.resources, w->lock.fencing, path, err);
}
