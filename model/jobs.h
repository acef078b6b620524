/*
 * jobs.h: the duplicate-job workload's shared facts (`workers.mode: jobs`):
 * the defence layers' names, the job stream's length, and the step codes a
 * worker records in the event log (EV_JOB). The harness writes them
 * (harness/jobs.h: the workload keys, the storage ops, the final dump); the
 * checkers read them back from a run directory (checkers/jobs.c,
 * coverage.c, export.c). Nothing here talks to a storage node.
 */
#ifndef LS_MODEL_JOBS_H
#define LS_MODEL_JOBS_H

#include <stddef.h>
#include <stdint.h>

struct workload;
struct strbuf;
struct json;

/* The layers of workers.jobs.layers, in their echo order (JOB_LAYER_* of
 * model/workload.h). */
struct jobs_layer {
    const char *name;
    unsigned bit;
};
#define JOBS_NLAYERS 3
extern const struct jobs_layer jobs_layers[JOBS_NLAYERS];

/* Echo of the layers: " [lock, idempotency]\n" (what follows "layers:"). */
void jobs_layers_yaml(unsigned layers, struct strbuf *sb);
/* JSON array of the layer names (caller frees). */
struct json *jobs_layers_json(unsigned layers);
/* "lock+idempotency", or "none". Returns buf. */
const char *jobs_layers_text(unsigned layers, char *buf, size_t n);

/* Contract: number of jobs a run of w announces: those with k * interval <
 * duration, at most workers.jobs.count when that is > 0. */
int64_t jobs_total(const struct workload *w);

/* What a step found or did (the worker's storage ops, harness/jobs.h). */
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

#endif
