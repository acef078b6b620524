/*
 * failover.c: the `failover` fault on a replicated topology: the primary is
 * SIGKILLed or SIGSTOPped and a replica promoted, by Sentinel (mode
 * sentinel) or by the harness as operator (mode manual). With cut_before
 * the primary's replication link is cut first, so grants made meanwhile are
 * lost: through the replication proxy (cut: proxy, no root needed) or with
 * iptables rules (cut: iptables, root). Starts once the old primary is
 * reaped / in state T; ends once the new one answers ROLE master and
 * workers can find it. Not here: the set itself, which the kind reaches
 * through the env's replicated-set ops (faults/env.h).
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults/env.h"
#include "faults/failover.h"
#include "faults/fault.h"
#include "model/workload.h"
#include "util/iptables.h"
#include "util/timeutil.h"

#define REAP_TIMEOUT (5 * LS_NS_PER_S)
#define CONFIRM_TIMEOUT LS_NS_PER_S
#define RESTART_TIMEOUT (10 * LS_NS_PER_S)

enum { MODE_SENTINEL, MODE_MANUAL };
enum { HOW_KILL, HOW_PAUSE };
enum { CUT_PROXY, CUT_IPTABLES };

struct failover_opts {
    int mode;
    int how;
    int64_t cut_before;   /* ns; 0 = replication is not cut */
    int cut;              /* CUT_*: how */
    int64_t replica;      /* manual: the node to promote, -1 = the first replica up */
    int64_t timeout;      /* sentinel: how long to wait for the promotion */
};

static const char *const mode_words[] = {"sentinel", "manual", NULL};
static const char *const how_words[] = {"kill", "pause", NULL};
static const char *const cut_words[] = {"proxy", "iptables", NULL};

static const struct opt_def failover_options[] = {
    {"mode", OPT_ENUM, offsetof(struct failover_opts, mode), "sentinel", 0, 0, mode_words, NULL,
     "sentinel: Sentinel notices and promotes a replica (needs cluster.sentinels > 0); manual: "
     "the harness promotes one after `duration` (needs cluster.sentinels: 0)"},
    {"how", OPT_ENUM, offsetof(struct failover_opts, how), "kill", 0, 0, how_words, NULL,
     "kill: SIGKILL the primary (it restarts as a replica of the new one when the fault ends); "
     "pause: SIGSTOP it, SIGCONT once the new primary is confirmed (the old one still believes "
     "it is the primary: split brain until it is demoted)"},
    {"cut_before", OPT_DURATION, offsetof(struct failover_opts, cut_before), "0", 0, 10e9, NULL,
     NULL, "cut the primary's replication link this long before it goes away, kept cut until the "
     "new primary is confirmed (grants made meanwhile are lost); 0 = no cut"},
    {"cut", OPT_ENUM, offsetof(struct failover_opts, cut), "proxy", 0, 0, cut_words, NULL,
     "how cut_before cuts: proxy: the replicas replicate through lockstorm's replication proxy, "
     "which blackholes the primary (no root; the sentinels lose it too); iptables: they "
     "replicate directly, each from its own loopback address (127.0.0.(10+n)), and iptables "
     "DROP rules tagged lockstorm:<pid> cut just that traffic (needs root and the iptables "
     "command: apt-get install iptables; refused at load otherwise); all failover faults of a "
     "workload use the same cut"},
    {"replica", OPT_INT, offsetof(struct failover_opts, replica), "-1", -1, 15, NULL, NULL,
     "manual: the node to promote; -1 = the lowest-numbered replica that is up"},
    {"timeout", OPT_DURATION, offsetof(struct failover_opts, timeout), "10s", 1e9, 60e9, NULL,
     NULL, "sentinel: how long to wait for Sentinel's promotion before the fault fails"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* One occurrence's state, made by start, freed by stop. */
struct fo_state {
    int old;            /* the primary that went away */
    pid_t pid;          /* its process (paused) */
    int cut;            /* its replication link is cut */
    int paused, killed;
};

static const struct failover_opts *opts_of(const struct fault_inst *fi)
{
    return fi->spec->params;
}

/* Contract: undo what start did so far (cut, pause) without promoting
 * anything; frees the state. */
static void abandon(const struct fault_env *env, struct fault_inst *fi)
{
    struct fo_state *st = fi->state;
    if (!st)
        return;
    struct ls_err e = {0};
    if (st->cut)
        env->ops->heal_replication(env->ctx, fi->id, &e);
    if (st->paused)
        env->ops->resume(env->ctx, st->pid, 0, 0);
    free(st);
    fi->state = NULL;
    env->ops->set_failover_busy(env->ctx, 0);
}

/* Contract: sleep ns, or less when the run is interrupted (the env's
 * sleep wakes at the signal). */
static void wait_ns(const struct fault_env *env, int64_t ns)
{
    int64_t until = ls_now_ns() + ns;
    while (ls_now_ns() < until && !env->ops->interrupted(env->ctx))
        env->ops->sleep(env->ctx, until - ls_now_ns());
}

static int fo_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct failover_opts *o = opts_of(fi);
    void *ctx = env->ctx;
    if (!env->ops->replicated(ctx))
        return ls_err_set(err, LS_EUSAGE, "failover: needs cluster.topology replicated");
    if (env->ops->failover_busy(ctx))
        return 1; /* one failover at a time */
    int old = env->ops->primary(ctx);
    if (o->mode == MODE_SENTINEL) {
        /* Sentinel may have failed over on its own */
        int s = env->ops->sentinel_primary(ctx, NULL);
        if (s >= 0 && s != old) {
            env->ops->set_primary(ctx, s);
            old = s;
        }
    }
    struct fault_node nd = {.index = old};
    env->ops->node(ctx, old, &nd);
    const struct fault_node *n = &nd;
    char role[16];
    env->ops->node_role(ctx, old, role, sizeof(role));
    if (n->pid <= 0 || strcmp(role, "master") != 0)
        return 1; /* the primary is down or not answering: nothing to fail over from */
    struct fo_state *st = calloc(1, sizeof(*st));
    if (!st)
        return ls_err_set(err, LS_ENOMEM, "failover: out of memory");
    fi->state = st;
    st->old = old;
    st->pid = n->pid;
    env->ops->set_failover_busy(ctx, 1);
    struct json *d = fi->detail;
    json_obj_set_str(d, "mode", mode_words[o->mode]);
    json_obj_set_str(d, "how", how_words[o->how]);
    json_obj_set_int(d, "old_primary", old);
    json_obj_set_int(d, "old_port", n->addr.port);

    if (o->cut_before > 0) {
        int64_t t = env->ops->now(ctx);
        int rc = env->ops->cut_replication(ctx, fi->id, old, d, err);
        if (rc < 0) {
            abandon(env, fi);
            return rc;
        }
        st->cut = 1;
        json_obj_set_num(d, "cut_ms", (double)t / 1e6);
        wait_ns(env, o->cut_before);
        if (env->ops->interrupted(ctx)) {
            abandon(env, fi);
            return ls_err_set(err, LS_EINTR, "failover: interrupted during cut_before");
        }
    }
    redisContext *c = NULL;
    {
        struct timeval tv = {0, 200000};
        c = env->ops->node_connect(ctx, old, tv);
        if (c && !c->err) {
            redisSetTimeout(c, tv);
            redisReply *k = redisCommand(c, "DBSIZE");
            json_obj_set(d, "keys_before",
                         k && k->type == REDIS_REPLY_INTEGER ? json_new_int(k->integer)
                                                              : json_new_null());
            if (k)
                freeReplyObject(k);
        }
        if (c)
            redisFree(c);
    }
    int64_t t = env->ops->now(ctx);
    if (o->how == HOW_KILL) {
        int status = 0;
        int rc = env->ops->kill_node(ctx, old, SIGKILL, REAP_TIMEOUT, &status, err);
        if (rc < 0) {
            abandon(env, fi);
            return rc;
        }
        st->killed = 1;
        json_obj_set_str(d, "signal", "SIGKILL");
        json_obj_set_str(d, "verified", "old primary reaped");
    } else {
        int pid = st->pid, e = 0;
        int k = env->ops->pause_node(ctx, old, CONFIRM_TIMEOUT, &pid, &e);
        if (k == FAULT_PAUSE_SIGNAL) {
            abandon(env, fi);
            return ls_err_errno(err, LS_EENV, e, "failover: SIGSTOP node %d (pid %d)", old,
                                (int)st->pid);
        }
        if (k == FAULT_PAUSE_TIMEOUT) { /* resumed by the op */
            abandon(env, fi);
            return ls_err_set(err, LS_ETIMEOUT, "failover: node %d (pid %d) did not stop within 1s",
                              old, (int)st->pid);
        }
        st->paused = 1;
        json_obj_set_str(d, "signal", "SIGSTOP");
        json_obj_set_str(d, "verified", "old primary in state T");
    }
    fi->start_ns = t;
    fi->node = old;
    fi->pids[fi->npids++] = st->pid;
    json_obj_set_num(d, "down_ms", (double)env->ops->now(ctx) / 1e6);
    return 0;
}

/* Contract: the node the harness promotes (manual): the option's, else
 * the lowest-numbered node other than old that is up and a replica; -1. */
static int node_up(const struct fault_env *env, int k)
{
    struct fault_node nd;
    return env->ops->node(env->ctx, k, &nd) == 0 && nd.pid > 0;
}

static int pick_replica(const struct fault_env *env, const struct failover_opts *o, int old)
{
    int nn = env->ops->nnodes(env->ctx);
    if (o->replica >= 0)
        return o->replica < nn && o->replica != old && node_up(env, (int)o->replica)
                   ? (int)o->replica : -1;
    for (int k = 0; k < nn; k++) {
        char role[16];
        if (k == old || !node_up(env, k))
            continue;
        env->ops->node_role(env->ctx, k, role, sizeof(role));
        if (strcmp(role, "slave") == 0)
            return k;
    }
    return -1;
}

/* Contract: wait (bounded by the option's timeout) until a majority of the
 * sentinels names a node other than old and that node answers ROLE
 * master. The node, or -1 (timeout, interrupted). */
static int await_sentinel(const struct fault_env *env, const struct failover_opts *o, int old,
                          int *agree)
{
    int64_t deadline = ls_now_ns() + o->timeout;
    while (ls_now_ns() < deadline && !env->ops->interrupted(env->ctx)) {
        int p = env->ops->sentinel_primary(env->ctx, agree);
        if (p >= 0 && p != old) {
            char role[16];
            env->ops->node_role(env->ctx, p, role, sizeof(role));
            if (strcmp(role, "master") == 0)
                return p;
        }
        env->ops->sleep(env->ctx, 20 * LS_NS_PER_MS);
    }
    return -1;
}

static int fo_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    struct fo_state *st = fi->state;
    if (!st)
        return 0;
    void *ctx = env->ctx;
    const struct failover_opts *o = opts_of(fi);
    if (!fi->end_detail)
        fi->end_detail = json_new_obj();
    struct json *d = fi->end_detail;
    int old = st->old, p = -1, agree = 0, rc = 0;
    if (o->mode == MODE_SENTINEL && !env->ops->interrupted(ctx))
        p = await_sentinel(env, o, old, &agree);
    if (p < 0 && env->ops->interrupted(ctx)) { /* no promotion is waited for or made any more */
        json_obj_set_bool(d, "promoted", 0);
        json_obj_set_str(d, "why", "the run was interrupted");
        abandon(env, fi);
        return 0;
    }
    if (o->mode == MODE_SENTINEL) {
        if (p < 0)
            rc = ls_err_set(err, LS_ETIMEOUT,
                            "failover: no new primary confirmed within %llds (sentinels agreeing: "
                            "%d)", (long long)(o->timeout / LS_NS_PER_S), agree);
    } else {
        p = pick_replica(env, o, old);
        if (p < 0)
            rc = ls_err_set(err, LS_EENV, "failover: no replica up to promote");
        if (rc == 0)
            rc = env->ops->promote(ctx, p, err);
        for (int k = 0; rc == 0 && k < env->ops->nnodes(ctx); k++)
            if (k != old && k != p && node_up(env, k))
                rc = env->ops->follow(ctx, k, p, err);
    }
    if (rc < 0) {
        /* nothing was promoted: give the set its primary back */
        json_obj_set_bool(d, "promoted", 0);
        if (st->killed && !node_up(env, old)) {
            struct ls_err e = {0};
            if (env->ops->restart_node(ctx, old, RESTART_TIMEOUT, &e) == 0)
                env->ops->configure_node(ctx, old, &e);
        }
        abandon(env, fi);
        return rc;
    }
    env->ops->set_primary(ctx, p); /* workers without sentinels follow this */
    int64_t promoted = env->ops->now(ctx);
    json_obj_set_bool(d, "promoted", 1);
    json_obj_set_int(d, "new_primary", p);
    struct fault_node np = {.index = p};
    env->ops->node(ctx, p, &np);
    json_obj_set_int(d, "new_port", np.addr.port);
    json_obj_set_num(d, "confirmed_ms", (double)promoted / 1e6);
    json_obj_set_str(d, "verified",
                     o->mode == MODE_SENTINEL
                         ? "ROLE master on the new primary; a majority of sentinels names it"
                         : "ROLE master on the new primary; the harness names it to the workers");
    if (o->mode == MODE_SENTINEL)
        json_obj_set_int(d, "sentinels_agreeing", agree);

    struct ls_err e = {0};
    if (st->cut && env->ops->heal_replication(ctx, fi->id, &e) < 0 && rc == 0)
        rc = ls_err_set(err, e.code, "failover: heal the cut: %s", e.msg);
    st->cut = 0;
    if (st->killed) {
        /* the old primary comes back as a replica of the new one */
        int64_t t = env->ops->now(ctx);
        int k = env->ops->restart_node(ctx, old, RESTART_TIMEOUT, &e);
        if (k == 0)
            k = env->ops->configure_node(ctx, old, &e);
        if (k == 0)
            k = env->ops->follow(ctx, old, p, &e);
        json_obj_set_bool(d, "old_rejoined", k == 0);
        json_obj_set_num(d, "old_restart_ms", (double)t / 1e6);
        if (k < 0 && rc == 0)
            rc = ls_err_set(err, e.code, "failover: old primary node %d: %s", old, e.msg);
    } else if (st->paused) {
        env->ops->resume(ctx, st->pid, 0, CONFIRM_TIMEOUT);
        st->paused = 0;
        json_obj_set_num(d, "old_continued_ms", (double)env->ops->now(ctx) / 1e6);
        if (o->mode == MODE_MANUAL) {
            /* the operator demotes it at once; Sentinel does so only later */
            int k = env->ops->follow(ctx, old, p, &e);
            json_obj_set_bool(d, "old_demoted", k == 0);
        } else {
            json_obj_set_str(d, "old_demoted", "by Sentinel, once it sees the old primary again");
        }
    }
    free(st);
    fi->state = NULL;
    env->ops->set_failover_busy(ctx, 0);
    return rc;
}


int failover_uses_iptables(const struct workload *w)
{
    int ipt = 0, proxy = 0;
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        if (!fs->ops || strcmp(fs->ops->name, "failover") != 0 || !fs->params)
            continue;
        const struct failover_opts *o = fs->params;
        if (o->cut == CUT_IPTABLES)
            ipt = 1;
        else if (o->cut_before > 0)
            proxy = 1;
    }
    return ipt && proxy ? -1 : ipt;
}

static int fo_validate(const struct workload *w, const struct fault_spec *fs, char *why, size_t n)
{
    const struct failover_opts *o = fs->params;
    if (o->cut == CUT_IPTABLES) {
        if (o->cut_before <= 0) {
            snprintf(why, n, "cut: iptables without cut_before (0: no cut); give cut_before a "
                             "duration, or leave cut out");
            return -1;
        }
        if (ipt_usable(why, n) < 0) /* what the host must offer */
            return -1;
    }
    if (failover_uses_iptables(w) < 0) { /* this one against the failovers before it */
        snprintf(why, n, "cut: %s here but cut: %s in an earlier failover fault; a workload's "
                         "failovers cut the same way (the set replicates through the proxy or "
                         "directly), so give every one the same cut", cut_words[o->cut],
                 cut_words[!o->cut]);
        return -1;
    }
    if (!(w->cluster.caps & BACKEND_CAP_REPLICAS)) {
        snprintf(why, n, "kind failover needs cluster.topology: replicated");
        return -1;
    }
    if (o->mode == MODE_SENTINEL && w->cluster.sentinels == 0) {
        snprintf(why, n, "mode sentinel needs cluster.sentinels > 0; with no sentinels use "
                         "mode: manual");
        return -1;
    }
    if (o->mode == MODE_MANUAL && w->cluster.sentinels > 0) {
        snprintf(why, n, "mode manual needs cluster.sentinels: 0 (the sentinels would fail over "
                         "on their own); use mode: sentinel");
        return -1;
    }
    if (o->replica >= 0 && (o->mode != MODE_MANUAL || o->replica >= w->cluster.nodes)) {
        snprintf(why, n, "replica: %lld is only valid with mode manual and below cluster.nodes "
                         "(%lld)", (long long)o->replica, (long long)w->cluster.nodes);
        return -1;
    }
    return 0;
}

const struct fault_ops fault_failover = {
    .version = FAULT_OPS_VERSION,
    .name = "failover",
    .help = "replicated topology: the primary is killed or paused and a replica promoted, by "
            "Sentinel or by the harness; with cut_before, grants made while replication was cut "
            "are lost",
    .targets = 1u << TARGET_PRIMARY,
    .options = failover_options,
    .options_size = sizeof(struct failover_opts),
    .start = fo_start,
    .stop = fo_stop,
    .validate = fo_validate,
    .min_every = 1000000000, /* a promotion takes about a second */
};
