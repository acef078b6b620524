/*
 * worker.h: one worker process (docs/architecture.md "Processes"): loops pick a resource
 * -> acquire (retry policy) -> enter -> protected read-modify-write -> exit
 * -> release -> think, writing every step to its event log, until the
 * harness sets the stop flag or the run deadline passes. A worker is a
 * process, not a thread, so that SIGSTOP pauses exactly one client.
 */
#ifndef LS_WORKER_H
#define LS_WORKER_H

#include <stdint.h>

#include "harness/shm.h"
#include "harness/workload.h"
#include "locks/lock.h"

struct worker_args {
    int id;
    uint32_t epoch;
    const struct workload *w;
    const char *rundir;
    struct shm *shm;
    const struct lock_node *nodes;
    int nnodes;
    const struct replset_map *replset; /* replicated topology: follow its primary; else NULL */
    const char *storage_host;    /* NULL: no storage ops */
    int storage_port;
    const char *storage_password; /* "" = none (backends/cluster.h) */
    const uint8_t *run_id;       /* EVLOG_RUN_ID_LEN bytes for the log header (model/evlog.h) */
    int64_t start_mono;          /* run start, CLOCK_MONOTONIC ns */
    int64_t start_real;
};

/* Runs in the forked child; returns the exit status for _exit(): 0 after
 * a clean stop, 3 when it could not start (reason in shm error). */
int worker_main(const struct worker_args *a);

#endif
