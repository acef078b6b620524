/*
 * workload.h: the workload model (DESIGN.md "Workload file") and its loader.
 * A workload is loaded from YAML by the options tables in workload.c, with
 * --set overrides applied before validation, every default filled in, and
 * every error reported as "FILE:LINE:COL: what is wrong". A loaded workload
 * is immutable: the run, the workers and the checkers only read it.
 */
#ifndef LS_WORKLOAD_H
#define LS_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"
#include "harness/options.h"

struct lock_ops;
struct fault_ops;

enum topology { TOPO_INDEPENDENT, TOPO_REPLICATED, TOPO_EXTERNAL };
enum persistence { PERSIST_NONE, PERSIST_AOF_EVERYSEC, PERSIST_AOF_ALWAYS };
enum pick { PICK_UNIFORM, PICK_ZIPF, PICK_ROUND_ROBIN };
enum on_lost { ON_LOST_ABORT, ON_LOST_FINISH };

/* Fault targets (DESIGN.md / issue 2: pause). */
enum fault_target {
    TARGET_HOLDER,        /* a worker holding a lock at that instant (optionally of `resource`) */
    TARGET_WORKER,        /* worker:N */
    TARGET_RANDOM_WORKER,
    TARGET_ALL_WORKERS,
    TARGET_NODE,          /* node:N */
    TARGET_ACQUIRER,      /* a worker inside an acquire call at that instant (optionally of `resource`) */
};

struct fault_spec {
    const struct fault_ops *ops;  /* the kind */
    int target;                   /* enum fault_target */
    int target_index;             /* N of worker:N / node:N, else -1 */
    int resource;                 /* holder: only holders of this resource; -1 = any */
    int64_t at;                   /* first start, ns after run start */
    int64_t duration;             /* ns */
    int64_t every;                /* repeat period, 0 = once */
    int64_t count;                /* number of occurrences; 0 = until the run ends */
    void *params;                 /* kind-specific options struct (fault_ops->options) */
    int line, col;                /* where it was defined, for messages */
};

enum expect_op { EXPECT_EQ, EXPECT_NE, EXPECT_LT, EXPECT_LE, EXPECT_GT, EXPECT_GE };

struct expect_spec {
    char *path;        /* JSON path into result.json */
    int op;            /* enum expect_op */
    double value;
    char *want;        /* the condition as written, e.g. "> 0" */
    int line, col;
};

struct workload {
    char *file;          /* path it was loaded from ("<string>" for tests) */
    char *name;
    char *description;
    uint64_t seed;
    int64_t duration;    /* ns */

    struct {
        int topology;    /* enum topology */
        int64_t nodes;
        int64_t replicas;
        int64_t sentinels;
        int persistence; /* enum persistence */
    } cluster;

    struct {
        char *impl;
        const struct lock_ops *ops;  /* resolved from impl */
        int64_t ttl;                 /* ns */
        int64_t renew_every;         /* ns; 0 = no renewal ("renew: none") */
        struct {
            int64_t attempts;
            int64_t delay;           /* ns */
            int64_t jitter;          /* ns */
        } retry;
        int fencing;
        int64_t wait_replicas;
        void *options;               /* impl-specific struct, per lock_ops->options */
    } lock;

    struct {
        int64_t count;
        int64_t resources;
        int pick;                    /* enum pick */
        struct dist hold;
        struct dist think;
        int on_lost;                 /* enum on_lost */
    } workers;

    struct fault_spec *faults;
    int nfaults;

    struct {
        int64_t near_miss;           /* ns */
        int64_t stuck_after;         /* ns: an open stall this long at the end = stuck */
    } check;

    struct expect_spec *expects;
    int nexpects;
};

/* Load and validate a workload file. sets[] are "key.path=value" overrides
 * applied on top of the file before validation. On success *out is a new
 * workload (workload_free). On failure returns LS_EWORKLOAD (or LS_EINPUT /
 * LS_EIO for an unreadable file), *out is NULL, err->msg holds the first
 * error as "FILE:LINE:COL: what is wrong", and every further error line has
 * been written to errlog when errlog is not NULL. */
int workload_load(const char *path, const char *const *sets, int nsets,
                  struct workload **out, FILE *errlog, struct ls_err *err);
/* Same from a string (tests); name is used in messages. */
int workload_load_string(const char *name, const char *yaml, const char *const *sets, int nsets,
                         struct workload **out, FILE *errlog, struct ls_err *err);
void workload_free(struct workload *w);

/* The fully resolved workload (every default filled in) as a JSON tree
 * (caller frees) and as YAML text appended to sb (written to the run
 * directory as workload.yaml; loading it again gives the same workload). */
struct json *workload_to_json(const struct workload *w);
void workload_to_yaml(const struct workload *w, struct strbuf *sb);

/* Markdown reference of every section, key, type, default, range and help,
 * generated from the options tables (docs/workload-reference.md). */
void workload_write_reference(struct strbuf *sb);

#endif
