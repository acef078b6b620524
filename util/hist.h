/*
 * hist.h: log-bucketed latency histogram in the spirit of HdrHistogram.
 * Values are non-negative nanoseconds; values below 128 are exact, larger
 * ones fall into 64 sub-buckets per power of two (relative error < 1.6%).
 * Fixed size, no allocation: one per worker per operation, merged at report
 * time (the house rule: no allocation on a worker's hot path).
 */
#ifndef LS_HIST_H
#define LS_HIST_H

#include <stdint.h>

#define HIST_SUB 64
#define HIST_BUCKETS (2 * HIST_SUB + 57 * HIST_SUB)

struct hist {
    uint64_t count;
    int64_t min, max;
    double sum;
    uint64_t b[HIST_BUCKETS];
};

void hist_init(struct hist *h);

/* Contract: the bucket of v. */
static inline int hist_bucket_of(uint64_t v)
{
    if (v < 2 * HIST_SUB)
        return (int)v;
    int msb = 63 - __builtin_clzll(v);
    int shift = msb - 6; /* keeps 7 significant bits: sub in [64, 127] */
    uint64_t sub = v >> shift;
    return 2 * HIST_SUB + (shift - 1) * HIST_SUB + (int)(sub - HIST_SUB);
}

/* Contract: v (< 0 as 0) counted in h. Inline: the checkers add a value
 * for most events of a history. */
static inline void hist_add(struct hist *h, int64_t v)
{
    if (v < 0)
        v = 0;
    if (h->count == 0 || v < h->min)
        h->min = v;
    if (h->count == 0 || v > h->max)
        h->max = v;
    h->count++;
    h->sum += (double)v;
    h->b[hist_bucket_of((uint64_t)v)]++;
}

void hist_merge(struct hist *dst, const struct hist *src);
/* Value at quantile q in [0, 1] (bucket midpoint, clamped to [min, max]);
 * 0 when empty. */
int64_t hist_quantile(const struct hist *h, double q);
double hist_mean(const struct hist *h);

#endif
