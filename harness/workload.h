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
#include "model/options.h"

struct lock_ops;
struct fault_ops;
struct ynode;

enum topology { TOPO_INDEPENDENT, TOPO_REPLICATED, TOPO_EXTERNAL, TOPO_POSTGRES };
enum persistence { PERSIST_NONE, PERSIST_AOF_EVERYSEC, PERSIST_AOF_ALWAYS };
enum cluster_password { PASSWORD_AUTO, PASSWORD_NONE };
/* cluster.proxy: false, true, or auto (the default: the proxy only when the
 * workload can need it; harness/workload_cluster.c) */
enum proxy_mode { PROXY_OFF, PROXY_ON, PROXY_AUTO };
enum pick { PICK_UNIFORM, PICK_ZIPF, PICK_ROUND_ROBIN };
enum on_lost { ON_LOST_ABORT, ON_LOST_FINISH };
enum renew_mode { RENEW_THREAD, RENEW_INLINE };
enum worker_mode { WMODE_LOCKS, WMODE_JOBS };

/* workers.jobs.layers (harness/jobs.h): the defences of a job, as bits. */
#define JOB_LAYER_LOCK 0x1         /* lock(job) around the processing */
#define JOB_LAYER_IDEMPOTENCY 0x2  /* SET NX done:<job> before the side effect */
#define JOB_LAYER_CONSTRAINT 0x4   /* the side effect is a conditional insert */

/* Fault targets (DESIGN.md / issue 2: pause). */
enum fault_target {
    TARGET_HOLDER,        /* a worker holding a lock at that instant (optionally of `resource`) */
    TARGET_WORKER,        /* worker:N */
    TARGET_RANDOM_WORKER,
    TARGET_ALL_WORKERS,
    TARGET_NODE,          /* node:N */
    TARGET_ACQUIRER,      /* a worker inside an acquire call at that instant (optionally of `resource`) */
    TARGET_LINKS,         /* proxy links worker x node (link faults; struct link_target) */
    TARGET_PRIMARY,       /* the node that is the primary at that instant (replicated topology) */
};

/* The links a link fault (faults/link.c) acts on: one link per (worker,
 * node) pair, each its own proxy listener. Parsed, checked and echoed by
 * harness/links.c from the fault keys workers / nodes / isolate / split;
 * resolved to concrete links when the fault starts (minority / majority
 * are drawn then). Fixed size so a fault_spec stays a plain value. */
#define LINK_MAX_WORKERS 1024
#define LINK_MAX_GROUPS 8
enum link_nodes { LINK_NODES_ALL, LINK_NODES_LIST, LINK_NODES_MINORITY, LINK_NODES_MAJORITY };

struct link_group {
    uint64_t workers[LINK_MAX_WORKERS / 64];  /* bit w: worker w */
    uint32_t nodes;                           /* bit n: node n */
};

/* All zero = every worker x every node. */
struct link_target {
    int some_workers;              /* 0: workers: all (the default); 1: grid.workers */
    int nodes_sel;                 /* enum link_nodes; LIST uses grid.nodes */
    struct link_group grid;        /* workers x nodes */
    int isolating;                 /* isolate: node:N given (every worker cut from N) */
    int isolate_node;
    int ngroups;                   /* split: [[workers],[nodes]] pairs; 0 = none */
    struct link_group groups[LINK_MAX_GROUPS];
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
    struct link_target links;     /* target links: which links (harness/links.c) */
    int line, col;                /* where it was defined, for messages */
};

/* The random nemesis (DESIGN.md `nemesis:`): loaded, echoed and expanded
 * into fault specs by faults/nemesis.c. */
enum nemesis_gaps { GAPS_EXPONENTIAL, GAPS_UNIFORM, GAPS_FIXED };

struct nemesis_kind {
    const struct fault_ops *ops;
    struct ynode **targets;       /* each a mapping of fault keys, e.g. {target: holder} (owned) */
    int ntargets;
};

struct nemesis_spec {
    int enabled;                  /* a nemesis: mapping was given */
    struct nemesis_kind *kinds;   /* owned */
    int nkinds;
    int64_t interval;             /* mean time between starts, ns */
    int gaps;                     /* enum nemesis_gaps */
    struct {
        int64_t min, max;         /* each fault lasts uniform in min..max, ns */
    } duration;
    int64_t start;                /* no nemesis fault starts before this, ns */
    int overlap;                  /* 0: a start never falls inside the previous fault */
};

/* `compare:` (harness/matrix.h): variants of the workload run side by side,
 * each a name and its --set overrides (a `lock:` replacement first). */
struct compare_skip {
    int index;        /* the faults[] entry left out of the variant */
    char *kind;       /* its kind (owned) */
    char *reason;     /* why it does not apply: shown as n/a (owned) */
};

struct compare_variant {
    char *name;
    char **sets;      /* "key.path=value" (owned) */
    int nsets;
    struct compare_skip *skips;   /* faults[] entries the variant leaves out (owned) */
    int nskips;
    int line, col;
};

struct compare_spec {
    struct compare_variant *v;   /* owned; n == 0: no compare block */
    int n;
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
    char *source;        /* the text it was loaded from (owned; compare variants are
                          * loaded from it: a workload read from a pipe has one reading) */
    size_t source_len;
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
        int proxy;       /* 1: workers reach the lock nodes through the fault proxy;
                          * PROXY_AUTO while loading, then resolved to 0 or 1
                          * (workload_resolve_proxy) */
        int proxy_setting;   /* enum proxy_mode as written (echoed: auto stays auto) */
        char proxy_why[160]; /* one line: why proxy is what it is */
        int password;    /* enum cluster_password: the nodes the harness starts */
        char *password_env; /* external: environment variable holding the nodes' password, or
                             * "" (the name only: the value is never stored in the workload) */
        int64_t min_replicas_to_write; /* replicated: min-replicas-to-write of every node */
        int64_t min_replicas_max_lag;  /* replicated: min-replicas-max-lag, ns (whole seconds) */
        char **addresses; /* external: "host:port" of each node (owned); naddresses == nodes */
        int naddresses;
    } cluster;

    struct {
        char *impl;
        const struct lock_ops *ops;  /* resolved from impl */
        int64_t ttl;                 /* ns */
        int64_t renew_every;         /* ns; 0 = no renewal ("renew: none") */
        int renew_mode;              /* enum renew_mode (lock.renew.mode) */
        int64_t renew_slice;         /* ns: inline: length of one CPU slice of the hold */
        struct {
            int64_t attempts;
            int64_t delay;           /* ns */
            int64_t jitter;          /* ns */
            double backoff;          /* delay multiplier per attempt (1 = fixed delay) */
            int64_t max_delay;       /* ns: cap of the backed-off delay (before jitter) */
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
        int store;                   /* 1: protected-resource ops in every hold */
        int hold_cpu;                /* 1: the hold busy-spins (CPU-bound work) */
        int mode;                    /* enum worker_mode */
        struct {
            int64_t interval;        /* ns between two job announcements */
            int64_t count;           /* jobs announced; 0 = until the run ends */
            unsigned layers;         /* JOB_LAYER_* */
        } jobs;
    } workers;

    struct fault_spec *faults;
    int nfaults;
    struct nemesis_spec nemesis;
    struct compare_spec compare; /* compare: the variants run side by side (harness/matrix.h) */
    int64_t quiet_tail;          /* ns: no fault starts in the run's last quiet_tail; all healed at its start */

    struct {
        int64_t near_miss;           /* ns */
        int64_t stuck_after;         /* ns: an open stall this long at the end = stuck */
        int64_t stories;             /* violations narrated as stories (checkers/story.h) */
    } check;

    struct expect_spec *expects;
    int nexpects;
};

/* Contract: 1 when s can name a workload, a compare variant or a sweep (it
 * becomes a directory name): 1-64 of A-Z a-z 0-9 . _ -, no leading dot. */
int workload_valid_name(const char *s);

/* Load and validate a workload file. sets[] are "key.path=value" overrides
 * applied on top of the file before validation. On success *out is a new
 * workload (workload_free). On failure returns LS_EWORKLOAD (or LS_EINPUT /
 * LS_EIO for an unreadable file), *out is NULL, err->msg holds the first
 * error as "FILE:LINE:COL: what is wrong", and every further error line has
 * been written to errlog when errlog is not NULL. */
int workload_load(const char *path, const char *const *sets, int nsets,
                  struct workload **out, FILE *errlog, struct ls_err *err);
/* workload_load for one variant of a compare: block (harness/matrix.c),
 * from base's text (never re-read from its file) with sets applied:
 * the faults[] entries i with drop[i] != 0 (i < ndrop) are left out, not
 * parsed; context (or NULL) ends a fault kind's validate error, e.g. the
 * way to map the fault out of the variant. */
int workload_load_variant(const struct workload *base, const char *const *sets, int nsets,
                          const unsigned char *drop, size_t ndrop, const char *context,
                          struct workload **out, FILE *errlog, struct ls_err *err);
/* The two halves of workload_load, for a caller that looks at the text
 * before loading it (`run` refuses a sweep file): read path once (bounded;
 * a FIFO nobody writes to reads as empty; errors as workload_load's) into
 * *text (caller frees; len bytes, NUL-terminated), then load that text as
 * the file path. A pipe (/dev/stdin) is never read twice. */
int workload_read(const char *path, char **text, size_t *len, FILE *errlog, struct ls_err *err);
int workload_load_text(const char *path, const char *text, size_t len, const char *const *sets,
                       int nsets, struct workload **out, FILE *errlog, struct ls_err *err);
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

/* For faults/nemesis.c: one faults[] item (a mapping node) parsed and
 * validated against w exactly as the loader does (it only reads w); errors
 * go to dg under path. Returns 0 or -1; either way free fs with
 * workload_fault_free. */
struct ydiag;
/* How many occurrences fs starts in w's run (starts at at + k * every
 * before the quiet tail, at most count), and all explicit faults' together:
 * the schedule's bound (faults/fault.h FAULT_MAX_OCCURRENCES) counts them. */
int64_t workload_fault_occurrences(const struct workload *w, const struct fault_spec *fs);
int64_t workload_explicit_occurrences(const struct workload *w);
int workload_parse_fault(const struct workload *w, const struct ynode *item, struct fault_spec *fs,
                         const char *path, struct ydiag *dg);
void workload_fault_free(struct fault_spec *fs);
/* The YAML echo of a faults list: one "- key: value" item per spec, items
 * indented by indent spaces. */
void workload_faults_to_yaml(const struct fault_spec *fs, int n, int indent, struct strbuf *sb);

#endif
