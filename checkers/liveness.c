/*
 * liveness.c: the liveness checker (docs/checkers.md "liveness", semantics in
 * docs/checkers.md): stalls (no grant while workers waited), stuck
 * resources (a key left with no expiry, or an open unserved wait at the end
 * of at least stuck_after), the waits split by what the waiters waited
 * behind (no holder, a holder past its lease, a holder inside its lease),
 * time from a holder's crash to the next grant, the busy/failed/unknown
 * share of attempts and per-worker fairness. Only stuck resources make the
 * verdict invalid; the rest is measurement. A consumer of the merged pass
 * (pass.h): per-resource sweep state, per-worker counts.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"
#include "util/keyslots.h"
#include "util/stsort.h"
#include "util/xalloc.h"

#define KIND_INVOKE 0
#define KIND_GRANT 1
#define KIND_CRASH 2    /* a worker crashed while it had a grant of res */

#define NONE INT64_MIN
#define LEASE_NEVER INT64_MAX

/* What waiting workers wait behind (docs/checkers.md "Waits"). */
enum wait_kind { WK_NONE, WK_HELD, WK_FREE, WK_EXPIRED, WK__N };

/* A grant with no release outcome yet, in the checker's pool of holders: its
 * slot stays while it lives (its worker's grant and heap entries name it),
 * its place in its resource's holders moves. */
struct lholder {
    int64_t lease;          /* LEASE_NEVER: no expiry */
    int pos;                /* its place in its resource's holders; free: the next free slot */
    uint32_t gen;           /* raised when it leaves: heap entries naming it go stale (one
                             * would be taken for live again only after 2^32 reuses of
                             * its slot, with the same lease, before it left its heap) */
};

struct wheld {              /* a worker's grant with no release outcome yet */
    int res;
    int entered;            /* an enter came: a later grant no longer replaces it */
    int slot;               /* its holder in the pool */
};

/* A resource's holders by lease, the latest on top: an entry is stale once
 * its holder has left (gen) or has another lease (a renewal pushed the new
 * one), and is dropped when it comes to the top. Kept only while the
 * holders are more than LH_WALK (ok set; else let go, made again from the
 * holders when next asked), let go once its entries are more than twice
 * the holders + 16. */
struct lhent {
    int64_t lease;
    uint32_t slot, gen;
};

struct lheap {
    struct lhent *a;
    int n, cap, ok;
};

/* Holders up to which the capacity-th latest lease is found by a walk
 * over them (cheaper than a heap for the few holders of a lock that is
 * released). */
#define LH_WALK 16

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
    const char *stuck_why;  /* non-NULL: stuck (static text, or "" = open unserved wait) */
    int seen;               /* the resource has events (the fields above are set) */
    int *hold;              /* its holders' slots, in no order (owned) */
    int nhold, hold_cap;
    struct lheap q;         /* its holders by lease (owned) */
    int64_t served_until;   /* while waiting: served (held within a lease) until then:
                             * the capacity-th latest lease of the holders, NONE fewer */
    int acct;               /* the accounting below has started */
    int64_t acct_t;         /* waits accounted up to this instant */
    int cur_kind;           /* enum wait_kind of the stretch going on */
    int64_t cur_start;
    int64_t unserved_start; /* start of the unserved (free or expired) stretch, NONE */
    int64_t wait_seen;      /* with waited: the latest attempt record (invoke or outcome) */
    int waited;
    int inflight;           /* attempts invoked with no outcome yet (pend of a worker) */
    /* A wait's time after its last attempt record, with no attempt in
     * flight, is held back: a wait if another attempt record comes, not if
     * none does (docs/checkers.md "Stall": the last wait ends at its last
     * attempt record). Its totals are counted (taken out again at the end),
     * its stretches' lengths kept here until the next attempt record. */
    int64_t tent[WK__N];    /* held-back totals */
    int64_t tlong[WK__N];   /* held-back longest stretch of each kind closed (thas bit k) */
    int64_t tuns;           /* held-back longest unserved stretch closed (thas bit WK__N) */
    unsigned thas;
    int snapped;            /* the accounting passed wait_seen: the stretch and the unserved
                               one going on there, kept */
    int snap_kind;
    int64_t snap_start, snap_uns;
};

struct wcount {
    int64_t attempts, grants;
    struct wheld *held;     /* its grants with no release outcome yet (owned) */
    int nheld, held_cap;
    int unentered;          /* of them, those no enter came for (grants never released
                             * pile up: the searches for an unentered one skip them) */
    int *pend;              /* the resources of its attempts with no outcome yet, each once
                               (owned; usually none or one) */
    int npend, pend_cap;
    struct keyslots ix;     /* held's positions by resource once they were many
                               (HELD_INDEXED_FROM), until held is empty again */
};

/* A worker's grants are searched by resource through an index once it has
 * this many (one worker holding thousands of resources: a batch job's
 * locks), as the mutex checker's are (checkers/mutex.c slot_push); a
 * search finds the position a walk would. */
#define HELD_INDEXED_FROM 32

/* Contract: a grant of res appended to w's, not entered; its position. */
static int held_push(struct wcount *w, int res)
{
    if (w->nheld == w->held_cap) {
        w->held_cap = w->held_cap ? w->held_cap * 2 : 8;
        w->held = xrealloc(w->held, (size_t)w->held_cap * sizeof(*w->held));
    }
    w->held[w->nheld] = (struct wheld){res, 0, -1};
    if (w->ix.tab) {
        keyslots_add(&w->ix, w->nheld, (uint16_t)res);
    } else if (w->nheld + 1 >= HELD_INDEXED_FROM) {
        for (int j = 0; j <= w->nheld; j++)
            keyslots_add(&w->ix, j, (uint16_t)w->held[j].res);
    }
    return w->nheld++;
}

/* Contract: w's grant at j gone (the last one takes its place). */
static void held_drop(struct wcount *w, int j)
{
    w->unentered -= !w->held[j].entered;
    if (w->ix.tab) {
        keyslots_del(&w->ix, j, w->nheld - 1);
        if (w->nheld == 1)
            keyslots_free(&w->ix);
    }
    w->held[j] = w->held[--w->nheld];
}

/* Contract: the first position after `after` (-1: from the start) of w's
 * grants of res, entered or not (ent -1: either); w->nheld none. */
static inline int held_next(const struct wcount *w, int res, int ent, int after)
{
    if (!w->ix.tab) {
        for (int j = after + 1; j < w->nheld; j++)
            if (w->held[j].res == res && (ent < 0 || !w->held[j].entered == !ent))
                return j;
        return w->nheld;
    }
    int best = w->nheld;
    for (int j = keyslots_head(&w->ix, (uint16_t)res); j >= 0; j = w->ix.nx[j])
        if (j > after && j < best && (ent < 0 || !w->held[j].entered == !ent))
            best = j;
    return best;
}

/* Contract: the last position of w's grants of res not entered; -1 none. */
static int held_last_unentered(const struct wcount *w, int res)
{
    if (!w->ix.tab) {
        int j = w->nheld - 1;
        while (j >= 0 && (w->held[j].res != res || w->held[j].entered))
            j--;
        return j;
    }
    int best = -1;
    for (int j = keyslots_head(&w->ix, (uint16_t)res); j >= 0; j = w->ix.nx[j])
        if (j > best && !w->held[j].entered)
            best = j;
    return best;
}

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
    int cap;                /* capacity: holders that serve the resource in full */
    int maxres;             /* one past the highest resource with holders (freed at the end) */
    __int128 wait_total[WK__N]; /* summed over resources: spans of up to 2 x 10^18 ns each */
    int64_t wait_longest[WK__N];
    int wait_longest_res[WK__N];
    int64_t unserved_longest;
    int unserved_res;
    struct lholder *pool;   /* the holders of every resource (owned) */
    int npool, pool_cap;
    int pool_free;          /* the first free slot, -1 none */
    int64_t *top;           /* served_update's walk: the capacity latest leases (cap > 1;
                             * owned) */
    struct lhent *tops;     /* served_update's heap: the entries taken off (cap > 1; owned) */
    int *kbuf, kcap;        /* holder_renew's positions (owned) */
};

/* Contract: is x's time from `at` on held back (see struct rlive)? */
static inline int held_back(const struct rlive *x, int64_t at)
{
    return x->waited && x->inflight <= 0 && x->first_wait != NONE && at >= x->wait_seen;
}

/* Contract: a stretch of kind k (WK__N: unserved) of resource r, len long,
 * ending at `at`, into the longest: at once, or held back with x's. */
static inline void longest_note(struct liveness_st *l, struct rlive *x, int r, int k,
                                int64_t len, int64_t at)
{
    if (at > x->wait_seen && held_back(x, at)) {
        int64_t *c = k == WK__N ? &x->tuns : &x->tlong[k];
        if (!(x->thas & 1u << k) || len > *c)
            *c = len;
        x->thas |= 1u << k;
    } else if (k == WK__N) {
        if (len > l->unserved_longest || l->unserved_res < 0) {
            l->unserved_longest = len;
            l->unserved_res = r;
        }
    } else if (len > l->wait_longest[k] || l->wait_longest_res[k] < 0) {
        l->wait_longest[k] = len;
        l->wait_longest_res[k] = r;
    }
}

/* Contract: close x's stretch of its current kind at `at` (res r): the
 * longest per kind. */
static void stretch_close(struct liveness_st *l, struct rlive *x, int r, int64_t at)
{
    if (x->cur_kind != WK_NONE)
        longest_note(l, x, r, x->cur_kind, at - x->cur_start, at);
}

static void unserved_close(struct liveness_st *l, struct rlive *x, int r, int64_t at)
{
    if (x->unserved_start == NONE)
        return;
    longest_note(l, x, r, WK__N, at - x->unserved_start, at);
    x->unserved_start = NONE;
}

/* Contract: account resource r's waits from x->acct_t up to t, split at
 * the instant its holders stop serving it (their leases run out): time
 * with no waiter, waited behind holders inside their lease (held), with
 * fewer than capacity holders (free) or behind holders past their lease
 * (expired). State changes at t apply after this. */
static void advance(struct liveness_st *l, struct rlive *x, int r, int64_t t)
{
    if (!x->acct) {
        x->acct = 1;
        x->acct_t = t;
        x->served_until = NONE; /* no holder yet (the zeroed 0 was a lease at 0 for a wait
                                   before it: at negative times it counted as held) */
        x->cur_kind = WK_NONE;
        x->cur_start = t;
        x->unserved_start = NONE;
        if (!x->seen)
            x->first_wait = x->first_crash = NONE;
        return;
    }
    while (x->acct_t < t) {
        int64_t from = x->acct_t, until = t;
        int k, hb = held_back(x, from);
        if (hb && !x->snapped) { /* the last attempt record's instant: what goes on there */
            x->snapped = 1;
            x->snap_kind = x->cur_kind;
            x->snap_start = x->cur_start;
            x->snap_uns = x->unserved_start;
        } else if (!hb && held_back(x, until) && until > x->wait_seen) {
            until = x->wait_seen; /* held back from there on */
        }
        if (x->first_wait == NONE || !x->seen) {
            k = WK_NONE;
        } else if (x->served_until != NONE && x->served_until > from) {
            k = WK_HELD;
            if (x->served_until < until)
                until = x->served_until;
        } else {
            k = x->nhold < l->cap ? WK_FREE : WK_EXPIRED;
        }
        if (k != x->cur_kind) {
            stretch_close(l, x, r, from);
            x->cur_kind = k;
            x->cur_start = from;
        }
        l->wait_total[k] += until - from;
        if (hb)
            x->tent[k] += until - from;
        if (k == WK_FREE || k == WK_EXPIRED) {
            if (x->unserved_start == NONE)
                x->unserved_start = from;
        } else {
            unserved_close(l, x, r, from);
        }
        x->acct_t = until;
    }
}

/* Contract: holder s with its lease into heap q. */
static inline void lh_push(struct liveness_st *l, struct lheap *q, int s)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 16;
        q->a = xrealloc(q->a, (size_t)q->cap * sizeof(*q->a));
    }
    struct lhent e = {l->pool[s].lease, (uint32_t)s, l->pool[s].gen};
    int i = q->n++;
    for (; i > 0 && q->a[(i - 1) / 2].lease < e.lease; i = (i - 1) / 2)
        q->a[i] = q->a[(i - 1) / 2];
    q->a[i] = e;
}

static inline void lh_down(struct lheap *q, int i)
{
    struct lhent e = q->a[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && q->a[c + 1].lease > q->a[c].lease)
            c++;
        if (q->a[c].lease <= e.lease)
            break;
        q->a[i] = q->a[c];
        i = c;
    }
    q->a[i] = e;
}

/* Contract: q's top let go. */
static void lh_pop(struct lheap *q)
{
    q->a[0] = q->a[--q->n];
    if (q->n)
        lh_down(q, 0);
}

/* Contract: x's heap hears that holder s has come or has a new lease
 * (when it is kept), and is let go once its entries are more than twice
 * the holders + 16 (the stale ones are dropped only at the top). */
static void lh_note(struct liveness_st *l, struct rlive *x, int s)
{
    if (!x->q.ok)
        return;
    lh_push(l, &x->q, s);
    if (x->q.n > 2 * x->nhold + 16) {
        x->q.n = 0;
        x->q.ok = 0;
    }
}

/* Contract: x->served_until from its holders: the capacity-th latest
 * lease, NONE with fewer holders. Up to LH_WALK holders, one walk keeping
 * the capacity latest leases seen, in order (a semaphore's capacity is
 * small), and x's heap let go; past them, from x's heap (made from the
 * holders when it was let go: grants never released pile up, and a walk
 * at every holder that leaves took the square of their number): the stale
 * entries on top dropped, then the capacity - 1 latest taken off, the
 * next one read and those put back. */
static void served_update(struct liveness_st *l, struct rlive *x)
{
    int cap = l->cap;
    struct lheap *q = &x->q;
    if (x->nhold < cap || x->nhold <= LH_WALK) {
        q->n = 0;
        q->ok = 0;
        if (x->nhold < cap) {
            x->served_until = NONE;
            return;
        }
        int64_t one, *top = cap == 1 ? &one : l->top; /* descending, cap of them */
        int n = 0;
        for (int k = 0; k < x->nhold; k++) {
            int64_t v = l->pool[x->hold[k]].lease;
            if (n == cap && v <= top[n - 1])
                continue;
            int j = n < cap ? n++ : n - 1;
            for (; j > 0 && top[j - 1] < v; j--)
                top[j] = top[j - 1];
            top[j] = v;
        }
        x->served_until = top[cap - 1];
        return;
    }
    if (!q->ok) { /* made from the holders, heap order in one sweep up */
        if (q->cap < x->nhold) {
            q->cap = 2 * x->nhold;
            q->a = xrealloc(q->a, (size_t)q->cap * sizeof(*q->a));
        }
        for (int k = 0; k < x->nhold; k++) {
            int s = x->hold[k];
            q->a[k] = (struct lhent){l->pool[s].lease, (uint32_t)s, l->pool[s].gen};
        }
        q->n = x->nhold;
        for (int i = q->n / 2 - 1; i >= 0; i--)
            lh_down(q, i);
        q->ok = 1;
    }
    /* every holder has one entry that is not stale: nhold >= cap of them */
    int taken = 0;
    for (;;) {
        const struct lholder *h = &l->pool[q->a[0].slot];
        if (h->gen != q->a[0].gen || h->lease != q->a[0].lease) {
            lh_pop(q);
            continue;
        }
        if (taken == cap - 1)
            break;
        l->tops[taken++] = q->a[0];
        lh_pop(q);
    }
    x->served_until = q->a[0].lease;
    while (taken > 0) { /* back in, not stale (lh_push reads them from the pool) */
        int s = (int)l->tops[--taken].slot;
        lh_push(l, q, s);
    }
}

/* Contract: served_update's answer after lease was added to x's holders
 * (a new holder, or a holder's lease raised to it), without walking them
 * where the capacity is 1: the latest lease only grows then (from NONE,
 * which x->served_until is from the resource's first event on). */
static void served_raise(struct liveness_st *l, struct rlive *x, int64_t lease)
{
    if (l->cap == 1) {
        if (lease > x->served_until)
            x->served_until = lease;
        return;
    }
    served_update(l, x);
}

/* Contract: served_update's answer after a holder whose lease was `lease`
 * left x's holders: asked again only when it may have been the latest. */
static void served_drop(struct liveness_st *l, struct rlive *x, int64_t lease)
{
    if (l->cap == 1 && x->nhold >= 1 && lease < x->served_until)
        return;
    served_update(l, x);
}

/* The resource's state before an event at t of a worker's holders. */
static struct rlive *touch(struct liveness_st *l, int res, int64_t t)
{
    struct rlive *x = &l->rl[res];
    advance(l, x, res, t);
    if (res >= l->maxres)
        l->maxres = res + 1;
    return x;
}

/* Contract: holder s leaves x's holders (the last one takes its place)
 * and the pool (its heap entries stale from now on). */
static void holder_leave(struct liveness_st *l, struct rlive *x, int s)
{
    struct lholder *h = &l->pool[s];
    int64_t gone = h->lease;
    int last = x->hold[--x->nhold];
    x->hold[h->pos] = last;
    l->pool[last].pos = h->pos;
    h->gen++;
    h->pos = l->pool_free;
    l->pool_free = s;
    served_drop(l, x, gone);
}

/* Contract: a grant holds res from t with `lease`; holder `old` (a grant
 * never entered it replaces, -1: none) leaves at the same instant. Returns
 * the new holder's slot. */
static int holder_add(struct liveness_st *l, int old, int res, int64_t t, int64_t lease)
{
    struct rlive *x = touch(l, res, t);
    if (old >= 0)
        holder_leave(l, x, old);
    int s = l->pool_free;
    if (s >= 0) {
        l->pool_free = l->pool[s].pos;
    } else {
        if (l->npool == l->pool_cap) {
            l->pool_cap = l->pool_cap ? 2 * l->pool_cap : 64;
            l->pool = xrealloc(l->pool, (size_t)l->pool_cap * sizeof(*l->pool));
        }
        s = l->npool++;
        l->pool[s].gen = 0;
    }
    if (x->nhold == x->hold_cap) {
        x->hold_cap = x->hold_cap ? 2 * x->hold_cap : 2;
        x->hold = xrealloc(x->hold, (size_t)x->hold_cap * sizeof(*x->hold));
    }
    l->pool[s].lease = lease;
    l->pool[s].pos = x->nhold;
    x->hold[x->nhold++] = s;
    lh_note(l, x, s);
    served_raise(l, x, lease);
    return s;
}

/* Contract: holder s of res leaves at t. */
static void holder_remove(struct liveness_st *l, int s, int res, int64_t t)
{
    holder_leave(l, touch(l, res, t), s);
}

/* Contract: worker w's grants of res have their lease raised to `lease`
 * at t (those with a lease, to a later one): its own grants are visited,
 * not the resource's holders. */
static void holder_renew(struct liveness_st *l, const struct wcount *w, int res, int64_t t,
                         int64_t lease)
{
    struct rlive *x = touch(l, res, t);
    int raised = 0; /* its grants of res, in the walk's order: */
    int n = w->ix.tab ? keyslots_sorted(&w->ix, (uint16_t)res, w->nheld / 16, &l->kbuf, &l->kcap)
                      : -1;
    if (n < 0) {
        n = 0;
        for (int j = 0; j < w->nheld; j++)
            if (w->held[j].res == res) {
                if (n == l->kcap) {
                    l->kcap = l->kcap ? 2 * l->kcap : 16;
                    l->kbuf = xrealloc(l->kbuf, (size_t)l->kcap * sizeof(*l->kbuf));
                }
                l->kbuf[n++] = j;
            }
    }
    for (int i = 0; i < n; i++) {
        int j = l->kbuf[i];
        struct lholder *h = &l->pool[w->held[j].slot];
        if (h->lease != LEASE_NEVER && lease > h->lease) {
            h->lease = lease;
            lh_note(l, x, w->held[j].slot);
            raised = 1;
        }
    }
    if (raised) /* else nothing changed */
        served_raise(l, x, lease);
}

static int by_kind(const void *a, const void *b)
{
    const struct lev *x = a, *y = b;
    return (x->kind > y->kind) - (x->kind < y->kind);
}

/* Contract: sweep the batch (one instant) in (kind, arrival) order: an
 * invoke at a grant's instant waited for that grant, and a crash at a
 * grant's instant is not followed by it. Arrival order is worker order,
 * then log order. */
static void flush(struct liveness_st *l)
{
    struct lev *b = l->batch;
    if (l->nbatch > 1) /* usually one or two; a coarse clock's instants hold thousands */
        stable_sort(b, l->nbatch, sizeof(*b), by_kind);
    for (size_t i = 0; i < l->nbatch; i++) {
        const struct lev *e = &b[i];
        struct rlive *x = &l->rl[e->res];
        advance(l, x, e->res, e->t);
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

/* Contract: a waiter of resource r seen at t: its time held back before t
 * was a wait (its longest stretches count now); the time from t on is
 * held back once no attempt is in flight (advance: accounted later, with
 * wait_seen then t and the attempts in flight as they are after t). */
static void wait_seen(struct liveness_st *l, int r, int64_t t)
{
    struct rlive *x = &l->rl[r];
    if (x->thas) {
        for (int k = WK_HELD; k <= WK__N; k++)
            if (x->thas & 1u << k) {
                x->thas &= ~(1u << k);
                longest_note(l, x, r, k, k == WK__N ? x->tuns : x->tlong[k], NONE);
            }
    }
    if (x->snapped) {
        for (int k = 0; k < WK__N; k++)
            x->tent[k] = 0;
        x->snapped = 0;
    }
    if (!x->waited || t > x->wait_seen)
        x->wait_seen = t;
    x->waited = 1;
}

/* Contract: worker w's attempt record of res at t (invoke: a new attempt;
 * else its outcome) noted: the latest instant a waiter of res was seen,
 * and the attempts with no outcome yet. A worker's attempt of res ends at
 * its outcome, its next invoke of res or its crash; one with no end waited
 * until the run's end (a worker may try several resources at once: an
 * attempt of another resource ends none). */
static inline void wait_note(struct liveness_st *l, struct wcount *w, int res, int64_t t,
                             int invoke)
{
    wait_seen(l, res, t);
    int j = 0;
    while (j < w->npend && w->pend[j] != res)
        j++;
    if (j < w->npend) { /* its attempt of res ends here */
        l->rl[res].inflight--;
        w->pend[j] = w->pend[--w->npend];
    }
    if (invoke) {
        if (w->npend == w->pend_cap) {
            w->pend_cap = w->pend_cap ? 2 * w->pend_cap : 2;
            w->pend = xrealloc(w->pend, (size_t)w->pend_cap * sizeof(*w->pend));
        }
        w->pend[w->npend++] = res;
        l->rl[res].inflight++;
    }
}

static void liveness_event(void *st, int wi, const struct ev_rec *r)
{
    struct liveness_st *l = st;
    struct wcount *w = &l->wc[wi];
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        l->attempts++;
        w->attempts++;
        wait_note(l, w, r->res, r->t, 1);
        push_lev(l, r->t, r->res, KIND_INVOKE);
        break;
    case EV_ACQUIRE_OK: {
        w->grants++;
        wait_note(l, w, r->res, r->t, 0);
        push_lev(l, r->t, r->res, KIND_GRANT);
        /* a grant replaces the worker's grant of res never entered, in its
         * place (as checkers/mutex.c does): that one has no release to come */
        int j = w->unentered ? held_next(w, r->res, 0, -1) : w->nheld;
        if (j == w->nheld) {
            j = held_push(w, r->res);
            w->unentered++;
        }
        w->held[j].slot = holder_add(l, w->held[j].slot, r->res, r->t,
                                     (r->flags & EVF_NO_LEASE) ? LEASE_NEVER : r->valid_until);
        break;
    }
    case EV_ENTER: /* the latest grant of res never entered, as checkers/mutex.c */
        if (w->unentered) {
            int j = held_last_unentered(w, r->res);
            if (j >= 0) {
                w->held[j].entered = 1;
                w->unentered--;
            }
        }
        break;
    case EV_ACQUIRE_BUSY:
        l->busy++;
        wait_note(l, w, r->res, r->t, 0);
        break;
    case EV_ACQUIRE_FAIL:
        l->failed++;
        wait_note(l, w, r->res, r->t, 0);
        break;
    case EV_ACQUIRE_UNKNOWN:
        l->unknown++;
        wait_note(l, w, r->res, r->t, 0);
        break;
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
    case EV_LOST:
    {
        int j = held_next(w, r->res, -1, -1);
        if (j < w->nheld) {
            int s = w->held[j].slot;
            held_drop(w, j);
            if (l->nbatch && r->t != l->batch_t)
                flush(l);
            holder_remove(l, s, r->res, r->t);
        }
        break;
    }
    case EV_RENEW_OK:
        if (l->nbatch && r->t != l->batch_t)
            flush(l);
        holder_renew(l, w, r->res, r->t, (r->flags & EVF_NO_LEASE) ? LEASE_NEVER : r->valid_until);
        break;
    case EV_CRASH: /* the resources it had a grant of when it crashed */
        while (w->npend) /* its attempts ended here */
            wait_note(l, w, w->pend[w->npend - 1], r->t, 0);
        for (int j = 0; j < w->nheld; j++) {
            push_lev(l, r->t, w->held[j].res, KIND_CRASH);
            holder_remove(l, w->held[j].slot, w->held[j].res, r->t);
            l->ncrash++;
        }
        w->nheld = 0;
        w->unentered = 0;
        keyslots_free(&w->ix);
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
    struct liveness_st *l = xcalloc_lines(1, sizeof(*l));
    l->h = h;
    l->p = p;
    l->nres = h->nres;
    l->rl = xcalloc(65536, sizeof(*l->rl)); /* untouched pages cost nothing */
    l->wc = xcalloc_lines((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*l->wc));
    l->crash_max = -1;
    l->longest_res = -1;
    l->cap = p->capacity > 0 ? p->capacity : 1;
    if (l->cap > 1) {
        l->top = xcalloc_lines((size_t)l->cap, sizeof(*l->top)); /* written at every grant */
        l->tops = xcalloc_lines((size_t)l->cap, sizeof(*l->tops));
    }
    l->pool_free = -1;
    for (int k = 0; k < WK__N; k++)
        l->wait_longest_res[k] = -1;
    l->unserved_res = -1;
    return l;
}

/* Contract: when x's wait still open at the run's end (first_wait set)
 * ended: `end` while an attempt is in flight (a worker blocked in its
 * acquire waited until the run's end), else its waiters' last attempt
 * record. Workers that stopped trying (the run's duration over, a program
 * gone) wait no more: the run's end can be later (its stop, a grace). */
static int64_t wait_end(const struct rlive *x, int64_t end)
{
    if (x->first_wait == NONE || x->inflight > 0 || !x->waited)
        return end;
    int64_t seen = x->wait_seen > x->first_wait ? x->wait_seen : x->first_wait;
    return seen < end ? seen : end;
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
        int64_t stall = wait_end(x, h->end) - x->first_wait;
        if (stall < 0)
            stall = 0;
        if (stall > longest || longest_res < 0) {
            longest = stall;
            longest_res = r;
        }
        x->open_stall = stall;
    }
    /* The waits up to the run end; an unserved wait still open then, of at
     * least stuck_after, is a stuck resource (a wait behind a holder inside
     * its lease is not: the lock does what it promised). */
    int nacct = nres > ls->maxres ? nres : ls->maxres;
    for (int r = 0; r < nacct && r < 65536; r++) {
        struct rlive *x = &rl[r];
        if (!x->acct)
            continue;
        int64_t end = h->end > x->acct_t ? h->end : x->acct_t;
        if (held_back(x, x->wait_seen)) {
            /* its last wait ended at its last attempt record: what was
             * held back after it was no wait; the stretches going on then
             * end there */
            end = x->wait_seen;
            if (x->snapped) {
                for (int k = 0; k < WK__N; k++)
                    ls->wait_total[k] -= x->tent[k];
                x->thas = 0;
                x->cur_kind = x->snap_kind;
                x->cur_start = x->snap_start;
                x->unserved_start = x->snap_uns;
            } else {
                advance(ls, x, r, end);
            }
        } else {
            advance(ls, x, r, end);
        }
        stretch_close(ls, x, r, end);
        x->open_stall = x->unserved_start != NONE && x->first_wait != NONE
                            ? end - x->unserved_start : 0;
        unserved_close(ls, x, r, end);
        if (x->open_stall >= p->stuck_after && x->open_stall > 0 && !x->stuck_why) {
            x->stuck_why = ""; /* open unserved wait: reason built below */
            if (r >= nres)
                nres = r + 1;
        }
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
            snprintf(why, sizeof(why), "no grant for the last %.0f ms while workers waited "
                     "and no holder had a valid lease", ns_ms(rl[r].open_stall));
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
    /* the waits split by what the waiters waited behind (docs/checkers.md "Waits") */
    static const char *const wk_names[WK__N] = {NULL, "held", "free", "expired"};
    struct json *wt = json_obj_set(l, "waits", json_new_obj());
    for (int k = WK_HELD; k < WK__N; k++) {
        struct json *o = json_obj_set(wt, wk_names[k], json_new_obj());
        __int128 tot = ls->wait_total[k]; /* past int64 (292 years summed): saturated */
        json_obj_set_num(o, "total_ms", ns_ms(tot > INT64_MAX ? INT64_MAX : tot < INT64_MIN ? INT64_MIN : (int64_t)tot));
        json_obj_set_num(o, "longest_ms", ns_ms(ls->wait_longest[k]));
        int wr = ls->wait_longest_res[k];
        json_obj_set(o, "longest_resource", wr >= 0 && ls->wait_longest[k] > 0
                                                ? json_new_str(check_res_name(h, wr))
                                                : json_new_null());
    }
    json_obj_set_num(l, "longest_unserved_wait_ms", ns_ms(ls->unserved_longest));
    json_obj_set(l, "longest_unserved_wait_resource",
                 ls->unserved_res >= 0 && ls->unserved_longest > 0
                     ? json_new_str(check_res_name(h, ls->unserved_res))
                     : json_new_null());
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

    for (int i = 0; i < h->nworkers; i++) {
        free(wc[i].held);
        free(wc[i].pend);
        keyslots_free(&wc[i].ix);
    }
    free(ls->kbuf);
    for (int r = 0; r < ls->maxres; r++) {
        free(rl[r].hold);
        free(rl[r].q.a);
    }
    free(rl);
    free(wc);
    free(ls->batch);
    free(ls->top);
    free(ls->tops);
    free(ls->pool);
    free(ls);
    return verdict;
}

const struct checker_def liveness_checker = {
    {"liveness",
     PASS_TYPE(EV_ACQUIRE_INVOKE) | PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_ENTER) | PASS_TYPE(EV_ACQUIRE_BUSY) |
         PASS_TYPE(EV_ACQUIRE_FAIL) | PASS_TYPE(EV_ACQUIRE_UNKNOWN) | PASS_TYPE(EV_RELEASE_OK) |
         PASS_TYPE(EV_RELEASE_NOT_OWNER) | PASS_TYPE(EV_RELEASE_FAIL) | PASS_TYPE(EV_LOST) |
         PASS_TYPE(EV_CRASH) | PASS_TYPE(EV_RENEW_OK),
     liveness_event, NULL, liveness_end, 88},
    liveness_init, liveness_finish, NULL};

int check_liveness(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&liveness_checker, h, p, res);
}
