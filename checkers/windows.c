/*
 * windows.c: per-fault-window numbers (issue 3 "Checker additions"): for
 * every injected fault occurrence, and for the phases with and without any
 * fault active, what happened to the acquire attempts invoked inside it
 * (grants, busy, failed, unknown, acquire latency p50/p99) and how many
 * violations it saw. Pure measurement: it judges nothing (the mutex checker
 * does) and only reads the history and the violations mutex listed. A
 * consumer of the merged pass (pass.h): each attempt is added where it
 * belongs as it ends; nothing is kept per attempt.
 */
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"
#include "model/rundir.h"
#include "model/workload.h"
#include "util/hist.h"
#include "util/xalloc.h"

enum outcome { OUT_NONE, OUT_GRANT, OUT_BUSY, OUT_FAIL, OUT_UNKNOWN };

struct span {
    int64_t start, end; /* [start, end) ns */
};

/* The numbers of one window or phase. Its latency histogram (30 KiB) is
 * made at its first sample. */
struct numbers {
    int64_t duration, attempts, grants, busy, failed, unknown, violations;
    struct hist *lat;
};

/* Attempts are added to every window and phase their invoke time falls in
 * when their outcome arrives (or the next invoke or a crash ends them
 * without one); nothing is kept per attempt but the pending one of each
 * worker. Windows whose time has not come or has passed for every pending
 * attempt are not looked at. */
struct windows_st {
    const struct history *h;
    int nwin;
    int *win;               /* fault indices of the injected windows, by start */
    struct numbers *wn;     /* per fault index */
    int next;               /* first of win[] not started yet */
    int *live;              /* started, and not yet over for some pending attempt */
    int nlive;
    struct span *u;         /* the union of the windows, sorted, disjoint */
    size_t nu;
    int64_t quiet_from;     /* quiet tail start, INT64_MAX without */
    struct numbers fault, no_fault, before, quiet;
    int64_t *pending;       /* per worker: invoke time of its open attempt, INT64_MIN none */
    int64_t now;
    unsigned since_retire;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static inline void add_attempt(struct numbers *x, int64_t lat, int outcome)
{
    x->attempts++;
    switch (outcome) {
    case OUT_GRANT: x->grants++; break;
    case OUT_BUSY: x->busy++; break;
    case OUT_FAIL: x->failed++; break;
    case OUT_UNKNOWN: x->unknown++; break;
    default: break;
    }
    if (lat >= 0) {
        if (!x->lat) {
            x->lat = xmalloc(sizeof(*x->lat));
            hist_init(x->lat);
        }
        hist_add(x->lat, lat);
    }
}

/* Is t inside the union of the windows? */
static int in_union(const struct windows_st *s, int64_t t)
{
    size_t lo = 0, hi = s->nu;
    while (lo < hi) { /* last span with start <= t */
        size_t mid = lo + (hi - lo) / 2;
        if (s->u[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && t < s->u[lo - 1].end;
}

/* Contract: the live windows no pending attempt can fall in any more (over
 * before the earliest pending invoke, or before now) leave the live list. */
static void retire(struct windows_st *s)
{
    int64_t low = s->now;
    for (int i = 0; i < s->h->nworkers; i++)
        if (s->pending[i] != INT64_MIN && s->pending[i] < low)
            low = s->pending[i];
    int kept = 0;
    for (int k = 0; k < s->nlive; k++)
        if (s->h->faults[s->live[k]].end > low)
            s->live[kept++] = s->live[k];
    s->nlive = kept;
}

/* Contract: the attempt invoked at t ended (lat -1: without an outcome). */
static inline void attempt_done(struct windows_st *s, int64_t t, int64_t lat, int outcome)
{
    for (int k = 0; k < s->nlive; k++) {
        const struct fault_window *f = &s->h->faults[s->live[k]];
        if (f->start <= t && t < f->end)
            add_attempt(&s->wn[s->live[k]], lat, outcome);
    }
    add_attempt(in_union(s, t) ? &s->fault : &s->no_fault, lat, outcome);
    if (t < (s->nu ? s->u[0].start : INT64_MAX))
        add_attempt(&s->before, lat, outcome);
    if (t >= s->quiet_from)
        add_attempt(&s->quiet, lat, outcome);
}

static void windows_event(void *st, int wi, const struct ev_rec *r)
{
    struct windows_st *s = st;
    int64_t *pend = &s->pending[wi];
    int out;
    s->now = r->t;
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        if (*pend != INT64_MIN)
            attempt_done(s, *pend, -1, OUT_NONE);
        while (s->next < s->nwin && s->h->faults[s->win[s->next]].start <= r->t)
            s->live[s->nlive++] = s->win[s->next++];
        if (++s->since_retire >= 1024) {
            s->since_retire = 0;
            retire(s);
        }
        *pend = r->t;
        return;
    case EV_ACQUIRE_OK: out = OUT_GRANT; break;
    case EV_ACQUIRE_BUSY: out = OUT_BUSY; break;
    case EV_ACQUIRE_FAIL: out = OUT_FAIL; break;
    case EV_ACQUIRE_UNKNOWN: out = OUT_UNKNOWN; break;
    case EV_CRASH:
        if (*pend != INT64_MIN)
            attempt_done(s, *pend, -1, OUT_NONE);
        *pend = INT64_MIN;
        return;
    default: return;
    }
    if (*pend == INT64_MIN)
        return;
    attempt_done(s, *pend, r->t - *pend, out);
    *pend = INT64_MIN;
}

static void windows_worker_end(void *st, int wi)
{
    struct windows_st *s = st;
    if (s->pending[wi] != INT64_MIN)
        attempt_done(s, s->pending[wi], -1, OUT_NONE);
    s->pending[wi] = INT64_MIN;
}

static int cmp_win(const void *a, const void *b, void *ctx)
{
    const struct history *h = ctx;
    int64_t x = h->faults[*(const int *)a].start, y = h->faults[*(const int *)b].start;
    return (x > y) - (x < y);
}

static void *windows_init(const struct history *h, const struct check_params *p,
                          struct json *res)
{
    (void)p;
    (void)res;
    struct windows_st *s = xcalloc_lines(1, sizeof(*s));
    s->h = h;
    size_t nf = (size_t)(h->nfaults ? h->nfaults : 1);
    s->win = xmalloc(nf * sizeof(*s->win));
    s->live = xcalloc_lines(nf, sizeof(*s->live));
    s->wn = xcalloc_lines(nf, sizeof(*s->wn));
    s->u = xmalloc(nf * sizeof(*s->u));
    for (int i = 0; i < h->nfaults; i++)
        if (!h->faults[i].skipped) {
            s->win[s->nwin++] = i;
            s->u[s->nu++] = (struct span){h->faults[i].start, h->faults[i].end};
        }
    if (s->nwin > 1)
        qsort_r(s->win, (size_t)s->nwin, sizeof(*s->win), cmp_win, (void *)h);
    /* the union of the windows: the time some fault was active */
    if (s->nu > 1)
        qsort(s->u, s->nu, sizeof(*s->u), cmp_span);
    size_t m = 0;
    for (size_t i = 0; i < s->nu; i++) {
        if (m > 0 && s->u[i].start <= s->u[m - 1].end) {
            if (s->u[i].end > s->u[m - 1].end)
                s->u[m - 1].end = s->u[i].end;
        } else {
            s->u[m++] = s->u[i];
        }
    }
    s->nu = m;
    const struct workload *w = h->meta ? &h->meta->w : NULL;
    s->quiet_from = w && w->quiet_tail > 0 && w->quiet_tail < w->duration
                        ? w->duration - w->quiet_tail : INT64_MAX;
    s->pending = xcalloc_lines((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*s->pending));
    for (int i = 0; i < h->nworkers; i++)
        s->pending[i] = INT64_MIN;
    return s;
}

/* Contract: the part of [start, end) inside the run [0, run_end] adds to
 * x->duration. */
static void add_duration(struct numbers *x, int64_t start, int64_t end, int64_t run_end)
{
    int64_t s = start > 0 ? start : 0, e = end < run_end ? end : run_end;
    if (e > s)
        x->duration += e - s;
}

/* Contract: the numbers as members of o (docs/result-format.md
 * "fault_windows"); latency null without a sample. Frees x's histogram. */
static void numbers_json(struct numbers *x, struct json *o)
{
    json_obj_set_num(o, "duration_ms", ns_ms(x->duration));
    json_obj_set_int(o, "attempts", x->attempts);
    json_obj_set_int(o, "grants", x->grants);
    json_obj_set_int(o, "busy", x->busy);
    json_obj_set_int(o, "failed", x->failed);
    json_obj_set_int(o, "unknown", x->unknown);
    json_obj_set_int(o, "violations", x->violations);
    json_obj_set(o, "acquire_p50_ms",
                 x->lat ? json_new_num(ns_ms(hist_quantile(x->lat, 0.50))) : json_new_null());
    json_obj_set(o, "acquire_p99_ms",
                 x->lat ? json_new_num(ns_ms(hist_quantile(x->lat, 0.99))) : json_new_null());
    json_obj_set_num(o, "grants_per_s",
                     x->duration > 0 ? (double)x->grants / ((double)x->duration / 1e9) : 0.0);
    free(x->lat);
    x->lat = NULL;
}

/* Does the listed violation v name fault id among its active faults?
 * With id < 0: does it name any? */
static int names_fault(const struct json *v, int id)
{
    const struct json *fl = json_obj_get(v, "faults");
    for (size_t k = 0; fl && fl->type == JSON_ARR && k < fl->n; k++)
        if (id < 0 || (fl->kids[k]->type == JSON_NUM && fl->kids[k]->i == id))
            return 1;
    return 0;
}

/* Does v's overlap intersect [start, end] (ns; the mutex checker's rule)? */
static int overlaps(const struct json *v, int64_t start, int64_t end)
{
    double s = json_get_num(v, "overlap_start_ms", 0), len = json_get_num(v, "overlap_ms", 0);
    return s <= ns_ms(end) && s + len >= ns_ms(start);
}

static int windows_finish(void *st, struct json *res)
{
    struct windows_st *s = st;
    const struct history *h = s->h;
    const struct json *viol = json_obj_get(res, "violations");
    size_t nviol = viol && viol->type == JSON_ARR ? viol->n : 0;

    /* each injected occurrence */
    struct json *wins = json_obj_set(res, "fault_windows", json_new_arr());
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *f = &h->faults[i];
        if (f->skipped)
            continue;
        struct numbers *x = &s->wn[i];
        add_duration(x, f->start, f->end, h->end);
        for (size_t k = 0; k < nviol; k++)
            x->violations += names_fault(viol->kids[k], f->id);
        struct json *o = json_arr_push(wins, json_new_obj());
        json_obj_set_int(o, "id", f->id);
        json_obj_set_str(o, "kind", f->kind);
        json_obj_set_str(o, "target", f->target);
        json_obj_set_num(o, "start_ms", ns_ms(f->start));
        json_obj_set_num(o, "end_ms", ns_ms(f->end));
        numbers_json(x, o);
    }

    struct json *ph = json_obj_set(res, "phases", json_new_obj());
    /* fault: inside the union; no_fault: the rest of the time line */
    for (size_t i = 0; i < s->nu; i++)
        add_duration(&s->fault, s->u[i].start, s->u[i].end, h->end);
    for (size_t k = 0; k < nviol; k++)
        s->fault.violations += names_fault(viol->kids[k], -1);
    struct json *fault = json_new_obj();
    numbers_json(&s->fault, fault);

    int64_t from = INT64_MIN;
    for (size_t i = 0; i < s->nu; i++) {
        add_duration(&s->no_fault, from, s->u[i].start, h->end);
        from = s->u[i].end;
    }
    add_duration(&s->no_fault, from, INT64_MAX, h->end);
    for (size_t k = 0; k < nviol; k++)
        s->no_fault.violations += !names_fault(viol->kids[k], -1);
    numbers_json(&s->no_fault, json_obj_set(ph, "no_fault", json_new_obj()));
    json_obj_set(ph, "fault", fault);

    /* before the first fault */
    int64_t first = s->nu ? s->u[0].start : INT64_MAX;
    add_duration(&s->before, INT64_MIN, first, h->end);
    for (size_t k = 0; k < nviol; k++)
        s->before.violations += overlaps(viol->kids[k], INT64_MIN / 2, first);
    numbers_json(&s->before, json_obj_set(ph, "before_faults", json_new_obj()));

    /* the quiet tail, when the workload declared one */
    if (s->quiet_from != INT64_MAX) {
        int64_t tail = s->quiet_from;
        add_duration(&s->quiet, tail, INT64_MAX, h->end);
        for (size_t k = 0; k < nviol; k++)
            s->quiet.violations += overlaps(viol->kids[k], tail, INT64_MAX / 2);
        struct json *qt = json_obj_set(ph, "quiet_tail", json_new_obj());
        json_obj_set_num(qt, "start_ms", ns_ms(tail));
        numbers_json(&s->quiet, qt);
    } else {
        json_obj_set(ph, "quiet_tail", json_new_null());
    }

    const struct json *total = json_path(res, "checks.mutex.violations");
    if (total && total->type == JSON_NUM && total->i > (int64_t)nviol)
        check_warn(res, "fault windows: violations counted over the %zu listed of %lld", nviol,
                   (long long)total->i);
    free(s->quiet.lat);
    for (int i = 0; i < h->nfaults; i++)
        free(s->wn[i].lat);
    free(s->wn);
    free(s->win);
    free(s->live);
    free(s->u);
    free(s->pending);
    free(s);
    return VERDICT_VALID;
}

const struct checker_def windows_checker = {
    {"windows",
     PASS_TYPE(EV_ACQUIRE_INVOKE) | PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_ACQUIRE_BUSY) |
         PASS_TYPE(EV_ACQUIRE_FAIL) | PASS_TYPE(EV_ACQUIRE_UNKNOWN) | PASS_TYPE(EV_CRASH),
     windows_event, windows_worker_end, NULL, 26},
    windows_init, windows_finish, NULL};

int check_windows(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&windows_checker, h, p, res);
}
