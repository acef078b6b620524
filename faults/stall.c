/*
 * stall.c: the `stall` fault: a lock node stops answering every client at
 * once, server side: `CLIENT PAUSE <duration> ALL` (mode pause) or `DEBUG
 * SLEEP <duration>` (mode sleep: the whole server blocks), sent over the
 * harness's own connection. It counts as started once a PING from a second
 * connection gets no answer. Neither can be cut short (Redis queues CLIENT
 * UNPAUSE behind the pause): the end waits until the node answers PING.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults/env.h"
#include "faults/fault.h"
#include "model/workload.h"
#include "util/timeutil.h"

#define CONNECT_TIMEOUT_US 200000
#define PROBE_MAX (50 * LS_NS_PER_MS)
#define PROBE_TRIES 3
#define END_SLACK (2 * LS_NS_PER_S)

enum stall_mode { STALL_PAUSE, STALL_SLEEP };

struct stall_opts {
    int mode;  /* enum stall_mode */
};

static const char *const stall_modes[] = {"pause", "sleep", NULL};

static const struct opt_def stall_options[] = {
    {"mode", OPT_ENUM, offsetof(struct stall_opts, mode), "pause", 0, 0, stall_modes, NULL,
     "pause: CLIENT PAUSE <duration> ALL (every command waits, key expiry pauses too, new "
     "connections are still accepted); sleep: DEBUG SLEEP <duration> (the whole server blocks)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* Per occurrence (fault_inst.state). */
struct stall_state {
    redisContext *ctl;   /* sent the stall; mode sleep: its reply comes when it ends */
    int64_t until;       /* CLOCK_MONOTONIC ns by which the server answers again */
    int mode;
};

/* Contract: a connection to n with timeout_ns per command, or NULL
 * (caller frees with redisFree). */
static redisContext *connect_node(const struct fault_env *env, int k, int64_t timeout_ns)
{
    struct timeval tv = {0, CONNECT_TIMEOUT_US};
    redisContext *c = env->ops->node_connect(env->ctx, k, tv);
    if (!c)
        return NULL;
    if (c->err) {
        redisFree(c);
        return NULL;
    }
    struct timeval t = {(time_t)(timeout_ns / LS_NS_PER_S),
                        (suseconds_t)((timeout_ns % LS_NS_PER_S) / LS_NS_PER_US)};
    redisSetTimeout(c, t);
    return c;
}

/* Contract: 1 when c answered PING with PONG within its timeout, 0 when
 * no reply came (c is unusable afterwards), -1 on another error. */
static int ping(redisContext *c)
{
    redisReply *rep = redisCommand(c, "PING");
    if (!rep)
        return c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
    int ok = rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0;
    freeReplyObject(rep);
    return ok ? 1 : -1;
}

/* Frees st and its connection; NULL is accepted. */
static void state_free(struct stall_state *st)
{
    if (!st)
        return;
    if (st->ctl)
        redisFree(st->ctl);
    free(st);
}

/* Contract: send the stall command on st->ctl. Pause: its +OK confirms the
 * pause is in force. Sleep: only written (the reply comes when the sleep
 * ends). Returns 0 or negative with err set. */
static int send_stall(struct stall_state *st, const struct fault_node *n, int64_t dur,
                      char *cmd, size_t cmdlen, struct ls_err *err)
{
    long long ms = (long long)((dur + LS_NS_PER_MS - 1) / LS_NS_PER_MS);
    if (st->mode == STALL_PAUSE) {
        snprintf(cmd, cmdlen, "CLIENT PAUSE %lld ALL", ms);
        redisReply *rep = redisCommand(st->ctl, "CLIENT PAUSE %lld ALL", ms);
        int ok = rep && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "OK") == 0;
        char why[128];
        snprintf(why, sizeof(why), "%s", rep ? (rep->str ? rep->str : "unexpected reply")
                                              : st->ctl->errstr);
        if (rep)
            freeReplyObject(rep);
        if (!ok)
            return ls_err_set(err, LS_EENV, "stall: node %d (%s:%d): %s: %s", n->index,
                              n->addr.host, n->addr.port, cmd, why);
        return 0;
    }
    snprintf(cmd, cmdlen, "DEBUG SLEEP %lld.%03lld", ms / 1000, ms % 1000);
    if (redisAppendCommand(st->ctl, "DEBUG SLEEP %lld.%03lld", ms / 1000, ms % 1000) != REDIS_OK)
        return ls_err_set(err, LS_EENV, "stall: node %d: %s: %s", n->index, cmd, st->ctl->errstr);
    int done = 0;
    while (!done)
        if (redisBufferWrite(st->ctl, &done) != REDIS_OK)
            return ls_err_set(err, LS_EENV, "stall: node %d: %s: %s", n->index, cmd,
                              st->ctl->errstr);
    return 0;
}

/* Contract: stall node:N for the fault's duration, confirmed by an
 * unanswered PING. Returns 0, 1 when the node is down, negative (err). */
static int stall_start(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    const struct fault_spec *s = fi->spec;
    const struct stall_opts *o = s->params;
    int k = s->target_index;
    struct fault_node nd;
    if (env->ops->node(env->ctx, k, &nd) < 0 || nd.pid <= 0)
        return 1;
    const struct fault_node *n = &nd;
    int64_t probe_ns = s->duration / 2 < PROBE_MAX ? s->duration / 2 : PROBE_MAX;
    if (probe_ns < LS_NS_PER_MS)
        probe_ns = LS_NS_PER_MS;
    redisContext *probe = connect_node(env, k, 200 * LS_NS_PER_MS);
    if (!probe || ping(probe) != 1) {
        if (probe)
            redisFree(probe);
        return ls_err_set(err, LS_EENV, "stall: node %d (%s:%d) did not answer PING before the "
                          "stall (down or paused?)", k, n->addr.host, n->addr.port);
    }
    struct stall_state *st = calloc(1, sizeof(*st));
    if (!st) {
        redisFree(probe);
        return ls_err_set(err, LS_ENOMEM, "stall: out of memory");
    }
    fi->state = st;
    st->mode = o->mode;
    st->ctl = connect_node(env, k, 200 * LS_NS_PER_MS);
    if (!st->ctl) {
        redisFree(probe);
        return ls_err_set(err, LS_EENV, "stall: node %d (%s:%d): connect failed", k,
                          n->addr.host, n->addr.port);
    }
    char cmd[64];
    int64_t t = env->ops->now(env->ctx);
    int rc = send_stall(st, n, s->duration, cmd, sizeof(cmd), err);
    st->until = ls_now_ns() + s->duration;
    if (rc < 0) {
        redisFree(probe);
        return rc;
    }
    /* The proof: a second connection's PING gets no answer. A sleep's
     * command and the first probe may be read in one event-loop pass with
     * the PING served first, so a reply is retried a few times. */
    struct timeval ptv = {0, (suseconds_t)(probe_ns / LS_NS_PER_US)};
    redisSetTimeout(probe, ptv);
    int answered = 0, p = 1;
    for (int tries = 0; tries < PROBE_TRIES && (p = ping(probe)) == 1; tries++)
        answered++;
    redisFree(probe);
    if (p != 0)
        return ls_err_set(err, LS_EENV, "stall: node %d (%s:%d) still answered PING after %s "
                          "(%d of %d probes)", k, n->addr.host, n->addr.port, cmd, answered,
                          PROBE_TRIES);
    fi->start_ns = t;
    fi->node = k;
    fi->pids[fi->npids++] = n->pid;
    struct json *d = fi->detail;
    json_obj_set_str(d, "mode", stall_modes[st->mode]);
    json_obj_set_str(d, "command", cmd);
    json_obj_set_int(d, "port", n->addr.port);
    char v[128];
    snprintf(v, sizeof(v), "a PING from a second connection got no reply within %.0f ms",
             (double)probe_ns / 1e6);
    json_obj_set_str(d, "verified", v);
    return 0;
}

/* Contract: wait (bounded: the stall's rest + 2 s) until the node answers
 * PING again; frees the state. An interrupted run does not wait (the
 * teardown stops the node by pid). Returns 0 or negative with err set. */
static int stall_stop(const struct fault_env *env, struct fault_inst *fi, struct ls_err *err)
{
    struct stall_state *st = fi->state;
    if (!st)
        return 0;
    fi->state = NULL;
    if (env->ops->interrupted(env->ctx)) {
        state_free(st);
        if (!fi->end_detail)
            fi->end_detail = json_new_obj();
        json_obj_set_str(fi->end_detail, "why", "the run was interrupted: its end was not waited "
                         "for");
        return 0;
    }
    int64_t until = st->until;
    int64_t now = ls_now_ns();
    int64_t wait = (until > now ? until - now : 0) + END_SLACK;
    if (st->mode == STALL_SLEEP && st->ctl) {
        /* the DEBUG SLEEP reply arrives when the sleep is over */
        struct timeval tv = {(time_t)(wait / LS_NS_PER_S),
                             (suseconds_t)((wait % LS_NS_PER_S) / LS_NS_PER_US)};
        redisSetTimeout(st->ctl, tv);
        void *rep = NULL;
        if (redisGetReply(st->ctl, &rep) == REDIS_OK)
            freeReplyObject(rep);
    }
    state_free(st);
    if (fi->node < 0)
        return 0;
    struct fault_node nd;
    if (env->ops->node(env->ctx, fi->node, &nd) < 0 || nd.pid <= 0)
        return 0; /* killed meanwhile: nothing to wait for */
    now = ls_now_ns();
    wait = (until > now ? until - now : 0) + END_SLACK;
    if (!fi->end_detail)
        fi->end_detail = json_new_obj();
    int rc = env->ops->node_wait_ready(env->ctx, fi->node, wait, err);
    if (rc < 0)
        return rc;
    int64_t t = env->ops->now(env->ctx);
    json_obj_set_num(fi->end_detail, "answered_ms", (double)t / 1e6);
    json_obj_set_num(fi->end_detail, "stall_ms", (double)(t - fi->start_ns) / 1e6);
    json_obj_set_str(fi->end_detail, "verified", "the node answered PING again");
    return 0;
}

const struct fault_ops fault_stall = {
    .version = FAULT_OPS_VERSION,
    .name = "stall",
    .help = "a lock node stops answering every client for `duration`, server side (CLIENT PAUSE "
            "ALL, or DEBUG SLEEP with mode: sleep): a slow fsync or a blocked event loop",
    .targets = 1u << TARGET_NODE,
    .options = stall_options,
    .options_size = sizeof(struct stall_opts),
    .start = stall_start,
    .stop = stall_stop,
};
