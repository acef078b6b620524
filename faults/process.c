/*
 * process.c: the faults `kill` (SIGKILL: a crash) and `stop` (SIGTERM, then
 * SIGKILL after `grace`) on workers and lock nodes, never the storage. A
 * worker is gone once reaped with an empty process group; a SIGKILLed one
 * gets a crash record, so the checkers end its hold at the kill. Its
 * restart is a new process under the same id with the next epoch (its own
 * log). A node restarts on its port and directory with its persistence;
 * the fault ends once it answers PING.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "faults/fault.h"
#include "faults/target.h"
#include "model/evlog.h"
#include "util/proc.h"
#include "harness/replicated.h"
#include "harness/run.h"
#include "model/workload.h"
#include "util/timeutil.h"

#define RESTART_NEVER (-1)     /* restart: never */
#define RESTART_DURATION (-2)  /* restart: duration (the default): after the fault's duration */
#define REAP_TIMEOUT (5 * LS_NS_PER_S)
#define CONFIRM_TIMEOUT LS_NS_PER_S
#define BUSY_WAIT LS_NS_PER_S
#define READY_TIMEOUT (5 * LS_NS_PER_S)
#define NODE_READY_TIMEOUT (10 * LS_NS_PER_S)

struct proc_opts {
    int64_t restart;   /* ns, or RESTART_NEVER / RESTART_DURATION */
    int64_t grace;     /* stop: SIGTERM -> SIGKILL, ns */
};

static const char *const restart_words[] = {"never", "duration", NULL};

#define RESTART_OPT                                                                            \
    {"restart", OPT_DURATION, offsetof(struct proc_opts, restart), "duration", 0,             \
     24 * 3600 * 1e9, restart_words, NULL,                                                     \
     "when the process is started again once it is gone: a delay (0 = at once), `never`, or " \
     "`duration` (the default: after the fault's duration). A worker restarts under the same " \
     "id with the next epoch; a node on the same port, with its persistence"}

static const struct opt_def kill_options[] = {
    RESTART_OPT,
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def stop_options[] = {
    RESTART_OPT,
    {"grace", OPT_DURATION, offsetof(struct proc_opts, grace), "2s", 1e6, 60e9, NULL, NULL,
     "how long the process may take to exit after SIGTERM before it is SIGKILLed (a worker "
     "then gets a crash record)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* The kind's options of fi (borrowed from the workload). */
static const struct proc_opts *opts_of(const struct fault_inst *fi)
{
    return fi->spec->params;
}

/* Contract: the restart delay of fi in ns, or RESTART_NEVER. */
static int64_t restart_delay(const struct fault_inst *fi)
{
    int64_t d = opts_of(fi)->restart;
    return d == RESTART_DURATION ? fi->spec->duration : d;
}

/* o.key = "rN", or null when res < 0. */
static void res_field(struct json *o, const char *key, int res)
{
    char name[16];
    snprintf(name, sizeof(name), "r%d", res);
    json_obj_set(o, key, res >= 0 ? json_new_str(name) : json_new_null());
}

/* o.exit = a wait status as text ("exited 0", "killed by signal 9 (Killed)"). */
static void status_field(struct json *o, int status)
{
    char st[64];
    json_obj_set_str(o, "exit", proc_status_text(status, st, sizeof(st)));
}

/* ---- workers ---- */

/* A worker being ended: signalled by signal_worker, waited for and
 * recorded by finish_worker. */
struct victim {
    int i;
    pid_t pid;
    int sig;
    int64_t t;            /* run-relative: the signal (a crash record's time) */
    int held, acquiring;  /* shm, at the signal */
};

/* Contract: send sig to worker i (SIGKILL: its whole process group;
 * SIGTERM: the worker, and SIGCONT to the group in case it is paused).
 * Returns 0 or negative with err set. */
static int signal_worker(struct run *r, int i, int sig, struct victim *v, struct ls_err *err)
{
    v->i = i;
    v->pid = r->workers[i].pid;
    v->sig = sig;
    v->held = atomic_load(&r->shm->w[i].holding);
    v->acquiring = atomic_load(&r->shm->w[i].acquiring);
    v->t = run_now(r);
    if (kill(sig == SIGKILL ? -v->pid : v->pid, sig) < 0)
        return ls_err_errno(err, LS_EENV, errno, "worker %d: %s pid %d", i, strsignal(sig),
                            (int)v->pid);
    if (sig != SIGKILL)
        kill(-v->pid, SIGCONT); /* a paused worker could not act on SIGTERM */
    return 0;
}

/* Contract: poll (bounded by timeout ns) until process group pgid has no
 * member left; 1 when it is gone, 0 when members remain. */
static int group_wait_gone(pid_t pgid, int64_t timeout)
{
    int64_t until = ls_now_ns() + timeout;
    while (!proc_group_gone(pgid) && ls_now_ns() < until) /* reaps adopted orphans */
        ls_sleep_ns(2 * LS_NS_PER_MS);
    return proc_group_gone(pgid);
}

/* Contract: 1 once pid is reaped (*st its status), 0 when the absolute
 * deadline passed or the run was interrupted first (a stop's grace does
 * not outlive a signal: the worker is SIGKILLed at once instead). */
static int reaped_by(struct run *r, pid_t pid, int64_t deadline, int *st)
{
    for (;;) {
        int rc = proc_wait(pid, 0, st);
        if (rc != 0)
            return rc;
        int64_t left = deadline - ls_now_ns();
        if (left <= 0 || run_interrupted(r))
            return 0;
        run_sleep(r, left < 2 * LS_NS_PER_MS ? left : 2 * LS_NS_PER_MS);
    }
}

/* Contract: wait until v's worker is reaped (SIGTERM: until the absolute
 * deadline or a signal, then SIGKILL) and its process group is empty. A worker that was
 * SIGKILLed gets a crash record (time: the kill; res: the resource it held,
 * else the one it was acquiring, as shm says once it is dead) in its
 * current epoch's log. Marks it ended by fi (down when it will be
 * restarted) and describes it in a new entry of arr. Returns 0, or a
 * negative code with err set when it would not die. */
static int finish_worker(struct run *r, struct fault_inst *fi, struct victim *v, int64_t deadline,
                         struct json *arr, struct ls_err *err)
{
    struct run_worker *rw = &r->workers[v->i];
    pid_t pid = v->pid;
    int st = 0, killed = v->sig == SIGKILL, escalated = 0;
    int64_t now = ls_now_ns();
    int rc = killed ? proc_wait(pid, deadline > now ? deadline - now : 0, &st)
                    : reaped_by(r, pid, deadline, &st);
    int cut = 0; /* the grace was cut short by a signal */
    if (rc == 0 && !killed) {
        cut = ls_now_ns() < deadline;
        v->t = run_now(r);
        kill(-pid, SIGKILL);
        killed = escalated = 1;
        rc = proc_wait(pid, REAP_TIMEOUT, &st);
    }
    if (rc != 1)
        return ls_err_set(err, LS_ETIMEOUT, "worker %d: pid %d still runs 5s after SIGKILL", v->i,
                          (int)pid);
    int64_t gone = run_now(r);
    /* anything else in its group (an adapter) goes with it; what is left a
     * second after the worker (a child that ignored SIGTERM) is SIGKILLed
     * now: the restarted worker gets a new group, and the reaper knows only
     * the latest one, so nothing else would end it */
    int group_gone = group_wait_gone(pid, CONFIRM_TIMEOUT);
    int group_killed = 0;
    if (!group_gone) {
        kill(-pid, SIGKILL);
        group_killed = 1;
        group_gone = group_wait_gone(pid, REAP_TIMEOUT);
    }

    /* the process is dead: shm shows exactly where it stopped */
    int holding = atomic_load(&r->shm->w[v->i].holding);
    int acquiring = atomic_load(&r->shm->w[v->i].acquiring);
    int64_t since = atomic_load(&r->shm->w[v->i].acquire_since);
    rw->exited = 1;
    rw->status = st;
    rw->end_ns = gone;
    rw->fault = fi->id;
    rw->down = restart_delay(fi) != RESTART_NEVER;

    struct json *o = json_arr_push(arr, json_new_obj());
    json_obj_set_int(o, "worker", v->i);
    json_obj_set_int(o, "pid", pid);
    json_obj_set_int(o, "epoch", rw->epoch);
    json_obj_set_str(o, "signal", cut         ? "SIGTERM, then SIGKILL when the run was interrupted"
                                  : escalated ? "SIGTERM, then SIGKILL after grace"
                                  : killed    ? "SIGKILL" : "SIGTERM");
    json_obj_set_num(o, "signal_ms", (double)v->t / 1e6);
    json_obj_set_num(o, "gone_ms", (double)gone / 1e6);
    status_field(o, st);
    json_obj_set_bool(o, "process_group_gone", group_gone);
    if (group_killed)
        json_obj_set_bool(o, "process_group_killed", 1);
    /* SIGKILL: where it died; SIGTERM: what it had when asked to leave */
    res_field(o, "held_resource", killed ? holding : v->held);
    res_field(o, "acquiring_resource", killed ? acquiring : v->acquiring);
    if (killed && acquiring >= 0)
        json_obj_set_num(o, "in_acquire_ms", (double)(v->t + r->start_mono - since) / 1e6);
    if (killed) {
        char path[2100];
        evlog_path(path, sizeof(path), r->dir, v->i, rw->epoch);
        int res = holding >= 0 ? holding : acquiring >= 0 ? acquiring : 0;
        struct ev_rec cr = {.t = v->t, .type = EV_CRASH, .res = (uint16_t)res};
        struct ls_err e = {0};
        if (evlog_append_offline(path, &cr, &e) == 0) {
            rw->killed_by_harness = 1;
            json_obj_set_bool(o, "crash_record", 1);
        } else {
            json_obj_set_str(o, "crash_record_error", e.msg);
        }
    }
    if (fi->npids < (int)(sizeof(fi->pids) / sizeof(fi->pids[0])))
        fi->pids[fi->npids++] = pid;
    return 0;
}

/* Contract: end the workers idx[0..n) with sig, all signalled first and
 * then waited for (one grace for all). fi->start_ns = the first signal.
 * Returns 0 or the first error (the ones ended are marked either way). */
static int end_workers(struct run *r, struct fault_inst *fi, const int *idx, int n, int sig,
                       struct json *arr, struct ls_err *err)
{
    struct victim v[1024];
    int nv = 0, rc = 0;
    for (int k = 0; k < n && nv < 1024 && rc == 0; k++) {
        rc = signal_worker(r, idx[k], sig, &v[nv], err);
        if (rc == 0)
            nv++;
    }
    if (nv > 0)
        fi->start_ns = v[0].t; /* the first signal (an escalation moves v[k].t) */
    int64_t deadline = ls_now_ns() + (sig == SIGKILL ? REAP_TIMEOUT : opts_of(fi)->grace);
    for (int k = 0; k < nv; k++) {
        int e = finish_worker(r, fi, &v[k], deadline, arr, err); /* first error wins */
        if (e < 0 && rc == 0)
            rc = e;
    }
    return rc;
}

/* Contract: target holder / acquirer. Pick a worker that holds a lock (is
 * inside an acquire call: the one in it longest, e.g. between the two
 * commands of naive-setnx-expire) at this instant, SIGSTOP it, and check
 * once it is stopped that it is still in the same grant (call); one that
 * moved on is resumed and another picked. Returns the stopped worker, -1
 * when none turned up within 1 s, or a negative code < -1 with err set. */
static int stop_busy_worker(struct run *r, const struct fault_inst *fi, int acquiring,
                            struct ls_err *err)
{
    int res = fi->spec->resource;
    int64_t deadline = ls_now_ns() + BUSY_WAIT;
    for (;;) {
        int i = fault_wait_busy(r, acquiring, res, deadline);
        if (i < 0)
            return -1;
        int64_t before;
        if (fault_busy_with(r, i, acquiring, res, &before) < 0)
            continue;
        pid_t pid = r->workers[i].pid;
        if (kill(-pid, SIGSTOP) < 0)
            return ls_err_errno(err, LS_EENV, errno, "worker %d: SIGSTOP %d", i, (int)pid);
        if (proc_wait_state(pid, 'T', 1, CONFIRM_TIMEOUT) < 0) {
            kill(-pid, SIGCONT);
            return ls_err_set(err, LS_ETIMEOUT, "worker %d: process %d did not stop within 1s", i,
                              (int)pid);
        }
        int64_t after;
        if (fault_busy_with(r, i, acquiring, res, &after) >= 0 && after == before)
            return i;
        kill(-pid, SIGCONT);
    }
}

/* ---- nodes ---- */

/* Contract: the node's DBSIZE within 200 ms, or -1 (down, paused, error). */
static long long node_dbsize(const struct node_proc *n)
{
    if (n->pid <= 0 || proc_state(n->pid, 0) == 'T')
        return -1;
    struct timeval tv = {0, 200000};
    redisContext *c = node_connect(n, tv);
    long long v = -1;
    if (c && !c->err) {
        redisSetTimeout(c, tv);
        redisReply *rep = redisCommand(c, "DBSIZE");
        if (rep && rep->type == REDIS_REPLY_INTEGER)
            v = rep->integer;
        if (rep)
            freeReplyObject(rep);
    }
    if (c)
        redisFree(c);
    return v;
}

/* Contract: 1 when nothing accepts connections on the node's port. */
static int port_refused(const struct node_proc *n)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout(n->host, n->port, tv);
    int refused = !c || c->err;
    if (c)
        redisFree(c);
    return refused;
}

/* The workload's spelling of enum persistence p. */
static const char *persistence_name(int p)
{
    return p == PERSIST_AOF_ALWAYS ? "aof-always" : p == PERSIST_AOF_EVERYSEC ? "aof-everysec"
                                                                              : "none";
}

/* Contract: end lock node k with sig (SIGKILL, or SIGTERM and SIGKILL after
 * grace), confirmed by reaping it and by its port refusing connections.
 * Returns 0, 1 when the node is not running, negative with err set. */
static int end_node(struct run *r, struct fault_inst *fi, int k, int sig, struct ls_err *err)
{
    struct node_proc *n = &r->cluster.nodes[k];
    if (n->pid <= 0)
        return 1;
    pid_t pid = n->pid;
    long long keys = node_dbsize(n);
    int st = 0, escalated = 0;
    int64_t t = run_now(r);
    int64_t grace = sig == SIGKILL ? REAP_TIMEOUT : opts_of(fi)->grace;
    int rc = node_kill(n, sig, grace, &st, err);
    if (rc < 0 && sig != SIGKILL && n->pid > 0) {
        ls_err_clear(err);
        escalated = 1;
        rc = node_kill(n, SIGKILL, REAP_TIMEOUT, &st, err);
    }
    if (rc < 0)
        return rc;
    int64_t gone = run_now(r);
    int refused = port_refused(n);
    fi->start_ns = t;
    fi->node = k;
    fi->pids[fi->npids++] = pid;
    struct json *d = fi->detail;
    json_obj_set_str(d, "signal", escalated ? "SIGTERM, then SIGKILL after grace"
                                            : sig == SIGKILL ? "SIGKILL" : "SIGTERM");
    json_obj_set_int(d, "port", n->port);
    json_obj_set_str(d, "persistence", persistence_name(n->persistence));
    json_obj_set(d, "keys_before", keys >= 0 ? json_new_int(keys) : json_new_null());
    json_obj_set_num(d, "gone_ms", (double)gone / 1e6);
    status_field(d, st);
    json_obj_set_str(d, "verified", refused ? "redis-server reaped; its port refuses connections"
                                            : "redis-server reaped (its port still accepted a "
                                              "connection: someone else bound it?)");
    return 0;
}

/* ---- start / stop ---- */

/* Contract: the start of kill (sig SIGKILL) and stop (SIGTERM): resolve
 * the target, end it (confirmed), and set fi's end to the restart time
 * (INT64_MAX for restart: never). Returns 0, 1 (nothing to act on) or
 * negative with err set. */
static int pf_start(struct run *r, struct fault_inst *fi, int sig, struct ls_err *err)
{
    const struct fault_spec *s = fi->spec;
    int64_t delay = restart_delay(fi);
    char rs[32];
    if (delay == RESTART_NEVER)
        snprintf(rs, sizeof(rs), "never");
    else
        ls_format_duration(delay, rs, sizeof(rs));
    json_obj_set_str(fi->detail, "restart", rs);
    int rc = 1;
    if (s->target == TARGET_NODE) {
        int k = s->target_index;
        if (k < 0 || k >= r->cluster.nnodes)
            return 1;
        rc = end_node(r, fi, k, sig, err);
    } else {
        struct json *arr = json_new_arr();
        fi->pgroup = 1;
        switch (s->target) {
        case TARGET_HOLDER:
        case TARGET_ACQUIRER: {
            int i = stop_busy_worker(r, fi, s->target == TARGET_ACQUIRER, err);
            if (i < -1) {
                rc = i;
                break;
            }
            if (i < 0)
                break;
            fi->worker = i;
            rc = end_workers(r, fi, &i, 1, sig, arr, err);
            if (rc < 0 && !r->workers[i].exited)
                kill(-r->workers[i].pid, SIGCONT); /* not ended: do not leave it stopped */
            break;
        }
        case TARGET_WORKER:
        case TARGET_RANDOM_WORKER: {
            int i = s->target_index;
            if (s->target == TARGET_RANDOM_WORKER) {
                int cand[1024], n = 0;
                for (int k = 0; k < r->nworkers && n < 1024; k++)
                    if (fault_worker_alive(r, k))
                        cand[n++] = k;
                i = n ? cand[rng_below(&r->fault_rng, (uint64_t)n)] : -1;
            }
            if (i < 0 || i >= r->nworkers || !fault_worker_alive(r, i))
                break;
            fi->worker = i;
            rc = end_workers(r, fi, &i, 1, sig, arr, err);
            break;
        }
        case TARGET_ALL_WORKERS: {
            int idx[1024], n = 0;
            for (int i = 0; i < r->nworkers && n < 1024; i++)
                if (fault_worker_alive(r, i))
                    idx[n++] = i;
            /* on an error stop() still restarts the ones that were ended */
            rc = n ? end_workers(r, fi, idx, n, sig, arr, err) : 1;
            break;
        }
        default:
            break;
        }
        json_obj_set(fi->detail, "workers", arr);
    }
    if (rc != 0)
        return rc;
    if (delay == RESTART_NEVER)
        fi->end_ns = INT64_MAX;
    else
        fi->end_ns = fi->start_ns + (delay > 0 ? delay : 1);
    return 0;
}

/* Contract: fork the next epoch of worker i and wait (bounded) until it is
 * ready; describes it in a new entry of arr. Returns 0 or negative (err). */
static int restart_worker(struct run *r, int i, struct json *arr, struct ls_err *err)
{
    struct run_worker *rw = &r->workers[i];
    uint32_t epoch = rw->epoch + 1;
    int64_t t = run_now(r);
    rw->down = 0;
    int rc = run_spawn_worker(r, i, epoch, err);
    if (rc < 0)
        return rc;
    int64_t deadline = ls_now_ns() + READY_TIMEOUT;
    const struct shm_worker *sw = &r->shm->w[i];
    int st;
    while ((st = atomic_load(&sw->state)) == WS_STARTING) {
        if (proc_wait(rw->pid, 0, &rw->status) == 1) {
            rw->exited = 1;
            rw->end_ns = run_now(r);
            return ls_err_set(err, LS_EENV, "worker %d epoch %u: exited during start-up", i,
                              epoch);
        }
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT, "worker %d epoch %u: not ready within 5s", i,
                              epoch);
        if (run_interrupted(r)) /* it is stopped with the others in the teardown */
            return ls_err_set(err, LS_EINTR, "worker %d epoch %u: the run was interrupted before "
                              "it was ready", i, epoch);
        run_sleep(r, 500 * LS_NS_PER_US);
    }
    if (st == WS_FAILED)
        return ls_err_set(err, LS_EENV, "worker %d epoch %u could not start: %s", i, epoch,
                          sw->error);
    struct json *o = json_arr_push(arr, json_new_obj());
    json_obj_set_int(o, "worker", i);
    json_obj_set_int(o, "epoch", epoch);
    json_obj_set_int(o, "pid", rw->pid);
    char path[2100];
    evlog_path(path, sizeof(path), "", i, epoch);
    json_obj_set_str(o, "log", path + 1);
    json_obj_set_num(o, "restart_ms", (double)t / 1e6);
    json_obj_set_num(o, "ready_ms", (double)run_now(r) / 1e6);
    json_obj_set_str(o, "verified", "new process opened its log and reached state ready");
    return 0;
}

/* Contract: start fi's node again (same port, directory, persistence) and
 * wait until it answers PING; the end line says how it went. Returns 0 or
 * negative with err set. */
static int restart_node(struct run *r, struct fault_inst *fi, struct ls_err *err)
{
    struct node_proc *n = &r->cluster.nodes[fi->node];
    struct json *d = fi->end_detail;
    int64_t t = run_now(r);
    int rc = node_restart(n, NODE_READY_TIMEOUT, err);
    json_obj_set_num(d, "restart_ms", (double)t / 1e6);
    if (rc < 0) {
        json_obj_set_bool(d, "restarted", 0);
        return rc;
    }
    /* a replicated node gets its runtime settings back (repl-diskless-sync-delay
     * 0: else its replicas time out waiting 5 s for a full sync), and a
     * replica its primary (the one the harness knows now): redis-server
     * forgets a runtime REPLICAOF when it restarts */
    if (r->repl) {
        int primary = replset_primary(r);
        if (replset_configure(r, fi->node, err) < 0)
            json_obj_set_str(d, "configure_error", err->msg);
        else if (primary >= 0 && primary != fi->node && replset_follow(r, fi->node, primary, err) < 0)
            json_obj_set_str(d, "configure_error", err->msg);
        else if (primary >= 0 && primary != fi->node)
            json_obj_set_int(d, "follows", primary);
    }
    json_obj_set_bool(d, "restarted", 1);
    json_obj_set_int(d, "new_pid", n->pid);
    json_obj_set_int(d, "port", n->port);
    json_obj_set_num(d, "ready_ms", (double)run_now(r) / 1e6);
    long long keys = node_dbsize(n);
    json_obj_set(d, "keys_at_ready", keys >= 0 ? json_new_int(keys) : json_new_null());
    json_obj_set_str(d, "verified", "answered PING on the same port");
    return 0;
}

/* Contract: the end of kill and stop: restart what fi ended, unless
 * restart: never, or (workers) the run is over or interrupted. Idempotent;
 * safe after a failed or skipped start. Returns 0 or the first error. */
static int pf_stop(struct run *r, struct fault_inst *fi, struct ls_err *err)
{
    int64_t delay = restart_delay(fi);
    int ran_out = r->signal != 0 || (r->deadline_mono > 0 && ls_now_ns() >= r->deadline_mono);
    if (!fi->end_detail)
        fi->end_detail = json_new_obj();
    struct json *d = fi->end_detail;
    if (fi->spec->target == TARGET_NODE) {
        if (fi->node < 0 || r->cluster.nodes[fi->node].pid > 0)
            return 0; /* nothing was ended, or it runs again already */
        if (delay == RESTART_NEVER) {
            json_obj_set_bool(d, "restarted", 0);
            json_obj_set_str(d, "why", "restart: never");
            return 0;
        }
        if (r->signal) {
            json_obj_set_bool(d, "restarted", 0);
            json_obj_set_str(d, "why", "the run was interrupted");
            return 0;
        }
        return restart_node(r, fi, err);
    }
    struct json *arr = NULL;
    int rc = 0;
    for (int i = 0; i < r->nworkers; i++) {
        struct run_worker *rw = &r->workers[i];
        if (!rw->exited || rw->fault != fi->id || !rw->down)
            continue;
        if (delay == RESTART_NEVER || ran_out) {
            rw->down = 0;
            continue;
        }
        if (!arr)
            arr = json_obj_set(d, "restarted", json_new_arr());
        int k = restart_worker(r, i, arr, err);
        if (k < 0 && rc == 0)
            rc = k;
    }
    if (!arr) {
        json_obj_set_bool(d, "restarted", 0);
        if (fi->npids)
            json_obj_set_str(d, "why", delay == RESTART_NEVER ? "restart: never"
                                                              : "the run ended first");
    }
    return rc;
}

/* The kinds' start hooks: pf_start with their signal. */
static int kill_start(struct run *r, struct fault_inst *fi, struct ls_err *err)
{
    return pf_start(r, fi, SIGKILL, err);
}

static int term_start(struct run *r, struct fault_inst *fi, struct ls_err *err)
{
    return pf_start(r, fi, SIGTERM, err);
}

#define PROC_TARGETS                                                                           \
    ((1u << TARGET_HOLDER) | (1u << TARGET_ACQUIRER) | (1u << TARGET_WORKER) |                \
     (1u << TARGET_RANDOM_WORKER) | (1u << TARGET_ALL_WORKERS) | (1u << TARGET_NODE))

const struct fault_ops fault_kill = {
    .version = FAULT_OPS_VERSION,
    .name = "kill",
    .help = "SIGKILL a worker (a crash: its hold ends at the kill, the TTL must free the lock) "
            "or a lock node (it restarts with its persistence: none comes back empty)",
    .targets = PROC_TARGETS,
    .options = kill_options,
    .options_size = sizeof(struct proc_opts),
    .start = kill_start,
    .stop = pf_stop,
    .min_every = 50000000, /* a process restarted and seen ready: tens of ms */
};

const struct fault_ops fault_stop = {
    .version = FAULT_OPS_VERSION,
    .name = "stop",
    .help = "SIGTERM a worker (it abandons its hold, releases and exits) or a lock node (a clean "
            "shutdown), SIGKILL after `grace`; restarted like kill",
    .targets = PROC_TARGETS,
    .options = stop_options,
    .options_size = sizeof(struct proc_opts),
    .start = term_start,
    .stop = pf_stop,
    .min_every = 50000000, /* a process restarted and seen ready: tens of ms */
};
