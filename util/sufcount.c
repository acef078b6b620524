/*
 * sufcount.c: see sufcount.h. A segment tree over the counters' leaves:
 * each node keeps, per level, the least value not taken in its subtree,
 * and what its subtree has still to be lowered by (applied to the
 * children when a walk goes down through it).
 */
#include "util/sufcount.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define NONE INT32_MAX

void sufcount_init(struct sufcount *c)
{
    memset(c, 0, sizeof(*c));
}

void sufcount_free(struct sufcount *c)
{
    free(c->mn[0]);
    free(c->mn[1]);
    free(c->lz);
    memset(c, 0, sizeof(*c));
}

static inline int32_t low(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* Contract: node k lowered by d (a value taken stays NONE). */
static inline void apply(struct sufcount *c, int k, int32_t d)
{
    for (int lv = 0; lv < 2; lv++)
        if (c->mn[lv][k] != NONE)
            c->mn[lv][k] -= d;
    if (k < c->cap)
        c->lz[k] += d;
}

static inline void push_down(struct sufcount *c, int k)
{
    if (c->lz[k]) {
        apply(c, 2 * k, c->lz[k]);
        apply(c, 2 * k + 1, c->lz[k]);
        c->lz[k] = 0;
    }
}

static inline void pull_up(struct sufcount *c, int k)
{
    for (int lv = 0; lv < 2; lv++)
        c->mn[lv][k] = low(c->mn[lv][2 * k], c->mn[lv][2 * k + 1]);
}

/* Contract: every lowering still owed applied down to the leaves. */
static void settle(struct sufcount *c)
{
    for (int k = 1; k < c->cap; k++)
        push_down(c, k);
}

/* Contract: a tree of cap leaves holding the values va[0..n), vb[0..n). */
static void build(struct sufcount *c, int cap, const int32_t *va, const int32_t *vb, int n)
{
    free(c->mn[0]);
    free(c->mn[1]);
    free(c->lz);
    c->cap = cap;
    c->n = n;
    c->mn[0] = xmalloc(2 * (size_t)cap * sizeof(int32_t));
    c->mn[1] = xmalloc(2 * (size_t)cap * sizeof(int32_t));
    c->lz = xcalloc((size_t)cap, sizeof(int32_t));
    for (int i = 0; i < cap; i++) {
        c->mn[0][cap + i] = i < n ? va[i] : NONE;
        c->mn[1][cap + i] = i < n ? vb[i] : NONE;
    }
    for (int k = cap - 1; k >= 1; k--)
        pull_up(c, k);
}

/* Contract: the leaves' values, in order (n of each), into new arrays. */
static void leaves(struct sufcount *c, int32_t **va, int32_t **vb)
{
    settle(c);
    *va = xmalloc(((size_t)c->n + 1) * sizeof(int32_t));
    *vb = xmalloc(((size_t)c->n + 1) * sizeof(int32_t));
    for (int i = 0; i < c->n; i++) {
        (*va)[i] = c->mn[0][c->cap + i];
        (*vb)[i] = c->mn[1][c->cap + i];
    }
}

int sufcount_push(struct sufcount *c, int32_t a, int32_t b)
{
    if (c->n == c->cap) {
        int32_t *va = NULL, *vb = NULL;
        if (c->cap)
            leaves(c, &va, &vb);
        build(c, c->cap ? 2 * c->cap : 16, va, vb, c->n);
        free(va);
        free(vb);
    }
    int i = c->n++, k = c->cap + i;
    int depth = 0;
    while ((1 << depth) < c->cap)
        depth++;
    for (int s = depth; s > 0; s--) /* what is owed above it applies to the others only */
        push_down(c, k >> s);
    c->mn[0][k] = a;
    c->mn[1][k] = b;
    for (k >>= 1; k >= 1; k >>= 1)
        pull_up(c, k);
    return i;
}

static void lower(struct sufcount *c, int k, int lo, int hi, int from)
{
    if (hi <= from)
        return;
    if (lo >= from) {
        apply(c, k, 1);
        return;
    }
    push_down(c, k);
    int mid = lo + (hi - lo) / 2;
    lower(c, 2 * k, lo, mid, from);
    lower(c, 2 * k + 1, mid, hi, from);
    pull_up(c, k);
}

void sufcount_lower(struct sufcount *c, int from)
{
    if (from < c->n)
        lower(c, 1, 0, c->cap, from < 0 ? 0 : from);
}

static void take(struct sufcount *c, int lv, int k, int lo, int hi, int *out, int max, int *got)
{
    if (*got >= max || c->mn[lv][k] > 0)
        return;
    if (k >= c->cap) {
        out[(*got)++] = lo;
        c->mn[lv][k] = NONE;
        return;
    }
    push_down(c, k);
    int mid = lo + (hi - lo) / 2;
    take(c, lv, 2 * k, lo, mid, out, max, got);
    take(c, lv, 2 * k + 1, mid, hi, out, max, got);
    pull_up(c, k);
}

int sufcount_take(struct sufcount *c, int lv, int *out, int max)
{
    int got = 0;
    if (c->n)
        take(c, lv, 1, 0, c->cap, out, max, &got);
    return got;
}

void sufcount_close_up(struct sufcount *c)
{
    if (!c->n)
        return;
    int32_t *va, *vb;
    leaves(c, &va, &vb);
    int kept = 0;
    for (int i = 0; i < c->n; i++)
        if (va[i] != NONE) {
            va[kept] = va[i];
            vb[kept++] = vb[i];
        }
    int cap = 16;
    while (cap < kept)
        cap *= 2;
    build(c, cap, va, vb, kept);
    free(va);
    free(vb);
}
