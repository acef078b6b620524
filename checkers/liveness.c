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

#define KIND_INVOKE 0
#define KIND_GRANT 1

struct lev {
    int64_t t;
    int res;
    int kind;
};

struct crash_at {
    int64_t t;
    int res;
};

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("lockstorm: fatal: out of memory\n", stderr);
        abort();
    }
    return p;
}

static struct json *child_obj(struct json *parent, const char *key)
{
    struct json *c = json_obj_get(parent, key);
    return c ? c : json_obj_set(parent, key, json_new_obj());
}

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

static int cmp_lev(const void *a, const void *b)
{
    const struct lev *x = a, *y = b;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->kind - y->kind; /* an invoke at a grant's instant waited for it */
}

static const char *res_name(const struct history *h, int r)
{
    return h->res_names && r < h->nres ? h->res_names[r] : "?";
}

/* Contract: index of the first grant of res after t in the sorted ev, or n. */
static size_t next_grant(const struct lev *ev, size_t n, int res, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].res < res || (ev[mid].res == res && ev[mid].t <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && ev[lo].res == res; lo++)
        if (ev[lo].kind == KIND_GRANT)
            return lo;
    return n;
}

struct wcount {
    int64_t attempts, grants;
};

int check_liveness(const struct history *h, const struct check_params *p, struct json *res)
{
    struct lev *ev = NULL;
    size_t n = 0, cap = 0;
    struct crash_at *crashes = NULL;
    size_t ncrash = 0, crash_cap = 0;
    int *held = NULL;
    size_t held_cap = 0;
    int64_t attempts = 0, busy = 0, failed = 0, unknown = 0;
    struct wcount *wc = calloc((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*wc));
    if (!wc) {
        fputs("lockstorm: fatal: out of memory\n", stderr);
        abort();
    }
    int nres = h->nres;

    for (int i = 0; i < h->nworkers; i++) {
        const struct hist_worker *w = &h->w[i];
        size_t nheld = 0;
        for (size_t k = 0; k < w->n; k++) {
            const struct ev_rec *r = &w->ev[k];
            int kind = -1;
            switch (r->type) {
            case EV_ACQUIRE_INVOKE:
                kind = KIND_INVOKE;
                attempts++;
                wc[i].attempts++;
                break;
            case EV_ACQUIRE_OK:
                kind = KIND_GRANT;
                wc[i].grants++;
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
                    if (ncrash == crash_cap) {
                        crash_cap = crash_cap ? crash_cap * 2 : 16;
                        crashes = xrealloc(crashes, crash_cap * sizeof(*crashes));
                    }
                    crashes[ncrash++] = (struct crash_at){r->t, held[j]};
                }
                nheld = 0;
                break;
            default:
                break;
            }
            if (kind < 0)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 1024;
                ev = xrealloc(ev, cap * sizeof(*ev));
            }
            ev[n++] = (struct lev){r->t, r->res, kind};
            if (r->res >= nres)
                nres = r->res + 1;
        }
    }
    free(held);
    if (n > 1)
        qsort(ev, n, sizeof(*ev), cmp_lev);

    /* Stalls per resource, and the open stall at the end. */
    int64_t longest = 0;
    int longest_res = -1;
    char *stuck = calloc((size_t)(nres ? nres : 1), 1);
    const char **stuck_why = calloc((size_t)(nres ? nres : 1), sizeof(*stuck_why));
    int64_t *open_stall = calloc((size_t)(nres ? nres : 1), sizeof(*open_stall));
    if (!stuck || !stuck_why || !open_stall) {
        fputs("lockstorm: fatal: out of memory\n", stderr);
        abort();
    }
    for (int k = 0; k < h->nleftover; k++) {
        int r = h->leftover[k].res;
        if (h->leftover[k].pttl_ms == -1 && r >= 0 && r < nres && !stuck[r]) {
            stuck[r] = 1;
            stuck_why[r] = "lock key left with no expiry";
        }
    }
    for (size_t i = 0; i < n;) {
        int r = ev[i].res;
        int64_t first_wait = INT64_MIN; /* earliest invoke since the last grant */
        for (; i < n && ev[i].res == r; i++) {
            if (ev[i].kind == KIND_INVOKE) {
                if (first_wait == INT64_MIN)
                    first_wait = ev[i].t;
                continue;
            }
            int64_t stall = first_wait == INT64_MIN ? 0 : ev[i].t - first_wait;
            if (stall > longest || longest_res < 0) {
                longest = stall;
                longest_res = r;
            }
            first_wait = INT64_MIN;
        }
        if (first_wait != INT64_MIN) {
            int64_t stall = h->end - first_wait;
            if (stall < 0)
                stall = 0;
            if (stall > longest || longest_res < 0) {
                longest = stall;
                longest_res = r;
            }
            open_stall[r] = stall;
            if (stall >= p->stuck_after && !stuck[r]) {
                stuck[r] = 1;
                stuck_why[r] = NULL; /* open stall: reason built below */
            }
        }
    }

    /* Crash of a holder -> next grant of that resource by anyone. */
    int64_t crash_max = -1;
    size_t crash_no_grant = 0;
    for (size_t c = 0; c < ncrash; c++) {
        size_t g = next_grant(ev, n, crashes[c].res, crashes[c].t);
        if (g == n) {
            crash_no_grant++;
            continue;
        }
        if (ev[g].t - crashes[c].t > crash_max)
            crash_max = ev[g].t - crashes[c].t;
    }

    struct json *l = child_obj(child_obj(res, "checks"), "liveness");
    int nstuck = 0;
    struct json *sl = json_new_arr();
    for (int r = 0; r < nres; r++) {
        if (!stuck[r])
            continue;
        nstuck++;
        struct json *o = json_arr_push(sl, json_new_obj());
        json_obj_set_str(o, "res", res_name(h, r));
        if (stuck_why[r]) {
            json_obj_set_str(o, "reason", stuck_why[r]);
        } else {
            char why[128];
            snprintf(why, sizeof(why), "no grant for the last %.0f ms while workers waited",
                     ms(open_stall[r]));
            json_obj_set_str(o, "reason", why);
        }
    }
    int verdict = nstuck > 0 ? VERDICT_INVALID : VERDICT_VALID;
    json_obj_set_str(l, "verdict", verdict_name(verdict));
    json_obj_set_bool(l, "valid", verdict == VERDICT_VALID);
    json_obj_set_num(l, "longest_stall_ms", ms(longest));
    json_obj_set(l, "longest_stall_resource",
                 longest_res >= 0 ? json_new_str(res_name(h, longest_res)) : json_new_null());
    json_obj_set(l, "crash_to_next_grant_ms",
                 crash_max >= 0 ? json_new_num(ms(crash_max)) : json_new_null());
    json_obj_set_int(l, "holder_crashes", (int64_t)ncrash);
    json_obj_set_int(l, "crashes_without_next_grant", (int64_t)crash_no_grant);
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

    free(stuck);
    free(stuck_why);
    free(open_stall);
    free(crashes);
    free(ev);
    free(wc);
    return verdict;
}
