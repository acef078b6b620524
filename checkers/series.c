/*
 * series.c: the charts' data (see series.h), accumulated in the checkers'
 * merged pass (pass.h) with bounded state: fixed-size buckets (rates,
 * per-bucket latency histograms for p50/p99, the overview of grants, the
 * lost-update drift, which needs the store writes in time order: the pass
 * gives them so, no sort), the latency scatter decimated as it grows, and
 * the longest hold, which the mutex checker's pairing tells it (pass.h
 * "hold listener": the pass pairs holds once, and the two are one unit of
 * the pass). The timeline's holds are read afterwards from the logs around
 * its window only (records are time ordered: a binary search finds the
 * window, the longest hold bounds how far back to start), paired there by
 * the mutex checker's rules (grant -> enter -> exit/crash; test_series
 * holds the two to the same holds): this only draws them.
 */
#include "checkers/series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"
#include "util/hist.h"
#include "util/keyslots.h"
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

/* ---- the accumulators of the pass ------------------------------------- */

struct tgrant {
    int64_t lease;              /* NO_LEASE: no expiry */
    int res, entered;
    int64_t enter;
};

/* One worker's grants as the timeline's window reader pairs them: its
 * slots, in the mutex checker's order (checkers/mutex.c, mutex_event). */
struct tstate {
    struct tgrant *g;           /* owned */
    int ng, cap;
    struct keyslots ix;         /* g's positions by resource once they were many (as the
                                   mutex checker's, SLOTS_INDEXED_FROM), until g is empty */
    int64_t last;               /* its latest record */
    int64_t to;                 /* the window's end */
    int nin;                    /* grants entered at or before it */
};

#define SLOTS_INDEXED_FROM 32

struct thold {
    int64_t enter, exit, lease;
    int res, worker;
    int end_kind; /* 0 exit, 1 crash, 2 open */
};

/* The latency scatter of one outcome: every `every`-th point; when 2 x
 * SCATTER_PER_OUTCOME are kept, every other one goes and `every` doubles,
 * so between SCATTER_PER_OUTCOME and twice that are kept at the end. */
struct scatter {
    int64_t every, seen;
    size_t n;
    int64_t (*pt)[2];           /* invoke, latency */
};

/* The drift at the end of each rate bucket. */
struct drift {
    int64_t plain, fenced, rejected;
};

struct hold_sink {               /* where a timeline step puts the holds it ends */
    int64_t from, to;           /* the window; holds outside it are dropped */
    struct thold *out;
    size_t n, cap, max;
    int trunc;
};

struct series_acc {
    const struct history *h;
    int64_t end, bucket, nb, qbucket, nq;
    int64_t (*rate)[OC__N];
    int64_t *grants;
    struct hist *qh;
    int64_t counts[OC__N];
    int64_t *inv_rate, *inv_scatter; /* per worker: its open invoke, INT64_MIN none */
    struct scatter sc[OC__N];
    int64_t longest;            /* the longest grant-to-end span of a hold (the mutex
                                 * checker's pairing tells it: series_hold_ended) */
    /* the lost-update drift: store ops in time order */
    int offered;
    int64_t acc[2], rejected;
    __int128 sum[2];            /* the counters' latest values summed over resources */
    int64_t *latest;            /* per resource and counter: its latest value */
    int64_t cur_b;              /* bucket of the ops being folded */
    struct drift *drift;
};

static void scatter_add(struct scatter *s, int64_t inv, int64_t lat)
{
    if (s->seen++ % s->every != 0)
        return;
    if (s->n == SCATTER_PER_OUTCOME) {
        for (size_t i = 0; i < s->n / 2; i++) {
            s->pt[i][0] = s->pt[2 * i][0];
            s->pt[i][1] = s->pt[2 * i][1];
        }
        s->n /= 2;
        s->every *= 2;
        if ((s->seen - 1) % s->every != 0)
            return;
    }
    s->pt[s->n][0] = inv;
    s->pt[s->n][1] = lat;
    s->n++;
}

/* Contract: accepted writes less the counters' values (acc - sum), 0 when
 * negative, INT64_MAX when past it (counters of a history from elsewhere
 * may be anything). */
static int64_t lost_of(int64_t acc, __int128 sum)
{
    __int128 d = (__int128)acc - sum;
    return d <= 0 ? 0 : d > INT64_MAX ? INT64_MAX : (int64_t)d;
}

/* Contract: the drift of every bucket before b is final. */
static void drift_upto(struct series_acc *a, int64_t b)
{
    for (; a->cur_b < b && a->cur_b < a->nb; a->cur_b++) {
        struct drift *d = &a->drift[a->cur_b];
        d->plain = lost_of(a->acc[0], a->sum[0]);
        d->fenced = lost_of(a->acc[1], a->sum[1]);
        d->rejected = a->rejected;
    }
}

static void store_op(struct series_acc *a, const struct ev_rec *r)
{
    if (r->flags & EVF_FAILED)
        return;
    int c = (r->flags & EVF_FENCED) ? 1 : 0;
    a->offered |= c;
    int64_t b = r->t < 0 ? 0 : r->t / a->bucket; /* ops at t < (b + 1) x bucket */
    drift_upto(a, b);
    if (!(r->flags & EVF_ACCEPTED)) {
        a->rejected += c;
        return;
    }
    if (r->type != EV_STORE_WRITE || r->res >= a->h->nres)
        return;
    a->acc[c]++;
    a->sum[c] += (__int128)r->value - a->latest[r->res * 2 + c]; /* exact: 128 bits */
    a->latest[r->res * 2 + c] = r->value;
}

/* Contract: the "fencing" series: a zero row at 0, then per rate bucket
 * (stamped at its end, the last at the run end), the lost updates so far
 * (accepted writes so far minus the counter's value now, summed over
 * resources) for each counter, and the stale fenced ops rejected so far. */
static void fencing_series(struct json *series, struct series_acc *a)
{
    static const char *const cols[] = {"t_ms", "plain_lost", "fenced_lost", "stale_rejected"};
    drift_upto(a, a->nb);
    struct json *t = table(series, "fencing", cols, 4);
    json_obj_set_bool(t, "offered", a->offered);
    struct json *r0 = row(t); /* nothing lost at the start */
    num(r0, 0);
    inum(r0, 0);
    json_arr_push(r0, a->offered ? json_new_int(0) : json_new_null());
    inum(r0, 0);
    for (int64_t b = 0; b < a->nb; b++) {
        int64_t end = (b + 1) * a->bucket;
        struct json *r = row(t);
        num(r, ns_ms(end < a->end ? end : a->end)); /* the last bucket ends with the run */
        inum(r, a->drift[b].plain);
        if (a->offered)
            inum(r, a->drift[b].fenced);
        else
            json_arr_push(r, json_new_null());
        inum(r, a->drift[b].rejected);
    }
}

/* ---- timeline ----------------------------------------------------------- */


static void hold_end(struct hold_sink *k, const struct tgrant *g, int64_t end, int worker,
                     int kind)
{
    if (g->enter > k->to || end < k->from)
        return;
    if (k->n >= k->max) {
        k->trunc = 1;
        return;
    }
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 256;
        k->out = xrealloc(k->out, k->cap * sizeof(*k->out));
    }
    k->out[k->n++] = (struct thold){g->enter, end, g->lease, g->res, worker, kind};
}

/* Contract: a new slot at the end of s's, for a grant of resource res. */
static inline struct tgrant *slot_push(struct tstate *s, int res, int64_t lease)
{
    if (s->ng == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 8;
        s->g = xrealloc(s->g, (size_t)s->cap * sizeof(*s->g));
    }
    s->g[s->ng] = (struct tgrant){lease, res, 0, 0};
    if (s->ix.tab) {
        keyslots_add(&s->ix, s->ng, (uint16_t)res);
    } else if (s->ng + 1 >= SLOTS_INDEXED_FROM) {
        for (int i = 0; i <= s->ng; i++)
            keyslots_add(&s->ix, i, (uint16_t)s->g[i].res);
    }
    return &s->g[s->ng++];
}

/* Contract: slot i leaves s (the last one takes its place). */
static inline void slot_drop(struct tstate *s, int i)
{
    s->nin -= s->g[i].entered && s->g[i].enter <= s->to;
    if (s->ix.tab)
        keyslots_del(&s->ix, i, s->ng - 1);
    s->g[i] = s->g[--s->ng];
    if (s->ng == 0 && s->ix.tab)
        keyslots_free(&s->ix);
}

/* Contract: the first slot of s of a grant of res entered (ent 1) or not
 * (ent 0); s->ng none. */
static inline int slot_first(const struct tstate *s, int res, int ent)
{
    if (!s->ix.tab) {
        for (int i = 0; i < s->ng; i++)
            if (s->g[i].res == res && !s->g[i].entered == !ent)
                return i;
        return s->ng;
    }
    int best = s->ng;
    for (int i = keyslots_head(&s->ix, (uint16_t)res); i >= 0; i = s->ix.nx[i])
        if (i < best && !s->g[i].entered == !ent)
            best = i;
    return best;
}

/* Contract: the last slot of s of a grant of res not entered; -1 none. */
static int slot_last_unentered(const struct tstate *s, int res)
{
    if (!s->ix.tab) {
        int i = s->ng - 1;
        while (i >= 0 && (s->g[i].res != res || s->g[i].entered))
            i--;
        return i;
    }
    int best = -1;
    for (int i = keyslots_head(&s->ix, (uint16_t)res); i >= 0; i = s->ix.nx[i])
        if (i > best && !s->g[i].entered)
            best = i;
    return best;
}

/* Contract: one record r of worker `worker` through its timeline state s;
 * holds it ends go to k. The rules are the mutex checker's pairing
 * (mutex_event), which tells the pass's holds: the same slots searched in
 * the same order, so both find the same holds (test_series). */
static void timeline_step(struct tstate *s, const struct ev_rec *r, int worker,
                          struct hold_sink *k)
{
    struct tgrant *g = s->g;
    int64_t l = (r->flags & EVF_NO_LEASE) ? NO_LEASE : r->valid_until;
    int i;
    s->last = r->t;
    switch (r->type) {
    case EV_ACQUIRE_OK:
        /* a grant of a resource whose last grant was never entered replaces it in place */
        i = slot_first(s, r->res, 0);
        if (i < s->ng)
            g[i] = (struct tgrant){l, r->res, 0, 0};
        else
            slot_push(s, r->res, l);
        break;
    case EV_ENTER:
        i = slot_last_unentered(s, r->res);
        struct tgrant *x = i >= 0 ? &g[i] : slot_push(s, r->res, NO_LEASE); /* no grant */
        x->entered = 1;
        x->enter = r->t;
        s->nin += r->t <= s->to;
        break;
    case EV_RENEW_OK:
        /* as the mutex checker's lease_raise: a renewal without a lease lifts the expiry */
        if (!s->ix.tab) {
            for (i = 0; i < s->ng; i++)
                if (g[i].res == r->res && g[i].lease != NO_LEASE && l > g[i].lease)
                    g[i].lease = l;
        } else {
            for (i = keyslots_head(&s->ix, (uint16_t)r->res); i >= 0; i = s->ix.nx[i])
                if (g[i].lease != NO_LEASE && l > g[i].lease)
                    g[i].lease = l;
        }
        break;
    case EV_EXIT:
        /* An exit ends the entered grant of its resource */
        i = slot_first(s, r->res, 1);
        if (i < s->ng) {
            hold_end(k, &g[i], r->t, worker, 0);
            slot_drop(s, i);
        }
        break;
    case EV_CRASH:
        /* a crash ends every entered one (and forgets the rest) */
        for (i = 0; i < s->ng; i++)
            if (g[i].entered)
                hold_end(k, &g[i], r->t, worker, 1);
        s->ng = 0;
        s->nin = 0;
        keyslots_free(&s->ix);
        break;
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
    case EV_LOST:
        /* A grant that ends before anyone entered it is no hold. */
        i = slot_first(s, r->res, 0);
        if (i < s->ng)
            slot_drop(s, i);
        break;
    default:
        break;
    }
}

/* Contract: the worker's log ended: its entered grants end at its last record. */
static void timeline_end(struct tstate *s, int worker, struct hold_sink *k)
{
    for (int i = 0; i < s->ng; i++)
        if (s->g[i].entered)
            hold_end(k, &s->g[i], s->last, worker, 2);
    s->ng = 0;
    s->nin = 0;
    keyslots_free(&s->ix);
}

/* Contract: append to k worker w's holds that intersect [k->from, k->to]
 * (at most k->max in total), reading its log from `lookback` before the
 * window only: no hold is longer than that. */
static void worker_holds(const struct hist_worker *w, int64_t lookback, struct hold_sink *k)
{
    struct hist_reader rd; /* pread: the pass mapped none of the log's pages in */
    hist_reader_init(&rd, w);
    size_t lo = hist_reader_first_at(&rd, k->from - lookback - 1);
    struct tstate s;
    memset(&s, 0, sizeof(s));
    s.to = k->to;
    size_t i = lo;
    for (; i < w->n && hist_reader_rec(&rd, i)->t <= k->to; i++)
        timeline_step(&s, hist_reader_rec(&rd, i), w->id, k);
    while (i < w->n && s.nin > 0) /* holds entered in the window end later */
        timeline_step(&s, hist_reader_rec(&rd, i++), w->id, k);
    if (i >= w->n)
        timeline_end(&s, w->id, k);
    free(s.g);
    keyslots_free(&s.ix);
    hist_reader_done(&rd); /* what the search and the scan read in place */
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
        if (ov_end - anchor > len * 8 / 10) /* times within 10^18 of 0: no overflow */
            len = (ov_end - anchor) / 8 * 10;
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
                            int64_t bucket, int64_t nb, int64_t longest_hold)
{
    static const char *const hold_cols[] = {"lane", "enter_ms", "exit_ms", "valid_until_ms",
                                            "end"};
    static const char *const ov_cols[] = {"lane", "from_ms", "to_ms", "class"};
    static const char *const view_cols[] = {"t_ms", "grants_per_s"};
    static const char *const mark_cols[] = {"t_ms", "class"};
    static const char *const end_names[] = {"exit", "crash", "open"};
    int64_t from, to;
    int zoomed = timeline_window(h, result, &from, &to);
    struct hold_sink sink = {from, to, NULL, 0, 0, TIMELINE_MAX_ROWS, 0};
    for (int i = 0; i < h->nworkers; i++)
        worker_holds(&h->w[i], longest_hold, &sink);
    struct thold *hs = sink.out;
    size_t n = sink.n;
    int trunc = sink.trunc;
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

/* ---- the pass ------------------------------------------------------------ */

static void series_event(void *st, int wi, const struct ev_rec *r)
{
    struct series_acc *a = st;
    int64_t *inv = &a->inv_rate[wi], *inv2 = &a->inv_scatter[wi];
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        *inv = *inv2 = r->t;
        return;
    case EV_CRASH:
        *inv = *inv2 = INT64_MIN;
        return;
    case EV_STORE_WRITE:
    case EV_STORE_READ:
        store_op(a, r);
        return;
    default:
        break;
    }
    int oc = outcome_of(r->type);
    if (oc < 0)
        return;
    if (*inv2 != INT64_MIN) { /* the scatter: every k-th attempt of each outcome */
        scatter_add(&a->sc[oc], *inv2, r->t - *inv2);
        *inv2 = INT64_MIN;
    }
    if (r->t < 0)
        return;
    int64_t b = r->t / a->bucket;
    if (b >= a->nb)
        b = a->nb - 1;
    a->rate[b][oc]++;
    a->counts[oc]++;
    if (oc == OC_GRANT)
        a->grants[b]++;
    if (*inv != INT64_MIN) { /* by the invoke's time: one before 0 in the first bucket */
        int64_t q = *inv < 0 ? 0 : *inv / a->qbucket;
        hist_add(&a->qh[q < a->nq ? q : a->nq - 1], r->t - *inv);
        *inv = INT64_MIN;
    }
}

/* The attempts, their outcomes, crashes and store ops: the holds come
 * from the mutex checker's pairing (series_hold_ended), not from the
 * enter / exit / renew / release / lost records. */
const struct pass_ops series_pass_ops = {
    "series",
    PASS_TYPE(EV_ACQUIRE_INVOKE) | PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_ACQUIRE_BUSY) |
        PASS_TYPE(EV_ACQUIRE_UNKNOWN) | PASS_TYPE(EV_ACQUIRE_FAIL) | PASS_TYPE(EV_CRASH) |
        PASS_TYPE(EV_STORE_WRITE) | PASS_TYPE(EV_STORE_READ),
    series_event, NULL, NULL, 52};

static void series_hold_ended(void *ctx, const struct paired_hold *x)
{
    struct series_acc *a = ctx;
    if (x->exit - x->acquired > a->longest)
        a->longest = x->exit - x->acquired;
}

struct hold_listener series_hold_listener(struct series_acc *a)
{
    return (struct hold_listener){series_hold_ended, a};
}

struct series_acc *series_acc_new(const struct history *h)
{
    struct series_acc *a = xcalloc_lines(1, sizeof(*a));
    a->h = h;
    a->end = h->end > 0 ? h->end : 1;
    a->bucket = nice_bucket(a->end, RATE_MIN_BUCKET_MS, RATE_MAX_BUCKETS);
    a->nb = a->end / a->bucket + 1;
    a->qbucket = nice_bucket(a->end, QUANT_MIN_BUCKET_MS, QUANT_MAX_BUCKETS);
    a->nq = a->end / a->qbucket + 1;
    a->rate = xcalloc_lines((size_t)a->nb, sizeof(*a->rate));
    a->grants = xcalloc_lines((size_t)a->nb, sizeof(*a->grants));
    a->drift = xcalloc_lines((size_t)a->nb, sizeof(*a->drift));
    /* zeroed by calloc, not hist_init: 30 KB a histogram, up to 101 of
     * them, fresh pages the kernel gives zeroed, and only those a latency
     * falls in are ever touched (a memset touched all 3 MB: 750 page
     * faults, a fifth of a 10^6-event check's fixed cost) */
    a->qh = xcalloc((size_t)a->nq, sizeof(*a->qh)); /* up to 3 MB: mapped apart */
    size_t nw = (size_t)(h->nworkers ? h->nworkers : 1);
    a->inv_rate = xcalloc_lines(nw, sizeof(*a->inv_rate));
    a->inv_scatter = xcalloc_lines(nw, sizeof(*a->inv_scatter));
    for (size_t i = 0; i < nw; i++)
        a->inv_rate[i] = a->inv_scatter[i] = INT64_MIN;
    for (int oc = 0; oc < OC__N; oc++) {
        a->sc[oc].every = 1;
        a->sc[oc].pt = xmalloc(SCATTER_PER_OUTCOME * sizeof(*a->sc[oc].pt));
    }
    a->latest = xcalloc_lines((size_t)(h->nres > 0 ? h->nres : 1) * 2, sizeof(*a->latest));
    return a;
}

void series_acc_free(struct series_acc *a)
{
    if (!a)
        return;
    for (int oc = 0; oc < OC__N; oc++)
        free(a->sc[oc].pt);
    free(a->rate);
    free(a->grants);
    free(a->drift);
    free(a->qh);
    free(a->inv_rate);
    free(a->inv_scatter);
    free(a->latest);
    free(a);
}

/* ---- the whole series object -------------------------------------------- */

/* Contract: the accumulators from a pass of their own over h, fused with
 * the mutex checker as check_run's pass fuses them (one unit, pass.h): its
 * pairing gives the holds; its verdict and sections go to a scratch
 * result, nothing listed. */
static struct series_acc *own_pass(struct history *h)
{
    struct check_params p;
    check_params_from(h, &p);
    p.max_violations = 0; /* only the holds are wanted */
    for (int again = 0;; again++) {
        struct series_acc *a = series_acc_new(h);
        struct json *scratch = json_new_obj();
        void *ms = mutex_checker.init(h, &p, scratch);
        struct hold_listener l = series_hold_listener(a);
        mutex_checker.listen(ms, &l);
        struct pass_consumer c[2] = {{&mutex_checker.ops, ms, 1}, {&series_pass_ops, a, 1}};
        int rc = pass_run(h, c, 2);
        mutex_checker.finish(ms, scratch);
        json_free(scratch);
        if (rc == 0 || again) /* after a reload every record was checked (pass.h) */
            return a;
        series_acc_free(a); /* a deferred record was bad: load it all checked, again */
        history_reload(h);
    }
}

struct json *series_build(struct history *h, const struct json *result)
{
    static const char *const rate_cols[] = {"t_ms", "grants_per_s", "busy_per_s",
                                            "unknown_per_s", "failed_per_s"};
    static const char *const lat_cols[] = {"t_ms", "latency_ms", "outcome"};
    static const char *const q_cols[] = {"t_ms", "p50_ms", "p99_ms", "count"};
    struct series_acc *a = h->memo ? h->memo->series : NULL;
    if (a)
        h->memo->series = NULL; /* check_run's pass filled it: ours now */
    else
        a = own_pass(h);

    struct json *s = json_new_obj();
    json_obj_set_num(s, "bucket_ms", ns_ms(a->bucket));
    struct json *rt = table(s, "rate", rate_cols, 5);
    double bs = (double)a->bucket / 1e9;
    for (int64_t b = 0; b < a->nb; b++) {
        struct json *r = row(rt);
        num(r, ns_ms(b * a->bucket));
        for (int oc = 0; oc < OC__N; oc++)
            num(r, (double)a->rate[b][oc] / bs);
    }

    struct json *lt = table(s, "latency", lat_cols, 3);
    struct json *se = json_obj_set(lt, "sampled_every", json_new_obj());
    for (int oc = 0; oc < OC__N; oc++)
        json_obj_set_int(se, outcome_names[oc], a->sc[oc].every);
    for (int oc = 0; oc < OC__N; oc++)
        for (size_t i = 0; i < a->sc[oc].n; i++) {
            struct json *p = row(lt);
            num(p, ns_ms(a->sc[oc].pt[i][0]));
            num(p, ns_ms(a->sc[oc].pt[i][1]));
            json_arr_push(p, json_new_str(outcome_names[oc]));
        }
    struct json *qt = table(s, "latency_quantiles", q_cols, 4);
    json_obj_set_num(qt, "bucket_ms", ns_ms(a->qbucket));
    for (int64_t q = 0; q < a->nq; q++) {
        if (!a->qh[q].count)
            continue;
        struct json *r = row(qt);
        num(r, ns_ms(q * a->qbucket + a->qbucket / 2));
        num(r, ns_ms(hist_quantile(&a->qh[q], 0.50)));
        num(r, ns_ms(hist_quantile(&a->qh[q], 0.99)));
        inum(r, (int64_t)a->qh[q].count);
    }

    fencing_series(s, a);
    timeline_series(s, h, result, a->grants, a->bucket, a->nb, a->longest);
    series_acc_free(a);
    return s;
}
