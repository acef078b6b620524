/*
 * liveness.c: the liveness checker (DESIGN.md "Checkers", semantics in
 * docs/checkers.md): stalls (no grant while workers waited), stuck
 * resources (a key left with no expiry, or an open stall at the end of at
 * least stuck_after), time from a holder's crash to the next grant, the
 * busy/failed/unknown share of attempts and per-worker fairness. Only stuck
 * resources make the verdict invalid; the rest is measurement.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "util/xalloc.h"
#include "checkers/checkutil.h"

#define KIND_INVOKE 0
#define KIND_GRANT 1
#define KIND_CRASH 2    /* a worker crashed while it had a grant of res */

#define NONE INT64_MIN

struct lev {
    int64_t t;
    uint16_t res;
    uint8_t kind;
};

/* Per-resource state of the time-ordered sweep. */
struct rlive {
    int64_t first_wait;     /* earliest invoke since the last grant, NONE */
    int64_t first_crash;    /* earliest holder crash not yet followed by a grant, NONE */
    int64_t pending_crashes;
    int64_t open_stall;     /* stall still open at the end */
    const char *stuck_why;  /* non-NULL: stuck (static text, or "" = open stall) */
    int seen;               /* the resource has events (the fields above are set) */
};

/* (t, kind) order: an invoke at a grant's instant waited for that grant,
 * and a crash at a grant's instant is not followed by it. */
static int lev_before(const struct lev *a, const struct lev *b)
{
    return a->t < b->t || (a->t == b->t && a->kind < b->kind);
}

static int cmp_lev(const void *a, const void *b)
{
    const struct lev *x = a, *y = b;
    return lev_before(x, y) ? -1 : lev_before(y, x);
}

/* Contract: sort ev[0..n), the concatenation of per-worker runs (run k =
 * ev[runs[k] .. runs[k+1]), each in log order), into (t, kind) order,
 * stable, by merging runs pairwise: O(n log workers). A run out of order
 * (equal stamps logged in another kind order) is sorted first. May replace
 * *ev with a new buffer; runs is scratch. */
static void merge_runs(struct lev **ev, size_t n, size_t *runs, size_t nruns)
{
    struct lev *src = *ev;
    for (size_t k = 0; k < nruns; k++)
        for (size_t i = runs[k] + 1; i < runs[k + 1]; i++)
            if (lev_before(&src[i], &src[i - 1])) {
                qsort(src + runs[k], runs[k + 1] - runs[k], sizeof(*src), cmp_lev);
                break;
            }
    if (nruns <= 1)
        return;
    struct lev *dst = xrealloc(NULL, (n ? n : 1) * sizeof(*dst));
    while (nruns > 1) {
        size_t out = 0;
        for (size_t k = 0; k < nruns; k += 2) {
            size_t lo = runs[k], mid = runs[k + 1];
            size_t hi = k + 2 <= nruns ? runs[k + 2] : mid;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi)
                dst[o++] = lev_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[o++] = src[i++];
            while (j < hi)
                dst[o++] = src[j++];
            runs[out++] = lo;
        }
        runs[out] = n;
        nruns = out;
        struct lev *t = src;
        src = dst;
        dst = t;
    }
    free(dst);
    *ev = src;
}

struct wcount {
    int64_t attempts, grants;
};

static void push_lev(struct lev **ev, size_t *n, size_t *cap, int64_t t, int res, int kind)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *ev = xrealloc(*ev, *cap * sizeof(**ev));
    }
    (*ev)[(*n)++] = (struct lev){t, (uint16_t)res, (uint8_t)kind};
}

int check_liveness(const struct history *h, const struct check_params *p, struct json *res)
{
    struct lev *ev = NULL;
    size_t n = 0, cap = 0;
    int *held = NULL;
    size_t held_cap = 0;
    int64_t attempts = 0, busy = 0, failed = 0, unknown = 0, ncrash = 0;
    struct wcount *wc = calloc((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*wc));
    size_t *runs = malloc(((size_t)h->nworkers + 1) * sizeof(*runs));
    /* Indexed by the 16-bit resource field: untouched pages cost nothing. */
    struct rlive *rl = calloc(65536, sizeof(*rl));
    if (!wc || !runs || !rl) 
        xalloc_die();
    int nres = h->nres;

    /* Per worker, in log order: invokes, grants, and the resources it had
     * a grant of when it crashed (granted, no release outcome or lost). */
    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        size_t nheld = 0;
        runs[i] = n;
        for (size_t k = 0; k < w->n; k++) {
            const struct ev_rec *r = &w->ev[k];
            switch (r->type) {
            case EV_ACQUIRE_INVOKE:
                attempts++;
                wc[i].attempts++;
                push_lev(&ev, &n, &cap, r->t, r->res, KIND_INVOKE);
                break;
            case EV_ACQUIRE_OK:
                wc[i].grants++;
                push_lev(&ev, &n, &cap, r->t, r->res, KIND_GRANT);
                if (nheld == held_cap) {
                    held_cap = held_cap ? held_cap * 2 : 8;
                    held = xrealloc(held, held_cap * sizeof(*held));
                }
                held[nheld++] = r->res;
                break;
            case EV_ACQUIRE_BUSY:
                busy++;
                break;
            case EV_ACQUIRE_FAIL:
                failed++;
                break;
            case EV_ACQUIRE_UNKNOWN:
                unknown++;
                break;
            case EV_RELEASE_OK:
            case EV_RELEASE_NOT_OWNER:
            case EV_RELEASE_FAIL:
            case EV_LOST:
                for (size_t j = 0; j < nheld; j++)
                    if (held[j] == r->res) {
                        held[j] = held[--nheld];
                        break;
                    }
                break;
            case EV_CRASH:
                for (size_t j = 0; j < nheld; j++) {
                    push_lev(&ev, &n, &cap, r->t, held[j], KIND_CRASH);
                    ncrash++;
                }
                nheld = 0;
                break;
            default:
                break;
            }
        }
    }
    runs[h->nworkers] = n;
    free(held);
    merge_runs(&ev, n, runs, (size_t)h->nworkers);
    free(runs);

    for (size_t i = 0; i < n; i++) {
        struct rlive *x = &rl[ev[i].res];
        if (!x->seen) {
            x->seen = 1;
            x->first_wait = x->first_crash = NONE;
            if (ev[i].res >= nres)
                nres = ev[i].res + 1;
        }
    }
    for (int k = 0; k < h->nleftover; k++) {
        int r = h->leftover[k].res;
        if (h->leftover[k].pttl_ms == -1 && r >= 0 && r < 65536 && !rl[r].stuck_why) {
            rl[r].stuck_why = "lock key left with no expiry";
            if (r >= nres)
                nres = r + 1;
        }
    }

    /* One sweep in time order with per-resource state. */
    int64_t longest = 0, crash_max = -1;
    int longest_res = -1;
    for (size_t i = 0; i < n; i++) {
        const struct lev *e = &ev[i];
        struct rlive *x = &rl[e->res];
        if (e->kind == KIND_INVOKE) {
            if (x->first_wait == NONE)
                x->first_wait = e->t;
        } else if (e->kind == KIND_CRASH) {
            if (x->first_crash == NONE)
                x->first_crash = e->t;
            x->pending_crashes++;
        } else {
            int64_t stall = x->first_wait == NONE ? 0 : e->t - x->first_wait;
            if (stall > longest || longest_res < 0) {
                longest = stall;
                longest_res = e->res;
            }
            x->first_wait = NONE;
            if (x->first_crash != NONE && e->t - x->first_crash > crash_max)
                crash_max = e->t - x->first_crash;
            x->first_crash = NONE;
            x->pending_crashes = 0;
        }
    }
    int64_t crash_no_grant = 0;
    for (int r = 0; r < nres; r++) {
        struct rlive *x = &rl[r];
        crash_no_grant += x->pending_crashes;
        if (!x->seen || x->first_wait == NONE)
            continue;
        int64_t stall = h->end - x->first_wait;
        if (stall < 0)
            stall = 0;
        if (stall > longest || longest_res < 0) {
            longest = stall;
            longest_res = r;
        }
        x->open_stall = stall;
        if (stall >= p->stuck_after && !x->stuck_why)
            x->stuck_why = ""; /* open stall: reason built below */
    }

    struct json *l = json_obj_child(json_obj_child(res, "checks"), "liveness");
    int nstuck = 0;
    struct json *sl = json_new_arr();
    for (int r = 0; r < nres; r++) {
        if (!rl[r].stuck_why)
            continue;
        nstuck++;
        struct json *o = json_arr_push(sl, json_new_obj());
        json_obj_set_str(o, "res", check_res_name(h, r));
        if (rl[r].stuck_why[0]) {
            json_obj_set_str(o, "reason", rl[r].stuck_why);
        } else {
            char why[128];
            snprintf(why, sizeof(why), "no grant for the last %.0f ms while workers waited",
                     ns_ms(rl[r].open_stall));
            json_obj_set_str(o, "reason", why);
        }
    }
    int verdict = nstuck > 0 ? VERDICT_INVALID : VERDICT_VALID;
    json_obj_set_str(l, "verdict", verdict_name(verdict));
    json_obj_set_bool(l, "valid", verdict == VERDICT_VALID);
    json_obj_set_num(l, "longest_stall_ms", ns_ms(longest));
    json_obj_set(l, "longest_stall_resource",
                 longest_res >= 0 ? json_new_str(check_res_name(h, longest_res)) : json_new_null());
    json_obj_set(l, "crash_to_next_grant_ms",
                 crash_max >= 0 ? json_new_num(ns_ms(crash_max)) : json_new_null());
    json_obj_set_int(l, "holder_crashes", ncrash);
    json_obj_set_int(l, "crashes_without_next_grant", crash_no_grant);
    json_obj_set_int(l, "stuck_resources", nstuck);
    json_obj_set(l, "stuck", sl);
    double da = attempts ? (double)attempts : 1.0;
    json_obj_set_num(l, "busy_share", attempts ? (double)busy / da : 0.0);
    json_obj_set_num(l, "failed_share", attempts ? (double)failed / da : 0.0);
    json_obj_set_num(l, "unknown_share", attempts ? (double)unknown / da : 0.0);
    int64_t gmin = -1, gmax = -1;
    for (int i = 0; i < h->nworkers; i++) {
        if (wc[i].attempts == 0)
            continue;
        if (gmin < 0 || wc[i].grants < gmin)
            gmin = wc[i].grants;
        if (gmax < 0 || wc[i].grants > gmax)
            gmax = wc[i].grants;
    }
    struct json *fa = json_obj_set(l, "fairness", json_new_obj());
    json_obj_set_int(fa, "min_grants", gmin < 0 ? 0 : gmin);
    json_obj_set_int(fa, "max_grants", gmax < 0 ? 0 : gmax);
    json_obj_set(fa, "ratio", gmin > 0 ? json_new_num((double)gmax / (double)gmin)
                                       : json_new_null());

    free(rl);
    free(ev);
    free(wc);
    return verdict;
}
