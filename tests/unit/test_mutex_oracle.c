/*
 * test_mutex_oracle.c: the mutex checker's property test (docs/checkers.md
 * "Overlap semantics" and "Incidents"): seeded random event logs from a
 * simulated lock service, judged by the real checker (one in ten through
 * JSONL and the JSONL loader) and by an independent brute-force oracle;
 * every figure must agree. Every history with a violation is judged again
 * with 0, 1 or 2 violations listed (the others kept without holders): the
 * counts and incidents must not change. One in 100 is also checked whole
 * (check_run) on 1, 2, 3 and 8 threads: the result documents must be
 * equal byte for byte (pass.h pass_run_jobs). The hand-picked histories
 * are in test_mutex.c. LS_ORACLE_SEED=N reproduces a run, LS_ORACLE_N=N
 * sets its size, LS_ORACLE_PAR_EVERY=K checks one in K on several threads.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkers/check.h"
#include "tests/unit/mutex_test.h"
#include "tests/unit/oracle_test.h"
#include "tests/unit/testing.h"
#include "util/rng.h"
#include "util/strbuf.h"

static char *tmp;

static int load_text_file(const char *path, struct history *h)
{
    struct ls_err err = {0, ""};
    int rc = history_load_jsonl(path, h, &err);
    if (rc)
        fprintf(stderr, "load: %s\n", err.msg);
    return rc;
}

/* ---- the property test: generator ---- */

#define NONE INT64_MAX
#define MAXW 8
#define MAXR 3
#define MAXH (MAXW * 12)

#define MAXREN 16 /* up to 2 renewals in a hold, up to 16 in one of eight holds that renew
                     (the checker keeps 4 raises of a lease before it drops those no grant
                     can ask about) */

struct ghold {                  /* a hold as the generator made it: the oracle's input */
    int w, res, seq;            /* worker id, resource, order made (each worker's own order) */
    int64_t acq, lease, enter, exit; /* lease: final, renewals included; NONE: no lease */
    int64_t lease0;             /* the grant's own lease */
    int nren;                   /* its renewals: time and new lease, in log order */
    int64_t ren_t[MAXREN], ren_l[MAXREN];
};

struct gen {
    struct rng rng;
    int coarse, cap, nres, nw;
    int64_t near_miss;
    struct ev_rec *ev[MAXW];    /* each worker's log (kept across histories) */
    size_t nev[MAXW], cap_ev[MAXW];
    struct ghold h[MAXH];
    int nh;
    struct ghold u[MAXH];       /* grants never entered (acq, lease0; exit: their end) */
    int nu;
    int64_t lost_left, lost_expired, lost_no_lease; /* the `lost` records by class, as made */
};

/* Append one record of type ty to worker w's log: t, res, then by type
 * the fence and lease (acquire_ok: x = fence, y = lease; renew_ok: y =
 * lease; NONE: no lease), the attempt (acquire_invoke: x). */
static void rec(struct gen *g, int64_t t, int w, int ty, int res, int64_t x, int64_t y)
{
    struct ev_rec *r =
        oracle_append(&g->ev[w], &g->nev[w], &g->cap_ev[w], t, ty, res < 0 ? 0 : res);
    if (ty == EV_ACQUIRE_OK) {
        r->flags = EVF_FENCE;
        r->fence = (uint64_t)x;
        snprintf(r->token, sizeof(r->token), "w%d-f%" PRId64, w, x);
    }
    if (ty == EV_ACQUIRE_OK || ty == EV_RENEW_OK) {
        if (y == NONE)
            r->flags |= EVF_NO_LEASE;
        else
            r->valid_until = y;
    }
    if (ty == EV_ACQUIRE_INVOKE)
        r->aux = (uint32_t)x;
    if (ty == EV_STORE_READ)
        r->flags = EVF_ACCEPTED;
}

/* A duration drawn in [lo, hi] ms: whole ms on a coarse clock (ties
 * everywhere), ns otherwise (still exactly 0 a quarter of the time). */
static int64_t dur(struct gen *g, int lo, int hi)
{
    if (g->coarse)
        return rng_range(&g->rng, lo, hi) * MS;
    if (lo == 0 && rng_below(&g->rng, 4) == 0)
        return 0;
    return rng_range(&g->rng, lo * MS, hi * MS);
}

struct inhold {                 /* a renewal (l: its lease) or a `lost` in a hold */
    int64_t t, l;
    int lost;
};

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Contract: a new random history in g (its logs in g->ev, holds in g->h).
 * Workers loop acquire -> enter -> exit -> release against a simulated
 * service with cap slots per resource; a slot frees at the release or at
 * the holder's lease end, whichever is first. Paused holders overstay
 * their lease (stale-holder overlaps), a forgetful service grants without
 * a free slot (lock-broken), workers crash in a hold or their log ends in
 * one. With a correct service on a coarse clock, touching holds and
 * zero-length holds are everywhere. */
static void gen_history(struct gen *g)
{
    struct rng *r = &g->rng;
    g->nh = g->nu = 0;
    g->lost_left = g->lost_expired = g->lost_no_lease = 0;
    g->coarse = rng_below(r, 4) != 0;
    static const int caps[] = {1, 1, 2, 3};
    g->cap = caps[rng_below(r, 4)];
    g->nres = 1 + (int)(rng_below(r, 2) * rng_below(r, MAXR));
    g->near_miss = rng_below(r, 4) == 0 ? 0 : MS;
    int nw = g->nw = 2 + (int)rng_below(r, MAXW - 1);
    int nolease = rng_below(r, 8) == 0;
    int ttl_lo = rng_below(r, 2) ? 1 : 10, ttl_hi = ttl_lo == 1 ? 6 : 20;
    int p_pause = (int)rng_below(r, 3) * 10;  /* % of holds paused past their lease */
    int p_broken = (int)rng_below(r, 3) * 4;  /* % of grants made without a free slot */
    int p_crash = (int)rng_below(r, 2) * 8;   /* % of holds ended by a crash */
    int64_t slot[MAXR][3], next[MAXW];
    int left[MAXW];
    memset(slot, 0, sizeof(slot));
    for (int w = 0; w < nw; w++) {
        g->nev[w] = 0;
        next[w] = dur(g, 0, 2);
        left[w] = 1 + (int)rng_below(r, 12);
    }
    long fence = 0;
    for (;;) {
        int w = -1, off = (int)rng_below(r, (uint64_t)nw);
        for (int k = 0; k < nw; k++) { /* the earliest worker; ties at random */
            int c = (off + k) % nw;
            if (left[c] && (w < 0 || next[c] < next[w]))
                w = c;
        }
        if (w < 0)
            break;
        int last = --left[w] == 0, res = (int)rng_below(r, (uint64_t)g->nres);
        int64_t t = next[w];
        rec(g, t, w, EV_ACQUIRE_INVOKE, res, 1, 0);
        if (rng_below(r, 12) == 0) {
            t += dur(g, 0, 1);
            rec(g, t, w, EV_ACQUIRE_BUSY, res, 0, 0);
            next[w] = t + dur(g, 0, 2);
            continue;
        }
        int s = 0;
        for (int k = 1; k < g->cap; k++)
            if (slot[res][k] < slot[res][s])
                s = k;
        int broken = (int)rng_below(r, 100) < p_broken;
        int64_t inv = t, acq = t + dur(g, 0, 1), freed;
        if (!broken && slot[res][s] > acq) { /* busy, then the retry that wins the slot */
            int64_t b = t + dur(g, 0, 1);
            b = b < slot[res][s] ? b : slot[res][s];
            rec(g, b, w, EV_ACQUIRE_BUSY, res, 0, 0);
            inv = max64(b, slot[res][s] - dur(g, 0, 1));
            rec(g, inv, w, EV_ACQUIRE_INVOKE, res, 2, 0);
            acq = max64(inv + dur(g, 0, 1), slot[res][s]);
        }
        int64_t lease = nolease ? NONE : inv + dur(g, ttl_lo, ttl_hi);
        rec(g, acq, w, EV_ACQUIRE_OK, res, ++fence, lease);
        if (rng_below(r, 16) == 0) { /* released or lost before entering: no hold */
            int64_t e = acq + dur(g, 0, 1);
            int lost = (int)rng_below(r, 2) == 0;
            rec(g, e, w, lost ? EV_LOST : EV_RELEASE_OK, res, 0, 0);
            if (lost)
                *(lease == NONE ? &g->lost_no_lease
                  : lease > e   ? &g->lost_left
                                : &g->lost_expired) += 1;
            g->u[g->nu] = (struct ghold){w, res, g->nu, acq, lease, acq, e, lease, 0, {0}, {0}};
            g->nu++;
            if (!broken)
                slot[res][s] = e;
            next[w] = e + dur(g, 0, 2);
            continue;
        }
        int64_t enter = acq + dur(g, 0, 1), len = dur(g, 0, 3);
        if ((int)rng_below(r, 100) < p_pause)
            len += dur(g, 3, 10);
        int mode = (int)rng_below(r, 100) < p_crash ? 1 : last && rng_below(r, 4) == 0 ? 2 : 0;
        int64_t end = enter + (mode == 1 ? rng_range(r, 0, len) : len);
        rec(g, enter, w, EV_ENTER, res, 0, 0);
        /* In the hold: up to 2 (or MAXREN) renewals and maybe a `lost`, in time
         * order. A renewal made once the service's lease had run out still
         * succeeds (an unconditional PEXPIRE: renewed-after-loss) but frees
         * nothing later: the service freed the slot at that lease's end. */
        struct inhold in[MAXREN + 1];
        int nin = 0;
        if (!nolease && end > enter && rng_below(r, 3) == 0)
            for (int k = 1 + (int)rng_below(r, rng_below(r, 8) == 0 ? MAXREN : 2); k > 0; k--) {
                int64_t at = enter + rng_range(r, 0, end - enter);
                in[nin].t = at;
                in[nin].l = at + dur(g, ttl_lo, ttl_hi);
                in[nin++].lost = 0;
            }
        if (rng_below(r, 10) == 0) {
            in[nin].t = end > enter ? enter + rng_range(r, 0, end - enter) : enter;
            in[nin].l = 0;
            in[nin++].lost = 1;
        }
        for (int a = 1; a < nin; a++) /* stable: ties keep the order made */
            for (int b = a; b > 0 && in[b].t < in[b - 1].t; b--) {
                struct inhold x = in[b];
                in[b] = in[b - 1];
                in[b - 1] = x;
            }
        int64_t lease0 = lease, served = lease;
        struct ghold gh = {w, res, g->nh, acq, 0, enter, end, lease0, 0, {0}, {0}};
        for (int k = 0; k < nin; k++) {
            if (in[k].lost) {
                rec(g, in[k].t, w, EV_LOST, res, 0, 0);
                *(lease == NONE         ? &g->lost_no_lease
                  : lease > in[k].t ? &g->lost_left
                                    : &g->lost_expired) += 1;
                continue;
            }
            rec(g, in[k].t, w, EV_RENEW_INVOKE, res, 0, 0);
            rec(g, in[k].t, w, EV_RENEW_OK, res, 0, in[k].l);
            gh.ren_t[gh.nren] = in[k].t;
            gh.ren_l[gh.nren++] = in[k].l;
            if (in[k].t < served)
                served = max64(served, in[k].l);
            lease = max64(lease, in[k].l);
        }
        if (mode == 0) {
            rec(g, end, w, EV_EXIT, res, 0, 0);
            rec(g, end, w, EV_RELEASE_INVOKE, res, 0, 0);
            int64_t rel = end + dur(g, 0, 1);
            rec(g, rel, w, EV_RELEASE_OK, res, 0, 0);
            freed = rel < served ? rel : served;
            next[w] = rel + dur(g, 0, 2);
            if (rng_below(r, 40) == 0) /* a crash between holds ends nothing */
                rec(g, next[w], w, EV_CRASH, -1, 0, 0);
        } else if (mode == 1) {
            rec(g, end, w, EV_CRASH, -1, 0, 0);
            freed = nolease ? end : served;
            next[w] = end + dur(g, 1, 3);
        } else { /* the log ends in the hold: the hold ends at its last record */
            rec(g, end, w, EV_STORE_READ, res, 0, 0);
            freed = nolease ? end : served;
            left[w] = 0;
        }
        if (!broken)
            slot[res][s] = freed;
        gh.lease = lease;
        g->h[g->nh++] = gh;
    }
}

/* ---- the property test: oracle ---- */

struct oviol {                  /* one violation, as either side sees it */
    int res, w, cause_w, broken;
    int64_t enter, end, cause_enter;
};

struct oinc {                   /* one incident, as either side sees it */
    int res, cause_w, broken, n;
    int64_t cause_enter;
};

struct verdicts {
    int64_t holds, near, stale, broken, inc_stale, inc_broken;
    int64_t ral, ral_holds, lost_left, lost_expired, lost_no_lease;
    int64_t as_stood;           /* oracle: violations whose class the final lease would flip */
    int64_t lease_at_grant;     /* oracle: active holds whose lease ended at the entering grant */
    int nv, ni;
    struct oviol v[MAXH];
    struct oinc in[MAXH];
};

static int before(const struct ghold *a, const struct ghold *b)
{
    if (a->res != b->res)
        return a->res < b->res;
    if (a->enter != b->enter)
        return a->enter < b->enter;
    return a->w != b->w ? a->w < b->w : a->seq < b->seq;
}

/* x's lease as it stood at instant T: its grant's, raised by its renewals
 * before T (not at T). */
static int64_t lease_at(const struct ghold *x, int64_t T)
{
    int64_t l = x->lease0;
    for (int k = 0; l != NONE && k < x->nren; k++)
        if (x->ren_t[k] < T && x->ren_l[k] > l)
            l = x->ren_l[k];
    return l;
}

/* Contract: renewals after loss by the definition (docs/checkers.md
 * "Renewed after loss"), by brute force: a renewal of hold X at t is one
 * when at least cap other grants Y of its resource (entered or not) were
 * made after X's (X.acq < Y.acq < t), are not over at t (t <= Y's end),
 * and found X's lease as it stood at their grant run out. */
static void oracle_ral(const struct gen *g, struct verdicts *o)
{
    for (int i = 0; i < g->nh; i++) {
        const struct ghold *X = &g->h[i];
        int any = 0;
        for (int k = 0; X->lease0 != NONE && k < X->nren; k++) {
            int64_t t = X->ren_t[k];
            int n = 0;
            for (int j = 0; j < g->nh + g->nu; j++) {
                const struct ghold *Y = j < g->nh ? &g->h[j] : &g->u[j - g->nh];
                if (Y == X || Y->res != X->res || !(X->acq < Y->acq && Y->acq < t) ||
                    t > Y->exit)
                    continue;
                n += lease_at(X, Y->acq) <= Y->acq;
            }
            if (n >= g->cap) {
                o->ral++;
                any = 1;
            }
        }
        o->ral_holds += any;
    }
    o->lost_left = g->lost_left;
    o->lost_expired = g->lost_expired;
    o->lost_no_lease = g->lost_no_lease;
}

/* Contract: the definition, by brute force over g's holds, shares nothing
 * with the checker. Per resource, holds in sweep order (enter, then worker
 * id, then the worker's own order); hold H with positive length is a
 * violation when at least cap earlier holds have exit > H.enter; its cause
 * is the first of them; it is lock-broken when, at the latest grant G of
 * those holds and H (H's own unless one of them was granted after it: H
 * was slow to enter; on a tie H's, else the first in sweep order), at
 * least cap of the others had a lease, as it stood then, > G's grant.
 * Otherwise H is a near miss when an earlier hold exited in
 * [H.enter - near_miss, H.enter]. */
static void oracle(const struct gen *g, struct verdicts *o)
{
    const struct ghold *s[MAXH];
    int n = g->nh;
    memset(o, 0, sizeof(*o));
    o->holds = n;
    for (int i = 0; i < n; i++) { /* insertion sort into sweep order */
        int j = i;
        for (; j > 0 && before(&g->h[i], s[j - 1]); j--)
            s[j] = s[j - 1];
        s[j] = &g->h[i];
    }
    for (int i = 0; i < n; i++) {
        const struct ghold *H = s[i], *cause = NULL, *act[MAXH + 1];
        int64_t ex[MAXH + 1], last_exit = INT64_MIN;
        int nact = 0, valid = 0, final_valid = 0;
        for (int j = 0; j < i; j++) {
            if (s[j]->res != H->res)
                continue;
            if (s[j]->exit > H->enter) {
                cause = cause ? cause : s[j];
                act[nact] = s[j];
                ex[nact++] = s[j]->exit;
            } else if (s[j]->exit > last_exit) {
                last_exit = s[j]->exit;
            }
        }
        const struct ghold *G = H; /* the latest grant */
        for (int a = 0; a < nact; a++)
            if (act[a]->acq > G->acq)
                G = act[a];
        act[nact] = H;
        for (int a = 0; a <= nact; a++) {
            if (act[a] == G)
                continue;
            valid += lease_at(act[a], G->acq) > G->acq;
            final_valid += act[a]->lease > G->acq;
            o->lease_at_grant += lease_at(act[a], G->acq) == G->acq;
        }
        if (H->exit > H->enter && nact >= g->cap) {
            ex[nact] = H->exit;
            for (int a = 1; a <= nact; a++) /* sort exits: the overlap ends at the */
                for (int b = a; b > 0 && ex[b] < ex[b - 1]; b--) { /* (m - cap)-th */
                    int64_t x = ex[b];
                    ex[b] = ex[b - 1];
                    ex[b - 1] = x;
                }
            struct oviol *v = &o->v[o->nv++];
            *v = (struct oviol){H->res, H->w, cause->w, valid >= g->cap, H->enter,
                                ex[nact - g->cap], cause->enter};
            *(v->broken ? &o->broken : &o->stale) += 1;
            o->as_stood += (final_valid >= g->cap) != v->broken;
            int k = 0;
            while (k < o->ni && !(o->in[k].res == H->res && o->in[k].cause_w == cause->w &&
                                  o->in[k].cause_enter == cause->enter))
                k++;
            if (k == o->ni)
                o->in[o->ni++] = (struct oinc){H->res, cause->w, 0, 0, cause->enter};
            o->in[k].n++;
            o->in[k].broken |= v->broken;
        } else if (last_exit != INT64_MIN && H->enter - last_exit <= g->near_miss) {
            o->near++;
        }
    }
    for (int k = 0; k < o->ni; k++)
        *(o->in[k].broken ? &o->inc_broken : &o->inc_stale) += 1;
    oracle_ral(g, o);
}

/* ---- the property test: the checker's answer in the same terms ---- */

static int res_num(const char *name)
{
    char *end;
    long v = name[0] == 'r' ? strtol(name + 1, &end, 10) : -1; /* "r0".."r2": gen_history */
    return v >= 0 && *end == '\0' ? (int)v : -1;
}

/* Contract: o from the checker's result r (every violation listed). */
static void from_checker(const struct json *r, struct verdicts *o)
{
    memset(o, 0, sizeof(*o));
    o->holds = geti(r, "checks.mutex.holds");
    o->near = geti(r, "checks.mutex.near_misses");
    o->stale = geti(r, "checks.mutex.by_class.stale_holder");
    o->broken = geti(r, "checks.mutex.by_class.lock_broken");
    o->inc_stale = geti(r, "checks.mutex.incidents_by_class.stale_holder");
    o->inc_broken = geti(r, "checks.mutex.incidents_by_class.lock_broken");
    o->ral = geti(r, "checks.mutex.renewed_after_loss");
    o->ral_holds = geti(r, "checks.mutex.renewed_after_loss_holds");
    o->lost_left = geti(r, "checks.mutex.losses_by_class.lost_with_lease_left");
    o->lost_expired = geti(r, "checks.mutex.losses_by_class.expired");
    o->lost_no_lease = geti(r, "checks.mutex.losses_by_class.no_lease");
    const struct json *vs = json_obj_get(r, "violations"), *is = json_obj_get(r, "incidents");
    for (size_t i = 0; vs && i < vs->n && o->nv < MAXH; i++) {
        const struct json *v = vs->kids[i], *hl = json_obj_get(v, "holders");
        if (!hl || hl->n < 2)
            continue;
        const struct json *c = hl->kids[0], *e = hl->kids[hl->n - 1];
        int64_t start = get_ns(v, "overlap_start_ms");
        o->v[o->nv++] = (struct oviol){res_num(gets_(v, "resource")), (int)geti(e, "worker"),
                                       (int)geti(c, "worker"),
                                       strcmp(gets_(v, "class"), "lock-broken") == 0,
                                       get_ns(e, "enter_ms"), start + get_ns(v, "overlap_ms"),
                                       get_ns(c, "enter_ms")};
        if (start != get_ns(e, "enter_ms"))
            o->v[o->nv - 1].end = -1; /* an overlap must start at the entry */
    }
    for (size_t i = 0; is && i < is->n && o->ni < MAXH; i++) {
        const struct json *x = is->kids[i];
        o->in[o->ni++] = (struct oinc){res_num(gets_(x, "resource")),
                                       (int)geti(x, "cause.worker"),
                                       strcmp(gets_(x, "class"), "lock-broken") == 0,
                                       (int)geti(x, "violations"), get_ns(x, "cause.enter_ms")};
    }
}

static int cmp_viol(const void *a, const void *b)
{
    const struct oviol *x = a, *y = b;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    if (x->enter != y->enter)
        return x->enter < y->enter ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

static int cmp_inc(const void *a, const void *b)
{
    const struct oinc *x = a, *y = b;
    if (x->res != y->res)
        return x->res < y->res ? -1 : 1;
    if (x->cause_enter != y->cause_enter)
        return x->cause_enter < y->cause_enter ? -1 : 1;
    return (x->cause_w > y->cause_w) - (x->cause_w < y->cause_w);
}

/* Contract: 0 when a and b agree; else which part differs first
 * ("violations", "near misses", ...), written to why. */
static int differ(struct verdicts *a, struct verdicts *b, char *why, size_t len)
{
    qsort(a->v, (size_t)a->nv, sizeof(a->v[0]), cmp_viol);
    qsort(b->v, (size_t)b->nv, sizeof(b->v[0]), cmp_viol);
    qsort(a->in, (size_t)a->ni, sizeof(a->in[0]), cmp_inc);
    qsort(b->in, (size_t)b->ni, sizeof(b->in[0]), cmp_inc);
    const char *what = NULL;
    if (a->holds != b->holds)
        what = "holds";
    else if (a->nv != b->nv || a->stale != b->stale || a->broken != b->broken ||
             memcmp(a->v, b->v, (size_t)a->nv * sizeof(a->v[0])) != 0)
        what = "violations";
    else if (a->near != b->near)
        what = "near misses";
    else if (a->ni != b->ni || a->inc_stale != b->inc_stale || a->inc_broken != b->inc_broken ||
             memcmp(a->in, b->in, (size_t)a->ni * sizeof(a->in[0])) != 0)
        what = "incidents";
    else if (a->ral != b->ral || a->ral_holds != b->ral_holds)
        what = "renewed after loss";
    else if (a->lost_left != b->lost_left || a->lost_expired != b->lost_expired ||
             a->lost_no_lease != b->lost_no_lease)
        what = "losses";
    if (what)
        snprintf(why, len, "%s: oracle holds=%" PRId64 " violations=%d (stale %" PRId64
                 ", broken %" PRId64 ") near=%" PRId64 " incidents=%d; checker holds=%" PRId64
                 " violations=%d (stale %" PRId64 ", broken %" PRId64 ") near=%" PRId64
                 " incidents=%d; renewed after loss %" PRId64 "/%" PRId64 " (holds %" PRId64
                 "/%" PRId64 "), lost with lease left %" PRId64 "/%" PRId64 ", expired %" PRId64
                 "/%" PRId64 ", no lease %" PRId64 "/%" PRId64, what, a->holds, a->nv, a->stale, a->broken, a->near, a->ni,
                 b->holds, b->nv, b->stale, b->broken, b->near, b->ni, a->ral, b->ral,
                 a->ral_holds, b->ral_holds, a->lost_left, b->lost_left, a->lost_expired,
                 b->lost_expired, a->lost_no_lease, b->lost_no_lease);
    return what != NULL;
}

/* Contract: judge h (g's history, by memory or by JSONL) and compare with
 * the oracle's o. Returns 0 when they agree; else which part differs
 * (index into the parts of test_oracle), the first time with the history
 * printed as `lockstorm log export` would. */
static int compare(const struct gen *g, struct history *h, struct verdicts *o,
                   const char *how, uint64_t seed, uint64_t i, uint64_t *bad)
{
    static struct verdicts got;
    static const char *const parts[6] = {"holds", "violations", "near misses", "incidents",
                                         "renewed after loss", "losses"};
    struct json *r = judge(h, g->cap, g->near_miss, 1 << 30);
    from_checker(r, &got);
    json_free(r);
    char why[512];
    if (!differ(o, &got, why, sizeof(why)))
        return -1;
    if ((*bad)++ == 0) {
        fprintf(stderr, "oracle: history %" PRIu64 " of seed %" PRIu64 " (%s) disagrees: %s\n"
                "replay: save the lines below as h.jsonl and run `lockstorm check --history "
                "h.jsonl --capacity %d --near-miss %" PRId64 "ns`\n", i, seed, how, why, g->cap,
                g->near_miss);
        history_export_jsonl(h, stderr);
    }
    for (int k = 0; k < 6; k++)
        if (strncmp(why, parts[k], strlen(parts[k])) == 0)
            return k;
    return 0;
}

/* Contract: h (g's history) checked whole on 1, 2, 3 and 8 threads (the
 * parallel pass forced: par_min_events 0); 0 when the four result
 * documents are equal byte for byte, else the first thread count that
 * differs, both documents printed the first time (*bad counts). */
static int par_differs(const struct gen *g, struct history *h, uint64_t seed, uint64_t i,
                       uint64_t *bad)
{
    static const int jobs[] = {1, 2, 3, 8};
    char *text[4] = {NULL, NULL, NULL, NULL};
    int differs = 0;
    for (int k = 0; k < 4; k++) {
        struct check_params p;
        check_params_from(h, &p);
        p.capacity = g->cap;
        p.near_miss = g->near_miss;
        p.par_min_events = 0;
        p.jobs = jobs[k];
        struct json *r = check_run(h, &p);
        struct strbuf sb = STRBUF_INIT;
        json_write(&sb, r, -1);
        json_free(r);
        text[k] = sb_steal(&sb);
        if (!differs && strcmp(text[k], text[0]) != 0) {
            differs = jobs[k];
            if ((*bad)++ == 0)
                fprintf(stderr, "oracle: history %" PRIu64 " of seed %" PRIu64 ": the result "
                        "on %d threads differs from the one on 1:\n1: %s\n%d: %s\n", i, seed,
                        jobs[k], text[0], jobs[k], text[k]);
        }
    }
    for (int k = 0; k < 4; k++)
        free(text[k]);
    return differs;
}

/* Contract: o's members but "listed" and "first_violation" (and, skip
 * set, "anomalies") as text: what listing fewer violations may not change
 * (the caller frees). */
static char *text_but_listing(const struct json *o, int skip_anomalies)
{
    struct strbuf sb = STRBUF_INIT;
    for (size_t i = 0; o && o->type == JSON_OBJ && i < o->n; i++) {
        if (!strcmp(o->keys[i], "listed") || !strcmp(o->keys[i], "first_violation") ||
            (skip_anomalies && !strcmp(o->keys[i], "anomalies")))
            continue;
        sb_printf(&sb, "%s=", o->keys[i]);
        json_write(&sb, o->kids[i], -1);
        sb_puts(&sb, ";");
    }
    return sb_steal(&sb);
}

/* Contract: h judged with every violation listed and with the first `max`
 * only (the others are kept without their holders: mutex.c struct uviol):
 * the counts (checks.mutex) and each incident listed in both (its class,
 * cause, violations, start, end and faults: every violation of it counts,
 * listed or not) must be the same; 1 when they are not (printed the first
 * time: *bad counts). */
static int listing_differs(const struct gen *g, struct history *h, int max, uint64_t seed,
                           uint64_t i, uint64_t *bad)
{
    struct json *all = judge(h, g->cap, g->near_miss, 1 << 30);
    struct json *few = judge(h, g->cap, g->near_miss, max);
    char *a = text_but_listing(json_path(all, "checks.mutex"), 1);
    char *b = text_but_listing(json_path(few, "checks.mutex"), 1);
    int differs = strcmp(a, b) != 0;
    const struct json *ia = json_obj_get(all, "incidents"), *ib = json_obj_get(few, "incidents");
    size_t n = ib && ib->type == JSON_ARR ? ib->n : 0;
    differs |= n > (size_t)max || (n < (size_t)max && ia && ia->n > n);
    for (size_t k = 0; !differs && k < n; k++) {
        free(a);
        free(b);
        a = text_but_listing(ia && k < ia->n ? ia->kids[k] : NULL, 0);
        b = text_but_listing(ib->kids[k], 0);
        differs = strcmp(a, b) != 0;
    }
    if (differs && (*bad)++ == 0)
        fprintf(stderr, "oracle: history %" PRIu64 " of seed %" PRIu64 ": with %d violation(s) "
                "listed the counts or incidents differ:\nall listed: %s\n%d listed: %s\n", i,
                seed, max, a, max, b);
    free(a);
    free(b);
    json_free(all);
    json_free(few);
    return differs;
}

/* Every history is judged as the loader would build it in memory; one in
 * ten also goes through `lockstorm log export`'s JSONL and the JSONL
 * loader (parsing each line is what makes a history cost ~3 ms under
 * ASan: all of them that way would take minutes). */
static void test_oracle(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = t_env_u64("LS_ORACLE_SEED", (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec ^
                                                  ((uint64_t)getpid() << 32));
    uint64_t n = t_env_u64("LS_ORACLE_N", 10000);
    /* one history in par_every is also checked on 1, 2, 3 and 8 threads:
     * four whole checks and 11 threads each, which under ASan cost ~0.1 s a
     * history (one in ten took the test past its 120 s there, one in 40 to 75 s) */
    uint64_t par_every = t_env_u64("LS_ORACLE_PAR_EVERY", 100);
    if (par_every < 1)
        par_every = 1;
    printf("oracle: seed %" PRIu64 " (LS_ORACLE_SEED=%" PRIu64 " reproduces this run)\n", seed,
           seed);
    static struct gen g;
    static struct verdicts want;
    rng_seed(&g.rng, seed, 0);
    char path[4096];
    snprintf(path, sizeof(path), "%s/oracle.jsonl", tmp);
    int64_t holds = 0, viols = 0, incs = 0, zero = 0, ties = 0, correct = 0, at_grant = 0;
    int64_t ral = 0, as_stood = 0, lleft = 0, lexp = 0, lnol = 0;
    uint64_t bad = 0, by[6] = {0, 0, 0, 0, 0, 0}, via_jsonl = 0, par = 0, par_bad = 0;
    uint64_t listing = 0, listing_bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        gen_history(&g);
        oracle(&g, &want);
        struct history h;
        oracle_history(g.ev, g.nev, g.nw, g.nres, &h);
        int k = compare(&g, &h, &want, "in memory", seed, i, &bad);
        if (k < 0 && i % 10 == 0) {
            FILE *f = fopen(path, "w");
            struct history hj;
            if (f)
                history_export_jsonl(&h, f);
            if (!f || fclose(f) != 0 || load_text_file(path, &hj) != 0) {
                CHECKF(0, "history %" PRIu64 ": %s: cannot write or load it", i, path);
                history_free(&h);
                break;
            }
            k = compare(&g, &hj, &want, "exported as JSONL and loaded", seed, i, &bad);
            history_free(&hj);
            via_jsonl++;
        }
        if (k >= 0)
            by[k]++;
        if (i % par_every == 0) {
            par_differs(&g, &h, seed, i, &par_bad);
            par++;
        }
        if (want.nv > 0) { /* 0, 1 or 2 violations listed: the rest kept without holders */
            listing_differs(&g, &h, (int)(i % 3), seed, i, &listing_bad);
            listing++;
        }
        holds += want.holds;
        viols += want.nv;
        incs += want.ni;
        at_grant += want.lease_at_grant;
        ral += want.ral;
        as_stood += want.as_stood;
        lleft += want.lost_left;
        lexp += want.lost_expired;
        lnol += want.lost_no_lease;
        correct += want.nv == 0;
        for (int a = 0; a < g.nh; a++) {
            zero += g.h[a].enter == g.h[a].exit;
            for (int b = 0; b < g.nh; b++)
                ties += b != a && g.h[b].res == g.h[a].res && g.h[b].exit == g.h[a].enter;
        }
        history_free(&h);
    }
    printf("oracle: %" PRIu64 " histories (%" PRIu64 " also through JSONL; %" PRId64
           " without a violation), %" PRId64 " holds (%" PRId64 " of zero length, %" PRId64
           " entries touching an exit, %" PRId64 " leases ending at an overlapping grant), %" PRId64
           " violations (%" PRId64 " classed otherwise by the final lease), %" PRId64
           " incidents, %" PRId64 " renewals after loss, %" PRId64 " lost with lease left, %"
           PRId64 " expired, %" PRId64 " lost without lease, %" PRIu64 " disagreements (holds %" PRIu64 ", violations %" PRIu64
           ", near misses %" PRIu64 ", incidents %" PRIu64 ", renewed after loss %" PRIu64
           ", losses %" PRIu64 ")\n",
           n, via_jsonl, correct, holds, zero, ties, at_grant, viols, as_stood, incs, ral, lleft,
           lexp, lnol, bad, by[0], by[1], by[2], by[3], by[4], by[5]);
    CHECKF(bad == 0, "%" PRIu64 " of %" PRIu64 " histories disagree with the oracle", bad, n);
    printf("oracle: %" PRIu64 " histories checked on 1, 2, 3 and 8 threads, %" PRIu64
           " with different results\n", par, par_bad);
    CHECKF(par_bad == 0, "%" PRIu64 " of %" PRIu64 " histories: results differ by threads",
           par_bad, par);
    printf("oracle: %" PRIu64 " histories with a violation judged again with 0, 1 or 2 listed, "
           "%" PRIu64 " with other counts or incidents\n", listing, listing_bad);
    CHECKF(listing_bad == 0, "%" PRIu64 " of %" PRIu64 " histories: listing fewer violations "
           "changed the counts or incidents", listing_bad, listing);
    CHECK(n == 0 || listing > 0);
    CHECK(n == 0 || viols > 0);
    CHECK(n < 1000 || (as_stood > 0 && ral > 0 && lleft > 0 && lexp > 0 && lnol > 0));
    for (int w = 0; w < MAXW; w++)
        free(g.ev[w]);
}

/* Holds that never end, many of them (the oracle's holds all end but a
 * worker's last): workers enter again and again, an exit ends the oldest
 * open hold of its worker on its resource, now and then a crash ends them
 * all; leases none, expired at once, short or long, some renewed; instants
 * shared often. No oracle here: what is checked is that listing 0, 1 or 2
 * violations changes neither the counts nor the listed incidents (their
 * classes and ends come from every violation, listed or counted only:
 * counted, from the counts of holds not ended kept for all of them at
 * once, util/sufcount.c), on histories with hundreds of violations a
 * resource, so that those counts are closed up as they resolve. */
static void test_open_holds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = t_env_u64("LS_ORACLE_SEED", (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec);
    uint64_t n = t_env_u64("LS_ORACLE_OPEN_N", 100);
    static struct gen g; /* listing_differs reads its capacity and near miss */
    memset(&g, 0, sizeof(g));
    struct rng r;
    rng_seed(&r, seed, 7);
    char path[4096];
    snprintf(path, sizeof(path), "%s/open.jsonl", tmp);
    uint64_t bad = 0, viols = 0;
    for (uint64_t i = 0; i < n && bad == 0; i++) {
        int nw = 2 + (int)rng_below(&r, 11), nr = 1 + (int)rng_below(&r, 2);
        int steps = 100 + (int)rng_below(&r, 400);
        g.cap = 1 + (int)rng_below(&r, 3);
        g.near_miss = (int64_t)rng_below(&r, 3) * 500;
        FILE *f = fopen(path, "w");
        REQUIRE(f);
        int64_t t = 0;
        for (int k = 0; k < steps; k++) {
            t += rng_below(&r, 3) ? 1 + (int64_t)rng_below(&r, 1000) : 0;
            int w = (int)rng_below(&r, (uint64_t)nw), res = (int)rng_below(&r, (uint64_t)nr);
            int x = (int)rng_below(&r, 100), kind = (int)rng_below(&r, 4);
            int64_t lease = kind == 1 ? t : kind == 2 ? t + (int64_t)rng_below(&r, 3000)
                                                      : t + 1000000000;
            if (x < 55) {
                fprintf(f, "{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"acquire_ok\",\"res\":\"r%d\"", t,
                        w, res);
                if (kind)
                    fprintf(f, ",\"valid_until\":%" PRId64, lease);
                t += (int64_t)rng_below(&r, 2);
                fprintf(f, "}\n{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"enter\",\"res\":\"r%d\"}\n",
                        t, w, res);
            } else if (x < 90) {
                fprintf(f, "{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"exit\",\"res\":\"r%d\"}\n", t, w,
                        res);
            } else if (x < 93) {
                fprintf(f, "{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"crash\"}\n", t, w);
            } else {
                fprintf(f, "{\"t\":%" PRId64 ",\"w\":%d,\"type\":\"renew_ok\",\"res\":\"r%d\","
                        "\"valid_until\":%" PRId64 "}\n", t, w, res, lease + 2000);
            }
        }
        struct history h;
        if (fclose(f) != 0 || load_text_file(path, &h) != 0) {
            CHECKF(0, "open holds, history %" PRIu64 " of seed %" PRIu64 ": cannot write or load it",
                   i, seed);
            break;
        }
        struct json *all = judge(&h, g.cap, g.near_miss, 1 << 30);
        viols += (uint64_t)geti(all, "checks.mutex.violations");
        json_free(all);
        for (int max = 0; max <= 2; max++)
            listing_differs(&g, &h, max, seed, i, &bad);
        history_free(&h);
    }
    printf("open holds: seed %" PRIu64 ", %" PRIu64 " histories, %" PRIu64 " violations\n", seed, n,
           viols);
    CHECKF(bad == 0, "open holds: %" PRIu64 " histories judged differently with fewer listed "
           "(LS_ORACLE_SEED=%" PRIu64 ")", bad, seed);
    CHECKF(viols > n * 50, "open holds: only %" PRIu64 " violations in %" PRIu64 " histories", viols,
           n);
}

int main(void)
{
    tmp = t_tmpdir();
    RUN(test_oracle);
    RUN(test_open_holds);
    t_rmdir(tmp);
    free(tmp);
    return t_finish();
}
