/*
 * rng.h: seeded pseudo-random numbers (xoshiro256**, seeded by splitmix64)
 * and the hold/think time distributions. Every random choice in a run
 * derives from the workload seed plus a stream number (worker id, fault
 * index), so a seed reproduces the same draws.
 */
#ifndef LS_RNG_H
#define LS_RNG_H

#include <stdint.h>

struct rng {
    uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
double rng_double(struct rng *r);               /* [0, 1) */
uint64_t rng_below(struct rng *r, uint64_t n);   /* [0, n), n > 0, unbiased */
int64_t rng_range(struct rng *r, int64_t lo, int64_t hi); /* [lo, hi] */

enum dist_kind { DIST_FIXED, DIST_UNIFORM, DIST_EXPONENTIAL, DIST_LOGNORMAL };

/* A distribution of durations in ns.
 *  fixed:       value
 *  uniform:     min..max
 *  exponential: mean (optionally capped at max when max > 0)
 *  lognormal:   median (value) and sigma (shape), capped at max when max > 0 */
struct dist {
    int kind;
    int64_t value;  /* fixed value, or lognormal median */
    int64_t min, max;
    int64_t mean;   /* exponential */
    double sigma;   /* lognormal */
};

int64_t dist_draw(const struct dist *d, struct rng *r);
/* Largest value the distribution can produce, or -1 when unbounded. */
int64_t dist_max(const struct dist *d);
const char *dist_kind_name(int kind);

#endif
