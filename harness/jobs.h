/*
 * jobs.h: the duplicate-job workload (`workers.mode: jobs`; reference
 * articles 03 and 05: "send the digest twice", "two charges"). A stream of
 * jobs is announced from the run's start (job k at k * interval); every
 * worker tries to process every job once: lock(job) -> check "done" -> the
 * side effect -> mark done -> unlock, with the defence layers of
 * `workers.jobs.layers`. The storage node records every side effect; the
 * jobs checker (checkers/jobs.c) counts the jobs done more than once.
 * This module holds the workload keys of `workers.jobs`, the worker's
 * storage ops and the harness's final dump (jobs.jsonl); the loop that
 * drives it is in worker.c. What the checkers share with it (layers, job
 * stream, step codes) is model/jobs.h.
 */
#ifndef LS_JOBS_H
#define LS_JOBS_H

#include <stdint.h>

#include "model/jobs.h"
#include "model/options.h"
#include "util/err.h"

struct workload;
struct ynode;
struct ydiag;

/* ---- workload keys (harness/workload.c hands these over) ---- */

/* The `workers.jobs` section: interval, count, layers (OPT_CUSTOM). */
extern const struct opt_def jobs_tab[];
/* Parse workers.jobs.layers: a list of lock / idempotency / constraint
 * (each at most once; [] = no defence at all). Returns 0, or -1 after
 * reporting to dg. */
int jobs_parse_layers(struct workload *w, const struct ynode *v, const struct ynode *where,
                      const char *path, struct ydiag *dg);

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
