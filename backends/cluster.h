/*
 * cluster.h: the redis-server processes of a run: the lock nodes and the
 * storage node (the protected resource; faults never touch it). Each node
 * gets a free loopback port, its own directory, its own log, bound to
 * 127.0.0.1 only, persistence as configured. Start waits (bounded) until
 * the node answers PING; stop is by pid (SIGTERM, bounded wait, SIGKILL).
 * With a password (cluster.password auto) a node requires it: it reads it
 * from its 0600 config file nodes/<name>.conf (never from argv, which
 * /proc shows to every user), and every harness connection authenticates
 * (node_connect).
 */
#ifndef LS_CLUSTER_H
#define LS_CLUSTER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/secret.h"

struct workload;

struct node_proc {
    int index;          /* node number; -1 for the storage node */
    char host[16];      /* "127.0.0.1" */
    int port;
    pid_t pid;
    int persistence;    /* enum persistence */
    char dir[512];      /* working directory (data, AOF) */
    char log[512];      /* redis-server log file */
    char clock_file[600]; /* clock faults: "<dir>.clock" when it existed at node_start; the
                             node then runs with the clock shim preloaded (util/clockctl.h) */
    char password[LS_PASSWORD_MAX]; /* requirepass (and masterauth); "" = none. Set before
                             node_start; for an external node, the one it requires */
    char conf[520];       /* with a password: "<dir>.conf" (0600), read at each start */
};

struct cluster {
    int nnodes;
    struct node_proc *nodes;   /* nnodes entries (nalloc allocated) */
    int nalloc;
    int has_storage;
    struct node_proc storage;
};

/* Start nnodes lock nodes (+ a storage node when with_storage) under
 * basedir/nodes/. password (borrowed for the call; NULL or "" = none) is
 * required by every node and written to basedir/nodes/password (0600), the
 * documented way for a user or a test to reach the nodes. On failure every
 * node already started is stopped and a negative code returned (LS_EENV
 * when redis-server is missing or will not start). interrupted, if not
 * NULL, is polled during waits; when it returns non-zero start stops and
 * returns LS_EINTR. */
int cluster_start(struct cluster *c, const char *basedir, int nnodes, int persistence,
                  int with_storage, const char *password, int (*interrupted)(void *), void *arg,
                  struct ls_err *err);
/* Stop every node by pid and free (passwords wiped). Accepts a zeroed or
 * half-started cluster. */
void cluster_stop(struct cluster *c);

/* The password of the redis-server nodes the harness starts for w:
 * cluster.password auto: a fresh random one in buf (n >= LS_PASSWORD_MAX);
 * none: "". Returns 0 or LS_EENV with err set. */
int cluster_password(const struct workload *w, char *buf, size_t n, struct ls_err *err);

/* Write password to path (created or truncated, mode 0600, never through
 * a symlink): followed by a newline when raw, else as the redis config
 * lines "requirepass"/"masterauth". Returns 0 or LS_EIO with err set
 * (the message names the path, never the password). */
int cluster_write_secret(const char *path, const char *password, int raw, struct ls_err *err);

/* A TCP port free on 127.0.0.1 right now (bound to port 0 and released):
 * another process can still take it before the caller binds it. Returns
 * the port or a negative code with err set. One for nodes, sentinels, the
 * replication proxy and PostgreSQL. */
int cluster_free_port(struct ls_err *err);

/* A connection to node n like redisConnectWithTimeout(n->host, n->port,
 * tv), authenticated with n->password (util/secret.h ls_redis_connect: a
 * refused AUTH is a context with err set). Caller frees with redisFree. */
struct redisContext *node_connect(const struct node_proc *n, struct timeval tv);

/* Start/stop one redis-server (used by cluster_start and by tests).
 * name is used for the directory and log ("node-0", "storage"); with
 * n->password set (the caller's, before the call; a zeroed n has none) the
 * node requires it (config file n->conf, 0600). When
 * basedir/nodes/<name>.clock exists (faults/clock.c creates it for
 * workloads with clock faults), the node and its restarts run with the
 * clock shim (LD_PRELOAD) reading that control file. */
int node_start(struct node_proc *n, const char *basedir, const char *name, int persistence,
               struct ls_err *err);
void node_stop(struct node_proc *n);
/* Start a stopped node again (n->pid 0) on the same port, directory, log
 * and persistence: with none it comes back empty, with aof-* it replays its
 * AOF. Waits up to timeout_ns until it answers PING (loading the AOF
 * included). Returns 0, or a negative code with err set (the port was
 * taken meanwhile, redis-server exited, timeout); n->pid is 0 then. */
int node_restart(struct node_proc *n, int64_t timeout_ns, struct ls_err *err);
/* Send sig to the node (SIGKILL: a crash; SIGTERM: a graceful shutdown)
 * and wait up to timeout_ns until it is reaped (*status, when not NULL,
 * the wait status). Returns 0 with n->pid 0, or a negative code with err
 * set (still running: the caller decides). */
int node_kill(struct node_proc *n, int sig, int64_t timeout_ns, int *status, struct ls_err *err);
/* Wait (bounded) until the node answers PING. */
int node_wait_ready(const struct node_proc *n, int64_t timeout_ns, struct ls_err *err);

#endif
