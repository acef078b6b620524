/*
 * pause.c: the `pause` fault: SIGSTOP a worker (its whole process group,
 * so an adapter pauses with it, as a GC pause would) or a lock node, and
 * SIGCONT it at the end. The fault counts as started only once every
 * thread of the target is in state T. `target: holder` picks a worker that
 * holds a lock at that instant and re-checks, once it is stopped, that it
 * still holds; a worker that released in between is resumed and another
 * chosen. `target: acquirer` does the same for a worker inside an acquire
 * call (a pause in the middle of the lock library's acquire).
 */
#include <stdio.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "faults/target.h"
#include "model/workload.h"
#include "util/timeutil.h"

extern const struct fault_ops fault_pause;

#define CONFIRM_TIMEOUT LS_NS_PER_S
#define HOLDER_WAIT (LS_NS_PER_S)
#define MAX_PAUSED 2048

/* Overlapping pauses of one process (two explicit schedules, holder +
 * all-workers): it stays stopped until the last of them ends. The kind's
 * state across occurrences (the env's kind_state). */
struct pause_refs {
    int n;
    struct {
        int pid;
        int refs;
    } e[MAX_PAUSED];
};

static struct pause_refs *refs_of(const struct fault_env *env)
{
    return env->ops->kind_state(env->ctx, &fault_pause, sizeof(struct pause_refs));
}

/* Returns 0, or -1 when the reference cannot be kept (no memory for the
 * table): then the pause must not stand, or an overlapping pause's end
 * would resume it early. */
static int ref_take(const struct fault_env *env, int pid)
{
    struct pause_refs *r = refs_of(env);
    if (!r)
        return -1;
    for (int i = 0; i < r->n; i++)
        if (r->e[i].pid == pid) {
            r->e[i].refs++;
            return 0;
        }
    if (r->n >= MAX_PAUSED)
        return -1;
    r->e[r->n].pid = pid;
    r->e[r->n].refs = 1;
    r->n++;
    return 0;
}

/* Returns how many pauses still hold pid after dropping this one. */
static int ref_drop(const struct fault_env *env, int pid)
{
    struct pause_refs *r = refs_of(env);
    if (!r)
        return 0;
    for (int i = 0; i < r->n; i++)
        if (r->e[i].pid == pid) {
            int left = --r->e[i].refs;
            if (left <= 0)
                r->e[i] = r->e[--r->n];
            return left > 0 ? left : 0;
        }
    return 0;
}

/* Contract: record paused pid in fi (its end resumes what is recorded)
 * and take its reference. Returns 0, or negative with err set, having
 * resumed pid, when it cannot be recorded (never with FAULT_MAX_PIDS
 * covering every worker and node, and MAX_PAUSED above that). */
static int add_pid(struct fault_inst *fi, const struct fault_env *env, int pid, struct ls_err *err)
{
    if (fi->npids >= FAULT_MAX_PIDS || ref_take(env, pid) < 0) {
        env->ops->resume(env->ctx, pid, fi->pgroup, 0);
        return ls_err_set(err, LS_ENOMEM, "pause: cannot record process %d (%d recorded)", pid,
                          fi->npids);
    }
    fi->pids[fi->npids++] = pid;
    return 0;
}

/* Contract: stop worker i (node k when i < 0), confirmed in state T. 0 with
 * *pid set, or negative with err set (not left stopped). */
static int stop_confirmed(const struct fault_env *env, int i, int k, int *pid,
                          struct ls_err *err)
{
    int e = 0;
    int rc = i >= 0 ? env->ops->pause_worker(env->ctx, i, CONFIRM_TIMEOUT, pid, &e)
                    : env->ops->pause_node(env->ctx, k, CONFIRM_TIMEOUT, pid, &e);
    if (rc == FAULT_PAUSE_SIGNAL)
        return ls_err_errno(err, LS_EENV, e, "pause: SIGSTOP %d", *pid);
    if (rc == FAULT_PAUSE_TIMEOUT)
        return ls_err_set(err, LS_ETIMEOUT, "pause: process %d did not stop within 1s", *pid);
    return 0;
}

/* target holder / acquirer: pick a worker that holds (is acquiring) a lock
 * at this instant, stop it, and check once it is stopped that it still
 * does; one that moved on in between is resumed and another picked. */
static int pause_busy_worker(const struct fault_env *env, struct fault_inst *fi, int acquiring,
                             struct ls_err *err)
{
    int res = fi->spec->resource;
    int64_t deadline = ls_now_ns() + HOLDER_WAIT;
    for (;;) {
        int i = fault_wait_busy(env, acquiring, res, deadline);
        if (i < 0)
            return 1;
        int64_t sent = env->ops->now(env->ctx);
        int pid = 0;
        int rc = stop_confirmed(env, i, -1, &pid, err);
        if (rc < 0)
            return rc;
        int what = fault_busy_with(env, i, acquiring, res, NULL);
        if (what < 0) {
            env->ops->resume(env->ctx, pid, 1, 0);
            continue;
        }
        fi->start_ns = sent;
        fi->worker = i;
        if (add_pid(fi, env, pid, err) < 0)
            return -1;
        char name[16];
        json_obj_set_str(fi->detail, acquiring ? "acquiring_resource" : "held_resource",
                         fault_res_name(env, what, name, sizeof(name)));
        if (!acquiring) {
            int64_t since = 0;
            env->ops->worker_busy(env->ctx, i, 0, &since);
            json_obj_set_num(fi->detail, "hold_since_ms", (double)since / 1e6);
        }
        return 0;
    }
}

static int pause_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct fault_spec *s = fi->spec;
    int nw = env->ops->nworkers(env->ctx);
    fi->pgroup = s->target != TARGET_NODE;
    switch (s->target) {
    case TARGET_HOLDER:
        return pause_busy_worker(env, fi, 0, err);
    case TARGET_ACQUIRER:
        return pause_busy_worker(env, fi, 1, err);
    case TARGET_WORKER:
    case TARGET_RANDOM_WORKER: {
        int i = s->target_index;
        if (s->target == TARGET_RANDOM_WORKER) {
            i = fault_random_worker(env, 1024);
            if (i < 0)
                return 1;
        }
        if (i < 0 || i >= nw || !fault_worker_alive(env, i))
            return 1;
        fi->start_ns = env->ops->now(env->ctx);
        int pid = 0;
        int rc = stop_confirmed(env, i, -1, &pid, err);
        if (rc < 0)
            return rc;
        fi->worker = i;
        return add_pid(fi, env, pid, err) < 0 ? -1 : 0;
    }
    case TARGET_ALL_WORKERS: {
        fi->start_ns = env->ops->now(env->ctx);
        for (int i = 0; i < nw; i++) {
            if (!fault_worker_alive(env, i))
                continue;
            int pid = 0;
            int rc = stop_confirmed(env, i, -1, &pid, err);
            if (rc < 0 || (rc = add_pid(fi, env, pid, err)) < 0)
                return rc; /* stop() resumes the ones already paused */
        }
        return fi->npids ? 0 : 1;
    }
    case TARGET_NODE: {
        int n = s->target_index;
        struct fault_node nd;
        if (env->ops->node(env->ctx, n, &nd) < 0 || nd.pid <= 0)
            return 1;
        fi->start_ns = env->ops->now(env->ctx);
        int pid = 0;
        int rc = stop_confirmed(env, -1, n, &pid, err);
        if (rc < 0)
            return rc;
        fi->node = n;
        return add_pid(fi, env, pid, err) < 0 ? -1 : 0;
    }
    }
    return 1;
}

static int pause_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    (void)err;
    for (int i = 0; i < fi->npids; i++)
        if (ref_drop(env, fi->pids[i]) == 0)
            env->ops->resume(env->ctx, fi->pids[i], fi->pgroup, 0);
    fi->npids = 0; /* stop is idempotent */
    return 0;
}

const struct fault_ops fault_pause = {
    .version = FAULT_OPS_VERSION,
    .name = "pause",
    .help = "SIGSTOP a worker (with its process group) or a node for `duration`, then SIGCONT "
            "(a GC or VM pause)",
    .targets = (1u << TARGET_HOLDER) | (1u << TARGET_ACQUIRER) | (1u << TARGET_WORKER) | (1u << TARGET_RANDOM_WORKER) |
               (1u << TARGET_ALL_WORKERS) | (1u << TARGET_NODE),
    .options = NULL,
    .options_size = 0,
    .start = pause_start,
    .stop = pause_stop,
};
