/*
 * series.c: the charts' data (see series.h). Two passes over the worker
 * logs: the first fills fixed-size buckets (rates, per-bucket latency
 * histograms for p50/p99, the overview of grants) and counts the acquire
 * outcomes; the second samples the latency scatter with a stride per
 * outcome and extracts the holds inside the timeline window. The lost-
 * update drift needs the store writes of all workers in time order, so
 * those (a few per hold) are collected and sorted. Holds are paired the way
 * the mutex checker pairs them (grant -> enter -> exit/crash), simplified:
 * this only draws them.
 */
#include "checkers/series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "util/hist.h"
#include "util/xalloc.h"

#define RATE_MAX_BUCKETS 300
#define RATE_MIN_BUCKET_MS 100
#define QUANT_MAX_BUCKETS 100
#define QUANT_MIN_BUCKET_MS 250
#define SCATTER_PER_OUTCOME 2000   /* points kept per acquire outcome */
#define TIMELINE_HOLDS 1500        /* holds drawn before the timeline zooms */
#define TIMELINE_MAX_ROWS 4000
#define TIMELINE_MAX_LANES 48
#define NO_LEASE INT64_MAX

enum outcome { OC_GRANT, OC_BUSY, OC_UNKNOWN, OC_FAILED, OC__N };
static const char *const outcome_names[OC__N] = {"grant", "busy", "unknown", "failed"};

/* The smallest "nice" bucket (1, 2, 5 x 10^k ms, at least min_ms) that
 * cuts span_ns into at most max buckets. */
static int64_t nice_bucket(int64_t span_ns, int64_t min_ms, int max)
{
    static const int64_t steps[] = {1, 2, 5};
    for (int64_t dec = 1; dec < 1000000000; dec *= 10)
        for (size_t i = 0; i < 3; i++) {
            int64_t b = steps[i] * dec;
            if (b < min_ms)
                continue;
            if (span_ns / (b * 1000000) < max)
                return b * 1000000;
        }
    return 1000000000LL * 1000000;
}

static int outcome_of(int type)
{
    switch (type) {
    case EV_ACQUIRE_OK: return OC_GRANT;
    case EV_ACQUIRE_BUSY: return OC_BUSY;
    case EV_ACQUIRE_UNKNOWN: return OC_UNKNOWN;
    case EV_ACQUIRE_FAIL: return OC_FAILED;
    default: return -1;
    }
}

static struct json *table(struct json *parent, const char *name, const char *const *cols,
                          size_t ncols)
{
    struct json *t = json_obj_set(parent, name, json_new_obj());
    struct json *c = json_obj_set(t, "columns", json_new_arr());
    for (size_t i = 0; i < ncols; i++)
        json_arr_push(c, json_new_str(cols[i]));
    json_obj_set(t, "rows", json_new_arr());
    return t;
}

static struct json *row(struct json *tab)
{
    return json_arr_push(json_obj_get(tab, "rows"), json_new_arr());
}

static void num(struct json *r, double v)
{
    json_arr_push(r, json_new_num(v));
}

static void inum(struct json *r, int64_t v)
{
    json_arr_push(r, json_new_int(v));
}

/* ---- store writes, for the lost-update drift ---------------------------- */

struct sop {
    int64_t t;
    int64_t value;
    int32_t res;
    uint8_t fenced, accepted, write;
};

static int cmp_sop(const void *a, const void *b)
{
    const struct sop *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

/* Contract: the "fencing" series: a zero row at 0, then per rate bucket
 * (stamped at its end, the last at the run end), the lost updates so far
 * (accepted writes so far minus the counter's value now, summed over
 * resources) for each counter, and the stale fenced ops rejected so far. */
static void fencing_series(struct json *series, struct sop *ops, size_t n, int nres,
                           int64_t bucket, int64_t nb, int64_t run_end)
{
    static const char *const cols[] = {"t_ms", "plain_lost", "fenced_lost", "stale_rejected"};
    if (n > 1) /* qsort(NULL, 0) is undefined behaviour */
        qsort(ops, n, sizeof(*ops), cmp_sop);
    int offered = 0;
    for (size_t i = 0; i < n && !offered; i++)
        offered = ops[i].fenced;
    struct json *t = table(series, "fencing", cols, 4);
    json_obj_set_bool(t, "offered", offered);
    int64_t *latest = xcalloc((size_t)(nres > 0 ? nres : 1) * 2, sizeof(*latest));
    int64_t acc[2] = {0, 0}, sum[2] = {0, 0}, rejected = 0;
    size_t i = 0;
    struct json *r0 = row(t); /* nothing lost at the start */
    num(r0, 0);
    inum(r0, 0);
    json_arr_push(r0, offered ? json_new_int(0) : json_new_null());
    inum(r0, 0);
    for (int64_t b = 0; b < nb; b++) {
        int64_t end = (b + 1) * bucket;
        for (; i < n && ops[i].t < end; i++) {
            const struct sop *o = &ops[i];
            int c = o->fenced ? 1 : 0;
            if (!o->accepted) {
                rejected += o->fenced;
                continue;
            }
            if (!o->write || o->res < 0 || o->res >= nres)
                continue;
            acc[c]++;
            sum[c] += o->value - latest[o->res * 2 + c];
            latest[o->res * 2 + c] = o->value;
        }
        struct json *r = row(t);
        num(r, ns_ms(end < run_end ? end : run_end)); /* the last bucket ends with the run */
        inum(r, acc[0] - sum[0] > 0 ? acc[0] - sum[0] : 0);
        if (offered)
            inum(r, acc[1] - sum[1] > 0 ? acc[1] - sum[1] : 0);
        else
            json_arr_push(r, json_new_null());
        inum(r, rejected);
    }
    free(latest);
}

/* ---- timeline ----------------------------------------------------------- */

struct thold {
    int64_t enter, exit, lease;
    int res, worker;
    int end_kind; /* 0 exit, 1 crash, 2 open */
};

struct tgrant {
    int64_t lease;
    int res, entered;
    int64_t enter;
};

static void push_thold(struct thold **out, size_t *n, size_t *cap, size_t max, int *trunc,
                       struct thold x)
{
    if (*n >= max) {
        *trunc = 1;
        return;
    }
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 256;
        *out = xrealloc(*out, *cap * sizeof(**out));
    }
    (*out)[(*n)++] = x;
}

/* Contract: append to *out (realloc'd) worker w's holds that intersect
 * [from, to]; at most cap in total (*trunc set when more existed). */
static void worker_holds(const struct hist_worker *w, int64_t from, int64_t to,
                         struct thold **out, size_t *n, size_t *cap, size_t max, int *trunc)
{
    struct tgrant g[8];
    int ng = 0;
    for (size_t k = 0; k < w->n; k++) {
        const struct ev_rec *r = &w->ev[k];
        int i;
        switch (r->type) {
        case EV_ACQUIRE_OK:
            if (ng < 8) {
                g[ng].lease = (r->flags & EVF_NO_LEASE) ? NO_LEASE : r->valid_until;
                g[ng].res = r->res;
                g[ng].entered = 0;
                ng++;
            }
            break;
        case EV_ENTER:
            for (i = ng - 1; i >= 0; i--)
                if (g[i].res == r->res && !g[i].entered)
                    break;
            if (i < 0 && ng < 8) {
                i = ng++;
                g[i].lease = NO_LEASE;
                g[i].res = r->res;
            }
            if (i >= 0) {
                g[i].entered = 1;
                g[i].enter = r->t;
            }
            break;
        case EV_RENEW_OK:
            for (i = 0; i < ng; i++)
                if (g[i].res == r->res && g[i].lease != NO_LEASE && r->valid_until > g[i].lease)
                    g[i].lease = r->valid_until;
            break;
        case EV_EXIT:
        case EV_CRASH:
            /* An exit ends the entered grant of its resource; a crash ends
             * every entered one (and forgets the rest). */
            for (i = 0; i < ng; i++) {
                if (!g[i].entered || (r->type == EV_EXIT && g[i].res != r->res))
                    continue;
                if (g[i].enter <= to && r->t >= from)
                    push_thold(out, n, cap, max, trunc,
                               (struct thold){g[i].enter, r->t, g[i].lease, g[i].res, w->id,
                                              r->type == EV_CRASH});
                if (r->type == EV_EXIT) {
                    g[i] = g[--ng];
                    break;
                }
            }
            if (r->type == EV_CRASH)
                ng = 0;
            break;
        case EV_RELEASE_OK:
        case EV_RELEASE_NOT_OWNER:
        case EV_RELEASE_FAIL:
        case EV_LOST:
            /* A grant that ends before anyone entered it is no hold. */
            for (i = 0; i < ng; i++)
                if (g[i].res == r->res && !g[i].entered) {
                    g[i] = g[--ng];
                    break;
                }
            break;
        default:
            break;
        }
    }
    int64_t last = w->n ? w->ev[w->n - 1].t : 0;
    for (int i = 0; i < ng; i++)
        if (g[i].entered && g[i].enter <= to && last >= from)
            push_thold(out, n, cap, max, trunc,
                       (struct thold){g[i].enter, last, g[i].lease, g[i].res, w->id, 2});
}

static int cmp_thold(const void *a, const void *b)
{
    const struct thold *x = a, *y = b;
    if (x->res != y->res)
        return x->res - y->res;
    if (x->worker != y->worker)
        return x->worker - y->worker;
    return (x->enter > y->enter) - (x->enter < y->enter);
}

static int res_index(const struct history *h, const char *name)
{
    for (int r = 0; r < h->nres; r++)
        if (h->res_names && strcmp(h->res_names[r], name) == 0)
            return r;
    return -1;
}

/* Contract: [*from, *to] of the timeline: the whole run when it has few
 * holds, else a window holding about TIMELINE_HOLDS of them that starts a
 * little before the first violation's earliest grant (or the first fault,
 * or the run start). Returns 1 when zoomed. */
static int timeline_window(const struct history *h, const struct json *result, int64_t *from,
                           int64_t *to)
{
    int64_t end = h->end > 0 ? h->end : 1;
    int64_t holds = json_get_int(json_path(result, "checks.mutex"), "holds", 0);
    *from = 0;
    *to = end;
    if (holds <= TIMELINE_HOLDS)
        return 0;
    double per_ns = (double)holds / (double)end;
    int64_t len = (int64_t)((double)TIMELINE_HOLDS / per_ns);
    if (len < 1000000)
        len = 1000000;
    int64_t anchor = -1;
    const struct json *v0 = json_arr_get(json_obj_get(result, "violations"), 0);
    if (v0) {
        anchor = (int64_t)llround(json_get_num(v0, "overlap_start_ms", 0) * 1e6);
        const struct json *hl = json_obj_get(v0, "holders");
        for (size_t i = 0; hl && hl->type == JSON_ARR && i < hl->n; i++) {
            int64_t a = (int64_t)llround(json_get_num(hl->kids[i], "acquired_ms", 0) * 1e6);
            if (a < anchor)
                anchor = a;
        }
        /* Keep the first overlap in view even when it is long. */
        int64_t ov_end = (int64_t)llround((json_get_num(v0, "overlap_start_ms", 0) +
                                           json_get_num(v0, "overlap_ms", 0)) * 1e6);
        if (ov_end - anchor > len * 8 / 10)
            len = (ov_end - anchor) * 10 / 8;
    } else {
        for (int i = 0; i < h->nfaults; i++)
            if (!h->faults[i].skipped) {
                anchor = h->faults[i].start;
                break;
            }
    }
    if (anchor < 0)
        anchor = 0;
    *from = anchor - len / 10;
    if (*from < 0)
        *from = 0;
    *to = *from + len;
    if (*to > end) {
        *to = end;
        *from = end - len > 0 ? end - len : 0;
    }
    return 1;
}

static void timeline_series(struct json *series, const struct history *h,
                            const struct json *result, const int64_t *grants_per_bucket,
                            int64_t bucket, int64_t nb)
{
    static const char *const hold_cols[] = {"lane", "enter_ms", "exit_ms", "valid_until_ms",
                                            "end"};
    static const char *const ov_cols[] = {"lane", "from_ms", "to_ms", "class"};
    static const char *const view_cols[] = {"t_ms", "grants_per_s"};
    static const char *const mark_cols[] = {"t_ms", "class"};
    static const char *const end_names[] = {"exit", "crash", "open"};
    int64_t from, to;
    int zoomed = timeline_window(h, result, &from, &to);
    struct thold *hs = NULL;
    size_t n = 0, cap = 0;
    int trunc = 0;
    for (int i = 0; i < h->nworkers; i++)
        worker_holds(&h->w[i], from, to, &hs, &n, &cap, TIMELINE_MAX_ROWS, &trunc);
    if (n > 1)
        qsort(hs, n, sizeof(*hs), cmp_thold);

    /* Lanes: one per (resource, worker) seen in the window. Past the lane
     * limit, resources of violations come first, then by index. */
    const struct json *viol = json_obj_get(result, "violations");
    int nres = h->nres > 0 ? h->nres : 1;
    for (size_t i = 0; i < n; i++)
        if (hs[i].res >= nres)
            nres = hs[i].res + 1;
    int *lanes_of = xcalloc((size_t)nres, sizeof(int)); /* distinct workers per resource */
    int *keep = xcalloc((size_t)nres, sizeof(int));
    for (size_t i = 0; i < n; i++)
        if (i == 0 || hs[i].res != hs[i - 1].res || hs[i].worker != hs[i - 1].worker)
            lanes_of[hs[i].res]++;
    int used = 0, dropped_lanes = 0;
    for (size_t k = 0; viol && viol->type == JSON_ARR && k < viol->n; k++) {
        int r = res_index(h, json_get_str(viol->kids[k], "resource", ""));
        if (r >= 0 && r < nres && !keep[r] && used + lanes_of[r] <= TIMELINE_MAX_LANES) {
            keep[r] = 1;
            used += lanes_of[r];
        }
    }
    for (int r = 0; r < nres; r++) {
        if (keep[r] || !lanes_of[r])
            continue;
        if (used + lanes_of[r] <= TIMELINE_MAX_LANES) {
            keep[r] = 1;
            used += lanes_of[r];
        } else {
            dropped_lanes += lanes_of[r];
        }
    }

    struct json *t = json_obj_set(series, "timeline", json_new_obj());
    json_obj_set_num(t, "from_ms", ns_ms(from));
    json_obj_set_num(t, "to_ms", ns_ms(to));
    json_obj_set_bool(t, "zoomed", zoomed);
    json_obj_set_bool(t, "truncated", trunc);
    json_obj_set_int(t, "lanes_dropped", dropped_lanes);
    struct json *lanes = json_obj_set(t, "lanes", json_new_arr());
    struct json *holds = table(t, "holds", hold_cols, 5);
    int lane = -1;
    int *lane_first = xcalloc((size_t)nres, sizeof(int)); /* first lane of a resource, +1 */
    for (size_t i = 0; i < n; i++) {
        const struct thold *x = &hs[i];
        if (!keep[x->res])
            continue;
        if (lane < 0 || x->res != hs[i - 1].res || x->worker != hs[i - 1].worker ||
            !keep[hs[i - 1].res]) {
            lane++;
            if (!lane_first[x->res])
                lane_first[x->res] = lane + 1;
            struct json *l = json_arr_push(lanes, json_new_obj());
            json_obj_set_int(l, "lane", lane);
            json_obj_set_str(l, "res", check_res_name(h, x->res));
            json_obj_set_int(l, "worker", x->worker);
        }
        struct json *r = row(holds);
        inum(r, lane);
        num(r, ns_ms(x->enter));
        num(r, ns_ms(x->exit));
        if (x->lease == NO_LEASE)
            json_arr_push(r, json_new_null());
        else
            num(r, ns_ms(x->lease));
        json_arr_push(r, json_new_str(end_names[x->end_kind]));
    }

    /* Overlaps of the listed violations, on each holder's lane. */
    struct json *ovs = table(t, "overlaps", ov_cols, 4);
    struct json *marks = table(t, "markers", mark_cols, 2);
    for (size_t k = 0; viol && viol->type == JSON_ARR && k < viol->n; k++) {
        const struct json *v = viol->kids[k];
        double a = json_get_num(v, "overlap_start_ms", 0);
        double b = a + json_get_num(v, "overlap_ms", 0);
        const char *cls = json_get_str(v, "class", "?");
        struct json *m = row(marks);
        num(m, a);
        json_arr_push(m, json_new_str(cls));
        if (b < ns_ms(from) || a > ns_ms(to))
            continue;
        int r = res_index(h, json_get_str(v, "resource", ""));
        const struct json *hl = json_obj_get(v, "holders");
        for (size_t j = 0; r >= 0 && r < nres && hl && hl->type == JSON_ARR && j < hl->n; j++) {
            int wid = (int)json_get_int(hl->kids[j], "worker", -1);
            const struct json *ln = NULL;
            for (size_t q = 0; q < lanes->n; q++)
                if (json_get_int(lanes->kids[q], "worker", -2) == wid &&
                    strcmp(json_get_str(lanes->kids[q], "res", ""), check_res_name(h, r)) == 0)
                    ln = lanes->kids[q];
            if (!ln)
                continue;
            struct json *o = row(ovs);
            inum(o, json_get_int(ln, "lane", 0));
            num(o, a);
            num(o, b);
            json_arr_push(o, json_new_str(cls));
        }
    }
    /* The overview strip: grants over the whole run. */
    struct json *ov = table(t, "overview", view_cols, 2);
    for (int64_t b = 0; zoomed && b < nb; b++) {
        struct json *r = row(ov);
        num(r, ns_ms(b * bucket));
        num(r, (double)grants_per_bucket[b] / ((double)bucket / 1e9));
    }
    free(lane_first);
    free(lanes_of);
    free(keep);
    free(hs);
}

/* ---- the whole series object -------------------------------------------- */

struct json *series_build(const struct history *h, const struct json *result)
{
    static const char *const rate_cols[] = {"t_ms", "grants_per_s", "busy_per_s",
                                            "unknown_per_s", "failed_per_s"};
    static const char *const lat_cols[] = {"t_ms", "latency_ms", "outcome"};
    static const char *const q_cols[] = {"t_ms", "p50_ms", "p99_ms", "count"};
    int64_t end = h->end > 0 ? h->end : 1;
    int64_t bucket = nice_bucket(end, RATE_MIN_BUCKET_MS, RATE_MAX_BUCKETS);
    int64_t nb = end / bucket + 1;
    int64_t qbucket = nice_bucket(end, QUANT_MIN_BUCKET_MS, QUANT_MAX_BUCKETS);
    int64_t nq = end / qbucket + 1;
    int64_t (*rate)[OC__N] = xcalloc((size_t)nb, sizeof(*rate));
    int64_t *grants = xcalloc((size_t)nb, sizeof(*grants));
    struct hist *qh = xmalloc((size_t)nq * sizeof(*qh));
    for (int64_t i = 0; i < nq; i++)
        hist_init(&qh[i]);
    int64_t counts[OC__N] = {0, 0, 0, 0};
    struct sop *ops = NULL;
    size_t nops = 0, ops_cap = 0;

    /* Pass 1: buckets, outcome counts, store ops. */
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        int64_t inv = INT64_MIN;
        for (size_t k = 0; k < w->n; k++) {
            const struct ev_rec *r = &w->ev[k];
            if (r->type == EV_ACQUIRE_INVOKE) {
                inv = r->t;
                continue;
            }
            if (r->type == EV_CRASH) {
                inv = INT64_MIN;
                continue;
            }
            if (r->type == EV_STORE_WRITE || r->type == EV_STORE_READ) {
                if (r->flags & EVF_FAILED)
                    continue;
                if (nops == ops_cap) {
                    ops_cap = ops_cap ? ops_cap * 2 : 1024;
                    ops = xrealloc(ops, ops_cap * sizeof(*ops));
                }
                ops[nops++] = (struct sop){r->t, r->value, r->res, (r->flags & EVF_FENCED) != 0,
                                           (r->flags & EVF_ACCEPTED) != 0,
                                           r->type == EV_STORE_WRITE};
                continue;
            }
            int oc = outcome_of(r->type);
            if (oc < 0 || r->t < 0)
                continue;
            int64_t b = r->t / bucket;
            if (b >= nb)
                b = nb - 1;
            rate[b][oc]++;
            counts[oc]++;
            if (oc == OC_GRANT)
                grants[b]++;
            if (inv != INT64_MIN) {
                int64_t q = inv / qbucket;
                hist_add(&qh[q < nq ? q : nq - 1], r->t - inv);
                inv = INT64_MIN;
            }
        }
    }

    struct json *s = json_new_obj();
    json_obj_set_num(s, "bucket_ms", ns_ms(bucket));
    struct json *rt = table(s, "rate", rate_cols, 5);
    double bs = (double)bucket / 1e9;
    for (int64_t b = 0; b < nb; b++) {
        struct json *r = row(rt);
        num(r, ns_ms(b * bucket));
        for (int oc = 0; oc < OC__N; oc++)
            num(r, (double)rate[b][oc] / bs);
    }

    /* Pass 2: the latency scatter, every k-th attempt of each outcome. */
    int64_t every[OC__N], seen[OC__N] = {0, 0, 0, 0};
    for (int oc = 0; oc < OC__N; oc++)
        every[oc] = counts[oc] > SCATTER_PER_OUTCOME
                        ? (counts[oc] + SCATTER_PER_OUTCOME - 1) / SCATTER_PER_OUTCOME : 1;
    struct json *lt = table(s, "latency", lat_cols, 3);
    struct json *se = json_obj_set(lt, "sampled_every", json_new_obj());
    for (int oc = 0; oc < OC__N; oc++)
        json_obj_set_int(se, outcome_names[oc], every[oc]);
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        int64_t inv = INT64_MIN;
        for (size_t k = 0; k < w->n; k++) {
            const struct ev_rec *r = &w->ev[k];
            if (r->type == EV_ACQUIRE_INVOKE) {
                inv = r->t;
                continue;
            }
            if (r->type == EV_CRASH)
                inv = INT64_MIN;
            int oc = outcome_of(r->type);
            if (oc < 0 || inv == INT64_MIN)
                continue;
            if (seen[oc]++ % every[oc] == 0) {
                struct json *p = row(lt);
                num(p, ns_ms(inv));
                num(p, ns_ms(r->t - inv));
                json_arr_push(p, json_new_str(outcome_names[oc]));
            }
            inv = INT64_MIN;
        }
    }
    struct json *qt = table(s, "latency_quantiles", q_cols, 4);
    json_obj_set_num(qt, "bucket_ms", ns_ms(qbucket));
    for (int64_t q = 0; q < nq; q++) {
        if (!qh[q].count)
            continue;
        struct json *r = row(qt);
        num(r, ns_ms(q * qbucket + qbucket / 2));
        num(r, ns_ms(hist_quantile(&qh[q], 0.50)));
        num(r, ns_ms(hist_quantile(&qh[q], 0.99)));
        inum(r, (int64_t)qh[q].count);
    }

    fencing_series(s, ops, nops, h->nres, bucket, nb, end);
    timeline_series(s, h, result, grants, bucket, nb);
    free(ops);
    free(qh);
    free(rate);
    free(grants);
    return s;
}
