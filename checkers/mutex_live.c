/*
 * mutex_live.c: the mutex checker's live grants of a resource by grant
 * instant (see checkers/mutex.c "Leases as they stood", docs/checkers.md
 * "Renewed after loss"). A renewal of a grant x asks which of the live
 * grants joined after it were made while its lease, as it stood, had run
 * out; a lease's trim asks which of its raises those grants read. Both
 * walked the whole live list, at every renewal and every few raises: with
 * grants never released that go on renewing, the square of the grants
 * (100,000 grants of liveness_histories.py hoard: 14 G instructions). The
 * live list is in join order, which is time order (the pass feeds records
 * in time order), so once it is long its grants are also kept by position
 * with their grant instants and whether they are live (checkers/liveix.h):
 * the grants of one stretch of x's lease (between two of its raises) are
 * a range of positions, found by binary search. The answers are the
 * walk's, to the first grant of the list; the index is let go for good if
 * an instant ever goes back in time (a walk answers then).
 */
#include "checkers/liveix.h"
#include "checkers/mutex_int.h"

/* Contract: x's position in r's live list (x in it: the list is in join
 * order). */
static int live_pos(const struct rstate *r, const struct hold *x)
{
    int lo = 0, hi = r->nlive;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r->live[mid]->join < x->join)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Contract: r's index let go for good when an instant it was given went
 * back in time. */
static void index_check(struct rstate *r)
{
    if (r->ix->bad) {
        liveix_free(r->ix);
        r->ix = NULL;
        r->ix_off = 1;
    }
}

/* Contract: r's index made (again) from its live list (those gone in it
 * live up to their end). */
static void index_make(struct rstate *r)
{
    if (!r->ix)
        r->ix = liveix_new();
    liveix_clear(r->ix);
    for (int k = 0; k < r->nlive; k++)
        liveix_push(r->ix, r->live[k]->acquired);
    for (int k = 0; k < r->nlive; k++)
        if (r->live[k]->gone)
            liveix_gone(r->ix, k, r->live[k]->end_t);
    index_check(r);
}

/* Contract: r's index, made when a question needs it and the list is long
 * (only renewals ask: a history without them never pays for one, which
 * made for every long list took 14.7 MB more for 64 resources of coarse
 * clock ties, and ran out of 200 MB of address space); NULL when a walk
 * answers. */
static struct liveix *index_get(struct rstate *r)
{
    if (!r->ix && !r->ix_off && r->nlive >= LIVE_INDEXED_FROM)
        index_make(r);
    return r->ix;
}

void mutex_live_joined(struct rstate *r, const struct hold *H)
{
    if (r->ix->n == r->nlive - 1) { /* no purge since: the positions stand */
        liveix_push(r->ix, H->acquired);
        index_check(r);
    } else { /* a purge moved them: made again at the next question */
        liveix_free(r->ix);
        r->ix = NULL;
    }
}

void mutex_live_gone(struct rstate *r, const struct hold *x)
{
    liveix_gone(r->ix, live_pos(r, x), x->end_t);
}

/* Contract: is r's index the way to the grants that ask about x's lease:
 * x a live grant, its raises few beside the list (a walk reads the list
 * once, the index a few binary searches per raise)? */
static int index_for(const struct rstate *r, const struct hold *x)
{
    return x->in_live && !x->gone && (LIVE_INDEXED_FROM <= 1 || x->nraises < r->nlive / 16);
}

/* The grants x's renewal at t counts: after x's instant (the list is in
 * time order, so they joined after x) and before t, a range of positions;
 * those whose lease_at is x's lease before raise k (after raise k - 1, up
 * to raise k: a stretch of instants) a range in it, of which the part at
 * or after that lease had run out counts, its grants live at t. Those
 * ranges follow each other: the first one with a grant has the first
 * grant. A stretch is looked up only where it meets the grants' instants. */
int mutex_live_lapsed(struct rstate *r, const struct hold *x, int64_t t, int *n,
                      const struct hold **first, int64_t *ran_out)
{
    struct liveix *ix;
    if (!index_for(r, x) || (ix = index_get(r)) == NULL)
        return 0;
    if (!liveix_at(ix, t)) {
        index_check(r);
        return 0;
    }
    int from = liveix_upper(ix, x->acquired);
    int to = ix->n && ix->at[ix->n - 1] < t ? ix->n : liveix_lower(ix, t);
    *n = 0;
    if (from >= to)
        return 1;
    int64_t t_lo = ix->at[from], t_hi = ix->at[to - 1];
    for (int k = 0; k <= x->nraises; k++) {
        int last = k == x->nraises;
        int64_t l = last ? x->lease : x->raises[k].before, s = last ? 0 : x->raises[k].t;
        if (l > t_hi || (k && x->raises[k - 1].t >= t_hi))
            break; /* the stretches from here on: after the grants, or leases later still */
        if (!last && (s < t_lo || l > s))
            continue; /* before the grants, or the lease had not run out in it */
        int lo = from, hi = to, a;
        if (l > t_lo && (a = liveix_lower(ix, l)) > lo)
            lo = a;
        if (k && x->raises[k - 1].t >= t_lo && (a = liveix_upper(ix, x->raises[k - 1].t)) > lo)
            lo = a;
        if (!last && s < t_hi)
            hi = liveix_upper(ix, s);
        int c = liveix_count(ix, lo, hi);
        if (c && !*n) {
            *first = r->live[liveix_next(ix, lo)];
            *ran_out = l;
        }
        *n += c;
    }
    return 1;
}

/* A raise is kept when a grant after x in the list falls in its stretch
 * (after the raise before it, up to it). The walk also marks for the
 * active holds and the current instant's entries joined after x: those
 * not ended are live grants too, and an ended hold asks no more, so x
 * keeps no more raises than with the walk, and all those still asked. */
int mutex_live_marks(struct rstate *r, const struct hold *x, char *keep)
{
    if (!index_for(r, x) || !index_get(r))
        return 0;
    for (int i = 0, lo = live_pos(r, x) + 1; i < x->nraises && lo < r->nlive; i++) {
        int hi = liveix_upper(r->ix, x->raises[i].t);
        keep[i] |= lo < hi;
        lo = lo > hi ? lo : hi;
    }
    return 1;
}
