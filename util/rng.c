/*
 * rng.c: xoshiro256** (Blackman & Vigna) with splitmix64 seeding, and the
 * duration distributions. See rng.h.
 */
#include "util/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1b54a32d192ed03ULL);
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double rng_double(struct rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
    /* Lemire's rejection on the top bits would be faster; modulo with
     * rejection keeps it obviously unbiased. */
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
    uint64_t x;
    do
        x = rng_next(r);
    while (x >= limit);
    return x % n;
}

int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)rng_below(r, (uint64_t)(hi - lo) + 1);
}

static int64_t cap(int64_t v, int64_t max)
{
    if (v < 0)
        v = 0;
    if (max > 0 && v > max)
        v = max;
    return v;
}

int64_t dist_draw(const struct dist *d, struct rng *r)
{
    switch (d->kind) {
    case DIST_FIXED:
        return d->value;
    case DIST_UNIFORM:
        return rng_range(r, d->min, d->max);
    case DIST_EXPONENTIAL: {
        double u = 1.0 - rng_double(r); /* (0, 1] */
        return cap((int64_t)(-log(u) * (double)d->mean), d->max);
    }
    case DIST_LOGNORMAL: {
        /* Box-Muller for one standard normal draw */
        double u1 = 1.0 - rng_double(r), u2 = rng_double(r);
        double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        return cap((int64_t)((double)d->value * exp(d->sigma * z)), d->max);
    }
    }
    return 0;
}

int64_t dist_max(const struct dist *d)
{
    switch (d->kind) {
    case DIST_FIXED: return d->value;
    case DIST_UNIFORM: return d->max;
    default: return d->max > 0 ? d->max : -1;
    }
}

const char *dist_kind_name(int kind)
{
    switch (kind) {
    case DIST_FIXED: return "fixed";
    case DIST_UNIFORM: return "uniform";
    case DIST_EXPONENTIAL: return "exponential";
    case DIST_LOGNORMAL: return "lognormal";
    }
    return "?";
}
