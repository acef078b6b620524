/*
 * check.c: runs the registered checkers (checker.h) over one history and
 * composes their verdicts into the checker fragment of the result model
 * (layout in docs/result-format.md): any invalid -> invalid, else any
 * unknown -> unknown. Parameters come from the workload when there is one.
 * This file only assembles: it runs the checkers as consumers of one
 * merged pass (pass.h; on p->jobs threads when the history is large
 * enough: the same result); the judging is in each checker's own file.
 */
#include "checkers/check.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/rundir.h"
#include "model/workload.h"
#include "util/rng.h"
#include "util/timeutil.h"
#include "util/xalloc.h"
#include "checkers/checker.h"
#include "checkers/checkutil.h"
#include "checkers/evidence.h"
#include "checkers/pass.h"
#include "checkers/series.h"
#include "checkers/story.h"

const char *verdict_name(int v)
{
    switch (v) {
    case VERDICT_VALID: return "valid";
    case VERDICT_INVALID: return "invalid";
    default: return "unknown";
    }
}

/* The 99.9th percentile of a standard normal. */
#define Z_999 3.090232

int64_t check_stuck_after_auto(const struct workload *w)
{
    const struct dist *d = &w->workers.hold;
    int64_t longest = dist_max(d);
    if (longest < 0) {
        double q = d->kind == DIST_EXPONENTIAL ? (double)d->mean * log(1000.0)
                   : d->kind == DIST_LOGNORMAL ? (double)d->value * exp(d->sigma * Z_999)
                                               : 0.0;
        longest = q < 9.0e15 ? (int64_t)q : (int64_t)9.0e15;
    }
    int64_t ttl = w->lock.ttl > 0 ? w->lock.ttl : 0;
    int64_t v = 2 * (longest + ttl);
    return v > 2 * LS_NS_PER_S ? v : 2 * LS_NS_PER_S;
}

void check_params_from(const struct history *h, struct check_params *p)
{
    p->capacity = 1;
    p->near_miss = 1 * LS_NS_PER_MS;
    p->stuck_after = 2 * LS_NS_PER_S;
    p->stuck_after_auto = 0;
    p->ttl = 0;
    p->fencing_requested = 1;
    p->max_violations = 50;
    p->max_stories = 3;
    p->max_commands_per_grant = 0;
    p->jobs = 0;
    p->par_min_events = PASS_PAR_MIN_EVENTS;
    const struct workload *w = h && h->meta ? &h->meta->w : NULL;
    if (!w)
        return;
    if (w->check.near_miss >= 0)
        p->near_miss = w->check.near_miss;
    if (w->check.stuck_after >= 0) {
        p->stuck_after = w->check.stuck_after;
    } else { /* "auto" */
        p->stuck_after = check_stuck_after_auto(w);
        p->stuck_after_auto = 1;
    }
    p->ttl = w->lock.ttl > 0 ? w->lock.ttl : 0;
    p->fencing_requested = w->lock.fencing != 0;
    if (w->check.stories >= 0)
        p->max_stories = (int)w->check.stories;
    if (w->check.max_commands_per_grant > 0)
        p->max_commands_per_grant = w->check.max_commands_per_grant;
}

int check_pass_jobs(const struct history *h, const struct check_params *p)
{
    int64_t events = 0;
    for (int i = 0; i < h->nworkers; i++)
        events += (int64_t)h->w[i].n;
    if (events < p->par_min_events)
        return 1;
    long jobs = p->jobs;
    if (jobs <= 0) { /* the CPUs this process may run on (affinity, cpusets), at most
                      * PASS_JOBS_DEFAULT_MAX: the merging thread is the limit, so
                      * more threads would only take CPU from the checks beside it
                      * (sweep and stress run several at once) */
        cpu_set_t set;
        jobs = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
                                                            : sysconf(_SC_NPROCESSORS_ONLN);
        if (jobs > PASS_JOBS_DEFAULT_MAX)
            jobs = PASS_JOBS_DEFAULT_MAX;
    }
    return jobs < 1 ? 1 : jobs > PASS_JOBS_MAX ? PASS_JOBS_MAX : (int)jobs;
}

/* Contract: for a clock fault whose start line has adapter probes
 * (clocks[].adapter_clock: faults/clock.c), their results counted, as a new
 * object {"verified":N,"not_moved":N,"unverified":N,"no_answer":N,
 * "pending":N,"indistinguishable":N}; NULL when the line has none. */
static struct json *adapter_clock_json(const struct json *record)
{
    const struct json *clocks = json_obj_get(record, "clocks");
    if (!clocks || clocks->type != JSON_ARR)
        return NULL;
    static const char *const results[] = {"verified",  "not moved", "unverified",
                                          "no answer", "pending",   "indistinguishable"};
    static const char *const keys[] = {"verified",  "not_moved", "unverified",
                                       "no_answer", "pending",   "indistinguishable"};
    enum { NRES = sizeof(keys) / sizeof(keys[0]) };
    int64_t n[NRES] = {0};
    int any = 0;
    for (size_t i = 0; i < clocks->n; i++) {
        const struct json *a = json_obj_get(clocks->kids[i], "adapter_clock");
        if (!a)
            continue;
        any = 1;
        const char *r = json_get_str(a, "result", "");
        for (int k = 0; k < NRES; k++)
            if (strcmp(r, results[k]) == 0)
                n[k]++;
    }
    if (!any)
        return NULL;
    struct json *o = json_new_obj();
    for (int k = 0; k < NRES; k++)
        json_obj_set_int(o, keys[k], n[k]);
    return o;
}

/* Contract: the "faults" array of the result model from h's windows. */
static struct json *faults_json(const struct history *h)
{
    struct json *arr = json_new_arr();
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *f = &h->faults[i];
        struct json *o = json_arr_push(arr, json_new_obj());
        json_obj_set_int(o, "id", f->id);
        json_obj_set_str(o, "kind", f->kind);
        json_obj_set_str(o, "target", f->target);
        json_obj_set(o, "worker", f->worker >= 0 ? json_new_int(f->worker) : json_new_null());
        json_obj_set(o, "node", f->node >= 0 ? json_new_int(f->node) : json_new_null());
        json_obj_set_num(o, "start_ms", ns_ms(f->start));
        json_obj_set_num(o, "end_ms", ns_ms(f->end));
        json_obj_set_bool(o, "skipped", f->skipped);
        const char *reason = json_get_str(f->record, "reason", NULL);
        if (reason)
            json_obj_set_str(o, "reason", reason);
        const struct json *params = json_obj_get(f->record, "params");
        json_obj_set(o, "params", params && params->type == JSON_OBJ ? json_clone(params)
                                                                     : json_new_obj());
        struct json *ac = adapter_clock_json(f->record);
        if (ac)
            json_obj_set(o, "adapter_clock", ac);
        const struct json *acted = json_obj_get(f->record, "requests");
        if (acted && acted->type == JSON_OBJ) /* kind command: what its rule met */
            json_obj_set(o, "requests", json_clone(acted));
    }
    return arr;
}

static int compose(int a, int b)
{
    if (a == VERDICT_INVALID || b == VERDICT_INVALID)
        return VERDICT_INVALID;
    if (a == VERDICT_UNKNOWN || b == VERDICT_UNKNOWN)
        return VERDICT_UNKNOWN;
    return VERDICT_VALID;
}

/* Contract: the result fragment's members in their order, the checkers'
 * own sections empty (they replace them in place). Caller frees. */
static struct json *skeleton(const struct history *h, const struct checker_ops *const *all,
                             int n)
{
    struct json *res = json_new_obj();
    json_obj_set_str(res, "verdict_checks", "unknown");
    json_obj_set(res, "evidence", json_new_obj()); /* checkers/evidence.h: set last */
    json_obj_set(res, "counts", json_new_obj());
    json_obj_set(res, "latency", json_new_obj());
    json_obj_set(res, "throughput", json_new_obj());
    struct json *checks = json_obj_set(res, "checks", json_new_obj());
    for (int i = 0; i < n; i++)
        if (all[i]->placeholder)
            json_obj_set(checks, all[i]->name, json_new_obj());
    json_obj_set(res, "violations", json_new_arr());
    json_obj_set(res, "incidents", json_new_arr());
    json_obj_set(res, "faults", faults_json(h));
    json_obj_set(res, "fault_windows", json_new_arr());
    json_obj_set(res, "coverage", json_new_obj());
    json_obj_set(res, "phases", json_new_obj());
    json_obj_set(res, "per_worker", json_new_arr());
    struct json *warn = json_obj_set(res, "warnings", json_new_arr());
    for (int i = 0; i < h->nwarnings; i++)
        json_arr_push(warn, json_new_str(h->warnings[i]));
    if (h->interrupted)
        json_arr_push(warn, json_new_str("the run was interrupted before its planned end"));
    return res;
}

struct json *check_run(struct history *h, const struct check_params *p)
{
    int n;
    const struct checker_ops *const *all = checker_all(&n);
    struct pass_consumer *c = xcalloc((size_t)n + 1, sizeof(*c));
    int *ci = xcalloc((size_t)n, sizeof(*ci)); /* checker i's consumer, -1: none */
    struct json *res;
    /* One pass over the merged logs feeds every checker (and the charts'
     * series, kept for series_build): 64 bytes of log read once per event
     * instead of once per checker (docs/performance.md "Checker"). A
     * deferred record found bad (history.h "unverified") makes the pass
     * fail: the history is loaded again with every record checked, and the
     * checkers start over (at most once: a reload checks everything). */
    for (;;) {
        res = skeleton(h, all, n);
        int nc = 0;
        for (int i = 0; i < n; i++) {
            ci[i] = all[i]->pass ? nc : -1;
            if (all[i]->pass)
                c[nc++] = (struct pass_consumer){&all[i]->pass->ops,
                                                 all[i]->pass->init(h, p, res), 0};
        }
        if (h->memo) {
            series_acc_free(h->memo->series);
            h->memo->series = NULL;
        }
        /* The series takes its holds from the checker that pairs them (the
         * mutex checker: the records are paired once per pass), so the two
         * are fused: one unit (pass.h), fed from one thread. Without such a
         * checker series_build makes a pass of its own. */
        for (int i = 0; h->memo && i < n; i++)
            if (ci[i] >= 0 && all[i]->pass->listen) {
                h->memo->series = series_acc_new(h);
                struct hold_listener l = series_hold_listener(h->memo->series);
                all[i]->pass->listen(c[ci[i]].st, &l);
                c[ci[i]].unit = ci[i] + 1;
                c[nc++] = (struct pass_consumer){&series_pass_ops, h->memo->series, ci[i] + 1};
                break;
            }
        if (pass_run_jobs(h, c, nc, check_pass_jobs(h, p)) == 0)
            break;
        for (int i = 0; i < n; i++)
            if (ci[i] >= 0)
                all[i]->pass->finish(c[ci[i]].st, res);
        json_free(res);
        history_reload(h);
    }

    int v = VERDICT_VALID;
    for (int phase = CHECKER_JUDGE; phase <= CHECKER_AFTER_STORIES; phase++) {
        if (phase == CHECKER_AFTER_STORIES) {
            check_stories(h, p, res); /* narrates the violations; judges nothing */
            for (int i = 0; i < h->nworkers; i++) /* what the stories read around them */
                history_drop(&h->w[i], 0, h->w[i].n);
        }
        for (int i = 0; i < n; i++)
            if (all[i]->phase == phase)
                v = compose(v, ci[i] >= 0 ? all[i]->pass->finish(c[ci[i]].st, res)
                                          : all[i]->run(h, p, res));
    }
    free(ci);
    free(c);
    /* after the pass: a damaged log it found is in the evidence now. What
     * the record lacks could hide a violation or fake one: nothing decides */
    json_obj_set(res, "evidence", evidence_json(h));
    if (!evidence_complete(h))
        v = VERDICT_UNKNOWN;
    json_obj_set_str(res, "verdict_checks", verdict_name(v));
    return res;
}
