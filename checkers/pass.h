/*
 * pass.h: the checkers' one pass over a history (docs/performance.md
 * "Checker"). A k-way merge of the per-worker logs (each already in time
 * order: merged, never sorted) delivers every record once, in (time, worker
 * index) order with each worker's own order kept, to every consumer; each
 * consumer keeps state bounded by workers, resources, open holds and
 * pending violations, never by the history's length. The mapped logs'
 * pages are dropped behind the cursors, so RSS does not grow either.
 */
#ifndef LS_PASS_H
#define LS_PASS_H

#include "checkers/check.h"
#include "checkers/history.h"

/* One consumer of the pass. wi is the index into h->w. */
#define PASS_TYPE(t) (1u << (t))
struct pass_ops {
    const char *name;
    /* The record types it wants, bit (1 << type); 0: all. */
    uint32_t types;
    void (*event)(void *st, int wi, const struct ev_rec *r);
    /* After worker wi's last record (called at that record's place in the
     * merged order; also for a worker without records, first). May be NULL. */
    void (*worker_end)(void *st, int wi);
    /* After the last record of all. May be NULL. */
    void (*end)(void *st);
    /* What it costs, measured: per mille of a one-thread check's CPU, on
     * the bench's history of 10^7 events (bench/bench_check; perf, the
     * event function with what it calls). The parallel pass decides from
     * it which consumers another thread feeds (passpar.c offload_pick);
     * 0, unknown: the merging thread feeds it. */
    unsigned cost;
};

/* unit: 0 for a consumer that shares no state with another (the default
 * of a {ops, st} initializer). Consumers given the same non-zero unit are
 * fused: one calls into another's state during the pass (check.c: the
 * mutex checker tells the charts' series each hold it pairs, "hold
 * listener" below), so a pass must feed a unit's consumers from one
 * thread, in their order in the array; a pass that runs consumers on
 * several threads keeps each unit together. Consumers of different units
 * share nothing. */
struct pass_consumer {
    const struct pass_ops *ops;
    void *st;
    int unit;
};

/* A hold as the mutex checker pairs it (grant -> enter -> exit, crash or
 * the end of its worker's log: docs/checkers.md "mutex"), told to a
 * listener as it ends: the one pairing of the pass. The charts' series
 * takes its holds from here instead of pairing the records again. */
enum paired_end { HOLD_EXIT = 0, HOLD_CRASH = 1, HOLD_OPEN = 2 };
struct paired_hold {
    int64_t acquired;           /* its grant (its entry when it had none) */
    int64_t enter, exit;
    int64_t lease;              /* lease end, renewals included; INT64_MAX: no expiry */
    int wi;                     /* index into h->w */
    int32_t worker;             /* worker id */
    int res;
    int kind;                   /* enum paired_end */
};
struct hold_listener {
    /* Called once per hold, as it ends, from within the source's pass
     * callbacks (so from the thread that feeds the source). x is valid
     * during the call only. */
    void (*ended)(void *ctx, const struct paired_hold *x);
    void *ctx;
};

/* Contract: feed every record of h to the n consumers c, in merged order,
 * checking the records of unverified logs (history.h) on the way. Returns
 * 0, or -1 when one of those was bad: the consumers saw part of the history
 * only (discard them, history_reload(h), and pass again). */
int pass_run(struct history *h, const struct pass_consumer *c, int n);

/* The parallel pass (passpar.c; docs/checkers.md "The pass on several
 * cores"). Threads are capped at PASS_JOBS_MAX; a history of fewer than
 * PASS_PAR_MIN_EVENTS events passes on one thread (check_run decides). */
#define PASS_JOBS_MAX 256
/* --jobs not given: one thread per usable CPU, at most this many (the
 * merging thread is the limit: docs/performance.md "The pass on two cores") */
#define PASS_JOBS_DEFAULT_MAX 4
#define PASS_PAR_MIN_EVENTS 100000

/* Contract: pass_run on up to jobs threads (jobs <= 1: pass_run itself):
 * every consumer gets exactly pass_run's calls, in pass_run's order; one
 * thread merges, the others read and check the logs ahead of it, and one
 * of them makes the calls of some units of consumers (a unit's calls all
 * from one thread at a time, in order: passpar.c "consumers fed by a
 * helper"). Returns as pass_run (-1: a deferred record was bad). */
int pass_run_jobs(struct history *h, const struct pass_consumer *c, int n, int jobs);

/* Contract: (tests) on: the merging thread waits for the helpers to read
 * every chunk of a log read with pread instead of reading the chunks no
 * helper has begun itself, so that a test sees the helpers' reading and
 * checking at work on any history (LS_CHECK_RING_WAIT=1 in the
 * environment does the same for a lockstorm process). Not when a helper
 * could not start: the merging thread then reads what no helper does. */
void pass_test_ring_wait(int on);

/* Contract: (tests) which consumers of c[0..n) a pass on several threads
 * hands to helper 0: off[k] 1 for each, their number (passpar.c
 * offload_pick, LS_CHECK_OFFLOAD included). */
int pass_test_offload_pick(const struct pass_consumer *c, int n, int *off);

/* A checker as a consumer of the pass: init makes its state (it may add
 * placeholders to res), the pass feeds it, finish writes its sections of
 * res, frees the state and returns its verdict. */
struct checker_def {
    struct pass_ops ops;
    void *(*init)(const struct history *h, const struct check_params *p, struct json *res);
    int (*finish)(void *st, struct json *res);
    /* A checker that pairs holds (the mutex checker): from now on, tell l
     * (copied) each hold as it ends; a consumer listening is fused to it
     * (pass_consumer.unit). NULL for the others. */
    void (*listen)(void *st, const struct hold_listener *l);
};

extern const struct checker_def mutex_checker, fencing_checker, liveness_checker,
    stats_checker, windows_checker, coverage_checker;

/* Contract: run one checker alone: its own pass over h (check_mutex etc.). */
int checker_run_one(const struct checker_def *d, struct history *h,
                    const struct check_params *p, struct json *res);

#endif
