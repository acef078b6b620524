/*
 * schedule.c: see schedule.h. Occurrence k of a spec is due at
 * at + k*every (k < count, or until the run ends when count is 0 and every
 * > 0). A start that had to wait for its target (no holder yet) ends
 * `duration` after it really started, so a pause always lasts as long as
 * the workload says.
 */
#include "faults/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "harness/run.h"
#include "harness/workload.h"
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
    default: snprintf(buf, n, "?"); break;
    }
}

int schedule_init(struct schedule *s, const struct run *r)
{
    memset(s, 0, sizeof(*s));
    const struct workload *w = r->w;
    s->nspecs = w->nfaults;
    s->next_start = calloc((size_t)(w->nfaults ? w->nfaults : 1), sizeof(int64_t));
    s->started = calloc((size_t)(w->nfaults ? w->nfaults : 1), sizeof(int64_t));
    if (!s->next_start || !s->started)
        return LS_ENOMEM;
    for (int i = 0; i < w->nfaults; i++)
        s->next_start[i] = w->faults[i].at < w->duration ? w->faults[i].at : INT64_MAX;
    return 0;
}

void schedule_free(struct schedule *s)
{
    for (int i = 0; i < s->nactive; i++)
        json_free(s->active[i].detail);
    free(s->active);
    free(s->next_start);
    free(s->started);
    memset(s, 0, sizeof(*s));
}

int64_t schedule_next(const struct schedule *s)
{
    int64_t t = INT64_MAX;
    for (int i = 0; i < s->nspecs; i++)
        if (s->next_start[i] < t)
            t = s->next_start[i];
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
    return p;
}

static void log_event(struct run *r, const struct fault_inst *fi, const char *event,
                      int64_t t, const char *reason)
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
    if (reason)
        json_obj_set_str(l, "reason", reason);
    run_fault_log(r, l);
}

static void start_one(struct schedule *s, struct run *r, int si)
{
    const struct fault_spec *spec = &r->w->faults[si];
    struct fault_inst fi;
    memset(&fi, 0, sizeof(fi));
    fi.spec = spec;
    fi.id = r->fault_seq++;
    fi.worker = fi.node = -1;
    fi.detail = json_new_obj();
    struct ls_err err = {0};
    int64_t planned = s->next_start[si];
    int rc = spec->ops->start(r, &fi, &err);
    s->started[si]++;
    /* schedule the next occurrence of this spec */
    int more = spec->every > 0 && (spec->count == 0 || s->started[si] < spec->count);
    int64_t next = planned + spec->every;
    s->next_start[si] = more && next < r->w->duration ? next : INT64_MAX;

    if (rc != 0) {
        log_event(r, &fi, rc > 0 ? "skipped" : "failed", run_now(r),
                  rc > 0 ? "no target to act on (e.g. no worker held a lock within 1s)" : err.msg);
        spec->ops->stop(r, &fi, &err);
        json_free(fi.detail);
        return;
    }
    fi.end_ns = fi.start_ns + spec->duration;
    log_event(r, &fi, "start", fi.start_ns, NULL);
    if (s->nactive == s->cap) {
        int cap = s->cap ? s->cap * 2 : 8;
        struct fault_inst *a = realloc(s->active, (size_t)cap * sizeof(*a));
        if (!a) {
            spec->ops->stop(r, &fi, &err);
            log_event(r, &fi, "end", run_now(r), "out of memory");
            json_free(fi.detail);
            return;
        }
        s->active = a;
        s->cap = cap;
    }
    s->active[s->nactive++] = fi;
}

static void end_one(struct schedule *s, struct run *r, int ai)
{
    struct fault_inst *fi = &s->active[ai];
    struct ls_err err = {0};
    fi->spec->ops->stop(r, fi, &err);
    log_event(r, fi, "end", run_now(r), err.code ? err.msg : NULL);
    json_free(fi->detail);
    s->active[ai] = s->active[--s->nactive];
}

void schedule_tick(struct schedule *s, struct run *r)
{
    int64_t now = run_now(r);
    for (int i = s->nactive - 1; i >= 0; i--)
        if (s->active[i].end_ns <= now)
            end_one(s, r, i);
    for (int i = 0; i < s->nspecs; i++)
        if (s->next_start[i] <= now)
            start_one(s, r, i);
}

void schedule_heal(struct schedule *s, struct run *r)
{
    for (int i = s->nactive - 1; i >= 0; i--)
        end_one(s, r, i);
    for (int i = 0; i < s->nspecs; i++)
        s->next_start[i] = INT64_MAX;
}
