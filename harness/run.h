/*
 * run.h: one run of a workload, start to verdict (docs/architecture.md "Data flow"):
 * run directory -> cluster -> workers -> fault schedule -> stop and heal ->
 * storage dump -> teardown -> checkers -> result.json and summary. Teardown
 * always runs: normal end, error, SIGINT, SIGTERM. The harness process is
 * single-threaded (workers are forked from it), and SIGINT/SIGTERM/SIGHUP
 * are blocked and taken synchronously with sigtimedwait, so no handler
 * ever races the run's state.
 */
#ifndef LS_RUN_H
#define LS_RUN_H

/* The file a run creates O_EXCL in its --out directory to claim it. */
#define RUN_CLAIM_FILE ".claimed"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "backends/cluster.h"
#include "harness/reaper.h"
#include "harness/shm.h"
#include "harness/workload.h"
#include "locks/lock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"

struct proxy;
struct replset;

struct run_opts {
    const char *out;        /* --out DIR, or NULL for runs/<name>-<UTC>/ */
    int quiet;              /* no progress on stderr */
    int progress;           /* enum progress_mode (harness/progress.h) */
    unsigned formats;       /* reports written into the run directory (reports/reports.h); 0 = all */
    const char *replay;     /* --replay RUN_DIR: its nemesis.yaml replaces the drawn nemesis */
};

/* One process that had a worker id: epoch 0 is forked at the start, each
 * restart by a kill/stop fault forks the next epoch (own event log,
 * evlog_path). */
struct run_epoch {
    uint32_t epoch;
    pid_t pid;
    int status;             /* wait status */
    int killed_by_harness;  /* SIGKILLed: a crash record was appended to its log */
    int fault;              /* id of the fault that ended it, -1 */
    int64_t start_ns, end_ns; /* run-relative: forked, reaped */
};

struct run_worker {
    pid_t pid;              /* the current (latest epoch's) process */
    int exited;             /* reaped */
    int status;             /* wait status when exited */
    int killed_by_harness;  /* SIGKILLed (teardown or fault): a crash record was appended */
    uint32_t epoch;         /* of the current process */
    int fault;              /* id of the fault that ended the current process, -1 */
    int down;               /* ended by a fault that will restart it: the run goes on */
    int64_t start_ns, end_ns; /* run-relative: forked, reaped (0 while running) */
    struct run_epoch *past; /* earlier epochs, oldest first (owned) */
    int npast;
};

struct run {
    const struct workload *w;
    const struct run_opts *opts;
    char dir[2048];
    int64_t start_mono, start_real;
    int64_t deadline_mono;
    struct cluster cluster;
    struct lock_node *nodes;        /* addresses workers use for the lock nodes: worker i's
                                       nnodes entries at nodes + i * nnodes (its proxy links) */
    struct proxy *proxy;            /* between workers and lock nodes (faults/proxy.h), or NULL */
    struct replset *repl;           /* cluster.topology replicated (backends/replset.h), or NULL */
    pid_t proxy_pid;                /* kept after the proxy stopped, for run.json */
    struct shm *shm;
    struct reaper reaper;           /* kills the workers' groups at the end (harness/reaper.h) */
    struct run_worker *workers;
    int nworkers;
    FILE *faults_log;               /* faults.jsonl, line-buffered */
    int fault_seq;
    struct rng fault_rng;
    sigset_t sigs;                  /* the blocked set taken with sigtimedwait */
    int signal;                     /* first SIGINT/SIGTERM/SIGHUP received, 0 if none */
    int auto_dir;                   /* the run directory is runs/NAME-TIME (no --out) */
    int said_ignored;               /* SIGUSR1/SIGUSR2/SIGALRM taken and ignored (said once) */
    int nsignals;                   /* how many were taken: one during a teardown grace ends it */
    int checking;                   /* the checkers run: a signal stops them (stderr says so) */
    struct ls_err err;
    struct json *incidents;         /* our own processes failing under the run: JSON array of
                                       lines for run.json (harness/incident.h); owned */
    uint8_t run_id[16];             /* random, fixed before run.json is first written: run.json
                                       "run_id" and every event log's header (evlog.h) */
    const char *containment;        /* run.json "containment": how every process of the run is
                                       found (docs/reliability.md "Nothing escapes the run") */
    pid_t reaper_pid;               /* the latest reaper's pid (run.json "reaper"), kept after it
                                       stopped */
    struct json *reaper_restarts;   /* the reaper's deaths under the run, each answered by a new
                                       one: JSON array for run.json "reaper"; owned */
};

/* Run-relative now, ns. */
int64_t run_now(const struct run *r);
/* The run's stop predicate, the one every wait of the harness polls
 * (start-up, fault waits, failover waits, teardown): takes any pending
 * SIGINT/SIGTERM/SIGHUP without blocking (the first becomes r->signal,
 * each is counted in r->nsignals and named in one stderr line) and returns
 * non-zero once one has been taken. It never loses one: a signal taken by
 * a fault's wait is seen by the main loop through r->signal. */
int run_interrupted(struct run *r);
/* Sleep up to ns, waking at once when a signal arrives (sigtimedwait on
 * the blocked set, taken as run_interrupted takes it). Returns 1 when a
 * signal was taken during this sleep, 0 otherwise. Every poll loop sleeps
 * with it rather than ls_sleep_ns, so no wait outlives a signal by more
 * than what one poll of its own costs. */
int run_sleep(struct run *r, int64_t ns);

/* Append one JSON line to faults.jsonl (takes ownership of line). */
void run_fault_log(struct run *r, struct json *line);

/* Fork the process of worker i with the given epoch (0 at the start, the
 * next one for a restart). A worker whose previous process was reaped has
 * it moved to workers[i].past first; its shm slot is reset (holding and
 * acquiring -1, state starting). The child does not wait for "go" when it
 * is already set and stops at the shm deadline. Returns 0 (workers[i].pid
 * set) or a negative code with err set. */
int run_spawn_worker(struct run *r, int i, uint32_t epoch, struct ls_err *err);
/* Worker i's process was reaped: mark it exited and clear its pid in shm,
 * so nothing (the reaper kills the process groups named there) signals a
 * number the kernel may since have given to another process's group
 * (pid_max is often 32768; a worker killed early in a long run is long
 * gone by its end). */
void run_worker_reaped(struct run *r, int i);

/* Execute w. On success *result is the result model (caller frees) and
 * *dir_out (when not NULL) the run directory (caller frees). Returns 0, or a
 * negative code with err set (nothing started for LS_EUSAGE/LS_EWORKLOAD;
 * LS_EENV when the environment failed; the run directory is still written
 * as far as it got). */
int run_workload(const struct workload *w, const struct run_opts *opts, struct json **result,
                 char **dir_out, struct ls_err *err);

#endif
