/*
 * workload.h: the workload model (docs/workload-reference.md): the data a
 * loaded workload holds, shared by every layer that reads it. Loading it
 * (the options tables, --set overrides, validation, the lock and fault
 * registries) is harness/workload.h's; a loaded workload is immutable: the
 * run, the workers, the faults and the checkers only read it.
 */
#ifndef LS_MODEL_WORKLOAD_H
#define LS_MODEL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "util/rng.h"

struct lock_ops;
struct backend_ops;
struct fault_ops;
struct ynode;

enum topology { TOPO_INDEPENDENT, TOPO_REPLICATED, TOPO_EXTERNAL, TOPO_POSTGRES };
/* What the topology's backend offers (backends/backend.h caps). The loader
 * copies its table's caps into workload.cluster.caps so that every layer
 * can ask, faults/ included, which does not see backends/. */
#define BACKEND_CAP_NODE_CONTROL 0x1 /* the harness runs the lock nodes' processes: node
                                        faults (pause, kill, stop, stall, clock) can act */
#define BACKEND_CAP_REPLICAS 0x2     /* one primary and its replicas (cluster.replicas,
                                        min_replicas_*; backends/replset.h after the proxy) */
#define BACKEND_CAP_REDIS 0x4        /* the lock nodes are redis servers: Redis locks, jobs
                                        mode, the leftover `lockstorm:*` key scan */
#define BACKEND_CAP_ADDRESSES 0x8    /* the nodes are someone else's, named by
                                        cluster.addresses (and cluster.password_env) */
enum persistence { PERSIST_NONE, PERSIST_AOF_EVERYSEC, PERSIST_AOF_ALWAYS };
enum cluster_password { PASSWORD_AUTO, PASSWORD_NONE };
/* cluster.proxy: false, true, or auto (the default: the proxy only when the
 * workload can need it; harness/workload_cluster.c) */
enum proxy_mode { PROXY_OFF, PROXY_ON, PROXY_AUTO };
enum pick { PICK_UNIFORM, PICK_ZIPF, PICK_ROUND_ROBIN };
enum on_lost { ON_LOST_ABORT, ON_LOST_FINISH };
enum renew_mode { RENEW_THREAD, RENEW_INLINE };
enum worker_mode { WMODE_LOCKS, WMODE_JOBS };

/* workers.jobs.layers (model/jobs.h): the defences of a job, as bits. */
#define JOB_LAYER_LOCK 0x1         /* lock(job) around the processing */
#define JOB_LAYER_IDEMPOTENCY 0x2  /* SET NX done:<job> before the side effect */
#define JOB_LAYER_CONSTRAINT 0x4   /* the side effect is a conditional insert */

/* Fault targets (docs/faults.md "pause"). */
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

/* The random nemesis (`nemesis:`, docs/workload-reference.md): loaded, echoed and expanded
 * into fault specs by harness/nemesis.c. */
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
        int topology;    /* enum topology, as loaded */
        const struct backend_ops *backend; /* the table of cluster.topology (backends/backend.h):
                                              what everything after the loader asks */
        unsigned caps;   /* backend->caps (BACKEND_CAP_*), for layers below backends/ */
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
        char *key_prefix;            /* lock.key_prefix: every key of the lock (and its fence
                                      * counter) starts with it; "lockstorm:" (owned) */
        void *options;               /* impl-specific struct, per lock_ops->options */
    } lock;

    struct {
        int64_t count;
        int64_t resources;
        char **resource_names;       /* workers.resources as a list: the names (owned,
                                      * `resources` of them); NULL: a count, the names are
                                      * the defaults "r0".."rN-1" (workload_resource_name) */
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
        double max_commands_per_grant; /* checks.commands: a limit; 0 = none */
    } check;

    struct expect_spec *expects;
    int nexpects;
};

/* lock.key_prefix by default: the keys are "lockstorm:r0", ... as before it existed. */
#define WL_KEY_PREFIX "lockstorm:"
/* lock.key_prefix (WL_KEY_PREFIX when unset). */
const char *workload_key_prefix(const struct workload *w);
/* The name of resource i: workers.resources' list entry, or "r<i>" written
 * into buf. Borrowed from w or buf. */
const char *workload_resource_name(const struct workload *w, int64_t i, char *buf, size_t n);

#endif
