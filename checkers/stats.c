/*
 * stats.c: counts, latency histograms, throughput and the per-worker table
 * (docs/checkers.md "stats"; field names in docs/result-format.md). Pure
 * measurement: its verdict is always valid. Latency pairs each invoke with
 * the outcome record that follows it in the same worker's log. A consumer of the merged
 * pass (pass.h): its state is per worker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "util/hist.h"
#include "util/xalloc.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"

#define NONE INT64_MIN

enum { L_ACQUIRE, L_ACQUIRE_WAIT, L_ACQUIRE_FAILED, L_RELEASE, L_RENEW, L__N };

static const char *const lat_names[L__N] = {"acquire", "acquire_wait", "acquire_failed", "release",
                                            "renew"};

/* Counted record types, in result order. */
#define COUNTS(X)                                \
    X(attempts, EV_ACQUIRE_INVOKE)               \
    X(grants, EV_ACQUIRE_OK)                     \
    X(busy, EV_ACQUIRE_BUSY)                     \
    X(failed, EV_ACQUIRE_FAIL)                   \
    X(unknown, EV_ACQUIRE_UNKNOWN)               \
    X(releases, EV_RELEASE_OK)                   \
    X(release_not_owner, EV_RELEASE_NOT_OWNER)   \
    X(release_failed, EV_RELEASE_FAIL)           \
    X(renewals, EV_RENEW_OK)                     \
    X(renew_failed, EV_RENEW_FAIL)               \
    X(lost, EV_LOST)                             \
    X(crashes, EV_CRASH)

struct counts {
    int64_t by_type[EV__MAX];
    int64_t expired_grants, store_ops, events;
};

static void add_lat(struct hist *hs, int64_t *since, int64_t t)
{
    if (*since != NONE) {
        hist_add(hs, t - *since);
        *since = NONE;
    }
}

/* One worker's running state and counts. */
struct wstats {
    int64_t acq, seq, rel, ren;
    uint32_t seq_attempt;
    struct counts c;
};

/* The latency histograms are shared by the workers: their sums are of
 * integers (ns) far below 2^53, so adding in merged order gives exactly
 * what per-worker histograms merged afterwards gave, at 30 KiB per
 * histogram instead of 30 KiB per histogram per worker. */
struct stats_st {
    const struct history *h;
    struct wstats *ws;
    struct hist lat[L__N];
};

/* Contract: fold record r of worker s into its counts and histograms. */
static void stats_event(void *st, int wi, const struct ev_rec *r)
{
    struct stats_st *ss = st;
    struct wstats *s = &ss->ws[wi];
    struct counts *c = &s->c;
    struct hist *lat = ss->lat;
    c->events++;
    if (r->type < EV__MAX)
        c->by_type[r->type]++;
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        s->acq = r->t;
        /* A new acquisition sequence starts when the attempt number does
         * not go up (retries exhausted, or a fresh acquire). */
        if (s->seq == NONE || r->aux < s->seq_attempt ||
            (r->aux == s->seq_attempt && r->aux != 0))
            s->seq = r->t;
        s->seq_attempt = r->aux;
        break;
    case EV_ACQUIRE_OK:
        if (!(r->flags & EVF_NO_LEASE) && r->valid_until <= r->t)
            c->expired_grants++;
        add_lat(&lat[L_ACQUIRE], &s->acq, r->t);
        add_lat(&lat[L_ACQUIRE_WAIT], &s->seq, r->t);
        break;
    case EV_ACQUIRE_FAIL:
        /* the calls the lock answered "no grant" to, apart: a refused late
         * grant (Redlock's validity gone) shows as a long one here, where
         * an unknown outcome of the same length does not */
        if (s->acq != NONE)
            hist_add(&lat[L_ACQUIRE_FAILED], r->t - s->acq);
        add_lat(&lat[L_ACQUIRE], &s->acq, r->t);
        break;
    case EV_ACQUIRE_BUSY:
    case EV_ACQUIRE_UNKNOWN:
        add_lat(&lat[L_ACQUIRE], &s->acq, r->t);
        break;
    case EV_RELEASE_INVOKE:
        s->rel = r->t;
        break;
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
        add_lat(&lat[L_RELEASE], &s->rel, r->t);
        break;
    case EV_RENEW_INVOKE:
        s->ren = r->t;
        break;
    case EV_RENEW_OK:
    case EV_RENEW_FAIL:
        if (r->type == EV_RENEW_OK && (r->flags & EVF_AUTO))
            break;  /* the library's own renewal: no renew command of ours to time */
        add_lat(&lat[L_RENEW], &s->ren, r->t);
        break;
    case EV_STORE_READ:
    case EV_STORE_WRITE:
        c->store_ops++;
        break;
    case EV_CRASH:
        s->acq = s->seq = s->rel = s->ren = NONE;
        break;
    default:
        break;
    }
}

static void *stats_init(const struct history *h, const struct check_params *p, struct json *res)
{
    (void)p;
    (void)res;
    struct stats_st *s = xcalloc(1, sizeof(*s)); /* 151 KB: mapped apart */
    s->h = h;
    s->ws = xcalloc_lines((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*s->ws));
    for (int i = 0; i < h->nworkers; i++) {
        struct wstats *w = &s->ws[i];
        memset(&w->c, 0, sizeof(w->c));
        w->acq = w->seq = w->rel = w->ren = NONE;
        w->seq_attempt = 0;
    }
    return s; /* its histograms zeroed by calloc: only the buckets used are touched */
}

/* Contract: {count, p50_ms .. max_ms, mean_ms} of hs; the times are null
 * when there is no sample (docs/result-format.md). */
static struct json *lat_json(const struct hist *hs)
{
    static const struct {
        const char *name;
        double q;
    } qs[] = {{"p50_ms", 0.50}, {"p90_ms", 0.90}, {"p99_ms", 0.99}, {"p999_ms", 0.999}};
    struct json *o = json_new_obj();
    json_obj_set_int(o, "count", (int64_t)hs->count);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
        json_obj_set(o, qs[i].name,
                     hs->count ? json_new_num(ns_ms(hist_quantile(hs, qs[i].q))) : json_new_null());
    json_obj_set(o, "max_ms", hs->count ? json_new_num(ns_ms(hs->max)) : json_new_null());
    json_obj_set(o, "mean_ms", hs->count ? json_new_num(hist_mean(hs) / 1e6) : json_new_null());
    return o;
}

static int stats_finish(void *st, struct json *res)
{
    struct stats_st *ss = st;
    const struct history *h = ss->h;
    struct counts total;
    memset(&total, 0, sizeof(total));
    const struct hist *lat = ss->lat;
    struct json *pw = json_new_arr();
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        const struct counts c = ss->ws[i].c;
        for (int t = 0; t < EV__MAX; t++)
            total.by_type[t] += c.by_type[t];
        total.expired_grants += c.expired_grants;
        total.store_ops += c.store_ops;
        total.events += c.events;
        struct json *o = json_arr_push(pw, json_new_obj());
        json_obj_set_int(o, "worker", w->id);
        json_obj_set_int(o, "attempts", c.by_type[EV_ACQUIRE_INVOKE]);
        json_obj_set_int(o, "grants", c.by_type[EV_ACQUIRE_OK]);
        json_obj_set_int(o, "busy", c.by_type[EV_ACQUIRE_BUSY]);
        json_obj_set_int(o, "failed", c.by_type[EV_ACQUIRE_FAIL]);
        json_obj_set_int(o, "unknown", c.by_type[EV_ACQUIRE_UNKNOWN]);
        json_obj_set_int(o, "events", c.events);
        json_obj_set_bool(o, "complete", w->complete);
        json_obj_set_int(o, "torn_bytes", (int64_t)w->torn_bytes);
    }

    struct json *counts = json_obj_set(res, "counts", json_new_obj());
#define COUNT_SET(name, type) json_obj_set_int(counts, #name, total.by_type[type]);
    COUNTS(COUNT_SET)
#undef COUNT_SET
    json_obj_set_int(counts, "expired_grants", total.expired_grants);
    json_obj_set_int(counts, "store_ops", total.store_ops);
    json_obj_set_int(counts, "events", total.events);

    struct json *lj = json_obj_set(res, "latency", json_new_obj());
    for (int k = 0; k < L__N; k++)
        json_obj_set(lj, lat_names[k], lat_json(&lat[k]));

    struct json *tp = json_obj_set(res, "throughput", json_new_obj());
    double secs = (double)h->end / 1e9;
    json_obj_set_num(tp, "grants_per_s",
                     secs > 0 ? (double)total.by_type[EV_ACQUIRE_OK] / secs : 0.0);
    json_obj_set_num(tp, "attempts_per_s",
                     secs > 0 ? (double)total.by_type[EV_ACQUIRE_INVOKE] / secs : 0.0);

    json_obj_set(res, "per_worker", pw);
    struct json *s = json_obj_child(json_obj_child(res, "checks"), "stats");
    json_obj_set_str(s, "verdict", verdict_name(VERDICT_VALID));
    json_obj_set_bool(s, "valid", 1);
    free(ss->ws);
    free(ss);
    return VERDICT_VALID;
}

const struct checker_def stats_checker = {
    {"stats", 0, stats_event, NULL, NULL, 54}, stats_init, stats_finish, NULL};

int check_stats(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&stats_checker, h, p, res);
}
