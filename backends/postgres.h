/*
 * postgres.h: `cluster.topology: postgres`: the harness's own PostgreSQL
 * server (reference article 05: advisory locks). initdb into the run
 * directory (nodes/pg), postgres listening on a free 127.0.0.1 port only
 * (no Unix socket), run as a non-root OS user when the harness is root
 * (LS_PG_USER, else `postgres`, else `nobody`; the data directory is
 * chowned to it), stopped by pid. It is lock node 0 (workers reach it
 * through the fault proxy) and the storage (a table, backends/pgstore.h,
 * reached directly). Binaries: LS_PG_BINDIR, else the newest
 * /usr/lib/postgresql/N/bin.
 */
#ifndef LS_BACKENDS_POSTGRES_H
#define LS_BACKENDS_POSTGRES_H

#include "backends/cluster.h"
#include "util/err.h"

struct workload;

/* Start the server under basedir/nodes/ and fill c: nnodes 1 (the server),
 * storage = the same address with pid 0 (the Redis storage dump skips it),
 * has_storage 1. Creates the storage table for w's resources. On failure
 * everything started is stopped; LS_EENV when PostgreSQL is missing or will
 * not start (the message says how to install it). interrupted as for
 * cluster_start. */
int pgcluster_start(struct cluster *c, const struct workload *w, const char *basedir,
                    int (*interrupted)(void *), void *arg, struct ls_err *err);
/* Fast shutdown (SIGINT) of the server, bounded, then SIGKILL of its
 * process group; node pid set to 0 (cluster_stop then has nothing left to
 * stop). Accepts a cluster that is not a postgres one (no-op). */
void pgcluster_stop(struct cluster *c);

#endif
