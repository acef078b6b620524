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
    /* A stall request (fault loop_stall, harness/fault_env.c): the harness
     * writes stall_ns and stall_by, then bumps stall_seq; the worker takes
     * it (stall_held, stall_sent, then stall_taken = that seq), asks its
     * lock to stall (lock_ops.stall) and reports (stall_result, stall_why,
     * then stall_done = that seq). A request not taken by stall_by is
     * dropped by the worker (stall_result SHM_STALL_DROPPED). */
    _Atomic int32_t stall_seq;    /* harness */
    _Atomic int64_t stall_ns;     /* harness: how long */
    _Atomic int64_t stall_by;     /* harness: CLOCK_MONOTONIC ns: take it before, or drop it */
    _Atomic int32_t stall_taken;  /* worker: the last seq taken */
    _Atomic int32_t stall_held;   /* worker: resource held when it was sent, -1 none */
    _Atomic int64_t stall_sent;   /* worker: run-relative ns the request was sent */
    _Atomic int32_t stall_done;   /* worker: the last seq finished */
    _Atomic int64_t stall_result; /* worker: stalled ns (>= 0), or a SHM_STALL_* code */
    char stall_why[160];          /* worker: why not (written before stall_done) */
};

/* stall_result codes (negative: no stall). */
enum { SHM_STALL_UNSUPPORTED = -1, SHM_STALL_FAILED = -2, SHM_STALL_DROPPED = -3 };

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
