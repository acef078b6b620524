/*
 * loop_stall.c: the `loop_stall` fault: a worker's adapter blocks its event
 * loop (Node) or main thread (Python) for `duration` with synchronous work,
 * through the adapter protocol's `stall` extension (docs/protocol.md). Unlike
 * a pause (SIGSTOP) the process keeps running: its sockets keep receiving,
 * and the library's timers (an automatic renewal) fall due and fire late,
 * together, when the loop is free again. The worker sends the request (the
 * env's stall_worker, through shm) and waits for its reply like any request;
 * the start counts once the request was sent, the end records the reply's
 * stalled_ms, or why there was no stall.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "faults/target.h"
#include "model/workload.h"
#include "util/timeutil.h"

#define TAKE_TIMEOUT LS_NS_PER_S  /* the worker takes a request within (polls every 5 ms) */
#define HOLDER_WAIT LS_NS_PER_S
#define ANSWER_SLACK (3 * LS_NS_PER_S) /* past the planned end: the request timeout and more */

/* One occurrence's request (fi->state). */
struct stall_state {
    int ticket;
};

/* Contract: ask worker i to stall for the occurrence's duration and record
 * the start. Returns 0 once sent, or negative with err (no stall: the
 * adapter lacks the extension, the worker did not take the request). */
static int send_stall(const struct fault_env *env, struct fault_inst *fi, int i,
                      struct ls_err *err)
{
    int64_t sent = 0;
    int held = -1, ticket = 0;
    char why[200] = "";
    int rc = env->ops->stall_worker(env->ctx, i, fi->spec->duration, TAKE_TIMEOUT, &sent, &held,
                                    &ticket, why, sizeof(why));
    fi->worker = i;
    if (rc == FAULT_STALL_UNSUPPORTED)
        return ls_err_set(err, LS_EUSAGE, "loop_stall: worker %d: %s: the stall did not bite", i,
                          why);
    if (rc != FAULT_STALL_SENT)
        return ls_err_set(err, LS_EENV, "loop_stall: worker %d: %s", i, why);
    struct stall_state *st = calloc(1, sizeof(*st));
    if (!st)
        return ls_err_set(err, LS_ENOMEM, "loop_stall: out of memory");
    st->ticket = ticket;
    fi->state = st;
    fi->start_ns = sent;
    if (held >= 0) {
        char name[16];
        json_obj_set_str(fi->detail, "held_resource", fault_res_name(env, held, name, sizeof(name)));
    }
    return 0;
}

static int loop_stall_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct fault_spec *s = fi->spec;
    int i = -1;
    switch (s->target) {
    case TARGET_HOLDER:
        i = fault_wait_busy(env, 0, s->resource, ls_now_ns() + HOLDER_WAIT);
        break;
    case TARGET_WORKER:
        i = s->target_index;
        break;
    case TARGET_RANDOM_WORKER:
        i = fault_random_worker(env, 1024);
        break;
    default:
        break;
    }
    if (i < 0 || i >= env->ops->nworkers(env->ctx) || !fault_worker_alive(env, i))
        return 1;
    return send_stall(env, fi, i, err);
}

static int loop_stall_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    (void)err;
    struct stall_state *st = fi->state;
    if (fi->worker < 0 || !st)
        return 0; /* never sent, or already recorded: stop is idempotent */
    int ticket = st->ticket;
    free(st);
    fi->state = NULL;
    int64_t wait = fi->start_ns + fi->spec->duration + ANSWER_SLACK - env->ops->now(env->ctx);
    int64_t stalled = 0;
    char why[200] = "";
    int rc = env->ops->stall_result(env->ctx, fi->worker, ticket, wait > 0 ? wait : 0, &stalled,
                                    why, sizeof(why));
    fi->end_detail = json_new_obj();
    json_obj_set_bool(fi->end_detail, "stalled", rc == FAULT_STALLED);
    if (rc == FAULT_STALLED) {
        json_obj_set_num(fi->end_detail, "stalled_ms", (double)stalled / 1e6);
    } else {
        /* no stall happened: it did not bite, whoever held what (coverage
         * takes `bit` from here, like kind command's) */
        json_obj_set_str(fi->end_detail, "stall_error", why);
        json_obj_set_bool(fi->end_detail, "bit", 0);
        char bw[240];
        snprintf(bw, sizeof(bw), "no stall happened: %s", why[0] ? why : "no answer");
        json_obj_set_str(fi->end_detail, "bit_why", bw);
    }
    return 0;
}

/* The lock must have an adapter to ask: the built-in implementations have
 * no event loop of their own (the worker is the client). */
static int loop_stall_validate(const struct workload *w, const struct fault_spec *fs, char *why,
                               size_t n)
{
    (void)fs;
    if (!w->lock.impl || strcmp(w->lock.impl, "external") != 0) {
        snprintf(why, n, "fault kind 'loop_stall' asks an adapter to block its event loop; lock "
                         "'%s' has none (use lock.impl: external with an adapter that lists "
                         "'stall' in its caps, or kind: pause)",
                 w->lock.impl ? w->lock.impl : "?");
        return -1;
    }
    return 0;
}

const struct fault_ops fault_loop_stall = {
    .version = FAULT_OPS_VERSION,
    .name = "loop_stall",
    .help = "ask a worker's adapter to block its event loop or main thread for `duration` "
            "(synchronous work: the process runs, sockets fill, timers fire late)",
    .targets = (1u << TARGET_HOLDER) | (1u << TARGET_WORKER) | (1u << TARGET_RANDOM_WORKER),
    .options = NULL,
    .options_size = 0,
    .start = loop_stall_start,
    .stop = loop_stall_stop,
    .validate = loop_stall_validate,
};
