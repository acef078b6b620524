/*
 * process.c: the faults `kill` (SIGKILL: a crash) and `stop` (SIGTERM, then
 * SIGKILL after `grace`) on workers and lock nodes, never the storage. A
 * worker is gone once reaped with an empty process group; a SIGKILLed one
 * gets a crash record, so the checkers end its hold at the kill. Its
 * restart is a new process under the same id with the next epoch (its own
 * log). A node restarts on its port and directory with its persistence;
 * the fault ends once it answers PING.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "faults/target.h"
#include "model/workload.h"
#include "util/proc.h"
#include "util/timeutil.h"

#define RESTART_NEVER (-1)     /* restart: never */
#define RESTART_DURATION (-2)  /* restart: duration (the default): after the fault's duration */
#define REAP_TIMEOUT (5 * LS_NS_PER_S)
#define CONFIRM_TIMEOUT LS_NS_PER_S
#define BUSY_WAIT LS_NS_PER_S
#define NODE_READY_TIMEOUT (10 * LS_NS_PER_S)

struct proc_opts {
    int64_t restart;   /* ns, or RESTART_NEVER / RESTART_DURATION */
    int64_t grace;     /* stop: SIGTERM -> SIGKILL, ns */
};

static const char *const restart_words[] = {"never", "duration", NULL};

#define RESTART_OPT                                                                            \
    {"restart", OPT_DURATION, offsetof(struct proc_opts, restart), "duration", 0,             \
     24 * 3600 * 1e9, restart_words, NULL,                                                     \
     "when the process is started again once it is gone: a delay (0 = at once), `never`, or " \
     "`duration` (the default: after the fault's duration). A worker restarts under the same " \
     "id with the next epoch; a node on the same port, with its persistence"}

static const struct opt_def kill_options[] = {
    RESTART_OPT,
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def stop_options[] = {
    RESTART_OPT,
    {"grace", OPT_DURATION, offsetof(struct proc_opts, grace), "2s", 1e6, 60e9, NULL, NULL,
     "how long the process may take to exit after SIGTERM before it is SIGKILLed (a worker "
     "then gets a crash record)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* The kind's options of fi (borrowed from the workload). */
static const struct proc_opts *opts_of(const struct fault_inst *fi)
{
    return fi->spec->params;
}

/* Contract: the restart delay of fi in ns, or RESTART_NEVER. */
static int64_t restart_delay(const struct fault_inst *fi)
{
    int64_t d = opts_of(fi)->restart;
    return d == RESTART_DURATION ? fi->spec->duration : d;
}

/* o.exit = a wait status as text ("exited 0", "killed by signal 9 (Killed)"). */
static void status_field(struct json *o, int status)
{
    char st[64];
    json_obj_set_str(o, "exit", proc_status_text(status, st, sizeof(st)));
}

/* ---- workers ---- */

/* Contract: target holder / acquirer. Pick a worker that holds a lock (is
 * inside an acquire call: the one in it longest, e.g. between the two
 * commands of naive-setnx-expire) at this instant, SIGSTOP it, and check
 * once it is stopped that it is still in the same grant (call); one that
 * moved on is resumed and another picked. Returns the stopped worker, -1
 * when none turned up within 1 s, or a negative code < -1 with err set. */
static int stop_busy_worker(const struct fault_env *env, const struct fault_inst *fi,
                            int acquiring, int *pid, struct ls_err *err)
{
    int res = fi->spec->resource;
    int64_t deadline = ls_now_ns() + BUSY_WAIT;
    for (;;) {
        int i = fault_wait_busy(env, acquiring, res, deadline);
        if (i < 0)
            return -1;
        int64_t before;
        if (fault_busy_with(env, i, acquiring, res, &before) < 0)
            continue;
        int e = 0;
        int rc = env->ops->pause_worker(env->ctx, i, CONFIRM_TIMEOUT, pid, &e);
        if (rc == FAULT_PAUSE_SIGNAL)
            return ls_err_errno(err, LS_EENV, e, "worker %d: SIGSTOP %d", i, *pid);
        if (rc == FAULT_PAUSE_TIMEOUT)
            return ls_err_set(err, LS_ETIMEOUT, "worker %d: process %d did not stop within 1s", i,
                              *pid);
        int64_t after;
        if (fault_busy_with(env, i, acquiring, res, &after) >= 0 && after == before)
            return i;
        env->ops->resume(env->ctx, *pid, 1, 0);
    }
}

/* ---- nodes ---- */

/* Contract: the node's DBSIZE within 200 ms, or -1 (down, paused, error). */
static long long node_dbsize(const struct fault_env *env, int k)
{
    struct fault_node n;
    if (env->ops->node(env->ctx, k, &n) < 0 || n.pid <= 0 || n.stopped)
        return -1;
    struct timeval tv = {0, 200000};
    redisContext *c = env->ops->node_connect(env->ctx, k, tv);
    long long v = -1;
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisReply *rep = redisCommand(c, "DBSIZE");
        if (rep && rep->type == REDIS_REPLY_INTEGER)
            v = rep->integer;
        if (rep)
            freeReplyObject(rep);
    }
    if (c)
        redisFree(c);
    return v;
}

/* Contract: 1 when nothing accepts connections on the node's port. */
static int port_refused(const struct fault_node *n)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout(n->addr.host, n->addr.port, tv);
    int refused = !c || c->err;
    if (c)
        redisFree(c);
    return refused;
}

/* The workload's spelling of enum persistence p. */
static const char *persistence_name(int p)
{
    return p == PERSIST_AOF_ALWAYS ? "aof-always" : p == PERSIST_AOF_EVERYSEC ? "aof-everysec"
                                                                              : "none";
}

/* Contract: end lock node k with sig (SIGKILL, or SIGTERM and SIGKILL after
 * grace), confirmed by reaping it and by its port refusing connections.
 * Returns 0, 1 when the node is not running, negative with err set. */
static int end_node(const struct fault_env *env, struct fault_inst *fi, int k, int sig,
                    struct ls_err *err)
{
    struct fault_node nd;
    if (env->ops->node(env->ctx, k, &nd) < 0 || nd.pid <= 0)
        return 1;
    const struct fault_node *n = &nd;
    int pid = n->pid;
    long long keys = node_dbsize(env, k);
    int st = 0, escalated = 0;
    int64_t t = env->ops->now(env->ctx);
    int64_t grace = sig == SIGKILL ? REAP_TIMEOUT : opts_of(fi)->grace;
    int rc = env->ops->kill_node(env->ctx, k, sig, grace, &st, err);
    struct fault_node after;
    if (rc < 0 && sig != SIGKILL && env->ops->node(env->ctx, k, &after) == 0 && after.pid > 0) {
        ls_err_clear(err);
        escalated = 1;
        rc = env->ops->kill_node(env->ctx, k, SIGKILL, REAP_TIMEOUT, &st, err);
    }
    if (rc < 0)
        return rc;
    int64_t gone = env->ops->now(env->ctx);
    int refused = port_refused(n);
    fi->start_ns = t;
    fi->node = k;
    fi->pids[fi->npids++] = pid;
    struct json *d = fi->detail;
    json_obj_set_str(d, "signal", escalated ? "SIGTERM, then SIGKILL after grace"
                                            : sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    json_obj_set_int(d, "port", n->addr.port);
    json_obj_set_str(d, "persistence", persistence_name(n->persistence));
    json_obj_set(d, "keys_before", keys >= 0 ? json_new_int(keys) : json_new_null());
    json_obj_set_num(d, "gone_ms", (double)gone / 1e6);
    status_field(d, st);
    json_obj_set_str(d, "verified", refused ? "redis-server reaped; its port refuses connections"
                                            : "redis-server reaped (its port still accepted a "
                                              "connection: someone else bound it?)");
    return 0;
}

/* ---- start / stop ---- */

/* Contract: the start of kill (sig SIGKILL) and stop (SIGTERM): resolve
 * the target, end it (confirmed), and set fi's end to the restart time
 * (INT64_MAX for restart: never). Returns 0, 1 (nothing to act on) or
 * negative with err set. */
static int pf_start(const struct fault_env *env, struct fault_inst *fi, int sig,
                    struct ls_err *err)
{
    int nw = env->ops->nworkers(env->ctx);
    struct fault_end how = {.sig = sig,
                            .grace = opts_of(fi)->grace,
                            .restart = restart_delay(fi) != RESTART_NEVER};
    const struct fault_spec *s = fi->spec;
    int64_t delay = restart_delay(fi);
    char rs[32];
    if (delay == RESTART_NEVER)
        snprintf(rs, sizeof(rs), "never");
    else
        ls_format_duration(delay, rs, sizeof(rs));
    json_obj_set_str(fi->detail, "restart", rs);
    int rc = 1;
    if (s->target == TARGET_NODE) {
        int k = s->target_index;
        if (k < 0 || k >= env->ops->nnodes(env->ctx))
            return 1;
        rc = end_node(env, fi, k, sig, err);
    } else {
        struct json *arr = json_new_arr();
        fi->pgroup = 1;
        switch (s->target) {
        case TARGET_HOLDER:
        case TARGET_ACQUIRER: {
            int pid = 0;
            int i = stop_busy_worker(env, fi, s->target == TARGET_ACQUIRER, &pid, err);
            if (i < -1) {
                rc = i;
                break;
            }
            if (i < 0)
                break;
            fi->worker = i;
            rc = env->ops->end_workers(env->ctx, &i, 1, &how, fi, arr, err);
            if (rc < 0 && fault_worker_alive(env, i))
                env->ops->resume(env->ctx, pid, 1, 0); /* not ended: do not leave it stopped */
            break;
        }
        case TARGET_WORKER:
        case TARGET_RANDOM_WORKER: {
            int i = s->target_index;
            if (s->target == TARGET_RANDOM_WORKER)
                i = fault_random_worker(env, 1024);
            if (i < 0 || i >= nw || !fault_worker_alive(env, i))
                break;
            fi->worker = i;
            rc = env->ops->end_workers(env->ctx, &i, 1, &how, fi, arr, err);
            break;
        }
        case TARGET_ALL_WORKERS: {
            int idx[1024], n = 0;
            for (int i = 0; i < nw && n < 1024; i++)
                if (fault_worker_alive(env, i))
                    idx[n++] = i;
            /* on an error stop() still restarts the ones that were ended */
            rc = n ? env->ops->end_workers(env->ctx, idx, n, &how, fi, arr, err) : 1;
            break;
        }
        default:
            break;
        }
        json_obj_set(fi->detail, "workers", arr);
    }
    if (rc != 0)
        return rc;
    if (delay == RESTART_NEVER)
        fi->end_ns = INT64_MAX;
    else
        fi->end_ns = fi->start_ns + (delay > 0 ? delay : 1);
    return 0;
}

/* Contract: start fi's node again (same port, directory, persistence) and
 * wait until it answers PING; the end line says how it went. Returns 0 or
 * negative with err set. */
static int restart_node(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    void *ctx = env->ctx;
    struct json *d = fi->end_detail;
    int64_t t = env->ops->now(ctx);
    int rc = env->ops->restart_node(ctx, fi->node, NODE_READY_TIMEOUT, err);
    json_obj_set_num(d, "restart_ms", (double)t / 1e6);
    if (rc < 0) {
        json_obj_set_bool(d, "restarted", 0);
        return rc;
    }
    /* a replicated node gets its runtime settings back (repl-diskless-sync-delay
     * 0: else its replicas time out waiting 5 s for a full sync), and a
     * replica its primary (the one the harness knows now): redis-server
     * forgets a runtime REPLICAOF when it restarts */
    if (env->ops->replicated(ctx)) {
        int primary = env->ops->primary(ctx);
        if (env->ops->configure_node(ctx, fi->node, err) < 0)
            json_obj_set_str(d, "configure_error", err->msg);
        else if (primary >= 0 && primary != fi->node &&
                 env->ops->follow(ctx, fi->node, primary, err) < 0)
            json_obj_set_str(d, "configure_error", err->msg);
        else if (primary >= 0 && primary != fi->node)
            json_obj_set_int(d, "follows", primary);
    }
    struct fault_node n = {.index = fi->node};
    env->ops->node(ctx, fi->node, &n);
    json_obj_set_bool(d, "restarted", 1);
    json_obj_set_int(d, "new_pid", n.pid);
    json_obj_set_int(d, "port", n.addr.port);
    json_obj_set_num(d, "ready_ms", (double)env->ops->now(ctx) / 1e6);
    long long keys = node_dbsize(env, fi->node);
    json_obj_set(d, "keys_at_ready", keys >= 0 ? json_new_int(keys) : json_new_null());
    json_obj_set_str(d, "verified", "answered PING on the same port");
    return 0;
}

/* Contract: the end of kill and stop: restart what fi ended, unless
 * restart: never, or (workers) the run is over or interrupted. Idempotent;
 * safe after a failed or skipped start. Returns 0 or the first error. */
static int pf_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    void *ctx = env->ctx;
    int64_t delay = restart_delay(fi);
    int ran_out = env->ops->ran_out(ctx);
    if (!fi->end_detail)
        fi->end_detail = json_new_obj();
    struct json *d = fi->end_detail;
    if (fi->spec->target == TARGET_NODE) {
        struct fault_node n;
        if (fi->node < 0 || (env->ops->node(ctx, fi->node, &n) == 0 && n.pid > 0))
            return 0; /* nothing was ended, or it runs again already */
        if (delay == RESTART_NEVER) {
            json_obj_set_bool(d, "restarted", 0);
            json_obj_set_str(d, "why", "restart: never");
            return 0;
        }
        if (env->ops->signalled(ctx)) {
            json_obj_set_bool(d, "restarted", 0);
            json_obj_set_str(d, "why", "the run was interrupted");
            return 0;
        }
        return restart_node(env, fi, err);
    }
    struct json *arr = NULL;
    int rc = 0;
    for (int i = 0; i < env->ops->nworkers(ctx); i++) {
        if (!env->ops->worker_down(ctx, i, fi->id))
            continue;
        if (delay == RESTART_NEVER || ran_out) {
            env->ops->worker_stays_down(ctx, i);
            continue;
        }
        if (!arr)
            arr = json_obj_set(d, "restarted", json_new_arr());
        int k = env->ops->restart_worker(ctx, i, arr, err);
        if (k < 0 && rc == 0)
            rc = k;
    }
    if (!arr) {
        json_obj_set_bool(d, "restarted", 0);
        if (fi->npids)
            json_obj_set_str(d, "why", delay == RESTART_NEVER ? "restart: never"
                                                              : "the run ended first");
    }
    return rc;
}

/* The kinds' start hooks: pf_start with their signal. */
static int kill_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    return pf_start(env, fi, SIGKILL, err);
}

static int term_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    return pf_start(env, fi, SIGTERM, err);
}

#define PROC_TARGETS                                                                           \
    ((1u << TARGET_HOLDER) | (1u << TARGET_ACQUIRER) | (1u << TARGET_WORKER) |                \
     (1u << TARGET_RANDOM_WORKER) | (1u << TARGET_ALL_WORKERS) | (1u << TARGET_NODE))

const struct fault_ops fault_kill = {
    .version = FAULT_OPS_VERSION,
    .name = "kill",
    .help = "SIGKILL a worker (a crash: its hold ends at the kill, the TTL must free the lock) "
            "or a lock node (it restarts with its persistence: none comes back empty)",
    .targets = PROC_TARGETS,
    .options = kill_options,
    .options_size = sizeof(struct proc_opts),
    .start = kill_start,
    .stop = pf_stop,
    .min_every = 50000000, /* a process restarted and seen ready: tens of ms */
};

const struct fault_ops fault_stop = {
    .version = FAULT_OPS_VERSION,
    .name = "stop",
    .help = "SIGTERM a worker (it abandons its hold, releases and exits) or a lock node (a clean "
            "shutdown), SIGKILL after `grace`; restarted like kill",
    .targets = PROC_TARGETS,
    .options = stop_options,
    .options_size = sizeof(struct proc_opts),
    .start = term_start,
    .stop = pf_stop,
    .min_every = 50000000, /* a process restarted and seen ready: tens of ms */
};
