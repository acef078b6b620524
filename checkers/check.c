/*
 * check.c: runs the four checkers over one history and composes their
 * verdicts into the checker fragment of the result model (layout in
 * notes/result-layout.md): any invalid -> invalid, else any unknown ->
 * unknown. Parameters come from the workload when there is one. This file
 * only assembles: it runs the checkers as consumers of one merged pass
 * (pass.h); the judging is in mutex.c, fencing.c, liveness.c, stats.c.
 */
#include "checkers/check.h"

#include <math.h>
#include <stdio.h>

#include "model/workload.h"
#include "util/rng.h"
#include "util/timeutil.h"
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
    const struct workload *w = h ? h->workload : NULL;
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

struct json *check_run(const struct history *h, const struct check_params *p)
{
    struct json *res = json_new_obj();
    /* Placeholders fix the member order; the checkers replace them in place. */
    json_obj_set_str(res, "verdict_checks", "unknown");
    json_obj_set(res, "evidence", json_new_obj()); /* checkers/evidence.h: set last */
    json_obj_set(res, "counts", json_new_obj());
    json_obj_set(res, "latency", json_new_obj());
    json_obj_set(res, "throughput", json_new_obj());
    struct json *checks = json_obj_set(res, "checks", json_new_obj());
    json_obj_set(checks, "mutex", json_new_obj());
    json_obj_set(checks, "fencing", json_new_obj());
    json_obj_set(checks, "liveness", json_new_obj());
    json_obj_set(checks, "stats", json_new_obj());
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

    /* One pass over the merged logs feeds every checker (and the charts'
     * series, kept for series_build): 64 bytes of log read once per event
     * instead of once per checker (docs/performance.md "Checker"). */
    static const struct checker_def *const defs[] = {&mutex_checker, &fencing_checker,
                                                     &liveness_checker, &stats_checker,
                                                     &windows_checker, &coverage_checker};
    enum { NDEFS = sizeof(defs) / sizeof(defs[0]) };
    struct pass_consumer c[NDEFS + 1];
    for (int i = 0; i < NDEFS; i++)
        c[i] = (struct pass_consumer){&defs[i]->ops, defs[i]->init(h, p, res)};
    int nc = NDEFS;
    if (h->memo) {
        series_acc_free(h->memo->series);
        h->memo->series = series_acc_new(h);
        c[nc++] = (struct pass_consumer){&series_pass_ops, h->memo->series};
    }
    if (pass_run(h, c, nc) < 0) {
        /* A deferred record was bad (history.h "unverified"): load the
         * history again with every record checked, and start over. */
        for (int i = 0; i < NDEFS; i++)
            defs[i]->finish(c[i].st, res);
        json_free(res);
        history_reload(h);
        return check_run(h, p);
    }

    int v = defs[0]->finish(c[0].st, res);          /* mutex */
    v = compose(v, defs[1]->finish(c[1].st, res));  /* fencing */
    v = compose(v, defs[2]->finish(c[2].st, res));  /* liveness */
    v = compose(v, defs[3]->finish(c[3].st, res));  /* stats */
    v = compose(v, check_jobs(h, p, res));
    check_stories(h, p, res); /* narrates the violations; judges nothing */
    for (int i = 0; i < h->nworkers; i++) /* what the stories read around the violations */
        history_drop(&h->w[i], 0, h->w[i].n);
    v = compose(v, defs[4]->finish(c[4].st, res)); /* windows: after the stories, as before */
    v = compose(v, defs[5]->finish(c[5].st, res)); /* coverage */
    /* after the pass: a damaged log it found is in the evidence now. What
     * the record lacks could hide a violation or fake one: nothing decides */
    json_obj_set(res, "evidence", evidence_json(h));
    if (!evidence_complete(h))
        v = VERDICT_UNKNOWN;
    json_obj_set_str(res, "verdict_checks", verdict_name(v));
    return res;
}
