/*
 * fault.h: fault kinds behind one interface (docs/faults.md "How a fault acts"). One const
 * ops table per kind, looked up by name from a static registry. The
 * scheduler (faults/schedule.c) expands a workload's fault specs into
 * occurrences, starts and ends them, and records each start and end in
 * faults.jsonl. A kind acts on the world only through the struct fault_env
 * it is handed (faults/env.h). A kind's start must verify that the fault
 * took effect (a paused process is in state T) before it counts as started.
 */
#ifndef LS_FAULT_H
#define LS_FAULT_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "util/json.h"
#include "model/options.h"
#include "model/workload.h"

#define FAULT_OPS_VERSION 1

struct fault_env;
struct fault_spec;
struct workload;

/* The most processes one occurrence can act on: every worker of a run
 * (workers.count is at most LINK_MAX_WORKERS) and every node (at most 32).
 * A fault must never stop more processes than it can record, since only
 * the recorded ones are resumed at its end. */
#define FAULT_MAX_PIDS (LINK_MAX_WORKERS + 32)

/* One occurrence of a fault, live between start and end. */
struct fault_inst {
    const struct fault_spec *spec;
    int id;               /* sequence number in faults.jsonl */
    int64_t start_ns;     /* run-relative, when confirmed */
    int64_t end_ns;       /* planned end */
    int worker;           /* resolved target worker, or -1 */
    int node;             /* resolved target node, or -1 */
    int pids[FAULT_MAX_PIDS]; /* processes acted on */
    int npids;
    int pgroup;           /* pids are process-group leaders: signal the group */
    struct json *detail;  /* extra fields for the start line of faults.jsonl (owned) */
    struct json *end_detail; /* extra fields for the end line, set by stop (owned; may stay NULL) */
    void *state;          /* the kind's own per-occurrence state: made by start, freed by stop */
};

struct fault_ops {
    int version;
    const char *name;
    const char *help;                 /* one line */
    unsigned targets;                 /* bitmask of 1u << enum fault_target accepted */
    const struct opt_def *options;    /* kind-specific keys, or NULL */
    size_t options_size;
    /* Resolve the target and apply the fault. Returns 0 when it took effect,
     * with fi->start_ns set; fi->end_ns, when start sets it (> 0), replaces
     * the planned start + duration (INT64_MAX: ends only at the final heal).
     * 1 when there was nothing to act on (e.g. no holder right now; the
     * occurrence is recorded as skipped), negative on error (err set). */
    int (*start)(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err);
    /* Undo the fault. Must be idempotent and safe after a partial start. */
    int (*stop)(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err);
    /* Cross-key checks against the workload that the options tables cannot
     * express (e.g. failover needs cluster.topology replicated), run by the
     * loader for every faults[] item and nemesis draw. Returns 0, or -1 with
     * a one-line reason in why. NULL: none. */
    int (*validate)(const struct workload *w, const struct fault_spec *fs, char *why, size_t n);
    unsigned flags;                   /* FAULT_* below */
    /* Shortest `every` the kind takes: what one occurrence costs to start
     * and verify (a restarted worker, a promoted replica). 0: FAULT_MIN_EVERY. */
    int64_t min_every;
    /* Checks of the kind's own keys the options tables cannot express (a
     * value's form). Returns NULL, or the name of the first bad key with a
     * one-line reason in why (the loader reports it at that key). NULL
     * hook: none. */
    const char *(*check_keys)(const struct fault_spec *fs, char *why, size_t n);
};

/* Every workload's fault schedule is bounded (docs/reliability.md "Bounded
 * fault schedules"): explicit faults and the nemesis together start at most
 * FAULT_MAX_OCCURRENCES occurrences, and a repeating fault's `every` is at
 * least its kind's min_every (FAULT_MIN_EVERY unless the kind says more). */
#define FAULT_MAX_OCCURRENCES 10000
#define FAULT_MIN_EVERY 1000000 /* 1 ms */

/* fault_ops.flags: the kind acts only in the harness's proxy (on links),
 * never on a node process, so it works against nodes lockstorm did not
 * start (cluster.topology external: the external topology's backend). */
#define FAULT_PROXY_ONLY 0x1u

const struct fault_ops *fault_find(const char *name);
const struct fault_ops *const *fault_all(void);
void fault_names(char *buf, size_t n);
void fault_print_list(FILE *out);

#endif
