/*
 * workload.c: the workload file (docs/workload-reference.md): its options
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
#include "harness/nemesis.h"
#include "backends/backend.h"
#include "backends/external.h"
#include "harness/jobs.h"
#include "harness/workload_record.h"
#include "harness/workload_pg.h"
#include "harness/links.h"
#include "harness/matrix.h"
#include "harness/workload_cluster.h"
#include "harness/workload_int.h"
#include "model/yamltree.h"
#include "locks/lock.h"
#include "locks/record.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

/* ---- tables ----------------------------------------------------------- */

static const char *const topology_choices[] = {"independent", "replicated", "external",
                                                "postgres", NULL};
static const char *const persistence_choices[] = {"none", "aof-everysec", "aof-always", NULL};
static const char *const password_choices[] = {"auto", "none", NULL};
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
    {"proxy", OPT_CUSTOM, 0, "auto", 0, 0, NULL, NULL,
     "true: workers reach the lock nodes through the fault proxy; false: they connect "
     "directly (no link faults then); auto: the proxy only when the workload can need it (a "
     "link fault in faults or the nemesis, an external adapter on password-protected nodes). "
     "The run directory's workload.yaml and run.json say which and why (docs/workloads.md)"},
    {"password", OPT_ENUM, SUB(cluster, password), "auto", 0, 0, password_choices, NULL,
     "auto: every redis-server the harness starts requires a random per-run password (in the "
     "run directory's 0600 file nodes/password; docs/reliability.md \"Security\"); none: no "
     "password (to poke the nodes with redis-cli)"},
    {"password_env", OPT_STRING, SUB(cluster, password_env), "", 0, 0, NULL, NULL,
     "external: name of the environment variable holding the nodes' password (read at run "
     "time, never echoed); empty: the nodes need none"},
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
    {"key_prefix", OPT_CUSTOM, 0, "\"lockstorm:\"", 0, 0, NULL, NULL,
     "the start of every key the lock uses: resource NAME is the key PREFIX+NAME, its fence "
     "counter PREFIX+fence:NAME (adapters get PREFIX+NAME as `res`); 0-64 of A-Z a-z 0-9 . _ - "
     ": / . Set it when the keyspace is shared (topology external), e.g. \"ci:lockstorm:\": "
     "before the run only this workload's keys are then deleted, not every lockstorm:* key "
     "(docs/workloads.md \"Resources and keys\")"},
    {"options", OPT_CUSTOM, 0, "{}", 0, 0, NULL, NULL,
     "implementation-specific keys (see \"lock.options by implementation\")"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def workers_tab[] = {
    {"count", OPT_INT, SUB(workers, count), "6", 1, 1024, NULL, NULL,
     "worker processes hammering the lock"},
    {"resources", OPT_CUSTOM, 0, "2", 0, 0, NULL, NULL,
     "the resources (locks) the workers pick from: a count N (named r0..rN-1) or a list of "
     "names, e.g. [invoice-42, invoice-43]: 1-" WL_RES_MAX_TEXT " of them, unique, each 1-64 of "
     "A-Z a-z 0-9 . _ - : / (a Redis key part; not r<N> of another position, not starting "
     "with fence:, the fence counters' prefix); the key of resource NAME is lock.key_prefix + "
     "NAME; lock.impl record takes at most " RECORD_MAX_RES_TEXT},
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

/* check.stuck_after: "auto" (stored as -1) is derived from the workload by
 * check_params_from (checkers/check.c). */
static const char *const stuck_after_words[] = {"auto", NULL};

static const struct opt_def check_tab[] = {
    {"near_miss", OPT_DURATION, SUB(check, near_miss), "1ms", 0, 10 * NS_S, NULL, NULL,
     "a next enter within this of the previous exit counts as a near miss"},
    {"stuck_after", OPT_DURATION, SUB(check, stuck_after), "auto", 0, NS_H, stuck_after_words,
     NULL,
     "an open stall at least this long at the end of the run makes the resource stuck; auto: "
     "max(2s, 2 x (longest hold + lock.ttl)), the longest hold of an unbounded distribution "
     "taken as its 99.9th percentile (docs/checkers.md \"liveness\")"},
    {"stories", OPT_INT, SUB(check, stories), "3", 0, 50, NULL, NULL,
     "at most this many violations get a narrated story, one per class first (0: none)"},
    {"max_commands_per_grant", OPT_DOUBLE, SUB(check, max_commands_per_grant), "0", 0, 1e9, NULL,
     NULL,
     "the commands checker is invalid when the lock nodes ran more lock commands per grant "
     "than this (INFO commandstats over the run; docs/checkers.md \"commands\"); 0: no limit"},
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

void workload_lock_keys(const struct workload *w, struct lock_config *cfg)
{
    cfg->key_prefix = workload_key_prefix(w);
    cfg->res_names = (const char *const *)w->workers.resource_names;
    cfg->nres = w->workers.resource_names ? (int)w->workers.resources : 0;
}

int workload_valid_name(const char *s)
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
        } else if (!workload_valid_name(w->name)) {
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
    } else if (strcmp(path, "cluster.topology") == 0) {
        /* the choices are the registry's names (backends/backend.h) */
        const struct backend_ops *be = backend_find(topology_choices[w->cluster.topology]);
        if (be && be->version != BACKEND_OPS_VERSION)
            ydiag_at(dg, at, "cluster.topology: '%s' implements backend ops version %d, "
                     "expected %d", be->name, be->version, BACKEND_OPS_VERSION);
        else if (be) {
            w->cluster.backend = be;
            w->cluster.caps = be->caps;
        }
        else
            ydiag_at(dg, at, "cluster.topology: no backend named '%s'",
                     topology_choices[w->cluster.topology]);
    }
    workload_replicated_check(w, path, at, L->root, dg); /* harness/workload_cluster.c */
    (void)d;
    (void)base;
}

/* ---- custom entries --------------------------------------------------- */

/* Is c allowed in a resource name or key prefix (a Redis key part that
 * needs no quoting in redis-cli, a log line or a file name)? */
static int key_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-' || c == ':' || c == '/';
}

/* Contract: the first character of s that key_char refuses, or -1. */
static int bad_key_char(const char *s)
{
    for (int i = 0; s[i]; i++)
        if (!key_char(s[i]))
            return i;
    return -1;
}

/* Contract: 1 when s is "r<N>" (the default name of resource N) with N != idx. */
static int default_name_clash(const char *s, size_t idx)
{
    if (s[0] != 'r' || s[1] < '0' || s[1] > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s + 1, &end, 10);
    return !*end && !errno && v != idx;
}

/* workers.resources: a count, or a list of names (workload.h). */
static int parse_resources(struct loader *L, const struct ynode *v, const struct ynode *where,
                           const char *path, struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[80];
    for (int64_t i = 0; w->workers.resource_names && i < w->workers.resources; i++)
        free(w->workers.resource_names[i]); /* a --set may replace the list */
    free(w->workers.resource_names);
    w->workers.resource_names = NULL;
    if (v && v->kind == YN_SCALAR) {
        char *end;
        errno = 0;
        long long n = strtoll(v->text, &end, 10);
        if (!v->text[0] || *end || errno || n < 1 || n > WL_RES_MAX) {
            ydiag_at(dg, v, "%s: expected a count 1..%d or a list of names, got '%s'", path,
                     WL_RES_MAX, opt_quote(v->text, q, sizeof(q)));
            return -1;
        }
        w->workers.resources = n;
        return 0;
    }
    if (!v || v->kind != YN_SEQ || v->n == 0) {
        ydiag_at(dg, v ? v : where, "%s: expected a count 1..%d or a non-empty list of names, "
                 "got %s", path, WL_RES_MAX, v ? (v->kind == YN_SEQ ? "an empty list"
                                                                      : ynode_kind_text(v))
                                              : "nothing");
        return -1;
    }
    if (v->n > WL_RES_MAX) {
        ydiag_at(dg, v, "%s: %zu names; at most %d resources", path, v->n, WL_RES_MAX);
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *it = v->vals[i];
        if (it->kind != YN_SCALAR) {
            ydiag_at(dg, it, "%s[%zu]: expected a name, got %s", path, i, ynode_kind_text(it));
            bad = 1;
            continue;
        }
        int at = bad_key_char(it->text);
        if (it->len == 0 || it->len > 64) {
            ydiag_at(dg, it, "%s[%zu]: a name of %zu characters; use 1-64 of A-Z a-z 0-9 . _ - "
                     ": /", path, i, it->len);
            bad = 1;
        } else if (at >= 0) {
            ydiag_at(dg, it, "%s[%zu]: '%s' has '%c' at %d; a name is part of a Redis key: use "
                     "A-Z a-z 0-9 . _ - : /", path, i, opt_quote(it->text, q, sizeof(q)),
                     it->text[at] >= 32 && it->text[at] < 127 ? it->text[at] : '?', at + 1);
            bad = 1;
        } else if (strncmp(it->text, "fence:", 6) == 0) {
            ydiag_at(dg, it, "%s[%zu]: '%s' starts with 'fence:': its key would be resource "
                     "'%s''s fence counter (PREFIX + fence:NAME); rename it", path, i,
                     opt_quote(it->text, q, sizeof(q)), it->text + 6);
            bad = 1;
        } else if (default_name_clash(it->text, i)) {
            ydiag_at(dg, it, "%s[%zu]: '%s' is the default name of another resource (r<N> is "
                     "position N); rename it", path, i, it->text);
            bad = 1;
        }
        for (size_t j = 0; j < i && !bad; j++)
            if (v->vals[j]->kind == YN_SCALAR && strcmp(v->vals[j]->text, it->text) == 0) {
                ydiag_at(dg, it, "%s[%zu]: '%s' is named twice (also at %d:%d); names must be "
                         "unique", path, i, it->text, v->vals[j]->line, v->vals[j]->col);
                bad = 1;
            }
    }
    if (bad)
        return -1;
    w->workers.resource_names = xcalloc(v->n, sizeof(char *));
    for (size_t i = 0; i < v->n; i++)
        w->workers.resource_names[i] = xstrdup(v->vals[i]->text);
    w->workers.resources = (int64_t)v->n;
    return 0;
}

/* lock.key_prefix (workload.h). */
static int parse_key_prefix(struct loader *L, const struct ynode *v, const struct ynode *where,
                            const char *path, struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[80];
    if (!v || v->kind != YN_SCALAR) {
        ydiag_at(dg, v ? v : where, "%s: expected a string, got %s", path,
                 v ? ynode_kind_text(v) : "nothing");
        return -1;
    }
    int at = bad_key_char(v->text);
    if (v->len > 64 || at >= 0) {
        ydiag_at(dg, v, "%s: '%s' %s; use 0-64 of A-Z a-z 0-9 . _ - : / (e.g. \"ci:lockstorm:\")",
                 path, opt_quote(v->text, q, sizeof(q)),
                 v->len > 64 ? "is longer than 64 characters" : "has a character a key prefix "
                                                                "cannot have");
        return -1;
    }
    free(w->lock.key_prefix);
    w->lock.key_prefix = xstrdup(v->text);
    return 0;
}

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
        if (w->cluster.backend->caps & BACKEND_CAP_ADDRESSES) {
            ydiag_at(dg, v ? v : where, "%s: topology %s needs the host:port of each lock "
                     "node, e.g. addresses: [\"redis-1:6379\", \"redis-2:6379\"]", path,
                     w->cluster.backend->name);
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
    if (v->n > 0 && !(w->cluster.backend->caps & BACKEND_CAP_ADDRESSES)) {
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

static int parse_custom(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                        const struct ynode *where, const char *path, struct ydiag *dg)
{
    struct loader *L = ctx;
    (void)base;
    if (strcmp(path, "cluster.addresses") == 0)
        return parse_addresses(L, v, where, path, dg);
    if (strcmp(path, "cluster.proxy") == 0)
        return workload_parse_proxy(L->w, v, path, dg);
    if (strcmp(path, "lock.renew") == 0)
        return parse_renew(L, v, where, path, dg);
    if (strcmp(path, "lock.key_prefix") == 0)
        return parse_key_prefix(L, v, where, path, dg);
    if (strcmp(path, "workers.resources") == 0)
        return parse_resources(L, v, where, path, dg);
    if (strcmp(path, "workers.jobs.layers") == 0)
        return jobs_parse_layers(L->w, v, where, path, dg);
    if (strcmp(path, "lock.options") == 0)
        return parse_lock_options(L, v, path, dg);
    if (strcmp(path, "faults") == 0)
        return wl_parse_faults(L, v, path, dg);
    if (strcmp(path, "expect") == 0)
        return wl_parse_expect(L, v, path, dg);
    if (strcmp(path, "nemesis") == 0)
        return nemesis_parse(L->w, v, where, path, dg);
    if (strcmp(path, "compare") == 0)
        return compare_parse(&L->w->compare, v, L->root, path, dg);
    ydiag_at(dg, v ? v : where, "%s: internal: no parser for custom key '%s'", path, d->name);
    return -1;
}

/* ---- loading ---------------------------------------------------------- */

/* What a compare variant's load adds (workload_load_variant), or NULL. */
struct variant_load {
    const unsigned char *drop;
    size_t ndrop;
    const char *context;
};

static int load_text(const char *file, const char *text, size_t len, const char *const *sets,
                     int nsets, const struct variant_load *vl, struct workload **out,
                     FILE *errlog, struct ls_err *err)
{
    struct ydiag dg;
    struct ynode *root = NULL;
    struct workload *w = NULL;
    ydiag_init(&dg, file, errlog, err);
    dg.context = vl ? vl->context : NULL;
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
    w->cluster.backend = backend_all()[0]; /* until cluster.topology is checked */
    w->cluster.caps = w->cluster.backend->caps;
    w->file = xstrdup(file);
    w->source = xmalloc(len + 1);
    memcpy(w->source, text, len);
    w->source[len] = '\0';
    w->source_len = len;
    struct loader L = {w, root, vl ? vl->drop : NULL, vl ? vl->ndrop : 0,
                       vl ? vl->context : NULL};
    struct opt_hooks h = {&L, parse_custom, check_entry, NULL, NULL, NULL};
    struct opt_scope sc = {top_tab, w};
    opt_load_map(&sc, 1, root, root, "", &h, &dg);
    workload_resolve_proxy(w); /* auto: once faults, nemesis and lock are known */
    wl_check_quiet_tail(&L, &dg);
    wl_check_fault_budget(&L, &dg);
    workload_pg_check(w, root, &dg); /* topology postgres, pg-advisory (workload_pg.c) */
    workload_record_check(w, root, &dg); /* lock.impl record (workload_record.c) */

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
                     nsets, NULL, out, errlog, err);
}

int workload_load_text(const char *path, const char *text, size_t len, const char *const *sets,
                       int nsets, struct workload **out, FILE *errlog, struct ls_err *err)
{
    return load_text(path, text, len, sets, nsets, NULL, out, errlog, err);
}

int workload_read(const char *path, char **text, size_t *textlen, FILE *errlog,
                  struct ls_err *err)
{
    struct ydiag dg;
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    int rc = 0;
    ydiag_init(&dg, path, errlog, err);
    *text = NULL;
    *textlen = 0;

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
    *text = buf;
    *textlen = len;
    buf = NULL;
done:
    close(fd);
    free(buf);
    return rc;
}

int workload_load(const char *path, const char *const *sets, int nsets, struct workload **out,
                  FILE *errlog, struct ls_err *err)
{
    char *text = NULL; /* read once (workload_read), then loaded as load_text does */
    size_t len = 0;
    *out = NULL;
    int rc = workload_read(path, &text, &len, errlog, err);
    if (rc == 0)
        rc = load_text(path, text, len, sets, nsets, NULL, out, errlog, err);
    free(text);
    return rc;
}

int workload_load_variant(const struct workload *base, const char *const *sets, int nsets,
                          const unsigned char *drop, size_t ndrop, const char *context,
                          struct workload **out, FILE *errlog, struct ls_err *err)
{
    struct variant_load vl = {drop, ndrop, context};
    return load_text(base->file, base->source, base->source_len, sets, nsets, &vl, out, errlog,
                     err);
}

void workload_free(struct workload *w)
{
    if (!w)
        return;
    if (w->lock.ops)
        opt_free(w->lock.ops->options, w->lock.options);
    free(w->lock.options);
    wl_clear_faults(w);
    nemesis_free(&w->nemesis);
    compare_free(&w->compare);
    wl_clear_expects(w);
    for (int i = 0; i < w->cluster.naddresses; i++)
        free(w->cluster.addresses[i]);
    free(w->cluster.addresses);
    for (int64_t i = 0; w->workers.resource_names && i < w->workers.resources; i++)
        free(w->workers.resource_names[i]);
    free(w->workers.resource_names);
    free(w->lock.key_prefix);
    opt_free(top_tab, w);
    free(w->file);
    free(w->source);
    free(w);
}

/* ---- echo ------------------------------------------------------------- */

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
    } else if (strcmp(d->name, "resources") == 0) {
        if (!w->workers.resource_names) {
            sb_printf(sb, " %lld\n", (long long)w->workers.resources);
            return;
        }
        sb_puts(sb, " [");
        for (int64_t i = 0; i < w->workers.resources; i++) {
            sb_puts(sb, i ? ", " : "");
            sb_json_str(sb, w->workers.resource_names[i], strlen(w->workers.resource_names[i]));
        }
        sb_puts(sb, "]\n");
    } else if (strcmp(d->name, "key_prefix") == 0) {
        sb_putc(sb, ' ');
        sb_json_str(sb, workload_key_prefix(w), strlen(workload_key_prefix(w)));
        sb_putc(sb, '\n');
    } else if (strcmp(d->name, "proxy") == 0) {
        /* the setting (auto stays auto: the echo loads back the same), and
         * what auto chose and why */
        sb_printf(sb, " %s", workload_proxy_setting(w));
        if (w->cluster.proxy_setting == PROXY_AUTO && w->cluster.proxy != PROXY_AUTO)
            sb_printf(sb, "  # resolved: %s (%s)", w->cluster.proxy ? "true" : "false",
                      w->cluster.proxy_why);
        sb_putc(sb, '\n');
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
        if (wl_table_empty(tab) || !w->lock.options) {
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
        wl_expects_yaml(w, indent, sb);
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
    if (strcmp(d->name, "resources") == 0) {
        if (!w->workers.resource_names)
            return json_new_int(w->workers.resources);
        struct json *arr = json_new_arr();
        for (int64_t i = 0; i < w->workers.resources; i++)
            json_arr_push(arr, json_new_str(w->workers.resource_names[i]));
        return arr;
    }
    if (strcmp(d->name, "key_prefix") == 0)
        return json_new_str(workload_key_prefix(w));
    if (strcmp(d->name, "proxy") == 0)
        return w->cluster.proxy == PROXY_AUTO ? json_new_str("auto")
                                              : json_new_bool(w->cluster.proxy);
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
        if (wl_table_empty(tab) || !w->lock.options)
            return json_new_obj();
        return opt_to_json(tab, w->lock.options, w->lock.ops->option_hooks);
    }
    if (strcmp(d->name, "faults") == 0)
        return wl_faults_json(w);
    if (strcmp(d->name, "nemesis") == 0)
        return nemesis_echo_json(&w->nemesis);
    if (strcmp(d->name, "compare") == 0)
        return compare_echo_json(&w->compare);
    if (strcmp(d->name, "expect") == 0)
        return wl_expects_json(w);
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
    if (strcmp(d->name, "proxy") == 0)
        return "auto or boolean";
    if (strcmp(d->name, "resources") == 0)
        return "integer or list of names";
    if (strcmp(d->name, "key_prefix") == 0)
        return "string";
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
            "[workloads.md](workloads.md). Any key can be overridden on the command line with\n"
            "`--set key.path=value`.\n\n"
            "Numbers and durations have one grammar, in the file, in `--set` and in\n"
            "`expect:`. A number is `[-]DIGITS[.DIGITS][e[+|-]DIGITS]` (`2`, `0.5`, `-1`,\n"
            "`1e6`). A duration is `DIGITS[.DIGITS]UNIT` with a unit of `ns`, `us`, `ms`,\n"
            "`s`, `m`, `h` (`300ms`, `1.5s`, `2m`), or a bare `0`; only a clock jump takes a\n"
            "`-` before it. Anything else is refused: a `+` sign, a leading or trailing dot\n"
            "(`.5`, `1.`), hex, `inf`, `nan`, an exponent in a duration (`1e1s`), `-0ms`.\n"
            "Files are UTF-8 (a UTF-8 byte-order mark is skipped; UTF-16 is refused).\n\n"
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
        if (wl_table_empty(ops->options))
            sb_puts(sb, "No options.\n");
        else
            opt_reference(ops->options, "lock.options.", 1, 1, ops->option_hooks, sb);
    }
    sb_puts(sb, "\n## workers\n\n");
    opt_reference(workers_tab, "workers.", 1, 1, &h, sb);
    sb_puts(sb, "\n### Distributions (workers.hold, workers.think)\n\n"
                "A bare duration means `{dist: fixed, value: DURATION}`. The mapping form:\n\n");
    opt_dist_reference(sb);
    wl_faults_reference(sb);
    nemesis_reference(sb);
    sb_puts(sb, "\n## check\n\n");
    opt_reference(check_tab, "check.", 1, 1, &h, sb);
    wl_expect_reference(sb);
}
