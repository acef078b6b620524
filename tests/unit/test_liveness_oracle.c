/*
 * test_liveness_oracle.c: the liveness checker's waits and stalls
 * (docs/checkers.md "liveness", "Waits") on seeded random histories,
 * against an independent naive computation: at every stretch between two
 * instants where something changes (a record, a holder's lease running
 * out) the oracle counts each resource's holders and those whose lease is
 * still valid from scratch. Histories have many holders at once (workers
 * that never release, grants replaced before their enter, crashes that
 * end several grants, renewals that raise several), so that the checker's
 * heap of leases (checkers/liveness.c struct lheap, past LH_WALK holders)
 * is made, kept, let go and made again; capacity 1 to 3. A resource's
 * last wait ends at its waiters' last attempt record (an invoke, an
 * outcome, or what ended an attempt without one: the worker's next invoke
 * of it or its crash), at the end while an attempt there has none: the
 * oracle finds that instant first, from the records alone, and compares
 * the stuck resources too (stuck_after drawn). Half the histories are
 * wild: invokes with no outcome, outcomes with no invoke, crashes in the
 * middle of an attempt, failed and unknown outcomes, negative times, long
 * gaps. LS_ORACLE_SEED=N reproduces a run, LS_ORACLE_N=N sets its size.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checkers/check.h"
#include "tests/unit/oracle_test.h"
#include "tests/unit/testing.h"
#include "util/json.h"
#include "util/rng.h"

#define MAXW 48
#define MAXR 3
#define NEVER INT64_MAX

enum { K_NONE, K_HELD, K_FREE, K_EXPIRED, K_N };

struct gen {
    struct rng rng;
    int nw, nres, cap;
    int never_pct;              /* % of leases without expiry (the latest of all: a few
                                 * of them among the holders hide the others' order) */
    int renew_pct;              /* % of a worker's steps that renew */
    int wild;                   /* invokes with no outcome, outcomes with no invoke, crashes
                                 * mid-attempt, fail/unknown outcomes, negative times, long
                                 * gaps (a wait held back across many holder changes) */
    int64_t stuck_after;        /* the check's, drawn: a share of histories are stuck */
    struct ev_rec *ev[MAXW];    /* each worker's log (kept across histories) */
    size_t nev[MAXW], cap_ev[MAXW];
};

/* Append a record to worker w's log; lease: acquire_ok / renew_ok's
 * (NEVER: none). */
static void rec(struct gen *g, int w, int64_t t, int ty, int res, int64_t lease)
{
    struct ev_rec *r = oracle_append(&g->ev[w], &g->nev[w], &g->cap_ev[w], t, ty, res);
    if (ty == EV_ACQUIRE_OK || ty == EV_RENEW_OK) {
        if (lease == NEVER)
            r->flags |= EVF_NO_LEASE;
        else
            r->valid_until = lease;
    }
}

/* A lease granted or renewed at t: none (never_pct of them), run out
 * already, or ahead. */
static int64_t draw_lease(struct gen *g, int64_t t, int64_t unit)
{
    if ((int)rng_below(&g->rng, 100) < g->never_pct)
        return NEVER;
    if (rng_below(&g->rng, 10) == 0)
        return t - (int64_t)rng_below(&g->rng, 20) * unit;
    return t + (int64_t)rng_below(&g->rng, 60) * unit;
}

/* Contract: a new random history in g. Each worker loops over its own
 * clock; a hoarder enters its grants and (mostly) never releases them,
 * the others release each one before their next grant (so that a release
 * names one grant of its resource: the checker releases the first it
 * finds). Anyone may be granted twice before an enter (the second
 * replaces the first), renew (every grant of the resource it has), crash
 * (every grant) or release a resource it has no grant of. */
static void gen_history(struct gen *g)
{
    struct rng *r = &g->rng;
    g->nw = 2 + (int)rng_below(r, MAXW - 1);
    g->nres = 1 + (int)rng_below(r, MAXR);
    g->cap = 1 + (int)rng_below(r, 3);
    int64_t unit = rng_below(r, 3) == 0 ? 1000 : 1; /* coarse: ties everywhere */
    int wild = g->wild;
    int64_t base = wild && rng_below(r, 3) == 0 ? -(int64_t)rng_below(r, 500) * unit : 0;
    g->stuck_after = (1 + (int64_t)rng_below(r, 60)) * unit;
    int hoard_pct = (int)rng_below(r, 4) * 30;
    g->never_pct = rng_below(r, 3) == 0 ? 8 : 0;
    g->renew_pct = 5 + (int)rng_below(r, 3) * 10;
    for (int w = 0; w < g->nw; w++) {
        g->nev[w] = 0;
        int hoarder = (int)rng_below(r, 100) < hoard_pct;
        int64_t t = base + (int64_t)rng_below(r, 30) * unit;
        int nheld[MAXR] = {0};  /* its grants of each resource */
        int steps = 3 + (int)rng_below(r, hoarder ? 30 : 20);
        for (int k = 0; k < steps; k++) {
            t += (int64_t)rng_below(r, 12) * unit;
            if (wild && rng_below(r, 10) == 0)
                t += (int64_t)rng_below(r, 200) * unit;
            int res = (int)rng_below(r, (uint64_t)g->nres), x = (int)rng_below(r, 100);
            if (wild && rng_below(r, 100) < 8) { /* an outcome with no invoke */
                static const int oc[] = {EV_ACQUIRE_BUSY, EV_ACQUIRE_FAIL, EV_ACQUIRE_UNKNOWN,
                                         EV_ACQUIRE_OK};
                int ty = oc[rng_below(r, 4)];
                if (ty == EV_ACQUIRE_OK && !hoarder && nheld[res])
                    ty = EV_ACQUIRE_BUSY;
                rec(g, w, t, ty, res, ty == EV_ACQUIRE_OK ? draw_lease(g, t, unit) : 0);
                if (ty == EV_ACQUIRE_OK)
                    nheld[res] = 1 + hoarder * nheld[res];
                continue;
            }
            if (x < 5) {
                int u = -1;     /* a release of a resource it has no grant of */
                for (int q = 0; q < g->nres; q++)
                    if (!nheld[q])
                        u = q;
                if (u >= 0) {
                    static const int rel[] = {EV_RELEASE_OK, EV_RELEASE_NOT_OWNER,
                                              EV_RELEASE_FAIL, EV_LOST};
                    rec(g, w, t, rel[rng_below(r, 4)], u, 0);
                }
                continue;
            }
            if (x < 9) {
                rec(g, w, t, EV_CRASH, 0, 0);
                memset(nheld, 0, sizeof(nheld));
                continue;
            }
            if (x < 9 + g->renew_pct) { /* a renewal, of a resource it may have grants of */
                rec(g, w, t, EV_RENEW_INVOKE, res, 0);
                rec(g, w, t, EV_RENEW_OK, res, draw_lease(g, t, unit));
                continue;
            }
            if (!hoarder && nheld[res])
                continue;
            rec(g, w, t, EV_ACQUIRE_INVOKE, res, 0);
            t += (int64_t)rng_below(r, 3) * unit;
            if (wild && rng_below(r, 6) == 0)
                continue;       /* no outcome: the next invoke, a crash or the end */
            if (wild && rng_below(r, 12) == 0) {
                rec(g, w, t, EV_CRASH, 0, 0);
                memset(nheld, 0, sizeof(nheld));
                continue;
            }
            if (rng_below(r, wild ? 4 : 10) == 0) {
                static const int oc[] = {EV_ACQUIRE_BUSY, EV_ACQUIRE_FAIL, EV_ACQUIRE_UNKNOWN};
                rec(g, w, t, wild ? oc[rng_below(r, 3)] : EV_ACQUIRE_BUSY, res, 0);
                continue;
            }
            rec(g, w, t, EV_ACQUIRE_OK, res, draw_lease(g, t, unit));
            nheld[res] = 1 + hoarder * nheld[res];
            if (rng_below(r, 6) == 0) { /* granted again before an enter: replaced */
                t += (int64_t)rng_below(r, 3) * unit;
                rec(g, w, t, EV_ACQUIRE_OK, res, draw_lease(g, t, unit));
            }
            if (rng_below(r, 8) == 0)
                continue;       /* never entered (a later grant of res replaces it) */
            t += (int64_t)rng_below(r, 2) * unit;
            rec(g, w, t, EV_ENTER, res, 0);
            if (hoarder)
                continue;
            t += (int64_t)rng_below(r, 10) * unit;
            if (rng_below(r, 3))
                rec(g, w, t, EV_EXIT, res, 0);
            if (rng_below(r, 6) == 0)
                continue;       /* held on into its next steps */
            static const int end[] = {EV_RELEASE_OK, EV_RELEASE_OK, EV_RELEASE_NOT_OWNER,
                                      EV_RELEASE_FAIL, EV_LOST};
            t += (int64_t)rng_below(r, 3) * unit;
            rec(g, w, t, end[rng_below(r, 5)], res, 0);
            nheld[res] = 0;
        }
    }
}

/* ---- the oracle ---- */

struct ohold {
    int w, res, entered;
    int64_t lease;
};

struct owaits {
    int64_t total[K_N], longest[K_N], unserved, stall;
    int max_holders;            /* the most holders of one resource at once */
    int stuck;
};

struct ores {                   /* a resource's stretches as the oracle sweeps */
    int64_t last_inv, last_grant; /* INT64_MIN: none */
    int kind;
    int64_t start, unserved_start; /* INT64_MIN: none */
    int64_t uns_at_end;            /* unserved stretch closed at wend */
};

/* Contract: resource x (res) from p to q (p < q): its kind there from its
 * holders h (the state after every record at or before p): a stretch of
 * one kind goes on while the kind stays, an unserved one while it is free
 * or expired. Nobody waits from wend on (its last wait's end). */
static void oracle_span(struct owaits *o, struct ores *x, int res, const struct ohold *h, int nh,
                        int cap, int64_t wend, int64_t p, int64_t q)
{
    int k = K_NONE;
    if (x->last_inv != INT64_MIN && x->last_inv > x->last_grant && p < wend) {
        int n = 0, valid = 0;
        for (int i = 0; i < nh; i++)
            if (h[i].res == res) {
                n++;
                valid += h[i].lease > p;
            }
        k = valid >= cap ? K_HELD : n < cap ? K_FREE : K_EXPIRED;
    }
    if (k != x->kind) {
        if (x->kind != K_NONE && p - x->start > o->longest[x->kind])
            o->longest[x->kind] = p - x->start;
        x->kind = k;
        x->start = p;
    }
    if (k == K_FREE || k == K_EXPIRED) {
        if (x->unserved_start == INT64_MIN)
            x->unserved_start = p;
    } else if (x->unserved_start != INT64_MIN) {
        if (p == wend)
            x->uns_at_end = p - x->unserved_start;
        if (p - x->unserved_start > o->unserved)
            o->unserved = p - x->unserved_start;
        x->unserved_start = INT64_MIN;
    }
    o->total[k] += q - p;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Contract: the waits and the longest stall of g's history up to `end`,
 * by the definitions, sharing nothing with the checker: the records merged
 * in time order (each worker's own order kept), each instant's invokes
 * first for the stalls (an invoke at a grant's instant waited for it), the
 * holders a plain list, each stretch between two instants cut where a
 * lease runs out and judged from scratch. */
static void oracle(const struct gen *g, int64_t end, struct owaits *o)
{
    memset(o, 0, sizeof(*o));
    size_t n = 0;
    for (int w = 0; w < g->nw; w++)
        n += g->nev[w];
    const struct ev_rec **all = malloc((n ? n : 1) * sizeof(*all));
    int *who = malloc((n ? n : 1) * sizeof(*who));
    struct ohold *h = malloc((n ? n : 1) * sizeof(*h));
    int64_t *cut = malloc((n + 2) * sizeof(*cut));
    if (!all || !who || !h || !cut)
        abort();
    size_t m = 0, at[MAXW] = {0};
    for (;;) { /* the earliest next record, the lowest worker id on a tie */
        int w = -1;
        for (int c = 0; c < g->nw; c++)
            if (at[c] < g->nev[c] && (w < 0 || g->ev[c][at[c]].t < g->ev[w][at[w]].t))
                w = c;
        if (w < 0)
            break;
        who[m] = w;
        all[m++] = &g->ev[w][at[w]++];
    }
    /* when each resource's last wait ends (docs/checkers.md "Stall"): at
     * its waiters' last attempt record (an invoke or its outcome, or what
     * ended an attempt with none: the worker's next invoke of it, its
     * crash), or at the end while an attempt there has no end */
    int64_t wend[MAXR];
    static unsigned char pend[MAXW][MAXR]; /* worker w has an attempt of r with no end */
    memset(pend, 0, sizeof(pend));
    for (int r = 0; r < MAXR; r++)
        wend[r] = INT64_MIN;
    for (size_t i = 0; i < m; i++) {
        const struct ev_rec *e = all[i];
        int w = who[i], ty = e->type;
        int attempt = ty == EV_ACQUIRE_INVOKE || ty == EV_ACQUIRE_OK || ty == EV_ACQUIRE_BUSY ||
                      ty == EV_ACQUIRE_FAIL || ty == EV_ACQUIRE_UNKNOWN;
        if (attempt && e->t > wend[e->res])
            wend[e->res] = e->t;
        if (attempt)
            pend[w][e->res] = ty == EV_ACQUIRE_INVOKE; /* an outcome or a new invoke ends it */
        if (ty == EV_CRASH)
            for (int r = 0; r < MAXR; r++)
                if (pend[w][r]) {
                    pend[w][r] = 0;
                    if (e->t > wend[r])
                        wend[r] = e->t;
                }
    }
    for (int w = 0; w < MAXW; w++)
        for (int r = 0; r < MAXR; r++)
            if (pend[w][r])
                wend[r] = end;
    struct ores rs[MAXR];
    for (int r = 0; r < MAXR; r++)
        rs[r] = (struct ores){INT64_MIN, INT64_MIN, K_NONE, 0, INT64_MIN, 0};
    int nh = 0;
    /* the stalls: per resource, each grant's wait from the first invoke
     * after the previous grant's instant; an invoke at a grant's instant is
     * that grant's */
    int64_t first_inv[MAXR];
    for (int r = 0; r < MAXR; r++)
        first_inv[r] = INT64_MIN;
    for (size_t i = 0; i < m;) {
        int64_t t = all[i]->t;
        size_t j = i;
        for (; j < m && all[j]->t == t; j++) { /* invokes of the instant first (stalls) */
            const struct ev_rec *e = all[j];
            if (e->type == EV_ACQUIRE_INVOKE && first_inv[e->res] == INT64_MIN)
                first_inv[e->res] = t;
        }
        for (j = i; j < m && all[j]->t == t; j++) {
            const struct ev_rec *e = all[j];
            int w = who[j], res = e->res;
            if (e->type == EV_ACQUIRE_INVOKE) {
                rs[res].last_inv = t;
            } else if (e->type == EV_ACQUIRE_OK) {
                if (first_inv[res] != INT64_MIN && t - first_inv[res] > o->stall)
                    o->stall = t - first_inv[res];
                first_inv[res] = INT64_MIN;
                rs[res].last_grant = t;
                for (int k = 0; k < nh; k++)
                    if (h[k].w == w && h[k].res == res && !h[k].entered) {
                        h[k] = h[--nh];
                        break;
                    }
                h[nh++] = (struct ohold){w, res, 0,
                                         (e->flags & EVF_NO_LEASE) ? NEVER : e->valid_until};
            } else if (e->type == EV_ENTER) {
                for (int k = 0; k < nh; k++)
                    if (h[k].w == w && h[k].res == res && !h[k].entered) {
                        h[k].entered = 1;
                        break;
                    }
            } else if (e->type == EV_RELEASE_OK || e->type == EV_RELEASE_NOT_OWNER ||
                       e->type == EV_RELEASE_FAIL || e->type == EV_LOST) {
                for (int k = 0; k < nh; k++)
                    if (h[k].w == w && h[k].res == res) {
                        h[k] = h[--nh];
                        break;
                    }
            } else if (e->type == EV_RENEW_OK) {
                int64_t l = (e->flags & EVF_NO_LEASE) ? NEVER : e->valid_until;
                for (int k = 0; k < nh; k++)
                    if (h[k].w == w && h[k].res == res && h[k].lease != NEVER && l > h[k].lease)
                        h[k].lease = l;
            } else if (e->type == EV_CRASH) {
                for (int k = 0; k < nh;)
                    if (h[k].w == w)
                        h[k] = h[--nh];
                    else
                        k++;
            }
        }
        i = j;
        int64_t next = i < m ? all[i]->t : end;
        /* from t to the next instant: cut where a holder's lease runs out */
        int nc = 0;
        cut[nc++] = t;
        for (int k = 0; k < nh; k++)
            if (h[k].lease > t && h[k].lease < next)
                cut[nc++] = h[k].lease;
        cut[nc++] = next;
        qsort(cut, (size_t)nc, sizeof(*cut), by_value);
        for (int r = 0; r < g->nres; r++) {
            int c = 0;
            for (int k = 0; k < nh; k++)
                c += h[k].res == r;
            if (c > o->max_holders)
                o->max_holders = c;
            for (int k = 0; k + 1 < nc; k++)
                if (cut[k] < cut[k + 1])
                    oracle_span(o, &rs[r], r, h, nh, g->cap, wend[r], cut[k], cut[k + 1]);
        }
    }
    for (int r = 0; r < g->nres; r++) {
        struct ores *x = &rs[r];
        if (x->kind != K_NONE && end - x->start > o->longest[x->kind])
            o->longest[x->kind] = end - x->start;
        if (x->unserved_start != INT64_MIN && end - x->unserved_start > o->unserved)
            o->unserved = end - x->unserved_start;
        if (x->unserved_start != INT64_MIN)
            x->uns_at_end = end - x->unserved_start;
        if (first_inv[r] != INT64_MIN && x->uns_at_end >= g->stuck_after && x->uns_at_end > 0)
            o->stuck++;
        if (first_inv[r] != INT64_MIN && wend[r] - first_inv[r] > o->stall)
            o->stall = wend[r] - first_inv[r];
    }
    free(all);
    free(who);
    free(h);
    free(cut);
}

/* ---- the checker's answer ---- */

static int64_t ns_at(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_NUM ? (v->is_int ? v->i * 1000000 : llround(v->d * 1e6))
                                    : -999999;
}

static void from_checker(const struct json *r, struct owaits *o)
{
    static const char *const names[K_N] = {NULL, "held", "free", "expired"};
    memset(o, 0, sizeof(*o));
    for (int k = K_HELD; k < K_N; k++) {
        char path[96];
        snprintf(path, sizeof(path), "checks.liveness.waits.%s.total_ms", names[k]);
        o->total[k] = ns_at(r, path);
        snprintf(path, sizeof(path), "checks.liveness.waits.%s.longest_ms", names[k]);
        o->longest[k] = ns_at(r, path);
    }
    o->unserved = ns_at(r, "checks.liveness.longest_unserved_wait_ms");
    o->stall = ns_at(r, "checks.liveness.longest_stall_ms");
    const struct json *v = json_path(r, "checks.liveness.stuck_resources");
    o->stuck = v ? (int)v->i : -1;
}

static int differ(const struct owaits *a, const struct owaits *b)
{
    for (int k = K_HELD; k < K_N; k++)
        if (a->total[k] != b->total[k] || a->longest[k] != b->longest[k])
            return 1;
    return a->unserved != b->unserved || a->stall != b->stall || a->stuck != b->stuck;
}

static void print_waits(const char *who, const struct owaits *o)
{
    fprintf(stderr, "  %s: held %" PRId64 "/%" PRId64 " free %" PRId64 "/%" PRId64
            " expired %" PRId64 "/%" PRId64 " (total/longest ns), unserved %" PRId64
            ", stall %" PRId64 ", stuck %d\n",
            who, o->total[K_HELD], o->longest[K_HELD], o->total[K_FREE], o->longest[K_FREE],
            o->total[K_EXPIRED], o->longest[K_EXPIRED], o->unserved, o->stall, o->stuck);
}

static void test_oracle(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t seed = t_env_u64("LS_ORACLE_SEED", (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec ^
                                                  ((uint64_t)getpid() << 32));
    uint64_t n = t_env_u64("LS_ORACLE_N", 400);
    printf("liveness oracle: seed %" PRIu64 " (LS_ORACLE_SEED=%" PRIu64 " reproduces this run)\n",
           seed, seed);
    static struct gen g;
    rng_seed(&g.rng, seed, 3);
    uint64_t bad = 0, many = 0, lots = 0, stuck = 0, wild = 0, caps[4] = {0, 0, 0, 0};
    int64_t kinds[K_N] = {0, 0, 0, 0};
    for (uint64_t i = 0; i < n; i++) {
        g.wild = (int)(i % 2); /* half of them wild */
        wild += (uint64_t)g.wild;
        gen_history(&g);
        struct history h;
        oracle_history(g.ev, g.nev, g.nw, g.nres, &h);
        struct owaits want, got;
        oracle(&g, h.end, &want);
        struct check_params p;
        check_params_from(&h, &p);
        p.capacity = g.cap;
        p.stuck_after = g.stuck_after;
        struct json *r = json_new_obj();
        check_liveness(&h, &p, r);
        from_checker(r, &got);
        json_free(r);
        if (differ(&want, &got) && bad++ == 0) {
            fprintf(stderr, "liveness oracle: history %" PRIu64 " of seed %" PRIu64
                    " disagrees (capacity %d, %d workers, up to %d holders of a resource);"
                    " `lockstorm check --history h.jsonl --capacity %d` of these lines:\n",
                    i, seed, g.cap, g.nw, want.max_holders, g.cap);
            print_waits("oracle", &want);
            print_waits("checker", &got);
            history_export_jsonl(&h, stderr);
        }
        many += want.max_holders > 16;
        stuck += want.stuck > 0;
        lots += want.max_holders > 48;
        caps[g.cap]++;
        for (int k = K_HELD; k < K_N; k++)
            kinds[k] += want.total[k] > 0;
        history_free(&h);
    }
    printf("liveness oracle: %" PRIu64 " histories (%" PRIu64 " wild; capacity 1/2/3: %" PRIu64
           "/%" PRIu64 "/%" PRIu64 "; more than 16 holders of a resource at once in %" PRIu64
           ", more than 48 in %" PRIu64 "; a wait held in %" PRId64 ", free in %" PRId64
           ", expired in %" PRId64 "; stuck in %" PRIu64 "), %" PRIu64 " disagreements\n",
           n, wild, caps[1], caps[2], caps[3], many, lots, kinds[K_HELD], kinds[K_FREE],
           kinds[K_EXPIRED], stuck, bad);
    CHECKF(bad == 0, "%" PRIu64 " of %" PRIu64 " histories disagree with the oracle "
           "(LS_ORACLE_SEED=%" PRIu64 ")", bad, n, seed);
    CHECK(n < 100 || (many > n / 10 && lots > 0));
    for (int w = 0; w < MAXW; w++)
        free(g.ev[w]);
}

int main(void)
{
    RUN(test_oracle);
    return t_finish();
}
