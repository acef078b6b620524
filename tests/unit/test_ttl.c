/*
 * test_ttl.c: the predicted-curve arithmetic of the TTL sweep
 * (checkers/ttl.h): survival functions against their closed forms,
 * P(hold + pause > TTL) against hand-computed values (steps, uniform sums,
 * the gamma tail of two exponentials), the harness's length-biased
 * overstay model, safe bounds, and the pause mixture read from a workload.
 */
#include <math.h>
#include <string.h>

#include "checkers/ttl.h"
#include "model/rundir.h"
#include "tests/unit/testing.h"
#include "util/timeutil.h"

#define MS (double)LS_NS_PER_MS
#define NEAR(a, b, tol) CHECKF(fabs((a) - (b)) <= (tol), "%.6f != %.6f (tol %g)", (double)(a), \
                               (double)(b), (double)(tol))

static struct dist fixed(double ms)
{
    struct dist d = {DIST_FIXED, (int64_t)(ms * MS), 0, 0, 0, 0};
    return d;
}

static struct dist uniform(double lo, double hi)
{
    struct dist d = {DIST_UNIFORM, 0, (int64_t)(lo * MS), (int64_t)(hi * MS), 0, 0};
    return d;
}

static struct dist expo(double mean, double cap)
{
    struct dist d = {DIST_EXPONENTIAL, 0, 0, (int64_t)(cap * MS), (int64_t)(mean * MS), 0};
    return d;
}

static struct dist lognormal(double median, double sigma, double cap)
{
    struct dist d = {DIST_LOGNORMAL, (int64_t)(median * MS), 0, (int64_t)(cap * MS), 0, sigma};
    return d;
}

static void test_survival(void)
{
    struct dist f = fixed(50), u = uniform(20, 80), e = expo(40, 0), ec = expo(40, 100);
    struct dist l = lognormal(50, 0.5, 0), lc = lognormal(50, 0.5, 60);
    NEAR(ttl_survival(&f, 49 * MS), 1, 0);
    NEAR(ttl_survival(&f, 50 * MS), 0, 0);
    NEAR(ttl_survival(&u, 10 * MS), 1, 0);
    NEAR(ttl_survival(&u, 50 * MS), 0.5, 1e-12);
    NEAR(ttl_survival(&u, 65 * MS), 0.25, 1e-12);
    NEAR(ttl_survival(&u, 80 * MS), 0, 0);
    NEAR(ttl_survival(&e, 40 * MS), exp(-1), 1e-12);
    NEAR(ttl_survival(&ec, 99 * MS), exp(-99.0 / 40), 1e-12);
    NEAR(ttl_survival(&ec, 100 * MS), 0, 0);
    NEAR(ttl_survival(&l, 50 * MS), 0.5, 1e-12);
    NEAR(ttl_survival(&l, 50 * MS * exp(0.5)), 0.158655, 1e-6); /* one sigma above */
    NEAR(ttl_survival(&lc, 60 * MS), 0, 0);
    NEAR(ttl_mean(&u), 50 * MS, 1e-6);
    NEAR(ttl_mean(&ec), 40 * MS * (1 - exp(-2.5)), 1e-3);
    NEAR(ttl_mean(&l), 50 * MS * exp(0.125), 1e-3);
    /* the capped lognormal's mean, integrated: below the cap, above the uncapped median */
    double m = ttl_mean(&lc);
    CHECKF(m > 45 * MS && m < 60 * MS, "capped lognormal mean %.0f", m);
}

static void test_exceed(void)
{
    struct dist h = uniform(20, 80), p150 = fixed(150);
    /* P(hold + 150ms > T): 1 below 170 ms, (230 - T)/60 between, 0 from 230 ms */
    NEAR(ttl_p_exceed(&h, &p150, 100 * MS), 1, 0);
    NEAR(ttl_p_exceed(&h, &p150, 200 * MS), 0.5, 1e-12);
    NEAR(ttl_p_exceed(&h, &p150, 215 * MS), 0.25, 1e-12);
    NEAR(ttl_p_exceed(&h, &p150, 230 * MS), 0, 0);
    struct dist hf = fixed(50), pf = fixed(100);
    NEAR(ttl_p_exceed(&hf, &pf, 149 * MS), 1, 0);
    NEAR(ttl_p_exceed(&hf, &pf, 150 * MS), 0, 0);

    /* two uniforms on [0, 100]: the triangular tail of their sum */
    struct dist u = uniform(0, 100);
    NEAR(ttl_p_exceed(&u, &u, 50 * MS), 1 - 0.125, 1e-3);
    NEAR(ttl_p_exceed(&u, &u, 100 * MS), 0.5, 1e-3);
    NEAR(ttl_p_exceed(&u, &u, 150 * MS), 0.125, 1e-3);
    NEAR(ttl_p_exceed(&u, &u, 200 * MS), 0, 1e-3);

    /* exponential hold, fixed pause: exp(-(T - p)/m) */
    struct dist e = expo(40, 0);
    NEAR(ttl_p_exceed(&e, &pf, 180 * MS), exp(-2), 1e-12);
    /* two exponentials of mean m: Gamma(2, m), P(> T) = e^{-T/m} (1 + T/m) */
    NEAR(ttl_p_exceed(&e, &e, 120 * MS), exp(-3) * 4, 1e-3);
    /* lognormal hold and no pause: the median */
    struct dist l = lognormal(60, 0.7, 0), p0 = fixed(0);
    NEAR(ttl_p_exceed(&l, &p0, 60 * MS), 0.5, 1e-12);
    /* a uniform pause over a fixed hold: P(pause > T - 50) */
    struct dist pu = uniform(100, 300);
    NEAR(ttl_p_exceed(&hf, &pu, 250 * MS), 0.5, 1e-3);
}

static void test_harness_model(void)
{
    /* fixed 100 ms holds, 150 ms pause: it overstays iff it lands past 50 ms */
    struct dist h = fixed(100), p = fixed(150);
    NEAR(ttl_p_exceed_harness(&h, &p, 200 * MS), 0.5, 1e-12);
    NEAR(ttl_p_exceed_harness(&h, &p, 225 * MS), 0.25, 1e-12);
    NEAR(ttl_p_exceed_harness(&h, &p, 250 * MS), 0, 1e-12);
    NEAR(ttl_p_exceed_harness(&h, &p, 90 * MS), 1, 0); /* the hold alone outlives the lease */
    /* uniform holds on [0, 100], pause 100, T = 150: the pause must land
     * within the first 50 ms: 1 - E[min(H, 50)] / E[H], with
     * E[min(H, 50)] = int_0^50 h/100 dh + 50 * 0.5 = 37.5 and E[H] = 50 */
    struct dist u = uniform(0, 100), p100 = fixed(100);
    NEAR(ttl_p_exceed_harness(&u, &p100, 150 * MS), 1 - 37.5 / 50, 1e-3);
    /* never above the plain P(hold + pause > T), on a grid, random pause too */
    struct dist hu = uniform(20, 80), pu = uniform(50, 300);
    int below = 1;
    for (double t = 50; t <= 450; t += 25)
        if (ttl_p_exceed_harness(&hu, &pu, t * MS) > ttl_p_exceed(&hu, &pu, t * MS) + 2e-3)
            below = 0;
    CHECK(below);
    /* and monotone non-increasing in T */
    double prev = 2;
    int mono = 1;
    for (double t = 50; t <= 450; t += 10) {
        double v = ttl_p_exceed_harness(&hu, &pu, t * MS);
        if (v > prev + 1e-3)
            mono = 0;
        prev = v;
    }
    CHECK(mono);
}

static void test_bounds_and_mix(void)
{
    struct dist h = uniform(20, 80), p = fixed(150), e = expo(40, 0), ec = expo(40, 120);
    CHECK_INT(ttl_safe_bound(&h, &p), (int64_t)(230 * MS));
    CHECK_INT(ttl_safe_bound(&e, &p), -1);
    CHECK_INT(ttl_safe_bound(&ec, &p), (int64_t)(270 * MS));
    /* a two-component mixture weighs its parts */
    struct ttl_pause mix[2] = {{fixed(150), 3}, {fixed(0), 1}};
    NEAR(ttl_mix_exceed(&h, mix, 2, 200 * MS, 0), 0.75 * 0.5 + 0.25 * 0, 1e-12);
    NEAR(ttl_mix_exceed(&h, mix, 0, 200 * MS, 0), 0, 0);
}

static void test_pauses_of_workload(void)
{
    const char *yaml = "name: t\nduration: 4s\nworkers: {hold: {dist: uniform, min: 20ms, max: 80ms}}\n"
                       "faults:\n"
                       "  - {kind: pause, target: holder, at: 500ms, every: 500ms, duration: 150ms}\n"
                       "  - {kind: pause, target: worker:1, at: 1s, duration: 2s}\n"
                       "  - {kind: pause, target: holder, at: 2s, duration: 300ms}\n";
    struct rundir_meta *m = NULL;
    struct ls_err err = {0};
    REQUIRE(rundir_meta_parse("t.yaml", yaml, strlen(yaml), &m, &err) == 0);
    struct ttl_pause p[TTL_MAX_PAUSES];
    int n = ttl_pauses_of(m, p, TTL_MAX_PAUSES);
    CHECK_INT(n, 2); /* the worker:1 pause is not a holder pause */
    CHECK_INT(p[0].d.kind, DIST_FIXED);
    CHECK_INT(p[0].d.value, 150 * LS_NS_PER_MS);
    NEAR(p[0].weight, 7, 0); /* 0.5 s, 1.0 s, ... 3.5 s */
    CHECK_INT(p[1].d.value, 300 * LS_NS_PER_MS);
    NEAR(p[1].weight, 1, 0);
    rundir_meta_free(m);
}

int main(void)
{
    RUN(test_survival);
    RUN(test_exceed);
    RUN(test_harness_model);
    RUN(test_bounds_and_mix);
    RUN(test_pauses_of_workload);
    return t_finish();
}
