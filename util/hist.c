/*
 * hist.c: see hist.h.
 */
#include "util/hist.h"

#include <string.h>

static void bucket_range(int idx, uint64_t *lo, uint64_t *hi)
{
    if (idx < 2 * HIST_SUB) {
        *lo = *hi = (uint64_t)idx;
        return;
    }
    int rel = idx - 2 * HIST_SUB;
    int shift = rel / HIST_SUB + 1;
    uint64_t sub = (uint64_t)(rel % HIST_SUB + HIST_SUB);
    *lo = sub << shift;
    *hi = ((sub + 1) << shift) - 1;
}

void hist_init(struct hist *h)
{
    memset(h, 0, sizeof(*h));
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->count == 0)
        return;
    if (dst->count == 0 || src->min < dst->min)
        dst->min = src->min;
    if (dst->count == 0 || src->max > dst->max)
        dst->max = src->max;
    dst->count += src->count;
    dst->sum += src->sum;
    for (int i = 0; i < HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
}

int64_t hist_quantile(const struct hist *h, double q)
{
    if (h->count == 0)
        return 0;
    if (q <= 0)
        return h->min;
    if (q >= 1)
        return h->max;
    uint64_t rank = (uint64_t)(q * (double)h->count);
    if (rank >= h->count)
        rank = h->count - 1;
    uint64_t seen = 0;
    for (int i = 0; i < HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen > rank) {
            uint64_t lo, hi;
            bucket_range(i, &lo, &hi);
            int64_t mid = (int64_t)(lo + (hi - lo) / 2);
            if (mid < h->min)
                mid = h->min;
            if (mid > h->max)
                mid = h->max;
            return mid;
        }
    }
    return h->max;
}

double hist_mean(const struct hist *h)
{
    return h->count ? h->sum / (double)h->count : 0.0;
}
