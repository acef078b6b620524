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
 * each hold as it ends.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"
#include "util/stsort.h"
#include "util/sufcount.h"
#include "util/xalloc.h"

#define LEASE_NEVER INT64_MAX

/* Hold flags. */
#define HF_FENCE 0x01    /* the grant carried a fence */
#define HF_CRASH 0x02    /* ended by the worker's crash record */
#define HF_OPEN 0x04     /* no exit and no crash: ended at the log's last record */
#define HF_NO_GRANT 0x08 /* enter without a preceding acquire_ok */

struct incident;

/* A raise of a grant's lease: at time t, from the lease it had before. */
struct raise {
    int64_t t, before;
};

/* One hold, from its grant until nothing refers to it any more (its
 * worker's slot, the enter batch, its resource's active list, pending
 * violations, the incident it caused). Pooled: no allocation per hold. A
 * hold is the closed interval [enter, exit]; it overlaps another only on
 * an interval of positive length, so a hold of zero length (exit == enter)
 * overlaps nothing, though it counts as a hold. */
struct hold {
    int64_t enter, exit;
    int64_t acquired;           /* grant time (= enter without a grant) */
    int64_t lease;              /* L: lease end incl. renewals; LEASE_NEVER = no expiry */
    int64_t lease0;             /* the grant's own lease */
    int64_t end_t;              /* when it stopped being a live grant (gone set) */
    uint64_t id;                /* serial, from 1 */
    uint64_t join;              /* when it joined its resource's live grants (mutex_st.joins) */
    uint64_t gone_at;           /* mutex_st.joins when it was gone (gone set) */
    struct raise *raises;       /* its lease's raises at distinct times, in time order: those
                                   a later grant may still ask about (lease_at; owned) */
    int nraises, raises_cap;
    uint64_t fence;
    char token[EVLOG_TOKEN_LEN];
    int32_t worker;             /* worker id */
    uint16_t res;
    uint16_t flags;
    uint8_t entered, done;      /* entered; ended (exit, crash or end of log) */
    uint8_t batched;            /* in the enter batch, not yet in the active list */
    uint8_t gone;               /* no longer a live grant: ended, released, lost, replaced */
    uint8_t renewed_late;       /* it had a renewal after loss */
    uint8_t in_live;            /* in its resource's live list */
    int refs;
    int pending;                /* pending violations naming it */
    struct pviol **pv;          /* those of them made while it had not ended, in the order
                                   they were made (owned; NULL once it has ended) */
    int npv, pvcap;
    struct incident *inc;       /* the incident it causes, NULL none (yet) */
    uint64_t ser;               /* its serial among its resource's holds that were active
                                   (from 1, in the order they entered); 0: never active */
    struct hold *next_free;
};

struct slots {                  /* the grants one worker has and may be holding */
    struct hold **a;
    int n, cap;
    struct hold *exited;        /* its last exited hold until a release outcome (a `lost`
                                 * may still come for it), referenced; NULL none */
};

/* Active holds in a heap by a key, the largest on top (the smaller tie
 * among equals), each entry referenced. An entry goes stale when its hold
 * ends or no longer has that key (its owner tells which: active_gmax,
 * active_lease_hi), and is dropped when it comes to the top; once the
 * entries are more than twice the active holds the heap is let go, made
 * again when next asked (ok 0): a history that never asks keeps none. */
struct hent {
    int64_t key;
    uint64_t tie;
    struct hold *x;
};

struct hheap {
    struct hent *a;
    int n, cap, ok;
};

struct rstate {
    struct hold **active;       /* holds entered and not ended, in entry order, and ndead
                                   that have ended since it was last closed up (done; an
                                   end searched and closed the gap: the square of the
                                   active holds when they never end) */
    int n, cap;                 /* in active, ended ones included */
    int ndead;
    int head;                   /* active[0, head) have all ended */
    int64_t last_exit;          /* latest exit of an ended hold */
    int has_exit;
    struct hold **live;         /* grants of the resource, entered or not, until gone and
                                 * time has moved past their end (referenced) */
    int nlive, live_cap;
    int live_gone;              /* of them gone (purged once they are half the list) */
    int64_t purged_t;           /* the instant of the last purge */
    uint64_t ser;               /* the last serial given (hold.ser) */
    struct hheap gh;            /* its active holds that had a grant by grant time, the
                                   first entered (ser) among equals (active_gmax) */
    struct hheap lh;            /* its active holds by lease (active_lease_hi) */
    struct uviol **up;          /* its unlisted violations pending, in the order made (NULL:
                                   resolved since the array was last closed up; owned) */
    uint64_t *up_ser;           /* the serial of each (increasing: a hold's end is one of
                                   those from its own serial on) */
    int nup, up_cap, up_gone;
    struct sufcount uc;         /* each one's holds not ended yet (level 0), and that less
                                   capacity (level 1), lowered for all of them at once */
};

/* The violations with one cause: the earliest-entered hold still active
 * at each of their entries. Open while its cause is active (only then can
 * a violation join), done once its cause has ended and its violations are
 * resolved (they decide its class and end). */
struct incident {
    struct hold *cause;         /* referenced until done */
    struct json *obj;           /* its listed entry to fill, or NULL past the listed ones */
    int64_t n;                  /* its violations */
    int64_t start, end;         /* first overlap start, last overlap end (so far) */
    int pending;                /* its violations not resolved yet */
    int broken;                 /* one of them is lock-broken */
    int64_t *listed;            /* indexes of its listed violations (listed incidents) */
    int nlisted, listed_cap;
    uint8_t *faults;            /* per fault window: met by one of its overlaps (listed) */
};

struct pviol {                  /* a violation whose holds have not all ended */
    struct json *obj;           /* its listed entry to fill, or NULL past the listed ones */
    int64_t index;              /* its place in violations[], from 0 */
    struct incident *inc;       /* the incident it belongs to */
    int undone;                 /* holds not ended yet */
    int at;                     /* its place in mutex_st.pend */
    int valid;                  /* holds whose lease was valid at the latest grant */
    int n;                      /* holders: the active ones, then the entering one */
    int latest;                 /* the holder with the latest grant (the one judged) */
    int64_t *lag;               /* each holder's lease as it stood at the latest grant (n of
                                   them; that holder's own unused) */
    struct hold *hs[];
};

/* A violation past the listed ones whose holds have not all ended: what
 * its class and overlap need, and not its holders. (Kept as a pviol, a
 * violation among n active holds names all n, and n holds that never end
 * (a worker entering again without an exit) made n^2 entries: 5,000 such
 * holds took 536 MB.) Its holds are the resource's active holds when it
 * was made and the entering one, whose serial it keeps: a hold that ends
 * is one of the holds of every pending one made since it entered (serial
 * >= its own), and none of the others'. Its overlap ends at the
 * (capacity + 1)-th latest exit of its holds (resolve). Holds end in time
 * order (the pass feeds the records in time order, and a worker's log's
 * end at its last record's place), so that is the exit of the hold whose
 * end left capacity of them not ended; the count of each one's holds not
 * ended is kept for all of them at once in its resource's uc (a walk over
 * them at every end took the square of their number when holds never
 * end). */
struct uviol {
    struct incident *inc;
    int64_t ov_start;           /* its entry */
    int64_t ov_end;             /* with has_end: its overlap's end */
    uint64_t ser;               /* the entering hold's serial */
    int valid;                  /* holds whose lease was valid at the latest grant, counted
                                   up to capacity */
    int has_end;
};

struct mutex_st {
    const struct history *h;
    const struct check_params *p;
    int cap;
    struct slots *ws;
    struct rstate *rs;          /* indexed by the resource field, nrs of them: each */
    int nrs;                    /* resource entered has one (grown at its enter) */
    struct hold *free_list;
    struct hold **chunks;
    size_t nchunks;
    struct hold **batch;        /* entries at batch_t, judged once time moves on */
    int nbatch, batch_cap;
    int64_t batch_t;
    struct pviol **pend;
    int npend, pend_cap;
    int pend_gone;              /* resolved ones in pend (NULL) since it was last closed up */
    struct json *viol;          /* the listed violations (owned until finish) */
    struct json *incs;          /* the listed incidents (owned until finish) */
    int64_t nviol, near, stale, broken, holds;
    int64_t ninc, inc_stale, inc_broken;
    size_t no_grant, stray_exit, open;
    int64_t *exits;
    size_t exits_cap;
    uint64_t next_id;
    uint64_t joins;             /* grants joined a live list so far (hold.join, gone_at) */
    int64_t lost_left, lost_expired, lost_no_lease, lost_unmatched, ral, ral_holds;
    struct json *anom;          /* the listed anomalies (owned until finish) */
    int64_t nanom_listed[3];    /* per anomaly class: listed so far */
    struct hold_listener listen; /* told each hold as it ends; ended NULL: none */
};

enum { AN_RAL, AN_LOST_LEFT, AN_LOST_EXPIRED };
static const char *const an_names[] = {"renewed-after-loss", "lost-with-lease-left", "expired"};

#define POOL_CHUNK 1024

static struct hold *hold_new(struct mutex_st *m)
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

static void hold_unref(struct mutex_st *m, struct hold *x)
{
    if (--x->refs == 0) {
        free(x->raises);
        x->raises = NULL;
        free(x->pv);
        x->pv = NULL;
        x->next_free = m->free_list;
        m->free_list = x;
    }
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

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
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
    if (x->in_live)
        m->rs[x->res].live_gone++;
    x->gone = 1;
    x->end_t = t;
    x->gone_at = m->joins;
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
 * raise per such grant, and one for now. */
static void raises_trim(struct mutex_st *m, struct hold *x, int64_t now)
{
    const struct rstate *r = &m->rs[x->res];
    char *keep = xcalloc((size_t)x->nraises, 1);
    mark_raise(x, keep, now);
    for (int k = 0; k < r->nlive; k++)
        if (r->live[k]->join > x->join)
            mark_raise(x, keep, r->live[k]->acquired);
    for (int k = 0; k < r->n; k++)
        if (r->active[k]->join > x->join)
            mark_raise(x, keep, r->active[k]->acquired);
    for (int k = 0; k < m->nbatch; k++)
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
    hold_unref(m, x);
}

/* Contract: q let go, to be made again when next asked, when its entries
 * are more than twice the live holds they stand for. */
static void hh_trim(struct mutex_st *m, struct hheap *q, int live)
{
    if (q->n <= 16 || q->n <= 2 * live)
        return;
    for (int k = 0; k < q->n; k++)
        hold_unref(m, q->a[k].x);
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
 * reader of the list skips it or keeps more of a lease's raises). */
static void live_purge(struct mutex_st *m, struct rstate *r, int64_t t);

/* Contract: H (a new grant of its resource at T) joins its live grants. */
static void live_join(struct mutex_st *m, struct rstate *r, struct hold *H, int64_t T)
{
    live_purge(m, r, T);
    H->join = ++m->joins;
    push_ptr(&r->live, &r->nlive, &r->live_cap, H);
    H->in_live = 1;
    H->refs++;
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
            hold_unref(m, y);
        } else {
            r->live[kept++] = y;
        }
    }
    r->nlive = kept;
}

static struct json *holder_json(const struct hold *x)
{
    struct json *o = json_new_obj();
    json_obj_set_int(o, "worker", x->worker);
    json_obj_set(o, "token", json_new_strn(x->token, strnlen(x->token, EVLOG_TOKEN_LEN)));
    json_obj_set(o, "fence", (x->flags & HF_FENCE) ? json_new_int((int64_t)x->fence)
                                                   : json_new_null());
    json_obj_set_num(o, "acquired_ms", ns_ms(x->acquired));
    json_obj_set(o, "valid_until_ms",
                 x->lease == LEASE_NEVER ? json_new_null() : json_new_num(ns_ms(x->lease)));
    json_obj_set_num(o, "enter_ms", ns_ms(x->enter));
    json_obj_set_num(o, "exit_ms", ns_ms(x->exit));
    if (x->flags & HF_CRASH)
        json_obj_set_bool(o, "crashed", 1);
    if (x->flags & HF_OPEN)
        json_obj_set_bool(o, "unterminated", 1);
    return o;
}

/* Contract: a new incident caused by hold c (active, causing none yet),
 * listed when it is among the first max_violations. */
static struct incident *incident_new(struct mutex_st *m, struct hold *c)
{
    struct incident *inc = xcalloc(1, sizeof(*inc));
    m->ninc++;
    if (m->ninc <= m->p->max_violations) {
        inc->obj = json_arr_push(m->incs, json_new_obj());
        json_obj_set_int(inc->obj, "id", m->ninc);
        if (m->h->nfaults > 0)
            inc->faults = xcalloc((size_t)m->h->nfaults, 1);
    }
    inc->cause = c;
    c->refs++;
    c->inc = inc;
    return inc;
}

/* Contract: inc's cause has ended and its last violation is resolved:
 * count it by class, fill its listed entry, let go of its cause, free it. */
static void incident_done(struct mutex_st *m, struct incident *inc)
{
    if (inc->broken)
        m->inc_broken++;
    else
        m->inc_stale++;
    struct json *o = inc->obj;
    if (o) {
        json_obj_set_str(o, "class", inc->broken ? "lock-broken" : "stale-holder");
        json_obj_set_str(o, "resource", check_res_name(m->h, inc->cause->res));
        json_obj_set(o, "cause", holder_json(inc->cause));
        json_obj_set_int(o, "violations", inc->n);
        /* resolved in any order: listed in violations[] order */
        if (inc->nlisted > 1)
            qsort(inc->listed, (size_t)inc->nlisted, sizeof(*inc->listed), cmp_i64);
        struct json *l = json_obj_set(o, "listed", json_new_arr());
        for (int k = 0; k < inc->nlisted; k++)
            json_arr_push(l, json_new_int(inc->listed[k]));
        json_obj_set_num(o, "start_ms", ns_ms(inc->start));
        json_obj_set_num(o, "end_ms", ns_ms(inc->end));
        struct json *fl = json_obj_set(o, "faults", json_new_arr());
        for (int f = 0; inc->faults && f < m->h->nfaults; f++)
            if (inc->faults[f])
                json_arr_push(fl, json_new_int(m->h->faults[f].id));
        json_obj_set(o, "first_violation",
                     inc->nlisted ? json_new_int(inc->listed[0]) : json_new_null());
    }
    inc->cause->inc = NULL;
    hold_unref(m, inc->cause);
    free(inc->listed);
    free(inc->faults);
    free(inc);
}

/* Contract: a violation of inc whose holds have all ended, lock-broken or
 * not, its overlap [ov_start, ov_end], listed at index (-1: not listed),
 * added to inc; inc is done when it was its last pending violation (its
 * cause, one of the violation's holds, has ended: no more will join). */
static void incident_add(struct mutex_st *m, struct incident *inc, int is_broken,
                         int64_t ov_start, int64_t ov_end, int64_t index)
{
    inc->broken |= is_broken;
    if (ov_end > inc->end)
        inc->end = ov_end;
    if (inc->obj) {
        for (int f = 0; inc->faults && f < m->h->nfaults; f++) {
            const struct fault_window *fw = &m->h->faults[f];
            if (!fw->skipped && fw->start <= ov_end && fw->end >= ov_start)
                inc->faults[f] = 1;
        }
        if (index >= 0) {
            if (inc->nlisted == inc->listed_cap) {
                inc->listed_cap = inc->listed_cap ? 2 * inc->listed_cap : 4;
                inc->listed = xrealloc(inc->listed,
                                       (size_t)inc->listed_cap * sizeof(*inc->listed));
            }
            inc->listed[inc->nlisted++] = index;
        }
    }
    if (--inc->pending == 0)
        incident_done(m, inc);
}

/* Contract: every hold of u has ended (else: the latest exits seen):
 * classify it, add it to its incident, free it. Its overlap ends where
 * resolve's would: the (capacity + 1)-th latest exit of its holds, the
 * least of the capacity + 1 latest kept. */
static void resolve_unlisted(struct mutex_st *m, struct uviol *u)
{
    int is_broken = u->valid >= m->cap;
    if (is_broken)
        m->broken++;
    else
        m->stale++;
    incident_add(m, u->inc, is_broken, u->ov_start, u->has_end ? u->ov_end : u->ov_start, -1);
    free(u);
}

/* Contract: a hold of resource res, serial ser, active until now, has
 * ended at exit: each unlisted pending violation of res made since it
 * entered is one of its (their serials are >= ser: a suffix of r->up);
 * those it leaves with capacity holds not ended have their overlap's end,
 * those it was the last hold of are resolved. */
static void unlisted_heard(struct mutex_st *m, int res, uint64_t ser, int64_t exit)
{
    struct rstate *r = &m->rs[res];
    int lo = 0, hi = r->nup;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->up_ser[mid] < ser)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == r->nup)
        return;
    sufcount_lower(&r->uc, lo);
    int got[64], k;
    while ((k = sufcount_take(&r->uc, 1, got, 64)) > 0)
        for (int j = 0; j < k; j++) {
            r->up[got[j]]->ov_end = exit;
            r->up[got[j]]->has_end = 1;
        }
    while ((k = sufcount_take(&r->uc, 0, got, 64)) > 0)
        for (int j = 0; j < k; j++) {
            struct uviol *u = r->up[got[j]];
            r->up[got[j]] = NULL;
            r->up_gone++;
            resolve_unlisted(m, u);
        }
    if (r->up_gone > 64 && r->up_gone > r->nup / 2) { /* close the gaps, in order */
        int kept = 0;
        for (int i = 0; i < r->nup; i++)
            if (r->up[i]) {
                r->up_ser[kept] = r->up_ser[i];
                r->up[kept++] = r->up[i];
            }
        r->nup = kept;
        r->up_gone = 0;
        sufcount_close_up(&r->uc); /* the same ones (taken at 0: resolved) */
    }
}

/* Contract: every hold of v has ended: classify it, fill its listed entry,
 * add it to its incident (done with it when it was the last), let go of
 * its holds and free v. */
static void resolve(struct mutex_st *m, struct pviol *v)
{
    const struct hold *H = v->hs[v->n - 1];
    if ((size_t)v->n > m->exits_cap) {
        m->exits_cap = (size_t)v->n + 16;
        m->exits = xrealloc(m->exits, m->exits_cap * sizeof(*m->exits));
    }
    for (int k = 0; k < v->n; k++)
        m->exits[k] = v->hs[k]->exit;
    qsort(m->exits, (size_t)v->n, sizeof(*m->exits), cmp_i64);
    int64_t ov_start = H->enter, ov_end = m->exits[v->n - m->cap - 1];
    int is_broken = v->valid >= m->cap;
    if (is_broken)
        m->broken++;
    else
        m->stale++;
    if (v->obj) {
        struct json *o = v->obj;
        json_obj_set_str(o, "resource", check_res_name(m->h, H->res));
        json_obj_set_str(o, "class", is_broken ? "lock-broken" : "stale-holder");
        json_obj_set_num(o, "overlap_start_ms", ns_ms(ov_start));
        json_obj_set_num(o, "overlap_ms", ns_ms(ov_end - ov_start));
        struct json *hl = json_obj_set(o, "holders", json_new_arr());
        for (int k = 0; k < v->n; k++) {
            struct json *x = json_arr_push(hl, holder_json(v->hs[k]));
            if (k != v->latest) /* the lease the class was decided by */
                json_obj_set(x, "valid_until_at_grant_ms",
                             v->lag[k] == LEASE_NEVER ? json_new_null()
                                                      : json_new_num(ns_ms(v->lag[k])));
        }
        struct json *fl = json_obj_set(o, "faults", json_new_arr());
        for (int f = 0; f < m->h->nfaults; f++) {
            const struct fault_window *fw = &m->h->faults[f];
            if (!fw->skipped && fw->start <= ov_end && fw->end >= ov_start)
                json_arr_push(fl, json_new_int(fw->id));
        }
    }
    incident_add(m, v->inc, is_broken, ov_start, ov_end, v->obj ? v->index : -1);
    for (int k = 0; k < v->n; k++) {
        v->hs[k]->pending--;
        hold_unref(m, v->hs[k]);
    }
    free(v->lag);
    free(v);
}

/* Contract: r's active list without the holds that have ended (their
 * references let go), in entry order. */
static void active_close_up(struct mutex_st *m, struct rstate *r)
{
    int kept = 0;
    for (int k = 0; k < r->n; k++) {
        struct hold *x = r->active[k];
        if (x->done)
            hold_unref(m, x);
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
            resolve(m, v);
        }
    }
    free(pv);
    if (ser) /* it was active: the unlisted violations made since it entered are its too */
        unlisted_heard(m, res, ser, exit);
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

static void push_pending(struct mutex_st *m, struct pviol *v)
{
    if (m->npend == m->pend_cap) {
        m->pend_cap = m->pend_cap ? m->pend_cap * 2 : 16;
        m->pend = xrealloc(m->pend, (size_t)m->pend_cap * sizeof(*m->pend));
    }
    v->at = m->npend;
    m->pend[m->npend++] = v;
    for (int k = 0; k < v->n; k++) { /* each undone hold hears of it when it ends */
        struct hold *x = v->hs[k];
        if (x->done)
            continue;
        if (x->npv == x->pvcap) {
            x->pvcap = x->pvcap ? 2 * x->pvcap : 4;
            x->pv = xrealloc(x->pv, (size_t)x->pvcap * sizeof(*x->pv));
        }
        x->pv[x->npv++] = v;
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
            struct incident *inc = c->inc ? c->inc : incident_new(m, c);
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
                    resolve(m, v);
                else
                    push_pending(m, v);
            }
        } else if (r->has_exit && H->enter - r->last_exit <= m->p->near_miss) {
            m->near++;
        }
        if (H->done) { /* ended at the instant it entered: zero length */
            if (!r->has_exit || H->exit > r->last_exit)
                r->last_exit = H->exit;
            r->has_exit = 1;
            hold_unref(m, H);
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
static void slot_remove(struct mutex_st *m, struct slots *s, int k, int64_t t)
{
    struct hold *x = s->a[k];
    if (!x->gone)
        set_gone(m, x, t);
    s->a[k] = s->a[--s->n];
    hold_unref(m, x);
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
    m->rs = xrealloc(m->rs, (size_t)n * sizeof(*m->rs));
    memset(&m->rs[m->nrs], 0, (size_t)(n - m->nrs) * sizeof(*m->rs));
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
static void renewal_check(struct mutex_st *m, struct hold *x, const struct ev_rec *r)
{
    if (x->lease == LEASE_NEVER || r->res >= m->nrs)
        return;
    struct rstate *rs = &m->rs[r->res];
    int n = 0;
    const struct hold *first = NULL;
    int64_t ran_out = 0;
    for (int k = 0; k < rs->nlive; k++) {
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
    for (int k = 0; k < s->n && !x; k++)
        if (s->a[k]->res == r->res && memcmp(s->a[k]->token, r->token, EVLOG_TOKEN_LEN) == 0)
            x = s->a[k];
    for (int k = 0; k < s->n && !x; k++)
        if (s->a[k]->res == r->res)
            x = s->a[k];
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
        hold_unref(m, s->exited);
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
        for (k = 0; k < s->n; k++)
            if (s->a[k]->res == res && !s->a[k]->entered)
                break;
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
            hold_unref(m, old);
            s->a[k] = x;
        } else {
            push_ptr(&s->a, &s->n, &s->cap, x);
        }
        live_join(m, &m->rs[res], x, r->t);
        break;
    }
    case EV_ENTER: {
        if (res >= m->nrs)
            rs_grow(m, res);
        for (k = s->n - 1; k >= 0; k--)
            if (s->a[k]->res == res && !s->a[k]->entered)
                break;
        if (k < 0) {
            struct hold *x = hold_new(m);
            x->id = ++m->next_id;
            x->acquired = r->t;
            x->lease = x->lease0 = LEASE_NEVER;
            x->worker = m->h->w[wi].id;
            x->res = (uint16_t)res;
            x->flags = HF_NO_GRANT;
            push_ptr(&s->a, &s->n, &s->cap, x);
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
        for (k = 0; k < s->n; k++) {
            struct hold *x = s->a[k];
            if (x->res == res && x->lease != LEASE_NEVER) {
                renewal_check(m, x, r);
                lease_raise(m, x, lease_of(r), r->t);
            }
        }
        break;
    case EV_EXIT:
        for (k = 0; k < s->n; k++)
            if (s->a[k]->res == res && s->a[k]->entered)
                break;
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
        for (k = 0; k < s->n; k++)
            if (s->a[k]->res == res && !s->a[k]->entered) {
                slot_remove(m, s, k, r->t);
                break;
            }
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
            resolve(m, m->pend[i]);
    m->npend = 0;
    m->pend_gone = 0;
    for (int r = 0; r < m->nrs; r++) { /* none is left: each heard its last hold end */
        for (int i = 0; i < m->rs[r].nup; i++)
            if (m->rs[r].up[i])
                resolve_unlisted(m, m->rs[r].up[i]);
        m->rs[r].nup = m->rs[r].up_gone = 0;
        sufcount_free(&m->rs[r].uc);
    }
}

static void *mutex_init(const struct history *h, const struct check_params *p, struct json *res)
{
    struct mutex_st *m = xcalloc(1, sizeof(*m));
    m->h = h;
    m->p = p;
    m->cap = p->capacity > 0 ? p->capacity : 1;
    m->ws = xcalloc((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*m->ws));
    /* The history's resources; grown at an enter beyond them (a hand-made
     * history). Not 65,536 at once: calloc and the walk that frees them
     * cost more than a small history's whole check. */
    m->nrs = h->nres > 0 ? h->nres : 1;
    m->rs = xcalloc((size_t)m->nrs, sizeof(*m->rs));
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
    for (int i = 0; i < m->h->nworkers; i++)
        free(m->ws[i].a);
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
     mutex_event, mutex_worker_end, mutex_end, 89},
    mutex_init, mutex_finish, mutex_listen};

int check_mutex(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&mutex_checker, h, p, res);
}
