/*
 * stress_int.h: what the parts of `lockstorm stress` share (not for other
 * modules): the command's state, the record of each run, and a batch of
 * runs of one workload file over consecutive seeds (harness/stress_runs.c
 * starts and stops them; harness/stress_reduce.c shrinks the workload;
 * harness/stress.c is the command, stress.json and the summary).
 */
#ifndef LS_STRESS_INT_H
#define LS_STRESS_INT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness/stress.h"
#include "model/workload.h"
#include "util/json.h"

enum stress_phase { PHASE_STRESS, PHASE_REDUCE, PHASE_CONFIRM };
enum srun_state { SRUN_RUNNING, SRUN_DONE, SRUN_ERROR, SRUN_STOPPED };

/* One `lockstorm run` child and what its result.json said. */
struct srun {
    int phase;            /* enum stress_phase */
    int cand;             /* the candidate it tried (PHASE_REDUCE), else -1 */
    uint64_t seed;
    char dir[96];         /* its run directory, relative to the stress directory */
    pid_t pid;            /* while running */
    int state;            /* enum srun_state */
    int exit_code;        /* of the child, -1 when killed or not reaped */
    int64_t t_start, t_end;   /* ns since the command started */
    int64_t timeout;      /* ns: stopped when it runs longer */
    char verdict[16];     /* "pass", "fail", "unknown"; "" when it wrote no result */
    struct json *classes; /* stress_classes_of its result (owned), or NULL */
    int hit;              /* it showed what the stress looks for */
    char why[320];        /* error, why stopped, or the first reason of an unknown */
};

/* One reduction step: a candidate and what its tries showed. */
struct sstep {
    int cand;             /* candidate number: reduce/cNNN.yaml */
    char change[200];     /* "workers.count 6 -> 3" */
    char yaml[64];        /* its file, relative to the stress directory ("" when invalid) */
    int tries, hits;
    uint64_t hit_seed;
    int accepted;
    char why[320];        /* why it was not run (did not load), or "" */
};

struct stress_ctx {
    /* the command */
    const char *given;        /* the WORKLOAD argument */
    const char *file;         /* its resolved path (loaded, and run in the stress phase) */
    const char *const *sets;  /* the user's --set overrides (borrowed from argv) */
    int nsets;
    struct workload *base;    /* the workload as the user's overrides make it (owned) */
    const char *until;        /* --until CLASS, or NULL: a FAIL verdict */
    char formats[128];        /* --format of every run (json always in) */
    uint64_t seed0;           /* first seed */
    int64_t nseeds;           /* --seeds (0 with --time) */
    int64_t time_budget;      /* --time, ns (0 with --seeds) */
    int jobs, tries, confirm, max_runs, quiet;
    int64_t reduce_time, min_duration;
    char dir[PATH_MAX];       /* the stress directory */
    char self[PATH_MAX];      /* the lockstorm binary */
    int64_t t0, real0;
    /* what a hit is: the verdict must be FAIL (no --until), and the class
     * must appear (cls[0]: --until, or the failing run's first class) */
    int need_fail;
    char cls[64];
    /* state */
    int signal;               /* the first SIGINT/SIGTERM/SIGHUP taken, 0 none */
    int running;
    struct srun **runs;       /* every run started, in order (owned) */
    int nruns, caprun;
    struct sstep *steps;      /* reduction steps (owned) */
    int nsteps, capstep;
    int ncand;                /* candidates numbered so far */
    int found;                /* index of the stress run that failed, -1 none */
    int reduce_runs;          /* runs of the reduction and confirmation */
    int64_t reduce_t0;
    char stopped_why[200];    /* why the reduction ended */
    char reduced[PATH_MAX];   /* reduced.yaml once written ("" before) */
    uint64_t reduced_seed;
    char reduced_from[96];    /* the candidate file it was written from */
    int confirm_hits, confirm_runs;
    char error[512];          /* a run that could not run (exit 3) */
};

/* A batch: runs of one workload file over seeds seed0, seed0 + 1, ... */
struct sbatch {
    int phase, cand;
    const char *yaml;         /* the workload file the runs run */
    int with_user_sets;       /* pass the user's --set overrides (the stress phase) */
    int64_t planned;          /* the workload's duration, ns (for the run timeout) */
    uint64_t seed0;
    int64_t count;            /* seeds to run; < 0: until deadline */
    int64_t deadline;         /* ns since start: no run starts after it (0: none) */
    int stop_on_hit;          /* stop starting and stop the others at the first hit */
    int budgeted;             /* counts against --max-runs / --reduce-time */
    /* out */
    int started, hits, judged, unknown, errors;
    int first_hit;            /* index into ctx runs, -1 none */
    int first_error;          /* index into ctx runs, -1 none */
};

/* Contract: start the batch's runs (at most x->jobs at once) and wait for
 * them, the way harness/sweep_run.c runs its cells (the binary itself as a
 * `run` child, argv, no shell, util/proc.h); a signal stops every running
 * child by pid (SIGTERM, SIGKILL after a grace) and sets x->signal; a hit
 * with stop_on_hit stops the others the same way (they stay readable,
 * marked stopped). A run that could not run stops the batch. Each finished
 * run is recorded in x->runs and stress.json is rewritten. */
void stress_batch_run(struct stress_ctx *x, struct sbatch *b);

/* Contract: 1 when the result document res is a hit for x. */
int stress_is_hit(const struct stress_ctx *x, const struct json *res);

/* Contract: the reduction budget is spent (runs or time). */
int stress_budget_spent(const struct stress_ctx *x);

/* Contract: shrink x->base from the failing run x->runs[x->found] (its
 * seed) to the smallest candidate that still reproduces; writes reduce/,
 * reduced.yaml and its confirmation runs. Never fails the command: what it
 * could not do is said in x->stopped_why. */
void stress_reduce(struct stress_ctx *x);

/* Contract: stress.json from x into x->dir (atomically); 0 or -errno. */
int stress_write_json(const struct stress_ctx *x, int final, int exit_code);

/* Contract: "SIGINT", "SIGTERM", "SIGHUP" (else "signal"). */
const char *stress_signal_name(int s);

/* Contract: 1 when a signal is pending or was taken (x->signal set). */
int stress_poll_signal(struct stress_ctx *x);

#endif
