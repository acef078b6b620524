/*
 * ttl.h: the arithmetic and the measurements behind the TTL-tuning report
 * of `lockstorm sweep` (docs/sweep.md). The predicted curves come from the
 * workload's hold and pause distributions (util/rng.h struct dist): closed
 * forms where there are any, numeric integration over the distributions
 * otherwise. The measurements come from one run's history: which injected
 * pauses hit a hold, whether that hold outlived its lease, and whether
 * another worker entered meanwhile. Nothing here runs a workload or renders.
 */
#ifndef LS_TTL_H
#define LS_TTL_H

#include <stdint.h>

#include "checkers/history.h"
#include "util/rng.h"

struct workload;
struct rundir_meta;

/* ---- prediction ------------------------------------------------------------ */

/* P(X > x) for X drawn by dist_draw(d): fixed is a step, uniform linear,
 * exponential exp(-x/mean), lognormal 0.5 erfc(ln(x/median) / (sigma
 * sqrt 2)); a cap (max > 0) makes it 0 from max on. x in ns. */
double ttl_survival(const struct dist *d, double x);

/* E[X] in ns (caps included). */
double ttl_mean(const struct dist *d);

/* P(hold + pause > ttl), hold and pause independent: E_pause[survival of
 * hold at ttl - pause]; exact for a fixed pause, numeric integration over
 * the pause's distribution otherwise (error below 1e-3). */
double ttl_p_exceed(const struct dist *hold, const struct dist *pause, double ttl);

/* The same event as lockstorm's workers meet it: a worker's hold ends at a
 * deadline fixed when it entered, so a pause landing u into a hold of
 * length h ends the hold at max(h, u + pause); a `target: holder` pause
 * lands at an instant unrelated to the holds, so the hold it hits is
 * length-biased (density h f(h) / E[h]) and u is uniform in [0, h]. Then
 * P(overstay) = 1 - E[1{H <= ttl} min(H, max(0, ttl - pause))] / E[H],
 * averaged over the pause. Never above ttl_p_exceed. */
double ttl_p_exceed_harness(const struct dist *hold, const struct dist *pause, double ttl);

/* The smallest ttl with ttl_p_exceed == 0: max hold + max pause, or -1
 * when either is unbounded (an uncapped exponential or lognormal). */
int64_t ttl_safe_bound(const struct dist *hold, const struct dist *pause);

/* The pauses of a run directory's workload (model/rundir.h) that hit
 * holders, as a mixture: each explicit `pause` fault with target holder (weight: its occurrences in the run) and a
 * nemesis `pause` kind drawing holder targets (uniform in its duration
 * range, weight: its expected occurrences). Returns the number of
 * components written (at most max); 0 when w pauses no holder. */
#define TTL_MAX_PAUSES 8
struct ttl_pause {
    struct dist d;
    double weight;
};
int ttl_pauses_of(const struct rundir_meta *m, struct ttl_pause *out, int max);

/* The mixture forms of ttl_p_exceed / ttl_p_exceed_harness (weights
 * normalised here); 0 when n == 0. */
double ttl_mix_exceed(const struct dist *hold, const struct ttl_pause *p, int n, double ttl,
                      int harness);

/* ---- measurement ----------------------------------------------------------- */

struct ttl_measure {
    int64_t pauses;         /* injected (not skipped) pause occurrences on a worker */
    int64_t paused_holds;   /* of those, pauses that started while the worker had a grant */
    int64_t overstayed;     /* of those, holds that ended after their lease */
    int64_t stale_caused;   /* of those, holds during whose overstay another worker entered */
    int64_t holds;          /* holds rebuilt from the logs */
    int64_t crashed_holds;  /* holds ended by a crash record */
    double hold_p50_ms, hold_p99_ms, hold_max_ms; /* holds no fault touched; -1 without */
    double pause_mean_ms, pause_max_ms;           /* measured pause windows; -1 without */
};

/* Fill m from h (a run directory's history). Returns 0. */
int ttl_measure_history(struct history *h, struct ttl_measure *m);

#endif
