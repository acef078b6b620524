/*
 * schedule.c: see schedule.h. Occurrence k of a spec is due at
 * at + k*every (k < count, or until the run ends when count is 0 and every
 * > 0). A start that had to wait for its target (no holder yet) ends
 * `duration` after it really started, so a pause always lasts as long as
 * the workload says, except that nothing outlives the start of the quiet
 * tail: a fault is cut short there, and one whose target was found only
 * once the tail had begun is undone at once and logged as skipped.
 */
#include "faults/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "faults/link_target.h"
#include "faults/env.h"
#include "model/workload.h"
#include "util/timeutil.h"

void fault_target_name(const struct fault_spec *spec, char *buf, size_t n)
{
    switch (spec->target) {
    case TARGET_HOLDER:
        if (spec->resource >= 0)
            snprintf(buf, n, "holder:r%d", spec->resource);
        else
            snprintf(buf, n, "holder");
        break;
    case TARGET_WORKER: snprintf(buf, n, "worker:%d", spec->target_index); break;
    case TARGET_RANDOM_WORKER: snprintf(buf, n, "random-worker"); break;
    case TARGET_ALL_WORKERS: snprintf(buf, n, "all-workers"); break;
    case TARGET_NODE: snprintf(buf, n, "node:%d", spec->target_index); break;
    case TARGET_ACQUIRER:
        if (spec->resource >= 0)
            snprintf(buf, n, "acquirer:r%d", spec->resource);
        else
            snprintf(buf, n, "acquirer");
        break;
    case TARGET_LINKS: link_target_name(&spec->links, buf, n); break;
    case TARGET_PRIMARY: snprintf(buf, n, "primary"); break;
    default: snprintf(buf, n, "?"); break;
    }
}

int schedule_init(struct schedule *s, const struct workload *w)
{
    memset(s, 0, sizeof(*s));
    s->tail_start = w->quiet_tail > 0 && w->quiet_tail < w->duration ? w->duration - w->quiet_tail
                                                                      : w->duration;
    s->serial = w->nemesis.enabled && !w->nemesis.overlap;
    int rc = schedule_add(s, w->faults, w->nfaults);
    s->nexplicit = s->nspecs;
    return rc;
}

int schedule_add(struct schedule *s, const struct fault_spec *fs, int n)
{
    size_t total = (size_t)s->nspecs + (size_t)(n > 0 ? n : 0);
    const struct fault_spec **sp = realloc(s->specs, (total ? total : 1) * sizeof(*sp));
    if (sp)
        s->specs = sp;
    int64_t *ns = realloc(s->next_start, (total ? total : 1) * sizeof(*ns));
    if (ns)
        s->next_start = ns;
    int64_t *st = realloc(s->started, (total ? total : 1) * sizeof(*st));
    if (st)
        s->started = st;
    if (!sp || !ns || !st)
        return LS_ENOMEM;
    for (int i = 0; i < n; i++) {
        int k = s->nspecs++;
        s->specs[k] = &fs[i];
        s->started[k] = 0;
        s->next_start[k] = fs[i].at < s->tail_start ? fs[i].at : INT64_MAX;
    }
    return 0;
}

void schedule_free(struct schedule *s)
{
    for (int i = 0; i < s->nactive; i++) {
        json_free(s->active[i].detail);
        json_free(s->active[i].end_detail);
    }
    free(s->active);
    free(s->active_si);
    free(s->specs);
    free(s->next_start);
    free(s->started);
    memset(s, 0, sizeof(*s));
}

/* With serial, the planned end of the active occurrence of an added
 * (nemesis) spec, the latest if several; INT64_MIN when none is active. */
static int64_t added_busy_until(const struct schedule *s)
{
    int64_t until = INT64_MIN;
    for (int i = 0; s->serial && i < s->nactive; i++)
        if (s->active_si[i] >= s->nexplicit && s->active[i].end_ns > until)
            until = s->active[i].end_ns;
    return until;
}

int64_t schedule_next(const struct schedule *s)
{
    int64_t t = INT64_MAX;
    int64_t busy = added_busy_until(s);
    for (int i = 0; i < s->nspecs; i++) {
        int64_t due = s->next_start[i];
        if (i >= s->nexplicit && due != INT64_MAX && due < busy)
            due = busy; /* deferred until the active nemesis fault ends */
        if (due < t)
            t = due;
    }
    for (int i = 0; i < s->nactive; i++)
        if (s->active[i].end_ns < t)
            t = s->active[i].end_ns;
    return t;
}

int schedule_active(const struct schedule *s)
{
    return s->nactive;
}

static struct json *params_json(const struct fault_spec *spec)
{
    struct json *p = json_new_obj();
    json_obj_set_num(p, "at_ms", (double)spec->at / 1e6);
    json_obj_set_num(p, "duration_ms", (double)spec->duration / 1e6);
    if (spec->every)
        json_obj_set_num(p, "every_ms", (double)spec->every / 1e6);
    if (spec->count)
        json_obj_set_int(p, "count", spec->count);
    if (spec->resource >= 0)
        json_obj_set_int(p, "resource", spec->resource);
    if (spec->ops && spec->ops->options && spec->params) {
        /* the kind's own keys (delay, mode, ...) */
        struct json *o = opt_to_json(spec->ops->options, spec->params, NULL);
        for (size_t i = 0; i < o->n; i++)
            json_obj_set(p, o->keys[i], json_clone(o->kids[i]));
        json_free(o);
    }
    return p;
}

/* Where a start comes from: the planned time of the occurrence and whether
 * the workload's faults: or the nemesis scheduled it, and how late the
 * scheduler got to it. Ends carry none of it. */
struct origin {
    int64_t planned;   /* run-relative ns, < 0: not a start */
    const char *source;
    int64_t late;      /* ns the start was begun after it was due; < 0: not written */
};

static const struct origin NO_ORIGIN = {-1, NULL, -1};

int64_t schedule_due(const struct schedule *s, int si)
{
    int64_t due = s->next_start[si];
    if (s->serial && si >= s->nexplicit && s->added_free_at > due)
        due = s->added_free_at;
    return due;
}

static void log_event(const struct fault_env *env, const struct fault_inst *fi, const char *event,
                      int64_t t, const char *reason, struct origin o)
{
    struct json *l = json_new_obj();
    json_obj_set_int(l, "id", fi->id);
    json_obj_set_str(l, "event", event);
    json_obj_set_int(l, "t_ns", t);
    if (strcmp(event, "end") != 0) {
        char tgt[64];
        fault_target_name(fi->spec, tgt, sizeof(tgt));
        json_obj_set_str(l, "kind", fi->spec->ops->name);
        json_obj_set_str(l, "target", tgt);
    }
    if (o.planned >= 0)
        json_obj_set_int(l, "planned_ns", o.planned);
    if (o.source)
        json_obj_set_str(l, "source", o.source);
    if (o.late >= 0 && strcmp(event, "start") == 0)
        json_obj_set_num(l, "late_ms", (double)o.late / 1e6);
    if (strcmp(event, "start") == 0) {
        json_obj_set_int(l, "worker", fi->worker);
        json_obj_set_int(l, "node", fi->node);
        struct json *pids = json_obj_set(l, "pids", json_new_arr());
        for (int i = 0; i < fi->npids; i++)
            json_arr_push(pids, json_new_int(fi->pids[i]));
        json_obj_set(l, "params", params_json(fi->spec));
        if (fi->detail)
            for (size_t i = 0; i < fi->detail->n; i++)
                json_obj_set(l, fi->detail->keys[i], json_clone(fi->detail->kids[i]));
    }
    if (strcmp(event, "end") == 0 && fi->end_detail)
        for (size_t i = 0; i < fi->end_detail->n; i++)
            json_obj_set(l, fi->end_detail->keys[i], json_clone(fi->end_detail->kids[i]));
    if (reason)
        json_obj_set_str(l, "reason", reason);
    env->ops->log(env->ctx, l);
}

static void start_one(struct schedule *s, const struct fault_env *env, int si)
{
    const struct fault_spec *spec = s->specs[si];
    struct fault_inst fi;
    memset(&fi, 0, sizeof(fi));
    fi.spec = spec;
    fi.id = env->ops->next_id(env->ctx);
    fi.worker = fi.node = -1;
    fi.detail = json_new_obj();
    struct ls_err err = {0};
    int64_t planned = s->next_start[si];
    /* late: the scheduler began this start after it was due (a stalled
     * harness, a slow start of another fault); waiting for a target
     * (holder) is the kind's own and not counted */
    int64_t due = schedule_due(s, si), begun = env->ops->now(env->ctx);
    struct origin o = {planned, si < s->nexplicit ? "faults" : "nemesis",
                       begun > due ? begun - due : 0};
    int rc = spec->ops->start(env, &fi, &err);
    s->started[si]++;
    /* schedule the next occurrence of this spec */
    int more = spec->every > 0 && (spec->count == 0 || s->started[si] < spec->count);
    int64_t next = planned + spec->every;
    s->next_start[si] = more && next < s->tail_start ? next : INT64_MAX;

    if (rc == 0 && fi.start_ns >= s->tail_start) {
        /* the target turned up only once the quiet tail had begun: undo now */
        spec->ops->stop(env, &fi, &err);
        log_event(env, &fi, "skipped", env->ops->now(env->ctx),
                  "the quiet tail began before the fault took effect; undone at once", o);
        json_free(fi.detail);
        json_free(fi.end_detail);
        return;
    }
    if (rc != 0) {
        int intr = env->ops->signalled(env->ctx) && (rc > 0 || rc == LS_EINTR);
        const char *why = intr     ? "the run was interrupted before the fault took effect"
                          : rc > 0 ? "no target to act on (e.g. no worker held a lock within 1s)"
                                   : err.msg;
        log_event(env, &fi, rc > 0 || intr ? "skipped" : "failed", env->ops->now(env->ctx), why, o);
        spec->ops->stop(env, &fi, &err);
        json_free(fi.detail);
        json_free(fi.end_detail);
        return;
    }
    if (fi.end_ns <= 0) /* the kind did not set its own end (kill: the restart time) */
        fi.end_ns = fi.start_ns + spec->duration;
    if (fi.end_ns > s->tail_start &&
        s->tail_start < env->ops->workload(env->ctx)->duration)
        fi.end_ns = s->tail_start; /* healed when the quiet tail begins */
    log_event(env, &fi, "start", fi.start_ns, NULL, o);
    if (s->nactive == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        struct fault_inst *a = realloc(s->active, (size_t)cap * sizeof(*a));
        if (a)
            s->active = a;
        int *asi = a ? realloc(s->active_si, (size_t)cap * sizeof(*asi)) : NULL;
        if (asi)
            s->active_si = asi;
        if (!a || !asi) {
            spec->ops->stop(env, &fi, &err);
            log_event(env, &fi, "end", env->ops->now(env->ctx), "out of memory", NO_ORIGIN);
            json_free(fi.detail);
            json_free(fi.end_detail);
            return;
        }
        s->cap = cap;
    }
    s->active_si[s->nactive] = si;
    s->active[s->nactive++] = fi;
}

/* Record occurrence si as skipped without starting it (it was deferred
 * past the point where faults may start). */
static void skip_one(struct schedule *s, const struct fault_env *env, int si, const char *why)
{
    struct fault_inst fi;
    memset(&fi, 0, sizeof(fi));
    fi.spec = s->specs[si];
    fi.id = env->ops->next_id(env->ctx);
    fi.worker = fi.node = -1;
    struct origin o = {s->next_start[si], si < s->nexplicit ? "faults" : "nemesis", -1};
    log_event(env, &fi, "skipped", env->ops->now(env->ctx), why, o);
    s->started[si]++;
    s->next_start[si] = INT64_MAX;
}

/* End active fault ai: the kind's stop, then the end line; why (may be
 * NULL) says why it ended before its planned end. */
static void end_one(struct schedule *s, const struct fault_env *env, int ai, const char *why)
{
    struct fault_inst *fi = &s->active[ai];
    struct ls_err err = {0};
    if (s->active_si[ai] >= s->nexplicit && fi->end_ns != INT64_MAX && fi->end_ns > s->added_free_at)
        s->added_free_at = fi->end_ns;
    fi->spec->ops->stop(env, fi, &err);
    log_event(env, fi, "end", env->ops->now(env->ctx), err.code ? err.msg : why, NO_ORIGIN);
    json_free(fi->detail);
    json_free(fi->end_detail);
    s->nactive--;
    s->active[ai] = s->active[s->nactive];
    s->active_si[ai] = s->active_si[s->nactive];
}

void schedule_tick(struct schedule *s, const struct fault_env *env)
{
    int64_t now = env->ops->now(env->ctx);
    int64_t duration = env->ops->workload(env->ctx)->duration;
    for (int i = s->nactive - 1; i >= 0; i--)
        if (s->active[i].end_ns <= now)
            end_one(s, env, i,
                    s->active[i].end_ns == s->tail_start && s->tail_start < duration
                        ? "quiet tail: every fault is healed when it begins" : NULL);
    /* interrupted: start nothing more */
    for (int i = 0; i < s->nspecs && !env->ops->signalled(env->ctx); i++) {
        if (s->next_start[i] > now)
            continue;
        if (i >= s->nexplicit && added_busy_until(s) != INT64_MIN)
            continue; /* serial nemesis: wait for the active one to end */
        if (now >= s->tail_start) {
            skip_one(s, env, i, "not started: the quiet tail had begun (deferred or late)");
            continue;
        }
        start_one(s, env, i);
    }
}

void schedule_heal(struct schedule *s, const struct fault_env *env)
{
    int64_t now = env->ops->now(env->ctx);
    for (int i = s->nactive - 1; i >= 0; i--)
        end_one(s, env, i, s->active[i].end_ns > now ? "final heal before the checkers" : NULL);
    /* an occurrence that was due but never started (deferred behind a
     * nemesis fault that lasted to the end) is accounted for as skipped */
    for (int i = 0; i < s->nspecs; i++) {
        if (s->next_start[i] <= now && !env->ops->signalled(env->ctx))
            skip_one(s, env, i, "not started: the run ended first");
        s->next_start[i] = INT64_MAX;
    }
}
