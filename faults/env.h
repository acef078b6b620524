/*
 * env.h: what a fault may do to the world (docs/faults.md "How a fault acts"). A fault kind
 * acts only through a struct fault_env: a const ops table plus an opaque
 * context the harness implements (its fault_env.c). Workers and nodes
 * are named by number; a pid an op hands back is a handle for the record
 * and for the op that undoes it (resume), never something a fault signals
 * itself, so the same kind can act on a process on another host. Checking
 * that an action took effect (a stopped process is in state T, a killed one
 * reaped) happens behind the op and returns through it.
 */
#ifndef LS_FAULTS_ENV_H
#define LS_FAULTS_ENV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#include "faults/proxy.h"
#include "model/node.h"
#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"

struct workload;
struct fault_ops;
struct fault_inst;
struct redisContext;

/* A lock node as a fault sees it. */
struct fault_node {
    int index;
    struct lock_node addr;  /* where it listens (host, port; password left empty:
                               node_connect authenticates) */
    int pid;                /* its process (for the record; 0: down) */
    int stopped;            /* its process is in state T (paused) */
    int persistence;        /* enum persistence */
};

/* How end_workers ends workers. */
struct fault_end {
    int sig;                /* SIGKILL: the process group at once; SIGTERM: the worker, SIGCONT
                               to its group, SIGKILL after grace (or at once on a signal) */
    int64_t grace;          /* ns */
    int restart;            /* 1: the fault restarts them (down: the run goes on) */
};

/* What stall_worker / stall_result say (negative: no stall). */
enum {
    FAULT_STALLED = 0,              /* stall_result: it happened (*stalled_ns) */
    FAULT_STALL_SENT = 0,           /* stall_worker: the worker sent the request */
    FAULT_STALL_UNSUPPORTED = -1,   /* the worker's lock (adapter) offers no stall */
    FAULT_STALL_FAILED = -2,        /* asked, no stall (error reply, timeout, adapter gone) */
    FAULT_STALL_NOT_TAKEN = -3,     /* the worker did not take the request in time */
    FAULT_STALL_PENDING = -4,       /* stall_result: no answer within the wait */
};

/* Outcome of pause_worker / pause_node. */
enum { FAULT_PAUSED = 0, FAULT_PAUSE_SIGNAL = -1, FAULT_PAUSE_TIMEOUT = -2 };

struct fault_env_ops {
    /* ---- the run ---- */
    /* Run-relative now, ns. */
    int64_t (*now)(void *ctx);
    /* Polls for SIGINT/SIGTERM/SIGHUP (never loses one): non-zero once the
     * run was interrupted. */
    int (*interrupted)(void *ctx);
    /* Non-zero when a signal was already taken (no poll). */
    int (*signalled)(void *ctx);
    /* Non-zero when the run was interrupted or is past its deadline. */
    int (*ran_out)(void *ctx);
    /* Sleep up to ns, waking at a signal. 1 when one was taken meanwhile. */
    int (*sleep)(void *ctx, int64_t ns);
    /* The run's fault rng (seeded from the workload): every draw a fault
     * makes comes from it. Borrowed. */
    struct rng *(*rng)(void *ctx);
    /* The next fault id (faults.jsonl "id"). */
    int (*next_id)(void *ctx);
    /* Append one JSON line to faults.jsonl (takes ownership of line). */
    void (*log)(void *ctx, struct json *line);
    /* The run directory (clock control files live under it). */
    const char *(*run_dir)(void *ctx);
    const struct workload *(*workload)(void *ctx);
    int (*nworkers)(void *ctx);
    int (*nnodes)(void *ctx);
    /* State one kind keeps across its occurrences: size zeroed bytes made
     * at the first call for that kind, the same block after; NULL when out
     * of memory. Owned by the env (freed with the run; plain data only). */
    void *(*kind_state)(void *ctx, const struct fault_ops *kind, size_t size);

    /* ---- workers ---- */
    /* 1 when worker i has been started and has not exited. */
    int (*worker_alive)(void *ctx, int i);
    /* The resource worker i holds (acquiring 0) or is acquiring (1) right
     * now, or -1; *since (may be NULL): when that grant (call) began. */
    int (*worker_busy)(void *ctx, int i, int acquiring, int64_t *since);
    /* SIGSTOP worker i's process group and wait (up to confirm ns) until it
     * is in state T. FAULT_PAUSED with *pid the handle resume takes;
     * FAULT_PAUSE_SIGNAL (*sys_errno set) or FAULT_PAUSE_TIMEOUT (resumed
     * again) with *pid set as well. */
    int (*pause_worker)(void *ctx, int i, int64_t confirm, int *pid, int *sys_errno);
    /* End workers idx[0..n) as how says, all signalled first, then each
     * waited for (reaped, its process group empty); a SIGKILLed one gets a
     * crash record in its event log. Each is marked ended by fi (fi->id)
     * and described in a new entry of arr; fi->start_ns = the first signal,
     * fi->pids gets their pids. Returns 0 or the first error (err). */
    int (*end_workers)(void *ctx, const int *idx, int n, const struct fault_end *how,
                       struct fault_inst *fi, struct json *arr, struct ls_err *err);
    /* 1 when worker i was ended by fault id and waits for its restart. */
    int (*worker_down)(void *ctx, int i, int fault_id);
    /* Worker i will not be restarted (restart: never, the run ended). */
    void (*worker_stays_down)(void *ctx, int i);
    /* Start the next epoch of worker i and wait (bounded) until it is
     * ready; described in a new entry of arr. 0 or negative (err). */
    int (*restart_worker)(void *ctx, int i, struct json *arr, struct ls_err *err);
    /* Ask worker i to have its lock library's thread blocked for ns (the
     * adapter protocol's `stall`) and wait up to take ns until the worker
     * sent the request: FAULT_STALL_SENT with *sent_at (run-relative),
     * *held (the resource it held then, -1 none) and *ticket (what
     * stall_result takes), FAULT_STALL_NOT_TAKEN, or an early answer
     * (FAULT_STALL_UNSUPPORTED, FAULT_STALL_FAILED, why set). */
    int (*stall_worker)(void *ctx, int i, int64_t ns, int64_t take, int64_t *sent_at, int *held,
                        int *ticket, char *why, size_t n);
    /* Wait up to wait ns for the answer to worker i's stall request ticket:
     * FAULT_STALLED with *stalled_ns, FAULT_STALL_PENDING (also when a later
     * request took its place), or a negative code above with why set. */
    int (*stall_result)(void *ctx, int i, int ticket, int64_t wait, int64_t *stalled_ns,
                        char *why, size_t n);

    /* ---- lock nodes ---- */
    /* Node k into *out. 0, or -1 when there is no node k. */
    int (*node)(void *ctx, int k, struct fault_node *out);
    /* A connection to node k (authenticated), timeouts tv; NULL or c->err
     * on failure (caller frees). */
    struct redisContext *(*node_connect)(void *ctx, int k, struct timeval tv);
    /* SIGSTOP node k (the process, not a group) and wait until it is in
     * state T; as pause_worker. */
    int (*pause_node)(void *ctx, int k, int64_t confirm, int *pid, int *sys_errno);
    /* Send sig to node k and reap it within timeout ns (*status: its wait
     * status). 0 once it is down, negative with err set (still running). */
    int (*kill_node)(void *ctx, int k, int sig, int64_t timeout, int *status, struct ls_err *err);
    /* Start node k again (same port, directory, persistence) and wait up
     * to timeout ns until it answers PING. 0 or negative (err). */
    int (*restart_node)(void *ctx, int k, int64_t timeout, struct ls_err *err);
    /* Wait up to timeout ns until node k answers PING. 0 or negative. */
    int (*node_wait_ready)(void *ctx, int k, int64_t timeout, struct ls_err *err);

    /* ---- any process a pause op stopped ---- */
    /* SIGCONT the process (group: its group) a pause op returned as pid;
     * with confirm > 0 wait up to that long until it has left state T. */
    void (*resume)(void *ctx, int pid, int group, int64_t confirm);

    /* ---- the replicated set (cluster.topology replicated) ---- */
    /* 1 when the run has a primary and replicas (the ops below work). */
    int (*replicated)(void *ctx);
    /* The node the harness names as the primary, or -1. */
    int (*primary)(void *ctx);
    /* The harness names node k as the primary (workers follow it). */
    void (*set_primary)(void *ctx, int k);
    /* The node a majority of sentinels names, or -1 (*agree may be NULL). */
    int (*sentinel_primary)(void *ctx, int *agree);
    /* Node k's ROLE ("master", "slave", "" when it does not answer). */
    void (*node_role)(void *ctx, int k, char *role, size_t n);
    /* One failover at a time: whether one is in progress, and claiming it. */
    int (*failover_busy)(void *ctx);
    void (*set_failover_busy)(void *ctx, int busy);
    /* Cut (tag id) node k's replication link, described in detail; heal it. */
    int (*cut_replication)(void *ctx, int id, int k, struct json *detail, struct ls_err *err);
    int (*heal_replication)(void *ctx, int id, struct ls_err *err);
    /* REPLICAOF NO ONE on k; k follows primary; k gets its runtime settings
     * back after a restart. 0 or negative with err set. */
    int (*promote)(void *ctx, int k, struct ls_err *err);
    int (*follow)(void *ctx, int k, int primary, struct ls_err *err);
    int (*configure_node)(void *ctx, int k, struct ls_err *err);

    /* ---- links: the proxy between workers and lock nodes ---- */
    /* 1 when the run has links a fault can put rules on. */
    int (*has_links)(void *ctx);
    /* The proxy's pid, for the record. */
    int (*links_pid)(void *ctx);
    /* Put rule (the fields what names) on the links dirs marks, tag id, and
     * wait for the acknowledgement (ack may be NULL); lift tag id's rules. */
    int (*links_set)(void *ctx, int id, unsigned what, const struct proxy_rule *rule,
                     const uint8_t *dirs, struct proxy_ack *ack, struct ls_err *err);
    int (*links_clear)(void *ctx, int id, struct ls_err *err);
    /* The counters of link (worker w, node n). */
    void (*link_stats)(void *ctx, int w, int n, struct proxy_link_stats *out);
    /* Put command rule (tag id) on the links sel marks (nworkers * nnodes,
     * 1 = covered) and wait for the ack; links_clear(id) lifts it. Its
     * counters, exact once links_clear returned. */
    int (*links_cmd_set)(void *ctx, int id, const struct proxy_cmd_rule *rule, const uint8_t *sel,
                         struct proxy_ack *ack, struct ls_err *err);
    void (*links_cmd_stats)(void *ctx, int id, struct proxy_cmd_stats *out);
};

struct fault_env {
    const struct fault_env_ops *ops;
    void *ctx;
};

#endif
