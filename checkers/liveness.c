/*
 * liveness.c: the liveness checker (DESIGN.md "Checkers", semantics in
 * docs/checkers.md): stalls (no grant while workers waited), stuck
 * resources (a key left with no expiry, or an open stall at the end of at
 * least stuck_after), time from a holder's crash to the next grant, the
 * busy/failed/unknown share of attempts and per-worker fairness. Only stuck
 * resources make the verdict invalid; the rest is measurement. A consumer of
 * the merged pass (pass.h): per-resource sweep state, per-worker counts.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "util/xalloc.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"

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

struct wcount {
    int64_t attempts, grants;
    int *held;              /* resources it has a grant of (no release outcome yet) */
    int nheld, held_cap;
};

struct liveness_st {
    const struct history *h;
    const struct check_params *p;
    struct rlive *rl;       /* indexed by the 16-bit resource field */
    struct wcount *wc;
    int nres;
    int64_t attempts, busy, failed, unknown, ncrash;
    struct lev *batch;      /* the events at batch_t, swept once time moves on */
    size_t nbatch, batch_cap;
    int64_t batch_t;
    int64_t longest, crash_max;
    int longest_res;
};

/* Contract: sweep the batch (one instant) in (kind, arrival) order: an
 * invoke at a grant's instant waited for that grant, and a crash at a
 * grant's instant is not followed by it. Arrival order is worker order,
 * then log order. */
static void flush(struct liveness_st *l)
{
    struct lev *b = l->batch;
    for (size_t i = 1; i < l->nbatch; i++) { /* stable insertion sort: batches are tiny */
        struct lev x = b[i];
        size_t j = i;
        for (; j > 0 && x.kind < b[j - 1].kind; j--)
            b[j] = b[j - 1];
        b[j] = x;
    }
    for (size_t i = 0; i < l->nbatch; i++) {
        const struct lev *e = &b[i];
        struct rlive *x = &l->rl[e->res];
        if (!x->seen) {
            x->seen = 1;
            x->first_wait = x->first_crash = NONE;
            if (e->res >= l->nres)
                l->nres = e->res + 1;
        }
        if (e->kind == KIND_INVOKE) {
            if (x->first_wait == NONE)
                x->first_wait = e->t;
        } else if (e->kind == KIND_CRASH) {
            if (x->first_crash == NONE)
                x->first_crash = e->t;
            x->pending_crashes++;
        } else {
            int64_t stall = x->first_wait == NONE ? 0 : e->t - x->first_wait;
            if (stall > l->longest || l->longest_res < 0) {
                l->longest = stall;
                l->longest_res = e->res;
            }
            x->first_wait = NONE;
            if (x->first_crash != NONE && e->t - x->first_crash > l->crash_max)
                l->crash_max = e->t - x->first_crash;
            x->first_crash = NONE;
            x->pending_crashes = 0;
        }
    }
    l->nbatch = 0;
}

static void push_lev(struct liveness_st *l, int64_t t, int res, int kind)
{
    if (l->nbatch && t != l->batch_t)
        flush(l);
    if (l->nbatch == l->batch_cap) {
        l->batch_cap = l->batch_cap ? l->batch_cap * 2 : 64;
        l->batch = xrealloc(l->batch, l->batch_cap * sizeof(*l->batch));
    }
    l->batch_t = t;
    l->batch[l->nbatch++] = (struct lev){t, (uint16_t)res, (uint8_t)kind};
}

static void liveness_event(void *st, int wi, const struct ev_rec *r)
{
    struct liveness_st *l = st;
    struct wcount *w = &l->wc[wi];
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        l->attempts++;
        w->attempts++;
        push_lev(l, r->t, r->res, KIND_INVOKE);
        break;
    case EV_ACQUIRE_OK:
        w->grants++;
        push_lev(l, r->t, r->res, KIND_GRANT);
        if (w->nheld == w->held_cap) {
            w->held_cap = w->held_cap ? w->held_cap * 2 : 8;
            w->held = xrealloc(w->held, (size_t)w->held_cap * sizeof(*w->held));
        }
        w->held[w->nheld++] = r->res;
        break;
    case EV_ACQUIRE_BUSY:
        l->busy++;
        break;
    case EV_ACQUIRE_FAIL:
        l->failed++;
        break;
    case EV_ACQUIRE_UNKNOWN:
        l->unknown++;
        break;
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
    case EV_LOST:
        for (int j = 0; j < w->nheld; j++)
            if (w->held[j] == r->res) {
                w->held[j] = w->held[--w->nheld];
                break;
            }
        break;
    case EV_CRASH: /* the resources it had a grant of when it crashed */
        for (int j = 0; j < w->nheld; j++) {
            push_lev(l, r->t, w->held[j], KIND_CRASH);
            l->ncrash++;
        }
        w->nheld = 0;
        break;
    default:
        break;
    }
}

static void liveness_end(void *st)
{
    struct liveness_st *l = st;
    if (l->nbatch)
        flush(l);
}

static void *liveness_init(const struct history *h, const struct check_params *p,
                           struct json *res)
{
    (void)res;
    struct liveness_st *l = xcalloc(1, sizeof(*l));
    l->h = h;
    l->p = p;
    l->nres = h->nres;
    l->rl = xcalloc(65536, sizeof(*l->rl)); /* untouched pages cost nothing */
    l->wc = xcalloc((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*l->wc));
    l->crash_max = -1;
    l->longest_res = -1;
    return l;
}

static int liveness_finish(void *st, struct json *res)
{
    struct liveness_st *ls = st;
    const struct history *h = ls->h;
    const struct check_params *p = ls->p;
    struct rlive *rl = ls->rl;
    struct wcount *wc = ls->wc;
    int nres = ls->nres;
    int64_t attempts = ls->attempts, busy = ls->busy, failed = ls->failed,
            unknown = ls->unknown, ncrash = ls->ncrash;
    int64_t longest = ls->longest, crash_max = ls->crash_max;
    int longest_res = ls->longest_res;
    for (int k = 0; k < h->nleftover; k++) {
        int r = h->leftover[k].res;
        if (h->leftover[k].pttl_ms == -1 && r >= 0 && r < 65536 && !rl[r].stuck_why) {
            rl[r].stuck_why = "lock key left with no expiry";
            if (r >= nres)
                nres = r + 1;
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
    json_obj_set_num(l, "stuck_after_ms", ns_ms(p->stuck_after));
    json_obj_set_str(l, "stuck_after_from", p->stuck_after_auto ? "auto" : "check.stuck_after");
    json_obj_set(l, "stuck", sl);
    /* without an attempt the shares and the fairness were not measured:
     * null, never a default 0 (harness/verdict.c "not measured") */
    double da = attempts ? (double)attempts : 1.0;
    json_obj_set(l, "busy_share", attempts ? json_new_num((double)busy / da) : json_new_null());
    json_obj_set(l, "failed_share", attempts ? json_new_num((double)failed / da) : json_new_null());
    json_obj_set(l, "unknown_share",
                 attempts ? json_new_num((double)unknown / da) : json_new_null());
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
    json_obj_set(fa, "min_grants", gmin < 0 ? json_new_null() : json_new_int(gmin));
    json_obj_set(fa, "max_grants", gmax < 0 ? json_new_null() : json_new_int(gmax));
    json_obj_set(fa, "ratio", gmin > 0 ? json_new_num((double)gmax / (double)gmin)
                                       : json_new_null());

    for (int i = 0; i < h->nworkers; i++)
        free(wc[i].held);
    free(rl);
    free(wc);
    free(ls->batch);
    free(ls);
    return verdict;
}

const struct checker_def liveness_checker = {
    {"liveness",
     PASS_TYPE(EV_ACQUIRE_INVOKE) | PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_ACQUIRE_BUSY) |
         PASS_TYPE(EV_ACQUIRE_FAIL) | PASS_TYPE(EV_ACQUIRE_UNKNOWN) | PASS_TYPE(EV_RELEASE_OK) |
         PASS_TYPE(EV_RELEASE_NOT_OWNER) | PASS_TYPE(EV_RELEASE_FAIL) | PASS_TYPE(EV_LOST) |
         PASS_TYPE(EV_CRASH),
     liveness_event, NULL, liveness_end},
    liveness_init, liveness_finish};

int check_liveness(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&liveness_checker, h, p, res);
}
