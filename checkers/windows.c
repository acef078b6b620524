/*
 * windows.c: per-fault-window numbers (issue 3 "Checker additions"): for
 * every injected fault occurrence, and for the phases with and without any
 * fault active, what happened to the acquire attempts invoked inside it
 * (grants, busy, failed, unknown, acquire latency p50/p99) and how many
 * violations it saw. Pure measurement: it judges nothing (the mutex checker
 * does) and only reads the history and the violations mutex listed.
 */
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "harness/workload.h"
#include "util/hist.h"
#include "util/xalloc.h"

enum outcome { OUT_NONE, OUT_GRANT, OUT_BUSY, OUT_FAIL, OUT_UNKNOWN };

/* One acquire attempt: its invoke time, latency (-1 without an outcome). */
struct attempt {
    int64_t t;
    int64_t lat;
    int outcome;
};

struct span {
    int64_t start, end; /* [start, end) ns */
};

struct numbers {
    int64_t duration, attempts, grants, busy, failed, unknown, violations;
    struct hist lat;
};

static int cmp_attempt(const void *a, const void *b)
{
    const struct attempt *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void push_attempt(struct attempt **a, size_t *n, size_t *cap, const struct attempt *at)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *a = xrealloc(*a, *cap * sizeof(**a));
    }
    (*a)[(*n)++] = *at;
}

/* Contract: sort a[0..n), the concatenation of per-worker runs (run k =
 * a[runs[k] .. runs[k+1])), by invoke time, merging the runs pairwise
 * bottom-up: O(n log workers) instead of a qsort of everything, which was
 * 18% of the instructions of `lockstorm check` on 10^6 events
 * (docs/performance.md). A run out of order is sorted on its own first.
 * May replace *a with a new buffer; runs is scratch. */
static void merge_runs(struct attempt **a, size_t n, size_t *runs, size_t nruns)
{
    struct attempt *src = *a;
    for (size_t k = 0; k < nruns; k++)
        for (size_t i = runs[k] + 1; i < runs[k + 1]; i++)
            if (src[i].t < src[i - 1].t) {
                qsort(src + runs[k], runs[k + 1] - runs[k], sizeof(*src), cmp_attempt);
                break;
            }
    if (nruns <= 1)
        return;
    struct attempt *dst = xmalloc((n ? n : 1) * sizeof(*dst));
    while (nruns > 1) {
        size_t out = 0;
        for (size_t k = 0; k < nruns; k += 2) {
            size_t lo = runs[k], mid = runs[k + 1];
            size_t hi = k + 2 <= nruns ? runs[k + 2] : mid;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = src[j].t < src[i].t ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
            runs[out++] = lo;
        }
        runs[out] = n;
        nruns = out;
        struct attempt *t = src;
        src = dst;
        dst = t;
    }
    free(dst);
    *a = src;
}

/* Contract: every acquire attempt of every worker log, sorted by invoke
 * time (caller frees). An invoke is paired with the next outcome record
 * of the same log; a crash or a new invoke first ends it without one. */
static struct attempt *collect(const struct history *h, size_t *n_out)
{
    struct attempt *a = NULL, cur = {0, -1, OUT_NONE};
    size_t n = 0, cap = 0;
    size_t *runs = xmalloc(((size_t)h->nworkers + 1) * sizeof(*runs));
    for (int i = 0; i < h->nworkers; i++) {
        runs[i] = n;
        int pending = 0;
        for (size_t k = 0; k < h->w[i].n; k++) {
            const struct ev_rec *r = &h->w[i].ev[k];
            int out = OUT_NONE;
            switch (r->type) {
            case EV_ACQUIRE_INVOKE:
                if (pending)
                    push_attempt(&a, &n, &cap, &cur);
                cur = (struct attempt){r->t, -1, OUT_NONE};
                pending = 1;
                continue;
            case EV_ACQUIRE_OK: out = OUT_GRANT; break;
            case EV_ACQUIRE_BUSY: out = OUT_BUSY; break;
            case EV_ACQUIRE_FAIL: out = OUT_FAIL; break;
            case EV_ACQUIRE_UNKNOWN: out = OUT_UNKNOWN; break;
            case EV_CRASH:
                if (pending)
                    push_attempt(&a, &n, &cap, &cur);
                pending = 0;
                continue;
            default: continue;
            }
            if (!pending)
                continue;
            cur.lat = r->t - cur.t;
            cur.outcome = out;
            push_attempt(&a, &n, &cap, &cur);
            pending = 0;
        }
        if (pending)
            push_attempt(&a, &n, &cap, &cur);
    }
    runs[h->nworkers] = n;
    if (n > 1)
        merge_runs(&a, n, runs, (size_t)h->nworkers);
    free(runs);
    *n_out = n;
    return a;
}

/* First index in a[0..n) whose t >= t0. */
static size_t lower(const struct attempt *a, size_t n, int64_t t0)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].t < t0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Contract: fold the attempts invoked in [start, end) into x; the part of
 * the span inside the run [0, run_end] adds to x->duration. */
static void add_span(struct numbers *x, const struct attempt *a, size_t n, int64_t start,
                     int64_t end, int64_t run_end)
{
    int64_t s = start > 0 ? start : 0, e = end < run_end ? end : run_end;
    if (e > s)
        x->duration += e - s;
    for (size_t i = lower(a, n, start); i < n && a[i].t < end; i++) {
        x->attempts++;
        switch (a[i].outcome) {
        case OUT_GRANT: x->grants++; break;
        case OUT_BUSY: x->busy++; break;
        case OUT_FAIL: x->failed++; break;
        case OUT_UNKNOWN: x->unknown++; break;
        default: break;
        }
        if (a[i].lat >= 0)
            hist_add(&x->lat, a[i].lat);
    }
}

static void numbers_init(struct numbers *x)
{
    memset(x, 0, sizeof(*x));
    hist_init(&x->lat);
}

/* Contract: the numbers as members of o (docs/result-format.md
 * "fault_windows"); latency null without a sample. */
static void numbers_json(const struct numbers *x, struct json *o)
{
    json_obj_set_num(o, "duration_ms", ns_ms(x->duration));
    json_obj_set_int(o, "attempts", x->attempts);
    json_obj_set_int(o, "grants", x->grants);
    json_obj_set_int(o, "busy", x->busy);
    json_obj_set_int(o, "failed", x->failed);
    json_obj_set_int(o, "unknown", x->unknown);
    json_obj_set_int(o, "violations", x->violations);
    json_obj_set(o, "acquire_p50_ms",
                 x->lat.count ? json_new_num(ns_ms(hist_quantile(&x->lat, 0.50))) : json_new_null());
    json_obj_set(o, "acquire_p99_ms",
                 x->lat.count ? json_new_num(ns_ms(hist_quantile(&x->lat, 0.99))) : json_new_null());
    json_obj_set_num(o, "grants_per_s",
                     x->duration > 0 ? (double)x->grants / ((double)x->duration / 1e9) : 0.0);
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

int check_windows(const struct history *h, const struct check_params *p, struct json *res)
{
    (void)p;
    size_t n;
    struct attempt *a = collect(h, &n);
    const struct json *viol = json_obj_get(res, "violations");
    size_t nviol = viol && viol->type == JSON_ARR ? viol->n : 0;
    struct numbers *x = xmalloc(sizeof(*x));

    /* each injected occurrence */
    struct json *wins = json_obj_set(res, "fault_windows", json_new_arr());
    struct span *u = xcalloc((size_t)(h->nfaults ? h->nfaults : 1), sizeof(*u));
    size_t nu = 0;
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *f = &h->faults[i];
        if (f->skipped)
            continue;
        numbers_init(x);
        add_span(x, a, n, f->start, f->end, h->end);
        for (size_t k = 0; k < nviol; k++)
            x->violations += names_fault(viol->kids[k], f->id);
        struct json *o = json_arr_push(wins, json_new_obj());
        json_obj_set_int(o, "id", f->id);
        json_obj_set_str(o, "kind", f->kind);
        json_obj_set_str(o, "target", f->target);
        json_obj_set_num(o, "start_ms", ns_ms(f->start));
        json_obj_set_num(o, "end_ms", ns_ms(f->end));
        numbers_json(x, o);
        u[nu++] = (struct span){f->start, f->end};
    }

    /* the union of the windows: the time some fault was active */
    if (nu > 1)
        qsort(u, nu, sizeof(*u), cmp_span);
    size_t m = 0;
    for (size_t i = 0; i < nu; i++) {
        if (m > 0 && u[i].start <= u[m - 1].end) {
            if (u[i].end > u[m - 1].end)
                u[m - 1].end = u[i].end;
        } else {
            u[m++] = u[i];
        }
    }

    struct json *ph = json_obj_set(res, "phases", json_new_obj());
    /* fault: inside the union; no_fault: the rest of the time line */
    numbers_init(x);
    for (size_t i = 0; i < m; i++)
        add_span(x, a, n, u[i].start, u[i].end, h->end);
    for (size_t k = 0; k < nviol; k++)
        x->violations += names_fault(viol->kids[k], -1);
    struct json *fault = json_new_obj();
    numbers_json(x, fault);

    numbers_init(x);
    int64_t from = INT64_MIN;
    for (size_t i = 0; i < m; i++) {
        add_span(x, a, n, from, u[i].start, h->end);
        from = u[i].end;
    }
    add_span(x, a, n, from, INT64_MAX, h->end);
    for (size_t k = 0; k < nviol; k++)
        x->violations += !names_fault(viol->kids[k], -1);
    numbers_json(x, json_obj_set(ph, "no_fault", json_new_obj()));
    json_obj_set(ph, "fault", fault);

    /* before the first fault */
    numbers_init(x);
    int64_t first = m ? u[0].start : INT64_MAX;
    add_span(x, a, n, INT64_MIN, first, h->end);
    for (size_t k = 0; k < nviol; k++)
        x->violations += overlaps(viol->kids[k], INT64_MIN / 2, first);
    numbers_json(x, json_obj_set(ph, "before_faults", json_new_obj()));

    /* the quiet tail, when the workload declared one */
    const struct workload *w = h->workload;
    if (w && w->quiet_tail > 0 && w->quiet_tail < w->duration) {
        int64_t tail = w->duration - w->quiet_tail;
        numbers_init(x);
        add_span(x, a, n, tail, INT64_MAX, h->end);
        for (size_t k = 0; k < nviol; k++)
            x->violations += overlaps(viol->kids[k], tail, INT64_MAX / 2);
        struct json *qt = json_obj_set(ph, "quiet_tail", json_new_obj());
        json_obj_set_num(qt, "start_ms", ns_ms(tail));
        numbers_json(x, qt);
    } else {
        json_obj_set(ph, "quiet_tail", json_new_null());
    }

    const struct json *total = json_path(res, "checks.mutex.violations");
    if (total && total->type == JSON_NUM && total->i > (int64_t)nviol)
        check_warn(res, "fault windows: violations counted over the %zu listed of %lld", nviol,
                   (long long)total->i);
    free(u);
    free(x);
    free(a);
    return VERDICT_VALID;
}
