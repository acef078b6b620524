/*
 * replicated.h: cluster.topology replicated: one primary (node 0 at first),
 * its replicas and optional Sentinel processes. Replication and sentinels
 * reach the nodes through a replication proxy of their own, so a primary
 * can be cut off from its replicas without root; every node is known by
 * that proxy's port (replica-announce-port). With a failover fault's
 * `cut: iptables` there is no such proxy: node n replicates directly from
 * source address 127.0.0.(10+n) (bind-source-addr; protected mode off,
 * still bound to 127.0.0.1 only) and a cut is tagged iptables DROP rules
 * (util/iptables.h), removed at heal, at teardown, and by a rules
 * reaper (harness/reaper.h) if the harness dies. Workers learn the primary from
 * the sentinels or a shared page (locks/replset.h). Not here: the failover
 * fault (faults/failover.c).
 */
#ifndef LS_REPLICATED_H
#define LS_REPLICATED_H

#include <stdint.h>
#include <sys/types.h>

#include "locks/replset.h"
#include "util/err.h"
#include "util/json.h"

struct run;
struct node_proc;

/* Sentinel tuning (measured on loopback: a promotion ~0.8-0.9 s after the
 * primary stops answering; shorter ping periods abort failovers, the
 * default periods with this down-after give spurious second failovers). */
#define REPLSET_DOWN_AFTER_MS 500
#define REPLSET_FAILOVER_TIMEOUT_MS 2000

/* After cluster_start and the workers' proxy: configure the nodes (announce
 * ports, min-replicas-*), start the replication proxy, make nodes 1.. the
 * replicas of node 0 through it, start the sentinels, and wait (bounded)
 * until every replica is in sync and every sentinel sees the primary, the
 * replicas and the other sentinels. Sets r->repl. Returns 0 or a negative
 * code with err set; whatever started is stopped by replset_stop. */
int replset_start(struct run *r, struct ls_err *err);
/* Stop the sentinels and the replication proxy (by pid); before the nodes
 * stop. Idempotent; accepts r->repl NULL. */
void replset_stop(struct run *r);
/* replset_stop, then free r->repl (after the last run.json). */
void replset_free(struct run *r);
/* What workers are given (borrowed until replset_stop); NULL without a set. */
const struct replset_map *replset_map_of(const struct run *r);
/* run.json "replication": primary, failovers, proxy and sentinel pids. */
struct json *replset_json(const struct run *r);

/* ---- for the failover fault ---- */

/* failover_uses_iptables: faults/failover.h */

/* The node the harness knows as the primary now. */
int replset_primary(const struct run *r);
int replset_nsentinels(const struct run *r);
/* 1 while a failover is under way (one at a time). */
int replset_busy(const struct run *r);
void replset_set_busy(struct run *r, int busy);

/* Cut node's replication link (its proxy listener, both directions:
 * blackhole; with iptables: DROP rules for TCP between every other node's
 * source address and node's port, both directions), as fault id, and
 * verify it: a probe key written on the node must not reach any replica
 * within 100 ms. Through the proxy the sentinels lose the node too (they
 * reach it the same way); with iptables they still see it. Returns 0, or
 * negative with err set (the cut is undone then). */
int replset_cut(struct run *r, int id, int node, struct json *detail, struct ls_err *err);
/* Undo the cut of fault id: reset the connections it left open (a
 * replication stream with a hole must not resume), then clear it. No-op
 * when fault id has no cut in place. */
int replset_uncut(struct run *r, int id, struct ls_err *err);

/* REPLICAOF NO ONE on node and wait (bounded) until ROLE says master. */
int replset_promote(struct run *r, int node, struct ls_err *err);
/* REPLICAOF node primary (through the replication proxy). */
int replset_follow(struct run *r, int node, int primary, struct ls_err *err);
/* Re-apply the node's settings after a restart (CONFIG SET). */
int replset_configure(struct run *r, int node, struct ls_err *err);
/* The harness's view of the primary, and (no sentinels) the workers'. */
void replset_set_primary(struct run *r, int node);

/* Ask every sentinel which node is the primary: the node a majority of
 * them names, or -1; *agree (when not NULL) how many name it. */
int replset_sentinel_primary(struct run *r, int *agree);
/* ROLE of node as "master", "slave" (or "" when it does not answer within
 * 200 ms). */
void replset_role(const struct node_proc *n, char *role, size_t len);

#endif
