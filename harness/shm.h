/*
 * shm.h: state shared between the harness and its worker processes, in one
 * anonymous MAP_SHARED mapping made before the workers are forked. The
 * harness reads who holds what right now (fault target `holder`) and
 * progress counters; workers read the stop flags. Every field is an atomic
 * written by exactly one side. This is not the record of the run (the event
 * logs are): nothing here is read by the checkers.
 */
#ifndef LS_SHM_H
#define LS_SHM_H

#include <stdatomic.h>
#include <stdint.h>

enum worker_state { WS_STARTING = 0, WS_READY, WS_RUNNING, WS_DONE, WS_FAILED };

struct shm_worker {
    _Atomic int32_t pid;
    _Atomic int32_t state;        /* enum worker_state */
    _Atomic int32_t holding;      /* resource held right now (between acquire_ok and exit), -1 none */
    _Atomic int64_t hold_since;   /* run-relative ns of that grant */
    _Atomic int32_t acquiring;    /* resource of the acquire call in progress, -1 none */
    _Atomic int64_t acquire_since; /* CLOCK_MONOTONIC ns that call began */
    _Atomic uint64_t attempts;
    _Atomic uint64_t grants;
    _Atomic uint64_t busy;        /* acquire attempts answered busy (progress line) */
    _Atomic uint64_t unknown;     /* acquire attempts with unknown outcome (progress line) */
    char error[256];              /* WS_FAILED: why (written before state) */
};

struct shm {
    _Atomic int32_t go;           /* set by the harness once every worker is ready */
    _Atomic int64_t deadline;     /* CLOCK_MONOTONIC ns: no new acquisition after it (set before go) */
    _Atomic int64_t start_mono;   /* time 0 of the run (= go), CLOCK_MONOTONIC ns (set before go) */
    _Atomic int64_t start_real;   /* the same instant in CLOCK_REALTIME */
    _Atomic int32_t stop;         /* finish the current iteration, release, exit */
    int32_t nworkers;
    struct shm_worker w[];
};

/* Map a zeroed shm for n workers; NULL on failure. Unmap with shm_destroy. */
struct shm *shm_create(int nworkers);
void shm_destroy(struct shm *s);

#endif
