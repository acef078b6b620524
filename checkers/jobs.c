/*
 * jobs.c: the jobs checker (workers.mode: jobs; model/jobs.h). The
 * storage node's final record of every announced job (jobs.jsonl: the
 * workers whose side effect landed, the effects the constraint refused,
 * who marked it done) is the ground truth; the workers' `job` events only
 * add when each effect happened. A job whose effect landed more than once
 * is a duplicate (the digest sent twice, the card charged twice); a job
 * with no effect at all was missed. Exactly once is the verdict: invalid
 * on any duplicate or missed job. It never talks to Redis.
 */
#include "checkers/check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "model/jobs.h"
#include "model/rundir.h"
#include "model/workload.h"
#include "util/json.h"

#define MAX_LISTED 20 /* duplicate jobs listed in full */

struct jobs_tally {
    int64_t jobs, done, duplicates, extra_effects, missed, claimed_not_done, effects, refused;
    int64_t listed[MAX_LISTED];
    int nlisted;
    struct json *dups;     /* duplicate_jobs array (owned until attached) */
};

/* One jobs.jsonl line into t. Returns 0, or -1 when the line is not a job. */
static int tally_line(struct jobs_tally *t, const char *line, size_t len)
{
    struct json *o = NULL;
    char why[128];
    if (json_parse(line, len, &o, why, sizeof(why)) != 0 || o->type != JSON_OBJ) {
        json_free(o);
        return -1;
    }
    const struct json *eff = json_obj_get(o, "effects");
    int64_t job = json_get_int(o, "job", -1);
    if (job < 0 || !eff || eff->type != JSON_ARR) {
        json_free(o);
        return -1;
    }
    int64_t n = (int64_t)eff->n;
    const struct json *done = json_obj_get(o, "done");
    t->jobs++;
    t->effects += n;
    t->refused += json_get_int(o, "refused", 0);
    if (n > 0)
        t->done++;
    if (n == 0) {
        t->missed++;
        if (done && done->type == JSON_NUM)
            t->claimed_not_done++;
    }
    if (n > 1) {
        t->duplicates++;
        t->extra_effects += n - 1;
        if (t->nlisted < MAX_LISTED) {
            t->listed[t->nlisted++] = job;
            struct json *d = json_arr_push(t->dups, json_new_obj());
            json_obj_set_int(d, "job", job);
            json_obj_set(d, "workers", json_clone(eff));
            json_obj_set(d, "effects_ms", json_new_arr());
        }
    }
    json_free(o);
    return 0;
}

static int cmp_t(const void *a, const void *b)
{
    double x = json_get_num(*(struct json *const *)a, "t_ms", 0);
    double y = json_get_num(*(struct json *const *)b, "t_ms", 0);
    return (x > y) - (x < y);
}

/* Attach the time of every effect of a listed duplicate job (from the
 * workers' `job` events), in time order. */
static void effect_times(const struct history *h, struct jobs_tally *t)
{
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        for (size_t k = 0; k < w->n; k++) {
            const struct ev_rec *r = hist_rec(w, k);
            if (r->type != EV_JOB || r->aux != JOBS_EFFECT)
                continue;
            for (int j = 0; j < t->nlisted; j++) {
                if (t->listed[j] != r->value)
                    continue;
                struct json *d = t->dups->kids[j];
                struct json *e = json_arr_push((struct json *)json_obj_get(d, "effects_ms"),
                                               json_new_obj());
                json_obj_set_int(e, "worker", w->id);
                json_obj_set_num(e, "t_ms", ns_ms(r->t));
            }
        }
    }
    for (int j = 0; j < t->nlisted; j++) {
        struct json *e = (struct json *)json_obj_get(t->dups->kids[j], "effects_ms");
        if (e->n > 1)
            qsort(e->kids, e->n, sizeof(e->kids[0]), cmp_t);
    }
}

int check_jobs(struct history *h, const struct check_params *p, struct json *res)
{
    (void)p;
    const struct workload *wl = h->meta ? &h->meta->w : NULL;
    if (!wl || wl->workers.mode != WMODE_JOBS)
        return VERDICT_VALID; /* not a jobs run: no section */
    struct json *checks = (struct json *)json_obj_get(res, "checks");
    struct json *o = json_obj_set(checks, "jobs", json_new_obj());
    char lt[64];
    json_obj_set_str(o, "layers", jobs_layers_text(wl->workers.jobs.layers, lt, sizeof(lt)));
    json_obj_set_int(o, "announced", jobs_total(wl));

    /* steps the workers logged (read directly: every record checked first) */
    history_verify(h);
    int64_t steps[8] = {0};
    for (int i = 0; i < h->nworkers; i++)
        for (size_t k = 0; k < h->w[i].n; k++) {
            const struct ev_rec *r = hist_rec(&h->w[i], k);
            if (r->type == EV_JOB && r->aux < 8)
                steps[r->aux]++;
        }

    char path[4096];
    snprintf(path, sizeof(path), "%s/jobs.jsonl", h->source ? h->source : ".");
    FILE *f = h->from_rundir ? fopen(path, "re") : NULL;
    if (!f) {
        json_obj_set_bool(o, "valid", 0);
        json_obj_set_str(o, "verdict", verdict_name(VERDICT_UNKNOWN));
        json_obj_set_bool(o, "available", 0);
        json_obj_set_str(o, "note", h->from_rundir ? "jobs.jsonl missing: duplicates not known"
                                                   : "not available (no run directory)");
        check_warn(res, "jobs: %s", h->from_rundir ? "jobs.jsonl missing" : "no run directory");
        return VERDICT_UNKNOWN;
    }
    struct jobs_tally t;
    memset(&t, 0, sizeof(t));
    t.dups = json_new_arr();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int64_t lineno = 0, bad = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (tally_line(&t, line, (size_t)len) < 0)
            bad++;
    }
    free(line);
    fclose(f);
    if (bad)
        check_warn(res, "jobs.jsonl: %lld lines ignored (not a job record)", (long long)bad);
    effect_times(h, &t);

    int v = VERDICT_VALID;
    if (t.duplicates > 0 || t.missed > 0)
        v = VERDICT_INVALID;
    else if (t.jobs < jobs_total(wl))
        v = VERDICT_UNKNOWN; /* the dump is short: a job may be unaccounted for */
    json_obj_set_bool(o, "valid", v == VERDICT_VALID);
    json_obj_set_str(o, "verdict", verdict_name(v));
    json_obj_set_bool(o, "available", 1);
    json_obj_set_int(o, "jobs", t.jobs);
    json_obj_set_int(o, "done", t.done);
    json_obj_set_int(o, "duplicates", t.duplicates);
    json_obj_set_int(o, "extra_effects", t.extra_effects);
    json_obj_set_int(o, "missed", t.missed);
    json_obj_set_int(o, "claimed_not_done", t.claimed_not_done);
    json_obj_set_int(o, "effects", t.effects);
    json_obj_set_int(o, "refused", t.refused);
    struct json *s = json_obj_set(o, "steps", json_new_obj());
    for (int k = 1; k < 8; k++)
        json_obj_set_int(s, job_step_name(k), steps[k]);
    json_obj_set(o, "duplicate_jobs", t.dups);
    return v;
}
