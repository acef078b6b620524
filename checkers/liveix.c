/*
 * liveix.c: see liveix.h. fw[i] (1-based) counts the live positions in
 * (i - lowbit(i), i]: a prefix count adds log n of them, a position gone
 * lowers log n of them.
 */
#include "checkers/liveix.h"

#include <stdlib.h>

#include "util/xalloc.h"

#define LOWBIT(i) ((i) & -(i))

void liveix_clear(struct liveix *ix)
{
    ix->n = 0;
    ix->npend = 0;
    ix->pend_min = INT64_MAX;
    ix->last_t = INT64_MIN;
    ix->bad = 0;
}

struct liveix *liveix_new(void)
{
    struct liveix *ix = xcalloc(1, sizeof(*ix));
    liveix_clear(ix);
    return ix;
}

void liveix_free(struct liveix *ix)
{
    if (!ix)
        return;
    free(ix->at);
    free(ix->fw);
    free(ix->pend);
    free(ix);
}

void liveix_push(struct liveix *ix, int64_t at)
{
    if (ix->n == ix->cap) {
        ix->cap = ix->cap ? 2 * ix->cap : 256;
        ix->at = xrealloc(ix->at, (size_t)ix->cap * sizeof(*ix->at));
        ix->fw = xrealloc(ix->fw, ((size_t)ix->cap + 1) * sizeof(*ix->fw));
    }
    if (ix->n && at < ix->at[ix->n - 1])
        ix->bad = 1;
    ix->at[ix->n] = at;
    int i = ++ix->n, s = 1; /* fw[i]: itself and the ranges below it that it covers */
    for (int j = i - 1; j > i - LOWBIT(i); j -= LOWBIT(j))
        s += ix->fw[j];
    ix->fw[i] = s;
}

void liveix_gone(struct liveix *ix, int pos, int64_t end)
{
    if (ix->npend == ix->pend_cap) {
        ix->pend_cap = ix->pend_cap ? 2 * ix->pend_cap : 16;
        ix->pend = xrealloc(ix->pend, (size_t)ix->pend_cap * sizeof(*ix->pend));
    }
    ix->pend[ix->npend++] = (struct liveix_gone){pos, end};
    if (end < ix->pend_min)
        ix->pend_min = end;
}

int liveix_at(struct liveix *ix, int64_t t)
{
    if (t < ix->last_t)
        ix->bad = 1;
    if (ix->bad)
        return 0;
    ix->last_t = t;
    if (t <= ix->pend_min)
        return 1;
    /* those whose end has passed counted out (in time order: all but those
     * gone at the latest instant, so each is looked at about once) */
    int kept = 0;
    ix->pend_min = INT64_MAX;
    for (int k = 0; k < ix->npend; k++) {
        struct liveix_gone g = ix->pend[k];
        if (g.end < t) {
            for (int i = g.pos + 1; i <= ix->n; i += LOWBIT(i))
                ix->fw[i]--;
        } else {
            ix->pend[kept++] = g;
            if (g.end < ix->pend_min)
                ix->pend_min = g.end;
        }
    }
    ix->npend = kept;
    return 1;
}

int liveix_lower(const struct liveix *ix, int64_t t)
{
    int lo = 0, hi = ix->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ix->at[mid] < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int liveix_upper(const struct liveix *ix, int64_t t)
{
    int lo = 0, hi = ix->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (ix->at[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Contract: the live positions in [0, p). */
static int prefix(const struct liveix *ix, int p)
{
    int s = 0;
    for (int i = p; i > 0; i -= LOWBIT(i))
        s += ix->fw[i];
    return s;
}

int liveix_count(const struct liveix *ix, int lo, int hi)
{
    return lo < hi ? prefix(ix, hi) - prefix(ix, lo) : 0;
}

int liveix_next(const struct liveix *ix, int lo)
{
    int k = prefix(ix, lo) + 1; /* the k-th live position, from 1 */
    int pos = 0, step = 1;
    while (step * 2 <= ix->n)
        step *= 2;
    for (; step; step /= 2)
        if (pos + step <= ix->n && ix->fw[pos + step] < k) {
            pos += step;
            k -= ix->fw[pos];
        }
    return pos; /* n when fewer than k are live */
}
