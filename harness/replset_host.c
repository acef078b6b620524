/*
 * replset_host.c: the struct replset_host of a run (see replset_host.h):
 * the run's interrupt and sleep, the replication proxy (row 0 of a
 * faults/proxy.h proxy, one listener per node), the iptables calls and the
 * rules reaper: a const table over one heap block per set (the ctx),
 * released by the set.
 */
#include "harness/replset_host.h"

#include <stdlib.h>

#include "backends/replset.h"
#include "faults/failover.h"
#include "faults/proxy.h"
#include "util/iptables.h"
#include "harness/reaper.h"
#include "harness/run.h"

_Static_assert(REPLSET_IPT_COMMENT_MAX >= IPT_COMMENT_MAX,
               "the set's copy of the rules' comment holds ipt_comment's");

struct host {
    struct run *r;           /* borrowed */
    struct proxy *proxy;     /* the replication proxy, or NULL */
    struct reaper reaper;    /* the rules reaper (cut: iptables) */
};

static int h_interrupted(void *ctx)
{
    return run_interrupted(((struct host *)ctx)->r);
}

static void h_sleep(void *ctx, int64_t ns)
{
    run_sleep(((struct host *)ctx)->r, ns);
}

static int h_proxy_start(void *ctx, const struct lock_node *real, int nnodes,
                         const char *log_path, uint64_t seed, int *names, pid_t *pid,
                         struct ls_err *err)
{
    struct host *h = ctx;
    struct proxy_config cfg = {
        .nworkers = 1,
        .nnodes = nnodes,
        .nodes = real,
        .log_path = log_path,
        .seed = seed,
    };
    int rc = proxy_start(&cfg, &h->proxy, err);
    if (rc < 0)
        return rc;
    *pid = proxy_pid(h->proxy);
    const struct lock_node *l = proxy_worker_nodes(h->proxy, 0);
    for (int n = 0; n < nnodes; n++)
        names[n] = l[n].port;
    return 0;
}

static int h_proxy_cut(void *ctx, int id, int node, uint64_t *generation, int64_t *waited_ns,
                       struct ls_err *err)
{
    struct host *h = ctx;
    uint8_t dirs[REPLSET_MAX_NODES] = {0};
    dirs[node] = PROXY_BOTH;
    struct proxy_rule rule = {.partition = PROXY_PART_BLACKHOLE};
    struct proxy_ack ack = {0};
    int rc = proxy_fault_set(h->proxy, id, PROXY_SET_PARTITION, &rule, dirs, &ack, err);
    *generation = ack.generation;
    *waited_ns = ack.waited_ns;
    return rc;
}

static int h_proxy_uncut(void *ctx, int id, int node, struct ls_err *err)
{
    struct host *h = ctx;
    uint8_t dirs[REPLSET_MAX_NODES] = {0};
    dirs[node] = PROXY_BOTH;
    struct proxy_rule rule = {.partition = PROXY_PART_RESET};
    struct ls_err e = {0};
    int rc = proxy_fault_set(h->proxy, id, PROXY_SET_PARTITION, &rule, dirs, NULL, err ? err : &e);
    int rc2 = proxy_fault_clear(h->proxy, id, err ? err : &e);
    return rc < 0 ? rc : rc2;
}

static void h_proxy_stop(void *ctx)
{
    struct host *h = ctx;
    proxy_stop(h->proxy);
    h->proxy = NULL;
}

static int h_rules_reaper_start(void *ctx, const char *comment, pid_t *pid, struct ls_err *err)
{
    struct host *h = ctx;
    int rc = reaper_rules_start(&h->reaper, comment, err);
    *pid = h->reaper.pid;
    return rc;
}

static void h_rules_reaper_stop(void *ctx)
{
    reaper_stop(&((struct host *)ctx)->reaper);
}

static void h_release(void *ctx)
{
    struct host *h = ctx;
    proxy_stop(h->proxy);
    reaper_stop(&h->reaper);
    free(h);
}

static const struct replset_host_ops run_host_ops = {
    .interrupted = h_interrupted,
    .sleep = h_sleep,
    .proxy_start = h_proxy_start,
    .proxy_cut = h_proxy_cut,
    .proxy_uncut = h_proxy_uncut,
    .proxy_stop = h_proxy_stop,
    .ipt_usable = ipt_usable,
    .ipt_comment = ipt_comment,
    .ipt_remove_stale = ipt_remove_stale,
    .ipt_cut_pair = ipt_cut_pair,
    .ipt_remove_tagged = ipt_remove_tagged,
    .rules_reaper_start = h_rules_reaper_start,
    .rules_reaper_stop = h_rules_reaper_stop,
    .release = h_release,
};

int run_replset_start(struct run *r, struct ls_err *err)
{
    struct host *h = calloc(1, sizeof(*h));
    if (!h)
        return ls_err_set(err, LS_ENOMEM, "replicated set: out of memory");
    h->r = r;
    const struct workload *w = r->w;
    struct replset_config cfg = {
        .cluster = &r->cluster,
        .dir = r->dir,
        .sentinels = (int)w->cluster.sentinels,
        .min_replicas_to_write = w->cluster.min_replicas_to_write,
        .min_replicas_max_lag = w->cluster.min_replicas_max_lag,
        .seed = w->seed,
        .iptables = failover_uses_iptables(w),
    };
    return replset_start(&cfg, (struct replset_host){&run_host_ops, h}, &r->repl, err);
}
