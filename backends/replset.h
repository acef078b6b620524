/*
 * replset.h: cluster.topology replicated (backends/replset.c): its ops
 * table (backend_replicated, backends/backend.h) and its run-time side:
 * one primary (node 0 at first), its replicas and optional Sentinel
 * processes. Replication and sentinels reach the nodes through a
 * replication proxy of their own, so a primary can be cut off from its
 * replicas without root; every node is known by that proxy's port
 * (replica-announce-port). With a failover fault's `cut: iptables` there is
 * no such proxy: node n replicates directly from source address
 * 127.0.0.(10+n) (bind-source-addr; protected mode off, still bound to
 * 127.0.0.1 only) and a cut is tagged iptables DROP rules, removed at heal,
 * at teardown, and by a rules reaper if the harness dies. The proxy, the
 * rules and the reaper live above backends/: the harness lends them
 * through struct replset_host. Workers learn the primary from the
 * sentinels or a shared page (locks/replset.h). Not here: the failover
 * fault (faults/failover.c).
 */
#ifndef LS_BACKENDS_REPLSET_H
#define LS_BACKENDS_REPLSET_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "locks/replset.h"
#include "util/err.h"
#include "util/json.h"

struct cluster;
struct node_proc;
struct lock_node;
struct replset;

/* Sentinel tuning (measured on loopback: a promotion ~0.8-0.9 s after the
 * primary stops answering; shorter ping periods abort failovers, the
 * default periods with this down-after give spurious second failovers). */
#define REPLSET_DOWN_AFTER_MS 500
#define REPLSET_FAILOVER_TIMEOUT_MS 2000
/* Bytes of the run's iptables rules' comment, terminator included. */
#define REPLSET_IPT_COMMENT_MAX 32

/* What the harness lends the set: its stop predicate and the services
 * that live above backends/ (the replication proxy, iptables rules and
 * their reaper). A const table, as faults/env.h's; every callback with a
 * ctx gets struct replset_host's ctx. */
struct replset_host_ops {
    /* Non-zero once the run is interrupted (every wait polls it). */
    int (*interrupted)(void *ctx);
    /* Sleep up to ns, waking early on an interrupt. */
    void (*sleep)(void *ctx, int64_t ns);
    /* Start the replication proxy: one listener per node in front of
     * real[0..nnodes) (no password), logging to log_path, drawing from
     * seed; names[n] gets the port that stands for node n, *pid the
     * proxy's pid. 0 or negative with err. */
    int (*proxy_start)(void *ctx, const struct lock_node *real, int nnodes, const char *log_path,
                       uint64_t seed, int *names, pid_t *pid, struct ls_err *err);
    /* Blackhole node's listener (both directions) as fault id and wait for
     * the proxy's acknowledgement (*generation, *waited_ns). */
    int (*proxy_cut)(void *ctx, int id, int node, uint64_t *generation, int64_t *waited_ns,
                     struct ls_err *err);
    /* Reset the connections of node's listener as fault id (err may be
     * NULL), then clear fault id; the first failure's code. */
    int (*proxy_uncut)(void *ctx, int id, int node, struct ls_err *err);
    /* Stop the proxy (by pid); idempotent. */
    void (*proxy_stop)(void *ctx);
    /* iptables (all without ctx): whether rules can be used here (why
     * says why not); the run's comment; remove the rules of dead runs
     * (how many) / add or delete the DROP pair of src and port / remove
     * every rule tagged comment. */
    int (*ipt_usable)(char *why, size_t n);
    void (*ipt_comment)(pid_t harness, char *buf, size_t n);
    int (*ipt_remove_stale)(FILE *say, struct ls_err *err);
    int (*ipt_cut_pair)(int add, const char *comment, const char *src, int port,
                        struct ls_err *err);
    int (*ipt_remove_tagged)(const char *comment, struct ls_err *err);
    /* Start the process that deletes the rules tagged comment if the
     * harness dies (*pid its pid, 0 when none started); stop it. */
    int (*rules_reaper_start)(void *ctx, const char *comment, pid_t *pid, struct ls_err *err);
    void (*rules_reaper_stop)(void *ctx);
    /* The set is done with the host. */
    void (*release)(void *ctx);
};

/* A host: its table and the ctx its callbacks get, both the harness's.
 * The set calls ops->release(ctx) (when not NULL) exactly once: from
 * replset_free, or from replset_start when it returns with no set. */
struct replset_host {
    const struct replset_host_ops *ops;
    void *ctx;
};

/* What a set is started from (borrowed for the call; cluster for the
 * set's life: it reads the nodes' pids as processes restart). */
struct replset_config {
    struct cluster *cluster;       /* started, cluster->nnodes nodes */
    const char *dir;               /* the run directory: nodes/ gets logs and sentinel dirs */
    int sentinels;                 /* cluster.sentinels */
    int64_t min_replicas_to_write; /* cluster.min_replicas_to_write (0: not set) */
    int64_t min_replicas_max_lag;  /* cluster.min_replicas_max_lag, ns */
    uint64_t seed;                 /* the workload's seed */
    int iptables;                  /* the failovers' cut: 1 iptables, 0 proxy, -1 mixed */
};

/* After cluster_start and the workers' proxy: configure the nodes (announce
 * ports, min-replicas-*), start the replication proxy, make nodes 1.. the
 * replicas of node 0 through it, start the sentinels, and wait (bounded)
 * until every replica is in sync and every sentinel sees the primary, the
 * replicas and the other sentinels. Sets *out (also on failure, when the
 * set was allocated: free it with replset_free). Returns 0 or a negative
 * code with err set; whatever started is stopped by replset_stop. */
int replset_start(const struct replset_config *cfg, struct replset_host host,
                  struct replset **out, struct ls_err *err);
/* Stop the sentinels and the replication proxy (by pid); before the nodes
 * stop. Idempotent; accepts NULL. */
void replset_stop(struct replset *rs);
/* replset_stop, then free rs and release its host (after the last
 * run.json); accepts NULL. */
void replset_free(struct replset *rs);
/* What workers are given (borrowed until replset_stop); NULL without a set. */
const struct replset_map *replset_map_of(const struct replset *rs);
/* run.json "replication": primary, failovers, proxy and sentinel pids. */
struct json *replset_json(const struct replset *rs);

/* ---- for the failover fault (through faults/env.h) ---- */

/* The node the harness knows as the primary now. */
int replset_primary(const struct replset *rs);
int replset_nsentinels(const struct replset *rs);
/* 1 while a failover is under way (one at a time). */
int replset_busy(const struct replset *rs);
void replset_set_busy(struct replset *rs, int busy);

/* Cut node's replication link (its proxy listener, both directions:
 * blackhole; with iptables: DROP rules for TCP between every other node's
 * source address and node's port, both directions), as fault id, and
 * verify it: a probe key written on the node must not reach any replica
 * within 100 ms. Through the proxy the sentinels lose the node too (they
 * reach it the same way); with iptables they still see it. Returns 0, or
 * negative with err set (the cut is undone then). */
int replset_cut(struct replset *rs, int id, int node, struct json *detail, struct ls_err *err);
/* Undo the cut of fault id: reset the connections it left open (a
 * replication stream with a hole must not resume), then clear it. No-op
 * when fault id has no cut in place. */
int replset_uncut(struct replset *rs, int id, struct ls_err *err);

/* REPLICAOF NO ONE on node and wait (bounded) until ROLE says master. */
int replset_promote(struct replset *rs, int node, struct ls_err *err);
/* REPLICAOF node primary (through the replication proxy). */
int replset_follow(struct replset *rs, int node, int primary, struct ls_err *err);
/* Re-apply the node's settings after a restart (CONFIG SET). */
int replset_configure(struct replset *rs, int node, struct ls_err *err);
/* The harness's view of the primary, and (no sentinels) the workers'. */
void replset_set_primary(struct replset *rs, int node);

/* Ask every sentinel which node is the primary: the node a majority of
 * them names, or -1; *agree (when not NULL) how many name it. */
int replset_sentinel_primary(const struct replset *rs, int *agree);
/* ROLE of node as "master", "slave" (or "" when it does not answer within
 * 200 ms). */
void replset_role(const struct node_proc *n, char *role, size_t len);

#endif
