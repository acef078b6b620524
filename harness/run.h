/*
 * run.h: one run of a workload, start to verdict (DESIGN.md data flow):
 * run directory -> cluster -> workers -> fault schedule -> stop and heal ->
 * storage dump -> teardown -> checkers -> result.json and summary. Teardown
 * always runs: normal end, error, SIGINT, SIGTERM. The harness process is
 * single-threaded (workers are forked from it), and SIGINT/SIGTERM/SIGHUP
 * are blocked and taken synchronously with sigtimedwait, so no handler
 * ever races the run's state.
 */
#ifndef LS_RUN_H
#define LS_RUN_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "harness/cluster.h"
#include "harness/shm.h"
#include "harness/workload.h"
#include "locks/lock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"

struct run_opts {
    const char *out;        /* --out DIR, or NULL for runs/<name>-<UTC>/ */
    int quiet;              /* no progress on stderr */
};

struct run_worker {
    pid_t pid;
    int exited;             /* reaped */
    int status;             /* wait status when exited */
    int killed_by_harness;  /* SIGKILLed at teardown: a crash record was appended */
};

struct run {
    const struct workload *w;
    const struct run_opts *opts;
    char dir[2048];
    int64_t start_mono, start_real;
    int64_t deadline_mono;
    struct cluster cluster;
    struct lock_node *nodes;        /* addresses workers use for the lock nodes */
    struct shm *shm;
    struct run_worker *workers;
    int nworkers;
    FILE *faults_log;               /* faults.jsonl, line-buffered */
    int fault_seq;
    struct rng fault_rng;
    sigset_t sigs;                  /* the blocked set taken with sigtimedwait */
    int signal;                     /* first SIGINT/SIGTERM/SIGHUP received, 0 if none */
    struct ls_err err;
};

/* Run-relative now, ns. */
int64_t run_now(const struct run *r);
/* Polls for a pending SIGINT/SIGTERM/SIGHUP without blocking; returns
 * non-zero once one has arrived (the run then winds down). */
int run_interrupted(struct run *r);

/* Append one JSON line to faults.jsonl (takes ownership of line). */
void run_fault_log(struct run *r, struct json *line);

/* Execute w. On success *result is the result model (caller frees) and
 * *dir_out (when not NULL) the run directory (caller frees). Returns 0, or a
 * negative code with err set (nothing started for LS_EUSAGE/LS_EWORKLOAD;
 * LS_EENV when the environment failed; the run directory is still written
 * as far as it got). */
int run_workload(const struct workload *w, const struct run_opts *opts, struct json **result,
                 char **dir_out, struct ls_err *err);

#endif
