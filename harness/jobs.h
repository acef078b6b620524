/*
 * jobs.h: the duplicate-job workload (`workers.mode: jobs`; reference
 * articles 03 and 05: "send the digest twice", "two charges"). A stream of
 * jobs is announced from the run's start (job k at k * interval); every
 * worker tries to process every job once: lock(job) -> check "done" -> the
 * side effect -> mark done -> unlock, with the defence layers of
 * `workers.jobs.layers`. The storage node records every side effect; the
 * jobs checker (checkers/jobs.c) counts the jobs done more than once.
 * This module holds the workload keys of `workers.jobs`, the job stream,
 * the worker's storage ops and the harness's final dump (jobs.jsonl). The
 * loop that drives it is in worker.c.
 */
#ifndef LS_JOBS_H
#define LS_JOBS_H

#include <stdint.h>

#include "model/options.h"
#include "util/err.h"

struct workload;
struct ynode;
struct ydiag;
struct strbuf;
struct json;

/* ---- workload keys (harness/workload.c hands these over) ---- */

/* The `workers.jobs` section: interval, count, layers (OPT_CUSTOM). */
extern const struct opt_def jobs_tab[];
/* Parse workers.jobs.layers: a list of lock / idempotency / constraint
 * (each at most once; [] = no defence at all). Returns 0, or -1 after
 * reporting to dg. */
int jobs_parse_layers(struct workload *w, const struct ynode *v, const struct ynode *where,
                      const char *path, struct ydiag *dg);
/* Echo of the layers: " [lock, idempotency]\n" (what follows "layers:"). */
void jobs_layers_yaml(unsigned layers, struct strbuf *sb);
/* JSON array of the layer names (caller frees). */
struct json *jobs_layers_json(unsigned layers);
/* "lock+idempotency", or "none". Returns buf. */
const char *jobs_layers_text(unsigned layers, char *buf, size_t n);

/* ---- the job stream ---- */

/* Number of jobs a run of w announces: those with k * interval < duration,
 * at most workers.jobs.count when that is > 0. */
int64_t jobs_total(const struct workload *w);

/* ---- worker side: one connection to the storage node ---- */

/* What a step found or did. */
enum job_result {
    JOBR_FREE = 0,      /* check: not done / claim: claimed by this worker */
    JOBR_DONE = 1,      /* check: done already / claim: someone else's claim */
    JOBR_APPLIED = 2,   /* side effect recorded */
    JOBR_REFUSED = 3,   /* side effect refused by the constraint (a duplicate) */
    JOBR_ERROR = -1,    /* storage error or timeout: outcome unknown */
};

/* Steps recorded in the event log (EV_JOB, aux; value = job id). */
#define JOB_STEPS(X)                                                      \
    X(JOBS_GAVE_UP, 1, "gave_up")      /* lock not granted: left to others */ \
    X(JOBS_SKIP_DONE, 2, "skip_done")  /* found done / claim refused: skipped */ \
    X(JOBS_CLAIMED, 3, "claimed")      /* found not done / claimed */     \
    X(JOBS_EFFECT, 4, "effect")        /* side effect applied */          \
    X(JOBS_REFUSED, 5, "refused")      /* side effect refused (duplicate) */ \
    X(JOBS_ABORTED, 6, "aborted")      /* hold cut short (lost, stop) */  \
    X(JOBS_ERROR, 7, "error")          /* storage error: outcome unknown */

enum job_step {
#define JOBS_ENUM(name, val, text) name = val,
    JOB_STEPS(JOBS_ENUM)
#undef JOBS_ENUM
};

/* "effect", ..., or "?". */
const char *job_step_name(int step);
/* 0 when unknown. */
int job_step_from_name(const char *name);

struct jobstore;

/* Connect to the storage node (password: NULL or "" = none; copied).
 * Caller frees with jobstore_close. */
int jobstore_open(struct jobstore **out, const char *host, int port, const char *password,
                  int64_t timeout_ns, struct ls_err *err);
void jobstore_close(struct jobstore *js);
/* GET done:<job>: JOBR_FREE, JOBR_DONE or JOBR_ERROR. */
int jobstore_check(struct jobstore *js, int64_t job);
/* SET done:<job> <worker> NX (the idempotency key, set before the side
 * effect): JOBR_FREE (claimed), JOBR_DONE, JOBR_ERROR. */
int jobstore_claim(struct jobstore *js, int64_t job, int worker);
/* The side effect: RPUSH effects:<job> <worker>; with constraint, a
 * conditional insert that refuses when the job has an effect already (and
 * counts the refusal). JOBR_APPLIED, JOBR_REFUSED, JOBR_ERROR. */
int jobstore_effect(struct jobstore *js, int64_t job, int worker, int constraint);
/* SET done:<job> <worker>. Returns 0 or JOBR_ERROR. */
int jobstore_mark_done(struct jobstore *js, int64_t job, int worker);

/* ---- harness side ---- */

/* Write jobs.jsonl from the storage node: one line per announced job,
 * {"job":K,"effects":[workers...],"refused":N,"done":W|null}. */
int jobs_dump(const char *host, int port, const char *password, const struct workload *w,
              const char *path, struct ls_err *err);

#endif
