/*
 * ttl.c: predicted overstay probabilities from the workload's distributions
 * and the matching measurements from a run's event logs (see ttl.h and
 * docs/sweep.md "Prediction"). Integration is the midpoint rule over each
 * distribution's quantiles (uniform, exponential) or over the standard
 * normal behind a lognormal; a cap (max) is an atom at max. It reads
 * histories and workloads only; `lockstorm sweep` assembles the report.
 */
#include "checkers/ttl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/rundir.h"
#include "model/workload.h"
#include "util/xalloc.h"

#define N_SINGLE 4000   /* points of a one-dimensional integral */
#define N_OUTER 200     /* points over the pause in the nested integral */
#define N_INNER 500     /* points over the hold in the nested integral */
#define Z_SPAN 8.0      /* a lognormal is integrated over z in [-8, 8] */
#define LEASE_NEVER INT64_MAX

/* ---- integration ----------------------------------------------------------- */

typedef double (*integrand)(double x, const void *ctx);

static double capped(double x, const struct dist *d)
{
    if (x < 0)
        x = 0;
    if (d->max > 0 && x > (double)d->max)
        x = (double)d->max;
    return x;
}

/* Contract: E[g(X)] for X drawn by dist_draw(d), n points (midpoint rule;
 * exact for a fixed value). */
static double expect_over(const struct dist *d, integrand g, const void *ctx, int n)
{
    switch (d->kind) {
    case DIST_FIXED:
        return g((double)d->value, ctx);
    case DIST_UNIFORM: {
        double a = (double)d->min, b = (double)d->max;
        if (b <= a)
            return g(a, ctx);
        double w = (b - a) / n, s = 0;
        for (int i = 0; i < n; i++)
            s += g(a + (i + 0.5) * w, ctx);
        return s / n;
    }
    case DIST_EXPONENTIAL: {
        double m = (double)d->mean;
        if (m <= 0)
            return g(0, ctx);
        /* u = 1 - exp(-x/m) is uniform; a cap M is an atom of mass exp(-M/m) */
        double um = d->max > 0 ? -expm1(-(double)d->max / m) : 1.0;
        double s = 0;
        for (int i = 0; i < n; i++)
            s += g(-m * log1p(-(i + 0.5) * um / n), ctx);
        s *= um / n;
        if (um < 1.0)
            s += g((double)d->max, ctx) * (1.0 - um);
        return s;
    }
    case DIST_LOGNORMAL: {
        double v = (double)d->value;
        if (d->sigma <= 0)
            return g(capped(v, d), ctx);
        double dz = 2 * Z_SPAN / n, s = 0, wsum = 0;
        for (int i = 0; i < n; i++) {
            double z = -Z_SPAN + (i + 0.5) * dz;
            double w = exp(-0.5 * z * z);
            s += w * g(capped(v * exp(d->sigma * z), d), ctx);
            wsum += w;
        }
        return s / wsum;
    }
    }
    return 0;
}

/* ---- closed forms ------------------------------------------------------------ */

double ttl_survival(const struct dist *d, double x)
{
    switch (d->kind) {
    case DIST_FIXED:
        return x < (double)d->value ? 1 : 0;
    case DIST_UNIFORM: {
        double a = (double)d->min, b = (double)d->max;
        if (x < a)
            return 1;
        if (x >= b)
            return 0;
        return (b - x) / (b - a);
    }
    case DIST_EXPONENTIAL:
        if (x < 0)
            return 1;
        if ((d->max > 0 && x >= (double)d->max) || d->mean <= 0)
            return 0;
        return exp(-x / (double)d->mean);
    case DIST_LOGNORMAL:
        if (x < 0)
            return 1;
        if (d->max > 0 && x >= (double)d->max)
            return 0;
        if (d->sigma <= 0)
            return x < (double)d->value ? 1 : 0;
        if (x == 0)
            return 1;
        return 0.5 * erfc(log(x / (double)d->value) / (d->sigma * M_SQRT2));
    }
    return 0;
}

static double identity(double x, const void *ctx)
{
    (void)ctx;
    return x;
}

double ttl_mean(const struct dist *d)
{
    switch (d->kind) {
    case DIST_FIXED:
        return (double)d->value;
    case DIST_UNIFORM:
        return ((double)d->min + (double)d->max) / 2;
    case DIST_EXPONENTIAL: /* E[min(X, M)] = m (1 - exp(-M/m)) */
        if (d->max > 0)
            return -(double)d->mean * expm1(-(double)d->max / (double)d->mean);
        return (double)d->mean;
    case DIST_LOGNORMAL:
        if (d->max <= 0)
            return (double)d->value * exp(d->sigma * d->sigma / 2);
        return expect_over(d, identity, NULL, N_SINGLE);
    }
    return 0;
}

/* ---- P(hold + pause > ttl) ------------------------------------------------- */

struct exceed_ctx {
    const struct dist *hold;
    double ttl;
};

static double hold_survives(double pause, const void *ctx)
{
    const struct exceed_ctx *c = ctx;
    return ttl_survival(c->hold, c->ttl - pause);
}

double ttl_p_exceed(const struct dist *hold, const struct dist *pause, double ttl)
{
    struct exceed_ctx c = {hold, ttl};
    return expect_over(pause, hold_survives, &c, N_SINGLE);
}

/* ---- the harness's own overstay probability ---------------------------------- */

struct harness_ctx {
    const struct dist *hold;
    double ttl, cut, mean;  /* cut = max(0, ttl - pause) */
    int n;
};

/* 1{h <= ttl} min(h, cut): the length-weighted share of positions u in
 * [0, h] where a pause does not push the hold past ttl. */
static double fits(double h, const void *ctx)
{
    const struct harness_ctx *c = ctx;
    if (h > c->ttl)
        return 0;
    return h < c->cut ? h : c->cut;
}

static double harness_for_pause(double pause, const void *ctx)
{
    const struct harness_ctx *c0 = ctx;
    struct harness_ctx c = *c0;
    c.cut = c.ttl - pause > 0 ? c.ttl - pause : 0;
    if (c.mean <= 0) /* every hold is empty: it overstays iff the pause alone does */
        return pause > c.ttl ? 1 : 0;
    double p = 1 - expect_over(c.hold, fits, &c, c.n) / c.mean;
    return p < 0 ? 0 : p > 1 ? 1 : p;
}

double ttl_p_exceed_harness(const struct dist *hold, const struct dist *pause, double ttl)
{
    struct harness_ctx c = {hold, ttl, 0, ttl_mean(hold), N_SINGLE};
    if (pause->kind == DIST_FIXED)
        return harness_for_pause((double)pause->value, &c);
    c.n = N_INNER;
    return expect_over(pause, harness_for_pause, &c, N_OUTER);
}

int64_t ttl_safe_bound(const struct dist *hold, const struct dist *pause)
{
    int64_t h = dist_max(hold), p = dist_max(pause);
    if (h < 0 || p < 0)
        return -1;
    return h + p;
}

double ttl_mix_exceed(const struct dist *hold, const struct ttl_pause *p, int n, double ttl,
                      int harness)
{
    double s = 0, wsum = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].weight <= 0)
            continue;
        double v = harness ? ttl_p_exceed_harness(hold, &p[i].d, ttl)
                           : ttl_p_exceed(hold, &p[i].d, ttl);
        s += p[i].weight * v;
        wsum += p[i].weight;
    }
    return wsum > 0 ? s / wsum : 0;
}

/* ---- the pauses of a workload ---------------------------------------------- */

/* Occurrences of an explicit schedule that start before the quiet tail. */
static double occurrences(const struct workload *w, const struct rundir_fault *fs)
{
    int64_t limit = w->duration - w->quiet_tail;
    if (fs->at >= limit)
        return 0;
    if (fs->every <= 0)
        return 1;
    int64_t n = (limit - fs->at - 1) / fs->every + 1;
    if (fs->count > 0 && n > fs->count)
        n = fs->count;
    return (double)n;
}

/* Share of a nemesis kind's target entries that are `holder` (its default
 * when it lists none). */
static double holder_share(const struct rundir_nemesis_kind *k)
{
    if (k->ntargets == 0)
        return 1;
    return (double)k->holder_targets / k->ntargets;
}

int ttl_pauses_of(const struct rundir_meta *m, struct ttl_pause *out, int max)
{
    int n = 0;
    const struct workload *w = m ? &m->w : NULL;
    for (int i = 0; m && i < m->nfaults && n < max; i++) {
        const struct rundir_fault *fs = &m->faults[i];
        if (strcmp(fs->kind, "pause") != 0 || strcmp(fs->target, "holder") != 0)
            continue;
        double occ = occurrences(w, fs);
        if (occ <= 0)
            continue;
        memset(&out[n], 0, sizeof(out[n]));
        out[n].d.kind = DIST_FIXED;
        out[n].d.value = fs->duration;
        out[n].weight = occ;
        n++;
    }
    for (int i = 0; m && m->nemesis.enabled && i < m->nemesis.nkinds && n < max; i++) {
        const struct rundir_nemesis_kind *k = &m->nemesis.kinds[i];
        if (strcmp(k->kind, "pause") != 0 || m->nemesis.interval <= 0)
            continue;
        double span = (double)(w->duration - w->quiet_tail - m->nemesis.start);
        double share = holder_share(k);
        if (span <= 0 || share <= 0)
            continue;
        memset(&out[n], 0, sizeof(out[n]));
        out[n].d.kind = DIST_UNIFORM;
        out[n].d.min = m->nemesis.dur_min;
        out[n].d.max = m->nemesis.dur_max;
        out[n].weight = span / (double)m->nemesis.interval / m->nemesis.nkinds * share;
        n++;
    }
    return n;
}

/* ---- measurement -------------------------------------------------------------- */

struct mhold {
    int64_t acquired, enter, exit, lease;
    int worker, res, crashed;
};

struct mhold_vec {
    struct mhold *a;
    size_t n, cap;
};

static void push(struct mhold_vec *v, const struct mhold *h)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->a = xrealloc(v->a, v->cap * sizeof(*v->a));
    }
    v->a[v->n++] = *h;
}

/* Contract: append worker w's holds (grant, enter, exit or crash) to v, in
 * time order. A grant never entered is not a hold. */
static void holds_of(const struct hist_worker *w, struct mhold_vec *v)
{
    struct mhold cur = {0};
    int have = 0, entered = 0;
    struct hist_reader rd; /* a packed stream is read back; the others in place */
    hist_reader_init(&rd, w);
    for (size_t i = 0; i < w->n; i++) {
        const struct ev_rec *r = w->pack ? hist_reader_rec(&rd, i) : hist_rec(w, i);
        switch (r->type) {
        case EV_ACQUIRE_OK:
            memset(&cur, 0, sizeof(cur));
            cur.acquired = r->t;
            cur.lease = (r->flags & EVF_NO_LEASE) ? LEASE_NEVER : r->valid_until;
            cur.worker = w->id;
            cur.res = r->res;
            have = 1;
            entered = 0;
            break;
        case EV_RENEW_OK:
            if (have && r->res == cur.res)
                cur.lease = (r->flags & EVF_NO_LEASE) ? LEASE_NEVER : r->valid_until;
            break;
        case EV_ENTER:
            if (have && r->res == cur.res) {
                cur.enter = r->t;
                entered = 1;
            }
            break;
        case EV_EXIT:
        case EV_CRASH:
            if (have && entered) {
                cur.exit = r->t;
                cur.crashed = r->type == EV_CRASH;
                push(v, &cur);
            }
            have = entered = 0;
            break;
        default:
            break;
        }
    }
    hist_reader_done(&rd);
}

static int cmp_res_enter(const void *a, const void *b)
{
    const struct mhold *x = a, *y = b;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    return x->enter < y->enter ? -1 : x->enter > y->enter;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Did a worker other than x's enter x's resource in [x.lease, x.exit)?
 * all is sorted by (res, enter). */
static int entered_during_overstay(const struct mhold_vec *all, const struct mhold *x)
{
    size_t lo = 0, hi = all->n;
    while (lo < hi) { /* first hold of x.res entering at or after x.lease */
        size_t mid = (lo + hi) / 2;
        const struct mhold *m = &all->a[mid];
        if (m->res < x->res || (m->res == x->res && m->enter < x->lease))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < all->n; i++) {
        const struct mhold *y = &all->a[i];
        if (y->res != x->res || y->enter >= x->exit)
            break;
        if (y->worker != x->worker)
            return 1;
    }
    return 0;
}

/* Is this fault window one of the holder pauses the prediction is about? */
static int holder_pause(const struct fault_window *f)
{
    return !f->skipped && f->worker >= 0 && strcmp(f->kind, "pause") == 0 &&
           strcmp(f->target, "holder") == 0;
}

/* Did a fault acting on worker (or on every worker) overlap [a, b]? */
static int touched(const struct history *h, int worker, int64_t a, int64_t b)
{
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *f = &h->faults[i];
        if (f->skipped || (f->worker != worker && !(f->worker < 0 && f->node < 0)))
            continue;
        if (f->start <= b && f->end >= a)
            return 1;
    }
    return 0;
}

int ttl_measure_history(struct history *h, struct ttl_measure *m)
{
    history_verify(h); /* it reads the logs itself, not through the checked pass */
    memset(m, 0, sizeof(*m));
    m->hold_p50_ms = m->hold_p99_ms = m->hold_max_ms = -1;
    m->pause_mean_ms = m->pause_max_ms = -1;
    struct mhold_vec all = {0};
    size_t *first = xcalloc((size_t)h->nworkers + 1, sizeof(*first));
    for (int i = 0; i < h->nworkers; i++) {
        first[i] = all.n;
        holds_of(&h->w[i], &all);
    }
    first[h->nworkers] = all.n;
    m->holds = (int64_t)all.n;

    /* pauses: by worker, before the holds are re-sorted by resource */
    double pause_sum = 0;
    struct mhold *hit = xcalloc((size_t)h->nfaults + 1, sizeof(*hit));
    int nhit = 0;
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *f = &h->faults[i];
        if (!holder_pause(f))
            continue;
        m->pauses++;
        double len = (double)(f->end - f->start) / 1e6;
        pause_sum += len;
        if (len > m->pause_max_ms)
            m->pause_max_ms = len;
        for (int k = 0; k < h->nworkers; k++) {
            if (h->w[k].id != f->worker)
                continue;
            for (size_t j = first[k]; j < first[k + 1]; j++) {
                const struct mhold *x = &all.a[j];
                if (x->acquired <= f->start && f->start <= x->exit) {
                    hit[nhit++] = *x;
                    break;
                }
            }
        }
    }
    if (m->pauses > 0)
        m->pause_mean_ms = pause_sum / (double)m->pauses;

    /* holds no fault touched: the workload's hold distribution as it ran */
    double *lens = xcalloc(all.n + 1, sizeof(*lens));
    size_t nl = 0;
    for (size_t j = 0; j < all.n; j++) {
        const struct mhold *x = &all.a[j];
        if (x->crashed)
            m->crashed_holds++;
        else if (!touched(h, x->worker, x->acquired, x->exit))
            lens[nl++] = (double)(x->exit - x->enter) / 1e6;
    }
    if (nl > 0) {
        qsort(lens, nl, sizeof(*lens), cmp_double);
        m->hold_p50_ms = lens[(nl - 1) / 2];
        size_t k99 = (size_t)ceil(0.99 * (double)nl);
        m->hold_p99_ms = lens[k99 > 0 ? k99 - 1 : 0];
        m->hold_max_ms = lens[nl - 1];
    }

    qsort(all.a, all.n, sizeof(*all.a), cmp_res_enter);
    for (int i = 0; i < nhit; i++) {
        const struct mhold *x = &hit[i];
        m->paused_holds++;
        if (x->crashed || x->lease == LEASE_NEVER || x->exit <= x->lease)
            continue;
        m->overstayed++;
        if (entered_during_overstay(&all, x))
            m->stale_caused++;
    }
    free(lens);
    free(hit);
    free(first);
    free(all.a);
    return 0;
}
