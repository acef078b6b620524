/*
 * check.h: the checkers (docs/checkers.md): mutex, fencing/lost
 * updates, liveness, stats. Each reads a history and adds its part to the
 * result model; none of them talks to Redis. Verdicts compose: any invalid
 * makes the run invalid, otherwise any unknown makes it unknown. A checker
 * that cannot run yields unknown, never valid.
 */
#ifndef LS_CHECK_H
#define LS_CHECK_H

#include <stdint.h>

#include "checkers/history.h"
#include "util/json.h"

struct workload;

enum verdict { VERDICT_VALID = 0, VERDICT_UNKNOWN = 1, VERDICT_INVALID = 2 };
const char *verdict_name(int v); /* "valid" / "unknown" / "invalid" */

struct check_params {
    int capacity;            /* holds allowed at once (1 = mutex) */
    int64_t near_miss;       /* ns */
    int64_t stuck_after;     /* ns */
    int stuck_after_auto;    /* 1: stuck_after was derived (check_stuck_after_auto) */
    int64_t ttl;             /* ns, 0 if none / unknown */
    int fencing_requested;   /* the workload asked for fences */
    int max_violations;      /* how many violations to list in full */
    int max_stories;         /* how many of those get a story (checkers/story.h) */
    double max_commands_per_grant; /* check.max_commands_per_grant; 0: no limit */
    int jobs;                /* threads of the pass (pass.h pass_run_jobs): 0 = one per
                              * CPU this process may use, at most PASS_JOBS_DEFAULT_MAX;
                              * 1 = one thread. The result is the same. */
    int64_t par_min_events;  /* a history of fewer events passes on one thread
                              * (PASS_PAR_MIN_EVENTS; tests set 0) */
};

/* Contract: the threads check_run's pass uses for h under p: 1 for a
 * history under p->par_min_events events, else p->jobs (0: the CPUs this
 * process may run on, at most PASS_JOBS_DEFAULT_MAX), at most PASS_JOBS_MAX. */
int check_pass_jobs(const struct history *h, const struct check_params *p);

/* Defaults, then overridden from h->meta (the run directory's workload.yaml) when
 * present. */
void check_params_from(const struct history *h, struct check_params *p);

/* Contract: check.stuck_after "auto" for w (ns): max(2 s, 2 x (longest
 * hold + lock.ttl)). The longest hold is the hold distribution's maximum
 * when it has one (fixed, uniform, a capped exponential or lognormal),
 * else its 99.9th percentile (exponential: mean x ln 1000; lognormal:
 * median x e^(3.09 sigma)). docs/checkers.md "liveness". */
int64_t check_stuck_after_auto(const struct workload *w);

/* Run every checker. Returns a new result-model fragment (caller frees):
 * { verdict_checks, counts, latency, throughput, checks, violations, faults,
 *   warnings } — see docs/result-format.md. */
struct json *check_run(struct history *h, const struct check_params *p);

/* The individual checkers; each adds its section(s) to res and returns its
 * verdict. Exposed for unit tests. */
int check_mutex(struct history *h, const struct check_params *p, struct json *res);
int check_fencing(struct history *h, const struct check_params *p, struct json *res);
int check_liveness(struct history *h, const struct check_params *p, struct json *res);
int check_stats(struct history *h, const struct check_params *p, struct json *res);
/* Per-fault-window and per-phase numbers ("fault_windows", "phases"); runs
 * after check_mutex (it counts the violations mutex listed). Always valid. */
int check_windows(struct history *h, const struct check_params *p, struct json *res);
/* Coverage ("coverage", and bit / bit_reason / late_ms on each "faults"
 * entry): runs after the fault list is made. Always valid: result.c
 * turns no bite or too little activity into an unknown verdict. */
int check_coverage(struct history *h, const struct check_params *p, struct json *res);

/* The activity floor (docs/checkers.md "Coverage"): grants a run of w
 * must reach at least: expected = D x min(W / (hold + think + max(g + rel,
 * 5 ms)), R x C / max(hold + g, 1 ms)) with the distributions' means, g the
 * run's median granting try (invoke -> acquire_ok, grant_ns) and rel its
 * median release (release_ns); the floor is expected / 20, at least 1
 * (jobs mode: 1 with the lock layer, else 0; no workload: 1). *expected
 * (may be NULL) gets the estimate. */
#define COV_CMD_MIN_NS 5e6
#define COV_FLOOR_DIVISOR 20.0
#define COV_LATE_MIN_NS ((int64_t)100000000)
int64_t check_grant_floor(const struct workload *w, int capacity, double grant_ns,
                          double release_ns, double *expected);

/* Jobs mode only (model/jobs.h): "checks.jobs" from jobs.jsonl, duplicates
 * and missed jobs; adds nothing and is valid for any other run. */
int check_jobs(struct history *h, const struct check_params *p, struct json *res);

/* Command load ("checks.commands"; checkers/commands.c) from the run
 * directory's commands.json: calls per node and command type between the
 * load phase's two samples, lock commands per grant and per second;
 * invalid when check.max_commands_per_grant is set and exceeded, unknown
 * when it is set and the figure was not measured. No section when there is
 * neither a commands.json nor a limit. */
int check_commands(struct history *h, const struct check_params *p, struct json *res);
/* Contract: is a commandstats type ("evalsha", "client|setname") lock
 * work (1) or connection and server administration (0: info, ping, auth,
 * client, config, ...: counted apart)? */
int commands_type_is_lock(const char *type);
/* Contract: the calls of one node between two samples (cmdstats_sample
 * entries) into calls (type -> count > 0). *reset = 1 when the node's
 * counters started again in between (another run_id, or a count went
 * down): calls are then the end sample's, counted since the reset, a lower
 * bound. Returns 0, or -1 when a sample is missing or failed. */
int commands_delta(const struct json *start, const struct json *end, struct json *calls,
                   int *reset);

#endif
