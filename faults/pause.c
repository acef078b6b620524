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
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>

#include "faults/fault.h"
#include "faults/target.h"
#include "util/proc.h"
#include "harness/run.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define CONFIRM_TIMEOUT LS_NS_PER_S
#define HOLDER_WAIT (LS_NS_PER_S)

static int stop_confirmed(pid_t pid, int group, struct ls_err *err)
{
    if (kill(group ? -pid : pid, SIGSTOP) < 0)
        return ls_err_errno(err, LS_EENV, errno, "pause: SIGSTOP %d", (int)pid);
    if (proc_wait_state(pid, 'T', 1, CONFIRM_TIMEOUT) < 0) {
        kill(group ? -pid : pid, SIGCONT);
        return ls_err_set(err, LS_ETIMEOUT, "pause: process %d did not stop within 1s", (int)pid);
    }
    return 0;
}

/* Overlapping pauses of one process (two explicit schedules, holder +
 * all-workers): it stays stopped until the last of them ends. */
static void ref_take(struct run *r, pid_t pid)
{
    for (int i = 0; i < r->npause_refs; i++)
        if (r->pause_refs[i].pid == pid) {
            r->pause_refs[i].refs++;
            return;
        }
    r->pause_refs = xrealloc(r->pause_refs, (size_t)(r->npause_refs + 1) * sizeof(*r->pause_refs));
    r->pause_refs[r->npause_refs].pid = pid;
    r->pause_refs[r->npause_refs].refs = 1;
    r->npause_refs++;
}

/* Returns how many pauses still hold pid after dropping this one. */
static int ref_drop(struct run *r, pid_t pid)
{
    for (int i = 0; i < r->npause_refs; i++)
        if (r->pause_refs[i].pid == pid) {
            int left = --r->pause_refs[i].refs;
            if (left <= 0)
                r->pause_refs[i] = r->pause_refs[--r->npause_refs];
            return left > 0 ? left : 0;
        }
    return 0;
}

static void add_pid(struct fault_inst *fi, struct run *r, pid_t pid)
{
    if (fi->npids < (int)(sizeof(fi->pids) / sizeof(fi->pids[0]))) {
        fi->pids[fi->npids++] = pid;
        ref_take(r, pid);
    }
}

static void add_worker(struct fault_inst *fi, struct run *r, int i)
{
    add_pid(fi, r, r->workers[i].pid);
}

/* target holder / acquirer: pick a worker that holds (is acquiring) a lock
 * at this instant, stop it, and check once it is stopped that it still
 * does; one that moved on in between is resumed and another picked. */
static int pause_busy_worker(struct run *r, struct fault_inst *fi, int acquiring,
                             struct ls_err *err)
{
    int res = fi->spec->resource;
    int64_t deadline = ls_now_ns() + HOLDER_WAIT;
    for (;;) {
        int i = fault_wait_busy(r, acquiring, res, deadline);
        if (i < 0)
            return 1;
        int64_t sent = run_now(r);
        int rc = stop_confirmed(r->workers[i].pid, 1, err);
        if (rc < 0)
            return rc;
        int what = fault_busy_with(r, i, acquiring, res, NULL);
        if (what < 0) {
            kill(-r->workers[i].pid, SIGCONT);
            continue;
        }
        fi->start_ns = sent;
        fi->worker = i;
        add_worker(fi, r, i);
        char name[16];
        snprintf(name, sizeof(name), "r%d", what);
        json_obj_set_str(fi->detail, acquiring ? "acquiring_resource" : "held_resource", name);
        if (!acquiring)
            json_obj_set_num(fi->detail, "hold_since_ms",
                             (double)atomic_load(&r->shm->w[i].hold_since) / 1e6);
        return 0;
    }
}

static int pause_start(struct run *r, struct fault_inst *fi, struct ls_err *err)
{
    const struct fault_spec *s = fi->spec;
    fi->pgroup = s->target != TARGET_NODE;
    switch (s->target) {
    case TARGET_HOLDER:
        return pause_busy_worker(r, fi, 0, err);
    case TARGET_ACQUIRER:
        return pause_busy_worker(r, fi, 1, err);
    case TARGET_WORKER:
    case TARGET_RANDOM_WORKER: {
        int i = s->target_index;
        if (s->target == TARGET_RANDOM_WORKER) {
            int cand[1024], n = 0;
            for (int k = 0; k < r->nworkers && n < 1024; k++)
                if (fault_worker_alive(r, k))
                    cand[n++] = k;
            if (n == 0)
                return 1;
            i = cand[rng_below(&r->fault_rng, (uint64_t)n)];
        }
        if (i < 0 || i >= r->nworkers || !fault_worker_alive(r, i))
            return 1;
        fi->start_ns = run_now(r);
        int rc = stop_confirmed(r->workers[i].pid, 1, err);
        if (rc < 0)
            return rc;
        fi->worker = i;
        add_worker(fi, r, i);
        return 0;
    }
    case TARGET_ALL_WORKERS: {
        fi->start_ns = run_now(r);
        for (int i = 0; i < r->nworkers; i++) {
            if (!fault_worker_alive(r, i))
                continue;
            int rc = stop_confirmed(r->workers[i].pid, 1, err);
            if (rc < 0)
                return rc; /* stop() resumes the ones already paused */
            add_worker(fi, r, i);
        }
        return fi->npids ? 0 : 1;
    }
    case TARGET_NODE: {
        int n = s->target_index;
        if (n < 0 || n >= r->cluster.nnodes || r->cluster.nodes[n].pid <= 0)
            return 1;
        fi->start_ns = run_now(r);
        int rc = stop_confirmed(r->cluster.nodes[n].pid, 0, err);
        if (rc < 0)
            return rc;
        fi->node = n;
        add_pid(fi, r, r->cluster.nodes[n].pid);
        return 0;
    }
    }
    return 1;
}

static int pause_stop(struct run *r, struct fault_inst *fi, struct ls_err *err)
{
    (void)err;
    for (int i = 0; i < fi->npids; i++)
        if (ref_drop(r, fi->pids[i]) == 0)
            kill(fi->pgroup ? -fi->pids[i] : fi->pids[i], SIGCONT);
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
