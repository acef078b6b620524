/*
 * external.h: `cluster.topology: external`: the lock nodes are redis
 * servers someone else runs (docker/compose.yaml, a staging cluster),
 * named by `cluster.addresses` (host:port). The harness starts none of
 * them and has no process control over them, so it refuses at load time
 * every fault that would need it; it still starts its own storage node
 * locally (the protected resource is the harness's, not the cluster's).
 * Not here: the workers and the proxy, which treat these nodes like any.
 */
#ifndef LS_BACKENDS_EXTERNAL_H
#define LS_BACKENDS_EXTERNAL_H

#include "backends/cluster.h"
#include "util/err.h"

struct workload;

/* Split "host:port" (the last ':' separates) into host (NUL-terminated,
 * at most hostn - 1 bytes) and *port. Returns 0, or -1 when it is not of
 * that form or the port is not 1..65535. */
int external_split_address(const char *addr, char *host, size_t hostn, int *port);

/* Fill c with w's external nodes and start the local storage node under
 * basedir/nodes/: each address is resolved to IPv4 (node_proc.host),
 * must answer PING within a few seconds, and has every `lockstorm:*` key
 * of an earlier run deleted, so a grant left behind cannot block this
 * one. The nodes get pid 0 (cluster_stop leaves them alone). On failure
 * returns LS_EENV / LS_ETIMEOUT with err naming the node and address, and
 * c is left for cluster_stop. interrupted, when not NULL, is polled. */
int external_cluster_start(struct cluster *c, const struct workload *w, const char *basedir,
                           int (*interrupted)(void *), void *arg, struct ls_err *err);

#endif
