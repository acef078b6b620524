/*
 * check.h: the checkers (DESIGN.md "Checkers"): mutex, fencing/lost
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

enum verdict { VERDICT_VALID = 0, VERDICT_UNKNOWN = 1, VERDICT_INVALID = 2 };
const char *verdict_name(int v); /* "valid" / "unknown" / "invalid" */

struct check_params {
    int capacity;            /* holds allowed at once (1 = mutex) */
    int64_t near_miss;       /* ns */
    int64_t stuck_after;     /* ns */
    int64_t ttl;             /* ns, 0 if none / unknown */
    int fencing_requested;   /* the workload asked for fences */
    int max_violations;      /* how many violations to list in full */
    int max_stories;         /* how many of those get a story (checkers/story.h) */
};

/* Defaults, then overridden from h->workload when present. */
void check_params_from(const struct history *h, struct check_params *p);

/* Run every checker. Returns a new result-model fragment (caller frees):
 * { verdict_checks, counts, latency, throughput, checks, violations, faults,
 *   warnings } — see docs/result-format.md. */
struct json *check_run(const struct history *h, const struct check_params *p);

/* The individual checkers; each adds its section(s) to res and returns its
 * verdict. Exposed for unit tests. */
int check_mutex(const struct history *h, const struct check_params *p, struct json *res);
int check_fencing(const struct history *h, const struct check_params *p, struct json *res);
int check_liveness(const struct history *h, const struct check_params *p, struct json *res);
int check_stats(const struct history *h, const struct check_params *p, struct json *res);
/* Per-fault-window and per-phase numbers ("fault_windows", "phases"); runs
 * after check_mutex (it counts the violations mutex listed). Always valid. */
int check_windows(const struct history *h, const struct check_params *p, struct json *res);
/* Jobs mode only (harness/jobs.h): "checks.jobs" from jobs.jsonl, duplicates
 * and missed jobs; adds nothing and is valid for any other run. */
int check_jobs(const struct history *h, const struct check_params *p, struct json *res);

#endif
