/*
 * workload.c: the workload file (DESIGN.md "Workload file"): its options
 * tables, the loader (YAML -> tree -> --set overrides -> table validation ->
 * cross-field rules), the resolved echo (YAML, JSON) and the generated
 * reference (docs/workload-reference.md). The tables are the single source
 * of every key's type, default, range and help. It never starts anything:
 * loading a workload only reads text and reports errors.
 */
#include "harness/workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "faults/fault.h"
#include "faults/nemesis.h"
#include "harness/topo_external.h"
#include "harness/jobs.h"
#include "harness/workload_pg.h"
#include "harness/links.h"
#include "harness/matrix.h"
#include "harness/workload_cluster.h"
#include "harness/yamltree.h"
#include "locks/lock.h"
#include "reports/result.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define NS_MS 1e6
#define NS_S 1e9
#define NS_MIN 60e9
#define NS_H 3600e9

/* ---- tables ----------------------------------------------------------- */

static const char *const topology_choices[] = {"independent", "replicated", "external",
                                                "postgres", NULL};
static const char *const persistence_choices[] = {"none", "aof-everysec", "aof-always", NULL};
static const char *const pick_choices[] = {"uniform", "zipf", "round-robin", NULL};
static const char *const on_lost_choices[] = {"abort", "finish", NULL};
static const char *const renew_mode_choices[] = {"thread", "inline", NULL};
static const char *const worker_mode_choices[] = {"locks", "jobs", NULL};

#define SUB(sec, m) (offsetof(struct workload, sec.m) - offsetof(struct workload, sec))

static const struct opt_def cluster_tab[] = {
    {"topology", OPT_ENUM, SUB(cluster, topology), "independent", 0, 0, topology_choices, NULL,
     "how the lock nodes are arranged: independent (N stand-alone redis-server nodes the harness "
     "starts), replicated (one primary, `replicas` replicas, optional sentinels; "
     "docs/faults.md \"failover\"), external (servers already running, at "
     "cluster.addresses; docs/docker.md) or postgres (one PostgreSQL server the harness "
     "starts, for lock.impl pg-advisory; docs/locks.md)"},
    {"nodes", OPT_INT, SUB(cluster, nodes), "1", 1, 15, NULL, NULL,
     "independent: number of redis-server nodes"},
    {"replicas", OPT_INT, SUB(cluster, replicas), "1", 0, 5, NULL, NULL,
     "replicated: replicas of the one primary, >= 1; cluster.nodes is then 1 + replicas "
     "(accepted, unused by independent)"},
    {"sentinels", OPT_INT, SUB(cluster, sentinels), "0", 0, 5, NULL, NULL,
     "replicated: sentinel processes; 0 = harness-driven failover (accepted, unused by independent)"},
    {"persistence", OPT_ENUM, SUB(cluster, persistence), "none", 0, 0, persistence_choices, NULL,
     "redis-server persistence of the lock nodes"},
    {"addresses", OPT_CUSTOM, 0, "[]", 0, 0, NULL, NULL,
     "external: host:port of each node (IPv4 or a host name; cluster.nodes follows its length); "
     "only valid with topology external"},
    {"proxy", OPT_BOOL, SUB(cluster, proxy), "true", 0, 0, NULL, NULL,
     "workers reach the lock nodes through the fault proxy; false connects them directly "
     "(no link faults then; bench/ measures the proxy's cost with it)"},
    {"min_replicas_to_write", OPT_INT, SUB(cluster, min_replicas_to_write), "0", 0, 5, NULL, NULL,
     "replicated: min-replicas-to-write of every node: a primary with fewer replicas "
     "acknowledging within min_replicas_max_lag refuses writes (NOREPLICAS); 0 = off"},
    {"min_replicas_max_lag", OPT_DURATION, SUB(cluster, min_replicas_max_lag), "1s", NS_S,
     60 * NS_S, NULL, NULL,
     "replicated: min-replicas-max-lag (whole seconds): a replica whose last acknowledgement is "
     "older does not count for min_replicas_to_write"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def retry_tab[] = {
    {"attempts", OPT_INT, SUB(lock.retry, attempts), "50", 1, 1000000, NULL, NULL,
     "acquire attempts per hold before the worker gives up on it"},
    {"delay", OPT_DURATION, SUB(lock.retry, delay), "10ms", 0, NS_MIN, NULL, NULL,
     "pause between attempts"},
    {"jitter", OPT_DURATION, SUB(lock.retry, jitter), "10ms", 0, NS_MIN, NULL, NULL,
     "random extra pause, uniform in 0..jitter, added to each delay"},
    {"backoff", OPT_DOUBLE, SUB(lock.retry, backoff), "1", 1, 16, NULL, NULL,
     "exponential backoff: attempt n waits delay * backoff^(n-1) (capped at max_delay) plus "
     "the jitter; 1 = a fixed delay"},
    {"max_delay", OPT_DURATION, SUB(lock.retry, max_delay), "1s", 0, NS_MIN, NULL, NULL,
     "cap of the backed-off delay, before the jitter (with backoff > 1)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def lock_tab[] = {
    {"impl", OPT_STRING, SUB(lock, impl), "redis-single", 0, 0, NULL, NULL,
     "lock implementation (`lockstorm list locks`)"},
    {"ttl", OPT_DURATION, SUB(lock, ttl), "1s", NS_MS, NS_H, NULL, NULL,
     "lease length asked for with each grant"},
    {"renew", OPT_CUSTOM, 0, "none", 0, 0, NULL, NULL,
     "`none`, or {every: DURATION} to extend the lease every DURATION while holding "
     "(0 < every < ttl; the implementation must offer renewal)"},
    {"retry", OPT_SECTION, SUB(lock, retry), NULL, 0, 0, NULL, retry_tab,
     "acquire retry policy"},
    {"fencing", OPT_BOOL, SUB(lock, fencing), "true", 0, 0, NULL, NULL,
     "ask for fences where the implementation offers them"},
    {"wait_replicas", OPT_INT, SUB(lock, wait_replicas), "0", 0, 5, NULL, NULL,
     "WAIT for this many replicas after acquire; must be 0 with topology independent"},
    {"options", OPT_CUSTOM, 0, "{}", 0, 0, NULL, NULL,
     "implementation-specific keys (see \"lock.options by implementation\")"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def workers_tab[] = {
    {"count", OPT_INT, SUB(workers, count), "6", 1, 1024, NULL, NULL,
     "worker processes hammering the lock"},
    {"resources", OPT_INT, SUB(workers, resources), "2", 1, 4096, NULL, NULL,
     "lock names r0..rN-1 the workers pick from"},
    {"pick", OPT_ENUM, SUB(workers, pick), "uniform", 0, 0, pick_choices, NULL,
     "how a worker picks the resource of its next hold"},
    {"hold", OPT_DIST, SUB(workers, hold), "{dist: uniform, min: 20ms, max: 80ms}", 0, NS_H, NULL,
     NULL, "critical-section length (a bare duration means fixed)"},
    {"think", OPT_DIST, SUB(workers, think), "{dist: fixed, value: 5ms}", 0, NS_H, NULL, NULL,
     "pause between a release and the next acquire"},
    {"on_lost", OPT_ENUM, SUB(workers, on_lost), "abort", 0, 0, on_lost_choices, NULL,
     "abort the hold when the implementation reports the grant lost, or finish it"},
    {"store", OPT_BOOL, SUB(workers, store), "true", 0, 0, NULL, NULL,
     "do the protected-resource ops (read, write of the plain and fenced counters) in every "
     "hold; false = pure lock hammering, no lost-update measurement"},
    {"hold_cpu", OPT_BOOL, SUB(workers, hold_cpu), "false", 0, 0, NULL, NULL,
     "the hold busy-spins (CPU-bound work) instead of sleeping; with lock.renew.mode inline it "
     "starves renewal for a slice at a time"},
    {"mode", OPT_ENUM, SUB(workers, mode), "locks", 0, 0, worker_mode_choices, NULL,
     "locks: acquire -> hold -> release in a loop; jobs: every worker tries to process every "
     "job of a stream once (workers.jobs, docs/jobs.md)"},
    {"jobs", OPT_SECTION, SUB(workers, jobs), NULL, 0, 0, NULL, jobs_tab,
     "the job stream of mode jobs"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def check_tab[] = {
    {"near_miss", OPT_DURATION, SUB(check, near_miss), "1ms", 0, 10 * NS_S, NULL, NULL,
     "a next enter within this of the previous exit counts as a near miss"},
    {"stuck_after", OPT_DURATION, SUB(check, stuck_after), "2s", 0, NS_H, NULL, NULL,
     "an open stall at least this long at the end of the run makes the resource stuck"},
    {"stories", OPT_INT, SUB(check, stories), "3", 0, 50, NULL, NULL,
     "the first this many violations get a narrated story in the reports (0: none)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def top_tab[] = {
    {"name", OPT_STRING, offsetof(struct workload, name), NULL, 0, 0, NULL, NULL,
     "names the run directory; 1-64 of A-Z a-z 0-9 . _ - not starting with '.'; default: the "
     "file's base name without .yaml"},
    {"description", OPT_STRING, offsetof(struct workload, description), "", 0, 0, NULL, NULL,
     "one line on what the workload shows"},
    {"seed", OPT_U64, offsetof(struct workload, seed), "1", 0, 0, NULL, NULL,
     "everything random derives from it (0..2^64-1)"},
    {"duration", OPT_DURATION, offsetof(struct workload, duration), "10s", 100 * NS_MS, 24 * NS_H,
     NULL, NULL, "how long the workers run"},
    {"quiet_tail", OPT_DURATION, offsetof(struct workload, quiet_tail), "0", 0, 24 * NS_H, NULL,
     NULL, "fault-free end of the run: no fault starts in its last quiet_tail and every active "
     "fault is healed when it begins, so liveness after the faults is measured (< duration)"},
    {"cluster", OPT_SECTION, offsetof(struct workload, cluster), NULL, 0, 0, NULL, cluster_tab,
     "the lock nodes"},
    {"lock", OPT_SECTION, offsetof(struct workload, lock), NULL, 0, 0, NULL, lock_tab,
     "the lock implementation and how it is used"},
    {"workers", OPT_SECTION, offsetof(struct workload, workers), NULL, 0, 0, NULL, workers_tab,
     "the processes contending for the locks"},
    {"faults", OPT_CUSTOM, 0, "[]", 0, 0, NULL, NULL, "fault schedule (see \"faults\")"},
    {"nemesis", OPT_CUSTOM, 0, "~", 0, 0, NULL, NULL,
     "random faults drawn from the seed (see \"nemesis\"); ~ = none"},
    {"check", OPT_SECTION, offsetof(struct workload, check), NULL, 0, 0, NULL, check_tab,
     "checker parameters"},
    {"compare", OPT_CUSTOM, 0, "~", 0, 0, NULL, NULL,
     "variants run side by side by `lockstorm run` (see \"compare\", docs/compare.md); ~ = "
     "none"},
    {"expect", OPT_CUSTOM, 0, "{}", 0, 0, NULL, NULL,
     "CI gate: result.json path -> condition (see \"expect\")"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* Common keys of one faults[] entry; the kind's own keys follow them. */
struct fault_common {
    char *kind;
    char *target;
    int64_t resource, at, duration, every, count;
};

static const struct opt_def fault_tab[] = {
    {"kind", OPT_STRING, offsetof(struct fault_common, kind), NULL, 0, 0, NULL, NULL,
     "required: the fault kind (`lockstorm list faults`)"},
    {"target", OPT_STRING, offsetof(struct fault_common, target), NULL, 0, 0, NULL, NULL,
     "holder, acquirer, worker:N, random-worker, all-workers or node:N, as the kind allows; "
     "default: the "
     "first target the kind allows"},
    {"resource", OPT_INT, offsetof(struct fault_common, resource), "-1", -1, 4095, NULL, NULL,
     "target holder or acquirer only: workers holding (acquiring) this resource (< "
     "workers.resources); -1 = any"},
    {"at", OPT_DURATION, offsetof(struct fault_common, at), "1s", 0, 24 * NS_H, NULL, NULL,
     "first start after the run starts; must be before the end of the run"},
    {"duration", OPT_DURATION, offsetof(struct fault_common, duration), "1s", 1, 24 * NS_H, NULL,
     NULL, "how long each occurrence lasts (> 0)"},
    {"every", OPT_DURATION, offsetof(struct fault_common, every), "0", 0, 24 * NS_H, NULL, NULL,
     "repeat period; 0 = once; when > 0 it must be >= duration"},
    {"count", OPT_INT, offsetof(struct fault_common, count), "0", 0, 1000000000, NULL, NULL,
     "occurrences; 0 = once when every is 0, else until the run ends"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const char *const target_names[] = {"holder", "worker:N", "random-worker", "all-workers",
                                           "node:N", "acquirer", "links", "primary"};
#define NTARGETS 8

/* ---- loader state ----------------------------------------------------- */

struct loader {
    struct workload *w;
    const struct ynode *root;
};

static char *xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        abort();
    return d;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        abort();
    return p;
}

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 64 || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* The default name: the file's base name without .yaml/.yml, other
 * characters turned into '-', leading dots and dashes dropped. */
static char *derive_name(const char *file)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    size_t n = strlen(b);
    if (n > 5 && strcmp(b + n - 5, ".yaml") == 0)
        n -= 5;
    else if (n > 4 && strcmp(b + n - 4, ".yml") == 0)
        n -= 4;
    char out[65];
    size_t j = 0;
    for (size_t i = 0; i < n && j < 64; i++) {
        char c = b[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
        if (j == 0 && (!ok || c == '.' || c == '-'))
            continue;
        out[j++] = ok ? c : '-';
    }
    while (j > 0 && out[j - 1] == '-')
        j--;
    out[j] = '\0';
    return xstrdup(j ? out : "workload");
}

/* ---- checks of plain entries ------------------------------------------ */

static void lock_names_near(const char *name, char *near_buf, size_t n)
{
    const char *names[64];
    int k = 0;
    const struct lock_ops *const *all = lock_all();
    for (int i = 0; all && all[i] && k < 64; i++)
        names[k++] = all[i]->name;
    const char *near = opt_nearest(name, names, k);
    near_buf[0] = '\0';
    if (near)
        snprintf(near_buf, n, " did you mean '%s'?", near);
}

static void check_entry(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                        const struct ynode *where, const char *path, struct ydiag *dg)
{
    struct loader *L = ctx;
    struct workload *w = L->w;
    const struct ynode *at = v ? v : where;
    char q[64];

    if (strcmp(path, "name") == 0) {
        if (!w->name) {
            w->name = derive_name(w->file);
        } else if (!valid_name(w->name)) {
            ydiag_at(dg, at,
                     "name: '%s' is not a valid name; use 1-64 characters from A-Z a-z 0-9 . _ - "
                     "(not starting with '.')",
                     opt_quote(w->name, q, sizeof(q)));
        }
    } else if (strcmp(path, "lock.impl") == 0) {
        const struct lock_ops *ops = lock_find(w->lock.impl);
        if (!ops) {
            char names[512], near[96];
            lock_names(names, sizeof(names));
            lock_names_near(w->lock.impl, near, sizeof(near));
            ydiag_at(dg, at, "lock.impl: unknown lock implementation '%s';%s valid: %s",
                     opt_quote(w->lock.impl, q, sizeof(q)), near, names);
        } else if (ops->version != LOCK_OPS_VERSION) {
            ydiag_at(dg, at, "lock.impl: '%s' implements lock ops version %d, expected %d",
                     ops->name, ops->version, LOCK_OPS_VERSION);
        } else {
            w->lock.ops = ops;
        }
    } else if (strcmp(path, "lock.wait_replicas") == 0) {
        if (w->lock.wait_replicas > 0 && w->cluster.topology == TOPO_INDEPENDENT)
            ydiag_at(dg, at,
                     "lock.wait_replicas: must be 0 with cluster.topology independent (there are "
                     "no replicas to wait for)");
    }
    workload_replicated_check(w, path, at, L->root, dg); /* harness/workload_cluster.c */
    (void)d;
    (void)base;
}

/* ---- custom entries --------------------------------------------------- */

static int parse_addresses(struct loader *L, const struct ynode *v, const struct ynode *where,
                           const char *path, struct ydiag *dg)
{
    char q[64], host[256];
    struct workload *w = L->w;
    for (int i = 0; i < w->cluster.naddresses; i++) /* a --set may replace the list */
        free(w->cluster.addresses[i]);
    free(w->cluster.addresses);
    w->cluster.addresses = NULL;
    w->cluster.naddresses = 0;
    if (!v || ynode_is_null(v) || (v->kind == YN_SEQ && v->n == 0)) {
        if (w->cluster.topology == TOPO_EXTERNAL) {
            ydiag_at(dg, v ? v : where, "%s: topology external needs the host:port of each lock "
                     "node, e.g. addresses: [\"redis-1:6379\", \"redis-2:6379\"]", path);
            return -1;
        }
        return 0;
    }
    if (v->kind != YN_SEQ) {
        ydiag_at(dg, v, "%s: expected a list of host:port strings, got %s", path,
                 ynode_kind_text(v));
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *it = v->vals[i];
        int port;
        if (it->kind != YN_SCALAR ||
            external_split_address(it->text, host, sizeof(host), &port) < 0) {
            ydiag_at(dg, it, "%s[%zu]: expected host:port (port 1..65535), got '%s'", path, i,
                     it->kind == YN_SCALAR ? opt_quote(it->text, q, sizeof(q)) : "a collection");
            bad = 1;
        }
    }
    if (v->n > 0 && w->cluster.topology != TOPO_EXTERNAL) {
        ydiag_at(dg, v, "%s: only valid with cluster.topology external", path);
        bad = 1;
    }
    const struct ynode *cl = L->root ? ymap_get(L->root, "cluster") : NULL;
    const struct ynode *nn = cl ? ymap_get(cl, "nodes") : NULL;
    if (!bad && v->n > 15) {
        ydiag_at(dg, v, "%s: %zu addresses; at most 15 lock nodes", path, v->n);
        bad = 1;
    } else if (!bad && nn && w->cluster.nodes != (int64_t)v->n) {
        ydiag_at(dg, nn, "cluster.nodes: %lld, but cluster.addresses lists %zu nodes; leave "
                 "nodes out with topology external", (long long)w->cluster.nodes, v->n);
        bad = 1;
    }
    if (bad)
        return -1;
    w->cluster.addresses = xcalloc(v->n, sizeof(char *));
    for (size_t i = 0; i < v->n; i++)
        w->cluster.addresses[w->cluster.naddresses++] = xstrdup(v->vals[i]->text);
    w->cluster.nodes = (int64_t)v->n;
    return 0;
}

struct renew_opts {
    int64_t every;
    int mode;
    int64_t slice;
};

static const struct opt_def renew_tab[] = {
    {"every", OPT_DURATION, offsetof(struct renew_opts, every), NULL, 0, NS_H, NULL, NULL,
     "extend the lease this often while holding"},
    {"mode", OPT_ENUM, offsetof(struct renew_opts, mode), "thread", 0, 0, renew_mode_choices,
     NULL, "thread: a renewal thread beside the hold; inline: the worker renews between slices "
     "of its hold, as a single event loop does (starved by a CPU-bound slice)"},
    {"slice", OPT_DURATION, offsetof(struct renew_opts, slice), "0", 0, NS_H, NULL, NULL,
     "inline with workers.hold_cpu: length of one synchronous slice of the hold; 0 = every"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static int parse_renew(struct loader *L, const struct ynode *v, const struct ynode *where,
                       const char *path, struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[64], a[32], b[32];
    w->lock.renew_every = 0;
    w->lock.renew_mode = RENEW_THREAD;
    w->lock.renew_slice = 0;
    if (!v || ynode_is_null(v) || (v->kind == YN_SCALAR && strcmp(v->text, "none") == 0))
        return 0;
    if (v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected 'none' or {every: DURATION}, got '%s'", path,
                 v->kind == YN_SCALAR ? opt_quote(v->text, q, sizeof(q)) : "a list");
        return -1;
    }
    struct renew_opts r = {0};
    struct opt_scope sc = {renew_tab, &r};
    int before = dg->count;
    opt_load_map(&sc, 1, v, v, path, NULL, dg);
    if (dg->count > before)
        return -1;
    const struct ynode *ev = ymap_get(v, "every");
    if (!ev) {
        ydiag_at(dg, v, "%s: missing 'every'; write e.g. {every: 300ms}, or none", path);
        return -1;
    }
    if (r.every <= 0) {
        ydiag_at(dg, ev, "%s.every: must be greater than 0 (write 'renew: none' for no renewal)",
                 path);
        return -1;
    }
    if (r.every >= w->lock.ttl) {
        ls_format_duration(r.every, a, sizeof(a));
        ls_format_duration(w->lock.ttl, b, sizeof(b));
        ydiag_at(dg, ev, "%s.every: %s must be shorter than lock.ttl %s", path, a, b);
        return -1;
    }
    const struct lock_ops *ops = w->lock.ops;
    if (ops && (!(ops->caps & LOCK_CAP_RENEW) || !ops->renew)) {
        ydiag_at(dg, where ? where : v,
                 "%s: lock implementation '%s' cannot renew; use 'renew: none' or another impl",
                 path, ops->name);
        return -1;
    }
    w->lock.renew_every = r.every;
    w->lock.renew_mode = r.mode;
    w->lock.renew_slice = r.slice > 0 ? r.slice : r.every;
    return 0;
}

static int parse_lock_options(struct loader *L, const struct ynode *v, const char *path,
                              struct ydiag *dg)
{
    struct workload *w = L->w;
    const struct lock_ops *ops = w->lock.ops;
    char q[64];
    if (!ops)
        return 0; /* lock.impl already failed; its keys cannot be judged */
    if (v && v->kind != YN_MAP && !ynode_is_null(v)) {
        ydiag_at(dg, v, "%s: expected a mapping, got %s", path, ynode_kind_text(v));
        return -1;
    }
    const struct ynode *map = ynode_is_null(v) ? NULL : v;
    if (!ops->options) {
        if (map && map->n > 0) {
            ydiag_at(dg, map->keys[0], "%s: lock implementation '%s' takes no options (found '%s')",
                     path, ops->name, opt_quote(map->keys[0]->text, q, sizeof(q)));
            return -1;
        }
        return 0;
    }
    if (!w->lock.options)
        w->lock.options = xcalloc(1, ops->options_size);
    struct opt_scope sc = {ops->options, w->lock.options};
    int before = dg->count;
    opt_load_map(&sc, 1, map, v, path, ops->option_hooks, dg);
    if (dg->count > before)
        return -1;
    char why[256];
    struct lock_config cfg = {.nnodes = (int)w->cluster.nodes, .ttl_ns = w->lock.ttl,
                              .fencing = w->lock.fencing, .options = w->lock.options};
    if (ops->validate && ops->validate(&cfg, why, sizeof(why)) < 0) {
        ydiag_at(dg, v, "%s: %s: %s", path, ops->name, why);
        return -1;
    }
    return 0;
}

/* "worker:3" -> TARGET_WORKER, 3. Returns 0 or -1 (unknown form), -2 (bad N). */
static int parse_target(const char *s, int *target, int *index)
{
    static const struct {
        const char *name;
        int target;
        int indexed;
    } forms[] = {{"holder", TARGET_HOLDER, 0},           {"random-worker", TARGET_RANDOM_WORKER, 0},
                 {"all-workers", TARGET_ALL_WORKERS, 0}, {"worker:", TARGET_WORKER, 1},
                 {"node:", TARGET_NODE, 1},              {"acquirer", TARGET_ACQUIRER, 0},
                 {"links", TARGET_LINKS, 0},             {"primary", TARGET_PRIMARY, 0}};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        size_t n = strlen(forms[i].name);
        if (!forms[i].indexed) {
            if (strcmp(s, forms[i].name) == 0) {
                *target = forms[i].target;
                *index = -1;
                return 0;
            }
            continue;
        }
        if (strncmp(s, forms[i].name, n) != 0)
            continue;
        *target = forms[i].target;
        const char *p = s + n;
        char *end;
        errno = 0;
        long v = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
        if (v < 0 || *end || errno || v > 100000)
            return -2;
        *index = (int)v;
        return 0;
    }
    return -1;
}

static void targets_text(unsigned mask, char *buf, size_t n)
{
    size_t j = 0;
    buf[0] = '\0';
    for (int t = 0; t < NTARGETS; t++) {
        if (!(mask & (1u << t)))
            continue;
        int wr = snprintf(buf + j, n - j, "%s%s", j ? ", " : "", target_names[t]);
        if (wr < 0 || (size_t)wr >= n - j)
            break;
        j += (size_t)wr;
    }
}

/* Cross-field rules of one parsed fault entry. Returns 0 or -1. */
static int check_fault(struct loader *L, const struct fault_ops *ops, struct fault_common *c,
                       struct fault_spec *fs, const struct ynode *item, const char *path,
                       struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[64], a[32], b[32], allowed[128];
    int bad = 0;
    const struct ynode *tn = ymap_get(item, "target");
    unsigned mask = ops->targets ? ops->targets : 1u << TARGET_HOLDER;
    targets_text(mask, allowed, sizeof(allowed));
    if (!c->target) {
        for (int t = 0; t < NTARGETS; t++) {
            if (mask & (1u << t)) {
                fs->target = t;
                break;
            }
        }
        if (mask & (1u << TARGET_LINKS))
            fs->target = TARGET_LINKS; /* link faults: the links their keys name */
        fs->target_index = (fs->target == TARGET_WORKER || fs->target == TARGET_NODE) ? 0 : -1;
    } else {
        int r = parse_target(c->target, &fs->target, &fs->target_index);
        if (r == -1) {
            ydiag_at(dg, tn, "%s.target: unknown target '%s'; one of: %s", path,
                     opt_quote(c->target, q, sizeof(q)), allowed);
            return -1;
        }
        if (r == -2) {
            ydiag_at(dg, tn, "%s.target: expected %s:N with N a number, got '%s'", path,
                     fs->target == TARGET_NODE ? "node" : "worker",
                     opt_quote(c->target, q, sizeof(q)));
            return -1;
        }
        if (!(mask & (1u << fs->target))) {
            ydiag_at(dg, tn, "%s.target: fault kind '%s' cannot target %s (it takes: %s)", path,
                     ops->name, target_names[fs->target], allowed);
            return -1;
        }
    }
    if ((mask & (1u << TARGET_LINKS)) && !w->cluster.proxy) {
        ydiag_at(dg, item, "%s: fault kind '%s' acts on proxy links; it needs cluster.proxy: true",
                 path, ops->name);
        bad = 1;
    }
    if (w->cluster.topology == TOPO_EXTERNAL && external_fault_needs_control(ops, fs->target)) {
        ydiag_at(dg, tn ? tn : item,
                 "%s: fault kind '%s' needs cluster control; not available with topology external "
                 "(lockstorm did not start those servers; target workers, or use a link fault)",
                 path, ops->name);
        bad = 1;
    }
    if (fs->target == TARGET_WORKER && fs->target_index >= w->workers.count) {
        ydiag_at(dg, tn ? tn : item, "%s.target: worker %d is out of range 0..%lld (workers.count is %lld)",
                 path, fs->target_index, (long long)w->workers.count - 1,
                 (long long)w->workers.count);
        bad = 1;
    }
    if (fs->target == TARGET_NODE && fs->target_index >= w->cluster.nodes) {
        ydiag_at(dg, tn ? tn : item, "%s.target: node %d is out of range 0..%lld (cluster.nodes is %lld)",
                 path, fs->target_index, (long long)w->cluster.nodes - 1,
                 (long long)w->cluster.nodes);
        bad = 1;
    }
    const struct ynode *rn = ymap_get(item, "resource");
    if (c->resource != -1 && fs->target != TARGET_HOLDER && fs->target != TARGET_ACQUIRER) {
        ydiag_at(dg, rn ? rn : item, "%s.resource: only applies with target holder or acquirer",
                 path);
        bad = 1;
    } else if (c->resource >= w->workers.resources) {
        ydiag_at(dg, rn ? rn : item, "%s.resource: %lld is out of range -1..%lld (workers.resources is %lld)",
                 path, (long long)c->resource, (long long)w->workers.resources - 1,
                 (long long)w->workers.resources);
        bad = 1;
    }
    const struct ynode *atn = ymap_get(item, "at");
    if (c->at >= w->duration) {
        ls_format_duration(c->at, a, sizeof(a));
        ls_format_duration(w->duration, b, sizeof(b));
        ydiag_at(dg, atn ? atn : item, "%s.at: %s%s is not before the end of the run (duration %s)",
                 path, a, atn ? "" : " (the default)", b);
        bad = 1;
    }
    const struct ynode *evn = ymap_get(item, "every");
    if (c->every > 0 && c->every < c->duration) {
        ls_format_duration(c->every, a, sizeof(a));
        ls_format_duration(c->duration, b, sizeof(b));
        ydiag_at(dg, evn ? evn : item,
                 "%s.every: %s is shorter than the fault's duration %s; occurrences would overlap",
                 path, a, b);
        bad = 1;
    }
    const struct ynode *cn = ymap_get(item, "count");
    if (c->count > 1 && c->every == 0) {
        ydiag_at(dg, cn ? cn : item, "%s.count: %lld occurrences need 'every' > 0", path,
                 (long long)c->count);
        bad = 1;
    }
    fs->resource = (int)c->resource;
    fs->at = c->at;
    fs->duration = c->duration;
    fs->every = c->every;
    fs->count = c->count;
    return bad ? -1 : 0;
}

static void free_fault_params(struct fault_spec *fs)
{
    if (fs->ops)
        opt_free(fs->ops->options, fs->params);
    free(fs->params);
    fs->params = NULL;
}

/* One faults[] entry into fs. Returns 0 or -1 (errors reported). */
static int parse_fault(struct loader *L, const struct ynode *item, struct fault_spec *fs,
                       const char *path, struct ydiag *dg)
{
    char q[64], names[512];
    memset(fs, 0, sizeof(*fs));
    fs->line = item->line;
    fs->col = item->col;
    fs->target_index = -1;
    fs->resource = -1;
    if (item->kind != YN_MAP) {
        ydiag_at(dg, item, "%s: expected a mapping like {kind: pause, at: 1s, duration: 500ms}, got %s",
                 path, ynode_kind_text(item));
        return -1;
    }
    fault_names(names, sizeof(names));
    const struct ynode *kn = ymap_get(item, "kind");
    if (!kn || kn->kind != YN_SCALAR || ynode_is_null(kn)) {
        ydiag_at(dg, kn ? kn : item, "%s: missing 'kind'; one of: %s", path, names);
        return -1;
    }
    const struct fault_ops *ops = fault_find(kn->text);
    if (!ops) {
        const char *all[64];
        int n = 0;
        const struct fault_ops *const *fa = fault_all();
        for (int i = 0; fa && fa[i] && n < 64; i++)
            all[n++] = fa[i]->name;
        const char *near = opt_nearest(kn->text, all, n);
        char hint[96] = "";
        if (near)
            snprintf(hint, sizeof(hint), " did you mean '%s'?", near);
        ydiag_at(dg, kn, "%s.kind: unknown fault kind '%s';%s valid: %s", path,
                 opt_quote(kn->text, q, sizeof(q)), hint, names);
        return -1;
    }
    if (ops->version != FAULT_OPS_VERSION) {
        ydiag_at(dg, kn, "%s.kind: '%s' implements fault ops version %d, expected %d", path,
                 ops->name, ops->version, FAULT_OPS_VERSION);
        return -1;
    }
    fs->ops = ops;
    if (ops->options)
        fs->params = xcalloc(1, ops->options_size);
    struct fault_common c;
    memset(&c, 0, sizeof(c));
    struct opt_scope sc[3] = {{fault_tab, &c}, {ops->options, fs->params}, {NULL, NULL}};
    int nsc = ops->options ? 2 : 1;
    struct opt_hooks lh, *hp = NULL;
    if (ops->targets & (1u << TARGET_LINKS)) {
        /* link faults also take workers / nodes / isolate / split (harness/links.c) */
        sc[nsc++] = (struct opt_scope){link_target_tab, &fs->links};
        link_target_hooks(&lh, L->w);
        hp = &lh;
    }
    int before = dg->count;
    opt_load_map(sc, nsc, item, item, path, hp, dg);
    int rc = dg->count > before ? -1 : check_fault(L, ops, &c, fs, item, path, dg);
    if (rc == 0 && link_target_check(fs->target, item, path, dg) != 0)
        rc = -1;
    char why[256];
    if (rc == 0 && ops->validate && ops->validate(L->w, fs, why, sizeof(why)) < 0) {
        ydiag_at(dg, item, "%s: %s", path, why); /* the kind's own cross-key rules */
        rc = -1;
    }
    opt_free(fault_tab, &c);
    return rc;
}

static void clear_faults(struct workload *w)
{
    for (int i = 0; i < w->nfaults; i++)
        free_fault_params(&w->faults[i]);
    free(w->faults);
    w->faults = NULL;
    w->nfaults = 0;
}

static int parse_faults(struct loader *L, const struct ynode *v, const char *path,
                        struct ydiag *dg)
{
    struct workload *w = L->w;
    char sub[64];
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_SEQ) {
        ydiag_at(dg, v, "%s: expected a list of fault mappings, got %s", path, ynode_kind_text(v));
        return -1;
    }
    clear_faults(w);
    w->faults = xcalloc(v->n, sizeof(*w->faults));
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        snprintf(sub, sizeof(sub), "faults[%zu]", i);
        struct fault_spec *fs = &w->faults[w->nfaults++];
        if (parse_fault(L, v->vals[i], fs, sub, dg) != 0)
            bad = 1;
    }
    return bad ? -1 : 0;
}

int workload_parse_fault(const struct workload *w, const struct ynode *item, struct fault_spec *fs,
                         const char *path, struct ydiag *dg)
{
    /* parse_fault only reads the workload (ranges for targets and times) */
    struct loader L = {(struct workload *)w, NULL};
    return parse_fault(&L, item, fs, path, dg);
}

void workload_fault_free(struct fault_spec *fs)
{
    if (fs)
        free_fault_params(fs);
}

/* Cross-field rules of quiet_tail, once everything is loaded: shorter than
 * the run, and no explicit fault's first start inside it (later
 * occurrences of a repeating fault that fall inside it are simply not
 * started). */
static void check_quiet_tail(struct loader *L, struct ydiag *dg)
{
    const struct workload *w = L->w;
    char a[32], b[32], c[32];
    if (w->quiet_tail <= 0)
        return;
    const struct ynode *qn = ymap_get(L->root, "quiet_tail");
    ls_format_duration(w->quiet_tail, a, sizeof(a));
    ls_format_duration(w->duration, b, sizeof(b));
    if (w->quiet_tail >= w->duration) {
        ydiag_at(dg, qn ? qn : L->root, "quiet_tail: %s is not shorter than the run (duration %s)", a,
                 b);
        return;
    }
    int64_t tail = w->duration - w->quiet_tail;
    ls_format_duration(tail, c, sizeof(c));
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        if (fs->at < tail)
            continue;
        char at[32];
        ls_format_duration(fs->at, at, sizeof(at));
        ydiag_pos(dg, fs->line, fs->col,
                  "faults[%d].at: %s is inside the quiet tail (quiet_tail %s of a %s run: no fault "
                  "starts after %s)", i, at, a, b, c);
    }
}

static void clear_expects(struct workload *w)
{
    for (int i = 0; i < w->nexpects; i++) {
        free(w->expects[i].path);
        free(w->expects[i].want);
    }
    free(w->expects);
    w->expects = NULL;
    w->nexpects = 0;
}

/* Does path name a time in milliseconds (1000: "*_ms") or seconds (1: "*_s")?
 * Returns that many units per second, or 0 when path is not a time. */
static double time_path_units(const char *path)
{
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, "_ms") == 0)
        return 1000.0;
    if (n > 2 && strcmp(path + n - 2, "_s") == 0)
        return 1.0;
    return 0;
}

/* "> 0", ">=100", "0", "!= 2.5" -> op and value. A duration ("< 500ms",
 * ">= 1.5s") is taken when path names a time and converted to that path's
 * unit (*_ms: milliseconds, *_s: seconds). Returns 0, or -1 with *why set
 * when a duration was given for a path that is not a time (else NULL). */
static int parse_condition(const char *s, const char *path, int *op, double *value,
                           const char **why)
{
    static const struct {
        const char *text;
        int op;
    } ops[] = {{"==", EXPECT_EQ}, {"!=", EXPECT_NE}, {"<=", EXPECT_LE},
               {">=", EXPECT_GE}, {"<", EXPECT_LT},  {">", EXPECT_GT}};
    while (*s == ' ')
        s++;
    *op = EXPECT_EQ;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        size_t n = strlen(ops[i].text);
        if (strncmp(s, ops[i].text, n) == 0) {
            *op = ops[i].op;
            s += n;
            break;
        }
    }
    while (*s == ' ')
        s++;
    if (!*s || !(*s == '-' || *s == '+' || *s == '.' || (*s >= '0' && *s <= '9')))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if ((*end >= 'a' && *end <= 'z') && !errno && v == v) { /* a unit: a duration */
        double per_s = time_path_units(path);
        if (per_s == 0) {
            *why = "a duration compares only with a time (a path ending in _ms or _s)";
            return -1;
        }
        char num[64];
        size_t len = strlen(s);
        while (len > 0 && s[len - 1] == ' ')
            len--;
        int64_t ns;
        if (len >= sizeof(num))
            return -1;
        memcpy(num, s, len);
        num[len] = '\0';
        if (ls_parse_duration(num, &ns, why) < 0)
            return -1;
        *value = (double)ns * per_s / 1e9;
        return 0;
    }
    while (*end == ' ')
        end++;
    if (*end || errno || v != v)
        return -1;
    *value = v;
    return 0;
}

static char *trim_dup(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *d = xcalloc(1, n + 1);
    memcpy(d, s, n);
    return d;
}

static int parse_expect(struct loader *L, const struct ynode *v, const char *path,
                        struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[64], q2[64];
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a mapping of result path -> condition, got %s", path,
                 ynode_kind_text(v));
        return -1;
    }
    clear_expects(w);
    w->expects = xcalloc(v->n, sizeof(*w->expects));
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *k = v->keys[i], *val = v->vals[i];
        opt_quote(k->text, q, sizeof(q));
        if (!result_path_valid(k->text)) {
            ydiag_at(dg, k, "unknown result path '%s'; see docs/result-format.md", q);
            bad = 1;
            continue;
        }
        int op;
        double num;
        if (val->kind != YN_SCALAR || ynode_is_null(val)) {
            ydiag_at(dg, val, "expect '%s': expected a number or a condition like \"> 0\", got %s",
                     q, ynode_kind_text(val));
            bad = 1;
            continue;
        }
        const char *why = NULL;
        if (parse_condition(val->text, k->text, &op, &num, &why) != 0) {
            ydiag_at(dg, val,
                     "expect '%s': bad condition '%s'; %s%swrite a number or \"OP NUMBER\" with OP "
                     "one of == != < <= > >= (a duration such as 500ms for a *_ms or *_s path)",
                     q, opt_quote(val->text, q2, sizeof(q2)), why ? why : "", why ? "; " : "");
            bad = 1;
            continue;
        }
        struct expect_spec *e = &w->expects[w->nexpects++];
        e->path = xstrdup(k->text);
        e->op = op;
        e->value = num;
        e->want = trim_dup(val->text);
        e->line = k->line;
        e->col = k->col;
    }
    return bad ? -1 : 0;
}

static int parse_custom(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                        const struct ynode *where, const char *path, struct ydiag *dg)
{
    struct loader *L = ctx;
    (void)base;
    if (strcmp(path, "cluster.addresses") == 0)
        return parse_addresses(L, v, where, path, dg);
    if (strcmp(path, "lock.renew") == 0)
        return parse_renew(L, v, where, path, dg);
    if (strcmp(path, "workers.jobs.layers") == 0)
        return jobs_parse_layers(L->w, v, where, path, dg);
    if (strcmp(path, "lock.options") == 0)
        return parse_lock_options(L, v, path, dg);
    if (strcmp(path, "faults") == 0)
        return parse_faults(L, v, path, dg);
    if (strcmp(path, "expect") == 0)
        return parse_expect(L, v, path, dg);
    if (strcmp(path, "nemesis") == 0)
        return nemesis_parse(L->w, v, where, path, dg);
    if (strcmp(path, "compare") == 0)
        return compare_parse(&L->w->compare, v, where, path, dg);
    ydiag_at(dg, v ? v : where, "%s: internal: no parser for custom key '%s'", path, d->name);
    return -1;
}

/* ---- loading ---------------------------------------------------------- */

static int load_text(const char *file, const char *text, size_t len, const char *const *sets,
                     int nsets, struct workload **out, FILE *errlog, struct ls_err *err)
{
    struct ydiag dg;
    struct ynode *root = NULL;
    struct workload *w = NULL;
    ydiag_init(&dg, file, errlog, err);
    *out = NULL;

    if (len > YAML_MAX_FILE) {
        ydiag_file(&dg, LS_EWORKLOAD,
                   "file is too large (over %d bytes); a workload file is a few kilobytes",
                   YAML_MAX_FILE);
        goto done;
    }
    if (ytree_parse(text, len, &root, &dg) != 0)
        goto done;
    if (!root || ynode_is_null(root)) {
        ydiag_pos(&dg, 1, 1, "the workload is empty; expected a mapping of keys such as 'name: my-test'");
        goto done;
    }
    if (root->kind != YN_MAP) {
        ydiag_at(&dg, root, "expected a mapping of workload keys (name, duration, lock, ...) at top "
                            "level, got %s", ynode_kind_text(root));
        goto done;
    }
    static const char *const opaque[] = {"expect", NULL}; /* its keys are dotted result paths */
    for (int i = 0; i < nsets; i++)
        ytree_apply_set(root, sets[i], opaque, &dg);

    w = xcalloc(1, sizeof(*w));
    w->file = xstrdup(file);
    struct loader L = {w, root};
    struct opt_hooks h = {&L, parse_custom, check_entry, NULL, NULL, NULL};
    struct opt_scope sc = {top_tab, w};
    opt_load_map(&sc, 1, root, root, "", &h, &dg);
    check_quiet_tail(&L, &dg);
    workload_pg_check(w, root, &dg); /* topology postgres, pg-advisory (workload_pg.c) */

done:
    ynode_free(root);
    ydiag_finish(&dg);
    if (dg.count) {
        workload_free(w);
        return dg.first_code ? dg.first_code : LS_EWORKLOAD;
    }
    *out = w;
    return 0;
}

int workload_load_string(const char *name, const char *yaml, const char *const *sets, int nsets,
                         struct workload **out, FILE *errlog, struct ls_err *err)
{
    return load_text(name ? name : "<string>", yaml ? yaml : "", yaml ? strlen(yaml) : 0, sets,
                     nsets, out, errlog, err);
}

int workload_load(const char *path, const char *const *sets, int nsets, struct workload **out,
                  FILE *errlog, struct ls_err *err)
{
    struct ydiag dg;
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int rc = 0;
    ydiag_init(&dg, path, errlog, err);
    *out = NULL;

    /* O_NONBLOCK: a FIFO nobody writes to must not hang the open (it then
     * reads as empty); reads block again once it is open. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        ydiag_file(&dg, LS_EIO, "cannot read: %s; give a workload .yaml file or a bundled name "
                   "(lockstorm list workloads)", strerror(errno));
        return LS_EIO;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ydiag_file(&dg, LS_EIO, "cannot read: %s; give a workload .yaml file, not a directory",
                   strerror(EISDIR));
        rc = LS_EIO;
        goto done;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    buf = xcalloc(1, YAML_MAX_FILE + 2);
    for (;;) {
        ssize_t r = read(fd, buf + len, YAML_MAX_FILE + 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            ydiag_file(&dg, LS_EIO, "cannot read: %s", strerror(errno));
            rc = LS_EIO;
            goto done;
        }
        if (r == 0)
            break;
        len += (size_t)r;
        if (len > YAML_MAX_FILE) {
            ydiag_file(&dg, LS_EWORKLOAD,
                       "file is too large (over %d bytes); a workload file is a few kilobytes",
                       YAML_MAX_FILE);
            rc = LS_EWORKLOAD;
            goto done;
        }
    }
    rc = load_text(path, buf, len, sets, nsets, out, errlog, err);
done:
    close(fd);
    free(buf);
    return rc;
}

void workload_free(struct workload *w)
{
    if (!w)
        return;
    if (w->lock.ops)
        opt_free(w->lock.ops->options, w->lock.options);
    free(w->lock.options);
    clear_faults(w);
    nemesis_free(&w->nemesis);
    compare_free(&w->compare);
    clear_expects(w);
    for (int i = 0; i < w->cluster.naddresses; i++)
        free(w->cluster.addresses[i]);
    free(w->cluster.addresses);
    opt_free(top_tab, w);
    free(w->file);
    free(w);
}

/* ---- echo ------------------------------------------------------------- */

/* The common keys of a parsed fault, as the fault_common struct the table
 * describes (strings owned by the caller: opt_free(fault_tab, c)). */
static void fault_common_of(const struct fault_spec *fs, struct fault_common *c)
{
    char t[32];
    memset(c, 0, sizeof(*c));
    c->kind = xstrdup(fs->ops ? fs->ops->name : "?");
    if (fs->target == TARGET_WORKER)
        snprintf(t, sizeof(t), "worker:%d", fs->target_index);
    else if (fs->target == TARGET_NODE)
        snprintf(t, sizeof(t), "node:%d", fs->target_index);
    else
        snprintf(t, sizeof(t), "%s", fs->target >= 0 && fs->target < NTARGETS ? target_names[fs->target] : "?");
    c->target = xstrdup(t);
    c->resource = fs->resource;
    c->at = fs->at;
    c->duration = fs->duration;
    c->every = fs->every;
    c->count = fs->count;
}

static int table_empty(const struct opt_def *tab)
{
    return !tab || !tab->name;
}

void workload_faults_to_yaml(const struct fault_spec *fs, int n, int indent, struct strbuf *sb)
{
    for (int i = 0; i < n; i++) {
        struct fault_common c;
        struct strbuf item = STRBUF_INIT;
        fault_common_of(&fs[i], &c);
        opt_to_yaml(fault_tab, &c, indent + 2, NULL, &item);
        if (fs[i].ops && fs[i].params)
            opt_to_yaml(fs[i].ops->options, fs[i].params, indent + 2, NULL, &item);
        if (fs[i].target == TARGET_LINKS)
            link_target_yaml(&fs[i].links, indent + 2, &item);
        opt_free(fault_tab, &c);
        /* "    kind: ..." -> "  - kind: ..." */
        sb_printf(sb, "%*s- ", indent, "");
        sb_puts(sb, sb_cstr(&item) + indent + 2);
        sb_free(&item);
    }
}

static void echo_yaml(void *ctx, const struct opt_def *d, const void *base, int indent,
                      struct strbuf *sb)
{
    const struct workload *w = ctx;
    char a[32];
    (void)base;
    if (strcmp(d->name, "addresses") == 0) {
        sb_puts(sb, " [");
        for (int i = 0; i < w->cluster.naddresses; i++) {
            sb_puts(sb, i ? ", " : "");
            sb_json_str(sb, w->cluster.addresses[i], strlen(w->cluster.addresses[i]));
        }
        sb_puts(sb, "]\n");
    } else if (strcmp(d->name, "renew") == 0) {
        if (w->lock.renew_every > 0) {
            char sl[32];
            ls_format_duration(w->lock.renew_every, a, sizeof(a));
            ls_format_duration(w->lock.renew_slice, sl, sizeof(sl));
            sb_printf(sb, " {every: %s, mode: %s, slice: %s}\n", a,
                      renew_mode_choices[w->lock.renew_mode], sl);
        } else {
            sb_puts(sb, " none\n");
        }
    } else if (strcmp(d->name, "layers") == 0) {
        jobs_layers_yaml(w->workers.jobs.layers, sb);
    } else if (strcmp(d->name, "options") == 0) {
        const struct opt_def *tab = w->lock.ops ? w->lock.ops->options : NULL;
        if (table_empty(tab) || !w->lock.options) {
            sb_puts(sb, " {}\n");
        } else {
            sb_putc(sb, '\n');
            opt_to_yaml(tab, w->lock.options, indent + 2, w->lock.ops->option_hooks, sb);
        }
    } else if (strcmp(d->name, "faults") == 0) {
        if (w->nfaults == 0) {
            sb_puts(sb, " []\n");
            return;
        }
        sb_putc(sb, '\n');
        workload_faults_to_yaml(w->faults, w->nfaults, indent + 2, sb);
    } else if (strcmp(d->name, "nemesis") == 0) {
        nemesis_echo_yaml(&w->nemesis, indent, sb);
    } else if (strcmp(d->name, "compare") == 0) {
        compare_echo_yaml(&w->compare, indent, sb);
    } else if (strcmp(d->name, "expect") == 0) {
        if (w->nexpects == 0) {
            sb_puts(sb, " {}\n");
            return;
        }
        sb_putc(sb, '\n');
        for (int i = 0; i < w->nexpects; i++) {
            const struct expect_spec *e = &w->expects[i];
            sb_printf(sb, "%*s", indent + 2, "");
            sb_json_str(sb, e->path, strlen(e->path));
            sb_puts(sb, ": ");
            sb_json_str(sb, e->want, strlen(e->want));
            sb_putc(sb, '\n');
        }
    } else {
        sb_puts(sb, " ~\n");
    }
}

static struct json *echo_json(void *ctx, const struct opt_def *d, const void *base)
{
    const struct workload *w = ctx;
    char a[32];
    (void)base;
    if (strcmp(d->name, "addresses") == 0) {
        struct json *arr = json_new_arr();
        for (int i = 0; i < w->cluster.naddresses; i++)
            json_arr_push(arr, json_new_str(w->cluster.addresses[i]));
        return arr;
    }
    if (strcmp(d->name, "renew") == 0) {
        if (w->lock.renew_every <= 0)
            return json_new_str("none");
        struct json *o = json_new_obj();
        ls_format_duration(w->lock.renew_every, a, sizeof(a));
        json_obj_set_str(o, "every", a);
        json_obj_set_str(o, "mode", renew_mode_choices[w->lock.renew_mode]);
        ls_format_duration(w->lock.renew_slice, a, sizeof(a));
        json_obj_set_str(o, "slice", a);
        return o;
    }
    if (strcmp(d->name, "layers") == 0)
        return jobs_layers_json(w->workers.jobs.layers);
    if (strcmp(d->name, "options") == 0) {
        const struct opt_def *tab = w->lock.ops ? w->lock.ops->options : NULL;
        if (table_empty(tab) || !w->lock.options)
            return json_new_obj();
        return opt_to_json(tab, w->lock.options, w->lock.ops->option_hooks);
    }
    if (strcmp(d->name, "faults") == 0) {
        struct json *arr = json_new_arr();
        for (int i = 0; i < w->nfaults; i++) {
            const struct fault_spec *fs = &w->faults[i];
            struct fault_common c;
            fault_common_of(fs, &c);
            struct json *o = opt_to_json(fault_tab, &c, NULL);
            opt_free(fault_tab, &c);
            if (fs->ops && fs->params) {
                struct json *p = opt_to_json(fs->ops->options, fs->params, NULL);
                for (size_t k = 0; k < p->n; k++)
                    json_obj_set(o, p->keys[k], json_clone(p->kids[k]));
                json_free(p);
            }
            if (fs->target == TARGET_LINKS)
                link_target_json(&fs->links, o);
            json_arr_push(arr, o);
        }
        return arr;
    }
    if (strcmp(d->name, "nemesis") == 0)
        return nemesis_echo_json(&w->nemesis);
    if (strcmp(d->name, "compare") == 0)
        return compare_echo_json(&w->compare);
    if (strcmp(d->name, "expect") == 0) {
        struct json *o = json_new_obj();
        for (int i = 0; i < w->nexpects; i++)
            json_obj_set_str(o, w->expects[i].path, w->expects[i].want);
        return o;
    }
    return json_new_null();
}

struct json *workload_to_json(const struct workload *w)
{
    struct opt_hooks h = {(void *)w, NULL, NULL, echo_yaml, echo_json, NULL};
    return opt_to_json(top_tab, w, &h);
}

void workload_to_yaml(const struct workload *w, struct strbuf *sb)
{
    struct opt_hooks h = {(void *)w, NULL, NULL, echo_yaml, echo_json, NULL};
    sb_puts(sb, "# resolved workload: every default filled in (lockstorm " LS_VERSION ")\n");
    opt_to_yaml(top_tab, w, 0, &h, sb);
}

/* ---- reference -------------------------------------------------------- */

static const char *custom_type(void *ctx, const struct opt_def *d)
{
    (void)ctx;
    if (strcmp(d->name, "addresses") == 0)
        return "list of host:port";
    if (strcmp(d->name, "renew") == 0)
        return "none or {every: duration, mode, slice}";
    if (strcmp(d->name, "layers") == 0)
        return "list of lock, idempotency, constraint";
    if (strcmp(d->name, "options") == 0)
        return "mapping";
    if (strcmp(d->name, "faults") == 0)
        return "list of mappings";
    if (strcmp(d->name, "expect") == 0)
        return "mapping path -> condition";
    if (strcmp(d->name, "nemesis") == 0)
        return "mapping or ~";
    if (strcmp(d->name, "compare") == 0)
        return "list of variants or ~";
    return "custom";
}

static void caps_text(unsigned caps, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s%s%s%s%s", caps & LOCK_CAP_TTL ? " ttl" : "",
             caps & LOCK_CAP_RENEW ? " renew" : "", caps & LOCK_CAP_FENCING ? " fencing" : "",
             caps & LOCK_CAP_QUORUM ? " quorum" : "",
             caps & LOCK_CAP_REPLICATED ? " replicated" : "",
             caps & LOCK_CAP_NEGATIVE ? " negative-control" : "");
}

void workload_write_reference(struct strbuf *sb)
{
    struct opt_hooks h = {NULL, NULL, NULL, NULL, NULL, custom_type};
    char buf[256];
    sb_puts(sb,
            "# Workload file reference\n\n"
            "<!-- Generated from the options tables (harness/workload.c and the lock and fault\n"
            "     tables) by `lockstorm validate --reference > docs/workload-reference.md`.\n"
            "     Do not edit by hand; tests/unit/test_workload.c checks it is in sync. -->\n\n"
            "Every key, its type, default and range. For a guided tour see\n"
            "[workloads.md](workloads.md). Durations take a unit: `ns`, `us`, `ms`, `s`, `m`,\n"
            "`h` (`300ms`, `1.5s`, `2m`); a bare `0` needs none. Any key can be overridden on\n"
            "the command line with `--set key.path=value`.\n\n"
            "## Top level\n\n");
    opt_reference(top_tab, "", 0, 1, &h, sb);
    sb_puts(sb, "\n## cluster\n\n");
    opt_reference(cluster_tab, "cluster.", 1, 1, &h, sb);
    sb_puts(sb, "\n## lock\n\n");
    opt_reference(lock_tab, "lock.", 1, 1, &h, sb);
    sb_puts(sb, "\n### lock.renew\n\n`renew: none` (no renewal) or a mapping:\n\n");
    opt_reference(renew_tab, "lock.renew.", 1, 1, &h, sb);
    sb_puts(sb, "\n### lock.options by implementation\n\n"
                "`lock.options` takes the keys of the chosen `lock.impl`; an implementation\n"
                "without options takes none.\n");
    const struct lock_ops *const *locks = lock_all();
    for (int i = 0; locks && locks[i]; i++) {
        const struct lock_ops *ops = locks[i];
        caps_text(ops->caps, buf, sizeof(buf));
        sb_printf(sb, "\n#### `%s`\n\n%s\n\nCapabilities:%s\n\n", ops->name, ops->model ? ops->model : "",
                  buf[0] ? buf : " none");
        if (table_empty(ops->options))
            sb_puts(sb, "No options.\n");
        else
            opt_reference(ops->options, "lock.options.", 1, 1, ops->option_hooks, sb);
    }
    sb_puts(sb, "\n## workers\n\n");
    opt_reference(workers_tab, "workers.", 1, 1, &h, sb);
    sb_puts(sb, "\n### Distributions (workers.hold, workers.think)\n\n"
                "A bare duration means `{dist: fixed, value: DURATION}`. The mapping form:\n\n");
    opt_dist_reference(sb);
    sb_puts(sb, "\n## faults\n\n"
                "A list of mappings, each one fault in the schedule. Common keys:\n\n");
    opt_reference(fault_tab, "faults[].", 1, 1, NULL, sb);
    sb_puts(sb, "\nTargets: `holder` (a worker holding a lock at that instant), `acquirer` (the\n"
                "worker that has been inside an acquire call the longest at that instant, e.g.\n"
                "between the two commands of naive-setnx-expire), `worker:N` (N < workers.count),\n"
                "`random-worker`, `all-workers`, `node:N` (N < cluster.nodes), `primary` (the\n"
                "node that is the primary of a replicated set at that instant: kind failover).\n");
    {
        struct opt_hooks lh;
        link_target_hooks(&lh, NULL);
        sb_puts(sb, "\nLink faults (latency, partition, bandwidth, slicer; docs/faults.md) act on\n"
                    "proxy links, one per (worker, node) pair. Their default target `links` takes\n"
                    "these keys; `node:N` means every worker's link to node N, and a worker target\n"
                    "means that worker's links to every node:\n\n");
        opt_reference(link_target_tab, "faults[].", 1, 1, &lh, sb);
    }
    const struct fault_ops *const *faults = fault_all();
    for (int i = 0; faults && faults[i]; i++) {
        const struct fault_ops *ops = faults[i];
        targets_text(ops->targets, buf, sizeof(buf));
        sb_printf(sb, "\n### kind `%s`\n\n%s\n\nTargets: %s\n\n", ops->name, ops->help ? ops->help : "",
                  buf[0] ? buf : "holder");
        if (table_empty(ops->options))
            sb_puts(sb, "No kind-specific keys.\n");
        else
            opt_reference(ops->options, "faults[].", 1, 1, NULL, sb);
    }
    nemesis_reference(sb);
    sb_puts(sb, "\n## check\n\n");
    opt_reference(check_tab, "check.", 1, 1, &h, sb);
    sb_puts(sb, "\n## expect\n\n"
                "A mapping from a result.json path (see [result-format.md](result-format.md)) to a\n"
                "condition: a number (meaning `==`) or a string `\"OP NUMBER\"` with OP one of\n"
                "`==` `!=` `<` `<=` `>` `>=`; quote it, since YAML reads a leading `>` or `!` as\n"
                "syntax. Example: `checks.mutex.violations: \"> 0\"`. A path that is a time\n"
                "(its name ends in `_ms` or `_s`) also takes a duration, converted to the path's\n"
                "unit: `checks.liveness.crash_to_next_grant_ms: \"< 1.5s\"` compares with 1500.\n"
                "Per-class violation counts are paths too:\n"
                "`checks.mutex.by_class.stale_holder`, `checks.mutex.by_class.lock_broken`.\n"
                "Each line becomes one JUnit test case.\n");
}
