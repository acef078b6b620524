/*
 * mutex.c: the mutual-exclusion checker (docs/checkers.md "mutex", semantics
 * in docs/checkers.md "Overlap semantics"), a consumer of the merged pass
 * (pass.h). Each worker's grant -> enter -> exit/crash records rebuild its
 * holds; at every entry of a hold of positive length the resource's holds
 * strictly active are counted, and an entry that finds `capacity` of them
 * is a violation, classified stale-holder or lock-broken by the leases the
 * earlier holders had at the later grant (as they stood then: each grant
 * keeps the raises of its lease that a later grant may still ask about:
 * lease_at), and grouped with the others of the same cause (the
 * earliest-entered active hold) into an incident. A violation stays
 * pending until all its holds have ended (their exits decide its overlap:
 * a listed one keeps its holders, any other only counts, struct uviol),
 * an incident until its cause has ended and its violations are resolved,
 * so the state is the open holds plus what is pending, never the history
 * and never a pair of holds. Beside overlaps it
 * classifies each `lost` (lease left or expired) and finds renewals that
 * succeed after the lease ran out while another grant holds the lock
 * (renewed-after-loss, docs/checkers.md). It never asks the lock and never
 * invents an overlap from a missing record. Its pairing is the pass's only
 * one: it tells a listener (pass.h "hold listener": the charts' series)
 * each hold as it ends. The violations and incidents, pending until their
 * holds have ended, are in mutex_viol.c, a resource's live grants by grant
 * instant (once they are many: what a renewal and a lease's trim ask of
 * them) in mutex_live.c (shared structures: mutex_int.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/checkutil.h"
#include "checkers/liveix.h"
#include "checkers/mutex_int.h"
#include "util/stsort.h"
#include "util/xalloc.h"

enum { AN_RAL, AN_LOST_LEFT, AN_LOST_EXPIRED };
static const char *const an_names[] = {"renewed-after-loss", "lost-with-lease-left", "expired"};

#define POOL_CHUNK 1024

static inline struct hold *hold_new(struct mutex_st *m)
{
    if (!m->free_list) {
        struct hold *c = xcalloc(POOL_CHUNK, sizeof(*c));
        m->chunks = xrealloc(m->chunks, (m->nchunks + 1) * sizeof(*m->chunks));
        m->chunks[m->nchunks++] = c;
        for (int i = POOL_CHUNK - 1; i >= 0; i--) {
            c[i].next_free = m->free_list;
            m->free_list = &c[i];
        }
    }
    struct hold *x = m->free_list;
    m->free_list = x->next_free;
    memset(x, 0, sizeof(*x));
    x->refs = 1;
    return x;
}

static void push_ptr(struct hold ***a, int *n, int *cap, struct hold *x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        *a = xrealloc(*a, (size_t)*cap * sizeof(**a));
    }
    (*a)[(*n)++] = x;
}

static int64_t lease_of(const struct ev_rec *r)
{
    return (r->flags & EVF_NO_LEASE) ? LEASE_NEVER : r->valid_until;
}

/* Leases as they stood. A grant is judged by the leases the resource's
 * other live grants had at its instant (renewals before it count, those
 * at it do not: docs/checkers.md "Classification"). Each grant keeps the
 * raises of its lease (struct raise) that a grant made since it joined may
 * still ask about, and when it joined; no grant keeps a copy of the
 * others' leases. (A copy per grant made a history whose holds never end
 * keep one entry per pair of grants: 200 MB for 5,000 enters without an
 * exit.) */

/* Contract: the index of x's first raise at or after instant T (nraises:
 * none). */
static int raise_from(const struct hold *x, int64_t T)
{
    int lo = 0, hi = x->nraises;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (x->raises[mid].t < T)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Contract: x's lease as it stood at instant T (x's raises before T, not
 * those at or after it). */
static int64_t lease_at(const struct hold *x, int64_t T)
{
    int i = raise_from(x, T);
    return i < x->nraises ? x->raises[i].before : x->lease;
}

/* Contract: was x one of the live grants H's grant took the leases of: in
 * the resource's live list before H joined it, not gone by then, and
 * granted before H's instant (not at it)? */
static int took_lease_of(const struct hold *H, const struct hold *x)
{
    return x->join < H->join && !(x->gone && x->gone_at < H->join) &&
           x->acquired != H->acquired;
}

/* Contract: the lease hold x had at H's grant, as it stood then; x's own
 * grant lease when H's grant did not take x's (x granted at or after that
 * instant, or gone by then). */
static int64_t lease_at_grant(const struct hold *H, const struct hold *x)
{
    return took_lease_of(H, x) ? lease_at(x, H->acquired) : x->lease0;
}

/* Contract: x is no longer a live grant, from t on. */
static void set_gone(struct mutex_st *m, struct hold *x, int64_t t)
{
    x->gone = 1;
    x->end_t = t;
    x->gone_at = m->joins;
    if (x->in_live) {
        struct rstate *r = &m->rs[x->res];
        r->live_gone++;
        if (__builtin_expect(r->ix != NULL, 0))
            mutex_live_gone(r, x);
    }
}

/* Contract: keep[i] set for the raise of x a grant at instant T reads. */
static void mark_raise(const struct hold *x, char *keep, int64_t T)
{
    int i = raise_from(x, T);
    if (i < x->nraises)
        keep[i] = 1;
}

/* Contract: keep of x's raises only those a grant may still ask about:
 * for each grant of x's resource that joined after x and may still be
 * asked (a live grant, an active hold, an entry of the current instant),
 * and for any grant yet to come (at now or later), the first raise at or
 * after its instant (lease_at reads no other). So x keeps at most one
 * raise per such grant, and one for now. With many live grants, through
 * their index (mutex_live_marks: a walk at every few raises took the
 * square of the live grants when they renew again and again). */
static __attribute__((noinline)) void raises_trim(struct mutex_st *m, struct hold *x, int64_t now)
{
    struct rstate *r = &m->rs[x->res];
    char *keep = xcalloc((size_t)x->nraises, 1);
    mark_raise(x, keep, now);
    int by_ix = (r->ix || r->nlive >= LIVE_INDEXED_FROM) && mutex_live_marks(r, x, keep);
    for (int k = 0; k < r->nlive && !by_ix; k++)
        if (r->live[k]->join > x->join)
            mark_raise(x, keep, r->live[k]->acquired);
    for (int k = 0; k < r->n && !by_ix; k++)
        if (r->active[k]->join > x->join)
            mark_raise(x, keep, r->active[k]->acquired);
    for (int k = 0; k < m->nbatch && !by_ix; k++)
        if (m->batch[k]->res == x->res && m->batch[k]->join > x->join)
            mark_raise(x, keep, m->batch[k]->acquired);
    int kept = 0;
    for (int i = 0; i < x->nraises; i++)
        if (keep[i])
            x->raises[kept++] = x->raises[i];
    x->nraises = kept;
    free(keep);
    if (x->raises_cap > 8 && kept < x->raises_cap / 4) { /* the askers that kept it are gone */
        x->raises_cap /= 2;
        x->raises = xrealloc(x->raises, (size_t)x->raises_cap * sizeof(*x->raises));
    }
}

static int he_above(const struct hent *a, const struct hent *b)
{
    return a->key > b->key || (a->key == b->key && a->tie < b->tie);
}

static void hh_down(struct hheap *q, int i)
{
    struct hent e = q->a[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && he_above(&q->a[c + 1], &q->a[c]))
            c++;
        if (!he_above(&q->a[c], &e))
            break;
        q->a[i] = q->a[c];
        i = c;
    }
    q->a[i] = e;
}

/* Contract: x into q under key, tie, referenced. */
static void hh_push(struct hheap *q, int64_t key, uint64_t tie, struct hold *x)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 8;
        q->a = xrealloc(q->a, (size_t)q->cap * sizeof(*q->a));
    }
    struct hent e = {key, tie, x};
    int i = q->n++;
    for (; i > 0 && he_above(&e, &q->a[(i - 1) / 2]); i = (i - 1) / 2)
        q->a[i] = q->a[(i - 1) / 2];
    q->a[i] = e;
    x->refs++;
}

/* Contract: q's top let go. */
static void hh_pop(struct mutex_st *m, struct hheap *q)
{
    struct hold *x = q->a[0].x;
    q->a[0] = q->a[--q->n];
    if (q->n)
        hh_down(q, 0);
    mutex_hold_unref(m, x);
}

/* Contract: q let go, to be made again when next asked, when its entries
 * are more than twice the live holds they stand for. */
static void hh_trim(struct mutex_st *m, struct hheap *q, int live)
{
    if (q->n <= 16 || q->n <= 2 * live)
        return;
    for (int k = 0; k < q->n; k++)
        mutex_hold_unref(m, q->a[k].x);
    q->n = 0;
    q->ok = 0;
}

/* Contract: raise x's lease to l (a renew_ok at t), keeping what it was
 * before t (one raise per instant: the first one's "before"). */
static void lease_raise(struct mutex_st *m, struct hold *x, int64_t l, int64_t t)
{
    if (x->lease == LEASE_NEVER || l <= x->lease)
        return;
    if (!x->nraises || x->raises[x->nraises - 1].t != t) {
        if (x->nraises == x->raises_cap) {
            if (x->raises_cap >= 4)
                raises_trim(m, x, t);
            if (x->nraises == x->raises_cap) {
                x->raises_cap = x->raises_cap ? 2 * x->raises_cap : 2;
                x->raises = xrealloc(x->raises, (size_t)x->raises_cap * sizeof(*x->raises));
            }
        }
        x->raises[x->nraises++] = (struct raise){t, x->lease};
    }
    x->lease = l;
    if (x->ser && !x->done) { /* active: its resource's leases hear of it */
        struct rstate *r = &m->rs[x->res];
        if (r->lh.ok) {
            hh_push(&r->lh, l, 0, x); /* its entry with the lease before is stale now */
            hh_trim(m, &r->lh, r->n - r->ndead);
        }
    }
}

/* Contract: drop from r's live list the grants gone before t (an end at t
 * stays until time moves on: a renewal at that instant still falls in it)
 * once they are half of it and time has moved on since the last purge (a
 * walk at every grant took the square of the live grants when they never
 * end: a gone grant left in the list only keeps memory longer, every
 * reader of the list skips it or keeps more of a lease's raises; its
 * index, if it has one, is let go at the join that follows and made again
 * when a renewal next asks: mutex_live_joined). */
static void live_purge(struct mutex_st *m, struct rstate *r, int64_t t);

/* Contract: H (a new grant of its resource at T) joins its live grants. */
static inline void live_join(struct mutex_st *m, struct rstate *r, struct hold *H, int64_t T)
{
    live_purge(m, r, T);
    H->join = ++m->joins;
    push_ptr(&r->live, &r->nlive, &r->live_cap, H);
    H->in_live = 1;
    H->refs++;
    if (__builtin_expect(r->ix != NULL, 0))
        mutex_live_joined(r, H);
}

static void live_purge(struct mutex_st *m, struct rstate *r, int64_t t)
{
    if (r->live_gone * 2 <= r->nlive || (r->purged_t == t && r->nlive))
        return;
    r->purged_t = t;
    int kept = 0;
    for (int k = 0; k < r->nlive; k++) {
        struct hold *y = r->live[k];
        if (y->gone && y->end_t < t) {
            y->in_live = 0;
            r->live_gone--;
            mutex_hold_unref(m, y);
        } else {
            r->live[kept++] = y;
        }
    }
    r->nlive = kept;
}

/* Contract: r's active list without the holds that have ended (their
 * references let go), in entry order. */
static void active_close_up(struct mutex_st *m, struct rstate *r)
{
    int kept = 0;
    for (int k = 0; k < r->n; k++) {
        struct hold *x = r->active[k];
        if (x->done)
            mutex_hold_unref(m, x);
        else
            r->active[kept++] = x;
    }
    r->n = kept;
    r->ndead = 0;
    r->head = 0;
}

/* Contract: hold x has just ended: leave its resource's active list (its
 * exit is now the latest seen there, unless a later one was), and resolve
 * the pending violations that only waited for it. */
static void hold_ended(struct mutex_st *m, struct hold *x)
{
    x->done = 1;
    m->holds++;
    struct pviol **pv = x->pv; /* taken first: x may be let go below */
    int npv = x->npv;
    int res = x->res;
    uint64_t ser = x->ser;
    int64_t exit = x->exit;
    x->pv = NULL;
    x->npv = x->pvcap = 0;
    if (!x->batched && ser) { /* in the active list (flush put it there): ended there */
        struct rstate *r = &m->rs[x->res];
        r->ndead++;
        if (!r->has_exit || x->exit > r->last_exit)
            r->last_exit = x->exit;
        r->has_exit = 1;
        hh_trim(m, &r->gh, r->n - r->ndead); /* x may be let go from here on */
        hh_trim(m, &r->lh, r->n - r->ndead);
        if (r->ndead > 16 && r->ndead > r->n / 2)
            active_close_up(m, r);
    }
    /* the pending violations that name it, in the order they were made
     * (the order of m->pend): those it was the last of are resolved */
    for (int i = 0; i < npv; i++) {
        struct pviol *v = pv[i];
        if (--v->undone == 0) {
            m->pend[v->at] = NULL;
            m->pend_gone++;
            mutex_resolve(m, v);
        }
    }
    free(pv);
    if (ser) /* it was active: the unlisted violations made since it entered are its too */
        mutex_unlisted_heard(m, res, ser, exit);
    if (m->pend_gone > 64 && m->pend_gone > m->npend / 2) { /* close the gaps, in order */
        int kept = 0;
        for (int i = 0; i < m->npend; i++)
            if (m->pend[i]) {
                m->pend[i]->at = kept;
                m->pend[kept++] = m->pend[i];
            }
        m->npend = kept;
        m->pend_gone = 0;
    }
}

/* Contract: the first active hold (entry order) with the latest grant of
 * those that had one, NULL none. */
static struct hold *active_gmax(struct mutex_st *m, struct rstate *r)
{
    struct hheap *q = &r->gh;
    if (!q->ok) {
        for (int k = 0; k < r->n; k++)
            if (!r->active[k]->done && !(r->active[k]->flags & HF_NO_GRANT))
                hh_push(q, r->active[k]->acquired, r->active[k]->ser, r->active[k]);
        q->ok = 1;
    }
    while (q->n && q->a[0].x->done)
        hh_pop(m, q);
    return q->n ? q->a[0].x : NULL;
}

/* Contract: the latest lease of r's active holds, INT64_MIN none. */
static int64_t active_lease_hi(struct mutex_st *m, struct rstate *r)
{
    struct hheap *q = &r->lh;
    if (!q->ok) {
        for (int k = 0; k < r->n; k++)
            if (!r->active[k]->done)
                hh_push(q, r->active[k]->lease, 0, r->active[k]);
        q->ok = 1;
    }
    while (q->n && (q->a[0].x->done || q->a[0].key != q->a[0].x->lease))
        hh_pop(m, q);
    return q->n ? q->a[0].key : INT64_MIN;
}

static int batch_cmp(const void *pa, const void *pb)
{
    const struct hold *a = *(struct hold *const *)pa, *b = *(struct hold *const *)pb;
    return a->res != b->res ? (a->res > b->res) - (a->res < b->res)
                            : (a->worker > b->worker) - (a->worker < b->worker);
}

/* Contract: judge the entries of the batch (all at batch_t) in (resource,
 * worker id) order, after every exit and crash at that instant and every
 * log that ended then: a hold that ended at batch_t is not active, touching
 * is fine. A hold entering with `capacity` holds strictly active (entered
 * earlier, or earlier in this order, and not ended) is a violation, unless
 * it has zero length (entered and ended at batch_t: it overlaps nothing).
 * So at an instant with A holds strictly active and B entering with
 * positive length there are max(0, A + B - max(A, capacity)) violations.
 * Its cause is the first of the active list (entry order). Any entry that
 * is no violation is a near miss when the latest exit of the resource's
 * ended holds (zero-length ones earlier in this order included) is at most
 * near_miss before it. */
static void flush(struct mutex_st *m)
{
    if (m->nbatch > 1) /* usually one entry; a coarse clock's instants hold thousands */
        stable_sort(m->batch, (size_t)m->nbatch, sizeof(*m->batch), batch_cmp);
    for (int i = 0; i < m->nbatch; i++) {
        struct hold *H = m->batch[i];
        struct rstate *r = &m->rs[H->res];
        H->batched = 0;
        if (!H->done)
            H->ser = ++r->ser;
        int nact = r->n - r->ndead;
        if (!H->done && nact >= m->cap) {
            while (r->active[r->head]->done)
                r->head++;
            struct hold *c = r->active[r->head];
            struct incident *inc = c->inc ? c->inc : mutex_incident_new(m, c);
            if (inc->n++ == 0)
                inc->start = H->enter;
            inc->pending++;
            m->nviol++;
            /* The grant judged is the latest of the holds': H's, unless an
             * active hold was granted after it (H was slow to enter): the
             * first such in entry order (a hold without a grant has no
             * grant to judge) */
            struct hold *g = active_gmax(m, r), *G = g && g->acquired > H->acquired ? g : H;
            if (m->nviol > m->p->max_violations) { /* not listed: no holders kept */
                struct uviol *u = xmalloc(sizeof(*u));
                u->inc = inc;
                u->ov_start = H->enter;
                u->ov_end = 0;
                u->has_end = 0;
                u->ser = H->ser;
                u->valid = 0;
                /* the holds whose lease was valid at G's grant, G's own
                 * aside, counted up to capacity (all its class needs); none
                 * when no lease the others had reaches past that grant (a
                 * lease as it stood then is never more than the hold's
                 * latest; the latest lease of the active holds counts G's
                 * too unless G is H: a bound, not always the answer) */
                int64_t lh = active_lease_hi(m, r), hi = G != H && H->lease > lh ? H->lease : lh;
                for (int k = 0; hi > G->acquired && k <= r->n && u->valid < m->cap; k++) {
                    struct hold *x = k < r->n ? r->active[k] : H;
                    if (x != G && !x->done)
                        u->valid += lease_at_grant(G, x) > G->acquired;
                }
                if (r->nup == r->up_cap) {
                    r->up_cap = r->up_cap ? 2 * r->up_cap : 16;
                    r->up = xrealloc(r->up, (size_t)r->up_cap * sizeof(*r->up));
                    r->up_ser = xrealloc(r->up_ser, (size_t)r->up_cap * sizeof(*r->up_ser));
                }
                r->up_ser[r->nup] = u->ser;
                r->up[r->nup++] = u;
                /* the active holds and H, none ended (capacity of them at least) */
                sufcount_push(&r->uc, nact + 1, nact + 1 - m->cap);
            } else {
                if (r->ndead) /* (only for the listed ones) */
                    active_close_up(m, r);
                struct pviol *v = xmalloc(sizeof(*v) + (size_t)(r->n + 1) * sizeof(v->hs[0]));
                v->n = r->n + 1;
                v->undone = 0;
                v->valid = 0;
                v->lag = xmalloc((size_t)(r->n + 1) * sizeof(*v->lag));
                int latest = r->n;
                for (int k = 0; k < r->n && G != H; k++)
                    if (r->active[k] == G)
                        latest = k;
                v->latest = latest;
                for (int k = 0; k <= r->n; k++) {
                    if (k == v->latest)
                        continue;
                    v->lag[k] = lease_at_grant(G, k < r->n ? r->active[k] : H);
                    v->valid += v->lag[k] > G->acquired;
                }
                v->index = m->nviol - 1;
                v->inc = inc;
                v->obj = json_arr_push(m->viol, json_new_obj());
                for (int k = 0; k < v->n; k++) {
                    struct hold *x = k < r->n ? r->active[k] : H;
                    v->hs[k] = x;
                    x->refs++;
                    x->pending++;
                    v->undone += !x->done;
                }
                if (v->undone == 0)
                    mutex_resolve(m, v);
                else
                    mutex_push_pending(m, v);
            }
        } else if (r->has_exit && H->enter - r->last_exit <= m->p->near_miss) {
            m->near++;
        }
        if (H->done) { /* ended at the instant it entered: zero length */
            if (!r->has_exit || H->exit > r->last_exit)
                r->last_exit = H->exit;
            r->has_exit = 1;
            mutex_hold_unref(m, H);
        } else {
            push_ptr(&r->active, &r->n, &r->cap, H); /* the batch's reference moves here */
            if (r->gh.ok && !(H->flags & HF_NO_GRANT))
                hh_push(&r->gh, H->acquired, H->ser, H);
            if (r->lh.ok)
                hh_push(&r->lh, H->lease, 0, H);
        }
    }
    m->nbatch = 0;
}

/* Contract: remove slot k of s (swap with the last: the search order of
 * the slots is part of the pairing rule), its grant no longer live from t
 * on, and drop its reference. */
static inline void slot_remove(struct mutex_st *m, struct slots *s, int k, int64_t t)
{
    struct hold *x = s->a[k];
    if (!x->gone)
        set_gone(m, x, t);
    if (__builtin_expect(s->ix.tab != NULL, 0)) {
        keyslots_del(&s->ix, k, s->n - 1);
        if (s->n == 1)
            keyslots_free(&s->ix);
    }
    s->a[k] = s->a[--s->n];
    mutex_hold_unref(m, x);
}

/* A worker's grants are searched by resource through an index (util/
 * keyslots.h) once it has this many at once; below, a walk over them is
 * cheaper. Either way a search finds the same position. */
#define SLOTS_INDEXED_FROM 32

/* Contract: s's grants, many now, indexed from here on. */
static __attribute__((noinline)) void slots_index(struct slots *s)
{
    for (int k = 0; k < s->n; k++)
        keyslots_add(&s->ix, k, s->a[k]->res);
}

/* Contract: x appended to s's grants. */
static inline __attribute__((always_inline)) void slot_push(struct slots *s, struct hold *x)
{
    push_ptr(&s->a, &s->n, &s->cap, x);
    if (__builtin_expect(s->ix.tab != NULL, 0))
        keyslots_add(&s->ix, s->n - 1, x->res);
    else if (__builtin_expect(s->n >= SLOTS_INDEXED_FROM, 0))
        slots_index(s);
}

/* The searches below through the index: each as its walk would answer. */
static __attribute__((noinline)) int slot_first_ix(const struct slots *s, int res, int ent)
{
    int best = s->n;
    for (int k = keyslots_head(&s->ix, (uint16_t)res); k >= 0; k = s->ix.nx[k])
        if (k < best && !s->a[k]->entered == !ent)
            best = k;
    return best;
}

static __attribute__((noinline)) int slot_last_unentered_ix(const struct slots *s, int res)
{
    int best = -1;
    for (int k = keyslots_head(&s->ix, (uint16_t)res); k >= 0; k = s->ix.nx[k])
        if (k > best && !s->a[k]->entered)
            best = k;
    return best;
}


/* Contract: the first position in s of a grant of res entered (ent 1) or
 * not (ent 0); s->n none. */
static inline __attribute__((always_inline)) int slot_first(const struct slots *s, int res,
                                                             int ent)
{
    if (__builtin_expect(s->ix.tab != NULL, 0))
        return slot_first_ix(s, res, ent);
    for (int k = 0; k < s->n; k++)
        if (s->a[k]->res == res && !s->a[k]->entered == !ent)
            return k;
    return s->n;
}

/* Contract: the last position in s of a grant of res not entered; -1 none. */
static inline __attribute__((always_inline)) int slot_last_unentered(const struct slots *s,
                                                                      int res)
{
    if (__builtin_expect(s->ix.tab != NULL, 0))
        return slot_last_unentered_ix(s, res);
    int k = s->n - 1;
    while (k >= 0 && (s->a[k]->res != res || s->a[k]->entered))
        k--;
    return k;
}

/* Contract: the positions in s of the grants of res, ascending (as a walk
 * meets them), in m->kbuf; their number. */
static int slots_of(struct mutex_st *m, const struct slots *s, int res)
{
    int n = s->ix.tab ? keyslots_sorted(&s->ix, (uint16_t)res, s->n / 16, &m->kbuf, &m->kcap)
                      : -1;
    if (n >= 0)
        return n;
    n = 0;
    for (int k = 0; k < s->n; k++)
        if (s->a[k]->res == res) {
            if (n == m->kcap) {
                m->kcap = m->kcap ? 2 * m->kcap : 16;
                m->kbuf = xrealloc(m->kbuf, (size_t)m->kcap * sizeof(*m->kbuf));
            }
            m->kbuf[n++] = k;
        }
    return n;
}

/* Contract: hold x of worker index wi ends at t (flag: HF_CRASH, HF_OPEN or
 * 0 for an exit); its listener hears of it first. */
static void end_hold(struct mutex_st *m, struct hold *x, int wi, int64_t t, uint16_t flag)
{
    x->exit = t;
    x->flags |= flag;
    if (m->listen.ended) {
        int kind = (flag & HF_CRASH) ? HOLD_CRASH : (flag & HF_OPEN) ? HOLD_OPEN : HOLD_EXIT;
        struct paired_hold e = {x->acquired, x->enter, t, x->lease, wi, x->worker, x->res, kind};
        m->listen.ended(m->listen.ctx, &e);
    }
    hold_ended(m, x);
}

/* Contract: m->rs covers resource res (a new part zeroed). */
static void rs_grow(struct mutex_st *m, int res)
{
    int n = res + 1 > 2 * m->nrs ? res + 1 : 2 * m->nrs;
    n = n < 65536 ? n : 65536;
    /* on lines of its own, as mutex_init made it (realloc would keep only
     * malloc's 16-byte alignment) */
    struct rstate *rs = xcalloc_lines((size_t)n, sizeof(*rs));
    memcpy(rs, m->rs, (size_t)m->nrs * sizeof(*rs));
    free(m->rs);
    m->rs = rs;
    m->nrs = n;
}

/* Contract: anomaly class c found at t for hold x of worker wid (listed
 * while fewer than max_violations of c are): its listed entry, to fill,
 * or NULL. */
static struct json *anomaly_new(struct mutex_st *m, int c, const struct hold *x, int64_t t)
{
    if (m->nanom_listed[c] >= m->p->max_violations)
        return NULL;
    m->nanom_listed[c]++;
    struct json *o = json_arr_push(m->anom, json_new_obj());
    json_obj_set_str(o, "class", an_names[c]);
    json_obj_set_str(o, "resource", check_res_name(m->h, x->res));
    json_obj_set_int(o, "worker", x->worker);
    json_obj_set(o, "token", json_new_strn(x->token, strnlen(x->token, EVLOG_TOKEN_LEN)));
    json_obj_set_num(o, "t_ms", ns_ms(t));
    json_obj_set_num(o, "acquired_ms", ns_ms(x->acquired));
    return o;
}

static void set_lease_ms(struct json *o, const char *key, int64_t l)
{
    json_obj_set(o, key, l == LEASE_NEVER ? json_new_null() : json_new_num(ns_ms(l)));
}

/* Contract: a renew_ok at t of hold x (its lease not yet raised by it): a
 * renewal after loss when at least `capacity` other grants of the
 * resource, live at t and granted before t, were made when x's lease as
 * it stood then had run out (docs/checkers.md "Renewed after loss"). */
static __attribute__((noinline)) void renewal_check(struct mutex_st *m, struct hold *x,
                                                   const struct ev_rec *r)
{
    if (x->lease == LEASE_NEVER || r->res >= m->nrs)
        return;
    struct rstate *rs = &m->rs[r->res];
    int n = 0;
    const struct hold *first = NULL;
    int64_t ran_out = 0;
    int by_time = (rs->ix || rs->nlive >= LIVE_INDEXED_FROM) &&
                  mutex_live_lapsed(rs, x, r->t, &n, &first, &ran_out);
    for (int k = 0; k < rs->nlive && !by_time; k++) {
        const struct hold *y = rs->live[k];
        int64_t l;
        if (y == x || (y->gone && y->end_t < r->t) || y->acquired >= r->t ||
            !took_lease_of(y, x) || (l = lease_at(x, y->acquired)) > y->acquired)
            continue;
        if (!first) {
            first = y;
            ran_out = l;
        }
        n++;
    }
    if (n < m->cap)
        return;
    m->ral++;
    m->ral_holds += !x->renewed_late;
    x->renewed_late = 1;
    struct json *o = anomaly_new(m, AN_RAL, x, r->t);
    if (!o)
        return;
    set_lease_ms(o, "lease_ran_out_ms", ran_out);
    set_lease_ms(o, "renewed_until_ms", lease_of(r));
    json_obj_set_bool(o, "auto", (r->flags & EVF_AUTO) != 0);
    struct json *oh = json_obj_set(o, "other", json_new_obj());
    json_obj_set_int(oh, "worker", first->worker);
    json_obj_set(oh, "token", json_new_strn(first->token, strnlen(first->token, EVLOG_TOKEN_LEN)));
    json_obj_set_num(oh, "acquired_ms", ns_ms(first->acquired));
    json_obj_set_int(o, "others", n);
}

/* Contract: a `lost` at t for worker slots s on resource res: the grant it
 * names (the token's, else the resource's; else the last exited hold's)
 * classified by its lease as last granted or renewed; a grant without
 * expiry has no lease to have left or run out: no_lease, no anomaly. */
static void lost_classify(struct mutex_st *m, struct slots *s, const struct ev_rec *r)
{
    struct hold *x = NULL;
    int n = slots_of(m, s, r->res);
    for (int i = 0; i < n && !x; i++)
        if (memcmp(s->a[m->kbuf[i]]->token, r->token, EVLOG_TOKEN_LEN) == 0)
            x = s->a[m->kbuf[i]];
    if (!x && n)
        x = s->a[m->kbuf[0]];
    if (!x && s->exited && s->exited->res == r->res)
        x = s->exited;
    if (!x) {
        m->lost_unmatched++;
        return;
    }
    if (x->lease == LEASE_NEVER) {
        m->lost_no_lease++;
        return;
    }
    int left = x->lease > r->t;
    if (left)
        m->lost_left++;
    else
        m->lost_expired++;
    struct json *o = anomaly_new(m, left ? AN_LOST_LEFT : AN_LOST_EXPIRED, x, r->t);
    if (o) {
        set_lease_ms(o, "valid_until_ms", x->lease);
        json_obj_set_num(o, "lease_left_ms", ns_ms(x->lease - r->t));
    }
}

static void exited_clear(struct mutex_st *m, struct slots *s)
{
    if (s->exited)
        mutex_hold_unref(m, s->exited);
    s->exited = NULL;
}

static void mutex_event(void *st, int wi, const struct ev_rec *r)
{
    struct mutex_st *m = st;
    if (m->nbatch && r->t != m->batch_t)
        flush(m);
    struct slots *s = &m->ws[wi];
    int res = r->res, k;
    switch (r->type) {
    case EV_ACQUIRE_OK: {
        if (res >= m->nrs)
            rs_grow(m, res);
        if (s->exited && s->exited->res == res)
            exited_clear(m, s);
        k = slot_first(s, res, 0);
        struct hold *x = hold_new(m);
        x->id = ++m->next_id;
        x->acquired = r->t;
        x->lease = x->lease0 = lease_of(r);
        memcpy(x->token, r->token, EVLOG_TOKEN_LEN);
        x->fence = r->fence;
        x->worker = m->h->w[wi].id;
        x->res = (uint16_t)res;
        x->flags = (r->flags & EVF_FENCE) ? HF_FENCE : 0;
        if (k < s->n) { /* replaces a grant never entered, in its place */
            struct hold *old = s->a[k];
            set_gone(m, old, r->t);
            mutex_hold_unref(m, old);
            s->a[k] = x; /* the same resource: the index stands */
        } else {
            slot_push(s, x);
        }
        live_join(m, &m->rs[res], x, r->t);
        break;
    }
    case EV_ENTER: {
        if (res >= m->nrs)
            rs_grow(m, res);
        k = slot_last_unentered(s, res);
        if (k < 0) {
            struct hold *x = hold_new(m);
            x->id = ++m->next_id;
            x->acquired = r->t;
            x->lease = x->lease0 = LEASE_NEVER;
            x->worker = m->h->w[wi].id;
            x->res = (uint16_t)res;
            x->flags = HF_NO_GRANT;
            slot_push(s, x);
            k = s->n - 1;
            m->no_grant++;
            live_join(m, &m->rs[res], x, r->t);
        }
        struct hold *x = s->a[k];
        x->entered = 1;
        x->enter = r->t;
        x->batched = 1;
        x->refs++;
        m->batch_t = r->t;
        push_ptr(&m->batch, &m->nbatch, &m->batch_cap, x);
        break;
    }
    case EV_RENEW_OK:
        for (int i = 0, n = slots_of(m, s, res); i < n; i++) {
            struct hold *x = s->a[m->kbuf[i]];
            if (x->lease != LEASE_NEVER) {
                renewal_check(m, x, r);
                lease_raise(m, x, lease_of(r), r->t);
            }
        }
        break;
    case EV_EXIT:
        k = slot_first(s, res, 1);
        if (k == s->n) {
            m->stray_exit++;
            break;
        }
        exited_clear(m, s);
        s->exited = s->a[k];
        s->exited->refs++;
        end_hold(m, s->a[k], wi, r->t, 0);
        slot_remove(m, s, k, r->t);
        break;
    case EV_LOST:
        lost_classify(m, s, r);
        /* fall through */
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
        if (r->type != EV_LOST && s->exited && s->exited->res == res)
            exited_clear(m, s);
        /* A grant that ends before anyone entered it is no hold. */
        k = slot_first(s, res, 0);
        if (k < s->n)
            slot_remove(m, s, k, r->t);
        break;
    case EV_CRASH:
        exited_clear(m, s);
        for (k = 0; k < s->n; k++)
            if (s->a[k]->entered)
                end_hold(m, s->a[k], wi, r->t, HF_CRASH);
        while (s->n)
            slot_remove(m, s, s->n - 1, r->t);
        break;
    default:
        break;
    }
}

/* Never invent overlap: an unterminated hold ends at the log's last record. */
static void mutex_worker_end(void *st, int wi)
{
    struct mutex_st *m = st;
    struct slots *s = &m->ws[wi];
    const struct hist_worker *w = &m->h->w[wi];
    int64_t last = w->n ? hist_last_rec(w)->t : 0;
    if (m->nbatch && last != m->batch_t)
        flush(m);
    for (int k = 0; k < s->n; k++)
        if (s->a[k]->entered) {
            end_hold(m, s->a[k], wi, last, HF_OPEN);
            m->open++;
        }
    exited_clear(m, s);
    while (s->n)
        slot_remove(m, s, s->n - 1, last);
}

static void mutex_end(void *st)
{
    struct mutex_st *m = st;
    if (m->nbatch)
        flush(m);
    for (int i = 0; i < m->npend; i++) /* every hold has ended by now */
        if (m->pend[i])
            mutex_resolve(m, m->pend[i]);
    m->npend = 0;
    m->pend_gone = 0;
    for (int r = 0; r < m->nrs; r++) { /* none is left: each heard its last hold end */
        for (int i = 0; i < m->rs[r].nup; i++)
            if (m->rs[r].up[i])
                mutex_resolve_unlisted(m, m->rs[r].up[i]);
        m->rs[r].nup = m->rs[r].up_gone = 0;
        sufcount_free(&m->rs[r].uc);
    }
}

static void *mutex_init(const struct history *h, const struct check_params *p, struct json *res)
{
    struct mutex_st *m = xcalloc_lines(1, sizeof(*m));
    m->h = h;
    m->p = p;
    m->cap = p->capacity > 0 ? p->capacity : 1;
    m->ws = xcalloc_lines((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*m->ws));
    /* The history's resources; grown at an enter beyond them (a hand-made
     * history). Not 65,536 at once: calloc and the walk that frees them
     * cost more than a small history's whole check. */
    m->nrs = h->nres > 0 ? h->nres : 1;
    m->rs = xcalloc_lines((size_t)m->nrs, sizeof(*m->rs));
    (void)res;
    m->viol = json_new_arr(); /* res's "violations" gets them at the end */
    m->incs = json_new_arr(); /* and its "incidents" these */
    m->anom = json_new_arr(); /* and checks.mutex.anomalies these */
    return m;
}

static int mutex_finish(void *st, struct json *res)
{
    struct mutex_st *m = st;
    const struct check_params *p = m->p;
    struct json *viol = json_obj_get(res, "violations");
    if (!viol || viol->type != JSON_ARR)
        viol = json_obj_set(res, "violations", json_new_arr());
    for (size_t i = 0; i < m->viol->n; i++) {
        json_arr_push(viol, m->viol->kids[i]);
        m->viol->kids[i] = NULL;
    }
    json_free(m->viol);
    struct json *incs = json_obj_get(res, "incidents");
    if (!incs || incs->type != JSON_ARR)
        incs = json_obj_set(res, "incidents", json_new_arr());
    for (size_t i = 0; i < m->incs->n; i++) {
        json_arr_push(incs, m->incs->kids[i]);
        m->incs->kids[i] = NULL;
    }
    json_free(m->incs);
    int verdict = m->nviol > 0 || m->ral > 0 ? VERDICT_INVALID
                  : m->open > 0                ? VERDICT_UNKNOWN
                                               : VERDICT_VALID;
    struct json *o = json_obj_child(json_obj_child(res, "checks"), "mutex");
    json_obj_set_str(o, "verdict", verdict_name(verdict));
    json_obj_set_bool(o, "valid", verdict == VERDICT_VALID);
    json_obj_set_int(o, "violations", m->nviol);
    json_obj_set_int(o, "near_misses", m->near);
    struct json *bc = json_obj_set(o, "by_class", json_new_obj());
    json_obj_set_int(bc, "stale_holder", m->stale);
    json_obj_set_int(bc, "lock_broken", m->broken);
    json_obj_set_int(o, "incidents", m->ninc);
    struct json *ic = json_obj_set(o, "incidents_by_class", json_new_obj());
    json_obj_set_int(ic, "stale_holder", m->inc_stale);
    json_obj_set_int(ic, "lock_broken", m->inc_broken);
    json_obj_set_int(o, "capacity", m->cap);
    json_obj_set_int(o, "holds", m->holds);
    json_obj_set_int(o, "renewed_after_loss", m->ral);
    json_obj_set_int(o, "renewed_after_loss_holds", m->ral_holds);
    json_obj_set_int(o, "losses", m->lost_left + m->lost_expired + m->lost_no_lease);
    struct json *lc = json_obj_set(o, "losses_by_class", json_new_obj());
    json_obj_set_int(lc, "lost_with_lease_left", m->lost_left);
    json_obj_set_int(lc, "expired", m->lost_expired);
    json_obj_set_int(lc, "no_lease", m->lost_no_lease);
    json_obj_set_int(o, "losses_unmatched", m->lost_unmatched);
    json_obj_set(o, "anomalies", m->anom);
    if (verdict == VERDICT_UNKNOWN)
        json_obj_set_str(o, "reason", "a hold has no exit and no crash record");
    if (m->ral)
        json_obj_set_str(o, "renewed_after_loss_note",
                         "a renewal succeeded while another grant held the lock after this "
                         "holder's lease had run out");

    if (m->open)
        check_warn(res, "mutex: %zu hold(s) without exit or crash record, ended at their "
                    "worker's last record", m->open);
    if (m->no_grant)
        check_warn(res, "mutex: %zu enter(s) without a preceding acquire_ok (treated as "
                    "holds without a lease)", m->no_grant);
    if (m->stray_exit)
        check_warn(res, "mutex: %zu exit(s) without a matching enter, ignored", m->stray_exit);
    if (m->nviol > p->max_violations)
        check_warn(res, "mutex: %lld violations, the first %d listed", (long long)m->nviol,
                    p->max_violations);
    /* Left pending only when the pass stopped early (a bad record: the
     * result is discarded and the history passed again). */
    for (int i = 0; i < m->npend; i++) {
        if (!m->pend[i])
            continue;
        struct incident *inc = m->pend[i]->inc;
        if (--inc->pending == 0) {
            free(inc->listed);
            free(inc->faults);
            free(inc);
        }
        free(m->pend[i]->lag);
        free(m->pend[i]);
    }
    for (int i = 0; i < m->h->nworkers; i++) {
        free(m->ws[i].a);
        keyslots_free(&m->ws[i].ix);
    }
    free(m->kbuf);
    for (int r = 0; r < m->nrs; r++) {
        for (int i = 0; i < m->rs[r].nup; i++) { /* left pending: the pass stopped early */
            struct uviol *u = m->rs[r].up[i];
            if (u && --u->inc->pending == 0) {
                free(u->inc->listed);
                free(u->inc->faults);
                free(u->inc);
            }
            free(u);
        }
        free(m->rs[r].up);
        free(m->rs[r].up_ser);
        sufcount_free(&m->rs[r].uc);
        free(m->rs[r].active);
        free(m->rs[r].gh.a);
        free(m->rs[r].lh.a);
        free(m->rs[r].live);
        liveix_free(m->rs[r].ix);
    }
    for (size_t i = 0; i < m->nchunks; i++) {
        for (int k = 0; k < POOL_CHUNK; k++) {
            free(m->chunks[i][k].raises);
            free(m->chunks[i][k].pv);
        }
        free(m->chunks[i]);
    }
    free(m->chunks);
    free(m->ws);
    free(m->rs);
    free(m->batch);
    free(m->pend);
    free(m->exits);
    free(m);
    return verdict;
}

static void mutex_listen(void *st, const struct hold_listener *l)
{
    struct mutex_st *m = st;
    m->listen = *l;
}

const struct checker_def mutex_checker = {
    {"mutex",
     PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_ENTER) | PASS_TYPE(EV_RENEW_OK) | PASS_TYPE(EV_EXIT) |
         PASS_TYPE(EV_RELEASE_OK) | PASS_TYPE(EV_RELEASE_NOT_OWNER) |
         PASS_TYPE(EV_RELEASE_FAIL) | PASS_TYPE(EV_LOST) | PASS_TYPE(EV_CRASH),
     mutex_event, mutex_worker_end, mutex_end, 112},
    mutex_init, mutex_finish, mutex_listen};

int check_mutex(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&mutex_checker, h, p, res);
}
