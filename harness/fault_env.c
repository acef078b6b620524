/*
 * fault_env.c: the fault env of a run (faults/env.h, harness/fault_env.h):
 * the ops a fault kind acts through, implemented on struct run: workers
 * (signals, reaping, crash records, restarts), lock nodes (harness/
 * cluster.h), the replicated set (backends/replset.h) and the proxy
 * (faults/proxy.h). Processes are local here; another implementation of the
 * same ops could act on a remote host.
 */
#include "harness/fault_env.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "faults/fault.h"
#include "backends/cluster.h"
#include "backends/replset.h"
#include "harness/run.h"
#include "model/evlog.h"
#include "util/proc.h"
#include "util/timeutil.h"

#define REAP_TIMEOUT (5 * LS_NS_PER_S)
#define CONFIRM_TIMEOUT LS_NS_PER_S
#define READY_TIMEOUT (5 * LS_NS_PER_S)
#define MAX_KINDS 32

/* The context behind the ops (owned by the env). */
struct fenv {
    struct run *r;
    struct {
        const struct fault_ops *kind;
        void *state;    /* owned */
    } kinds[MAX_KINDS];
    int nkinds;
};

static struct run *run_of(void *ctx)
{
    return ((struct fenv *)ctx)->r;
}

/* ---- the run ---- */

static int64_t e_now(void *ctx)
{
    return run_now(run_of(ctx));
}

static int e_interrupted(void *ctx)
{
    return run_interrupted(run_of(ctx));
}

static int e_signalled(void *ctx)
{
    return run_of(ctx)->signal != 0;
}

static int e_ran_out(void *ctx)
{
    const struct run *r = run_of(ctx);
    return r->signal != 0 || (r->deadline_mono > 0 && ls_now_ns() >= r->deadline_mono);
}

static int e_sleep(void *ctx, int64_t ns)
{
    return run_sleep(run_of(ctx), ns);
}

static struct rng *e_rng(void *ctx)
{
    return &run_of(ctx)->fault_rng;
}

static int e_next_id(void *ctx)
{
    return run_of(ctx)->fault_seq++;
}

static void e_log(void *ctx, struct json *line)
{
    run_fault_log(run_of(ctx), line);
}

static const char *e_run_dir(void *ctx)
{
    return run_of(ctx)->dir;
}

static const struct workload *e_workload(void *ctx)
{
    return run_of(ctx)->w;
}

static int e_nworkers(void *ctx)
{
    return run_of(ctx)->nworkers;
}

static int e_nnodes(void *ctx)
{
    return run_of(ctx)->cluster.nnodes;
}

static void *e_kind_state(void *ctx, const struct fault_ops *kind, size_t size)
{
    struct fenv *fe = ctx;
    for (int i = 0; i < fe->nkinds; i++)
        if (fe->kinds[i].kind == kind)
            return fe->kinds[i].state;
    if (fe->nkinds >= MAX_KINDS)
        return NULL;
    void *st = calloc(1, size ? size : 1);
    if (!st)
        return NULL;
    fe->kinds[fe->nkinds].kind = kind;
    fe->kinds[fe->nkinds].state = st;
    fe->nkinds++;
    return st;
}

/* ---- workers ---- */

static int e_worker_alive(void *ctx, int i)
{
    const struct run *r = run_of(ctx);
    return r->workers && i >= 0 && i < r->nworkers && r->workers[i].pid > 0 &&
           !r->workers[i].exited;
}

static int e_worker_busy(void *ctx, int i, int acquiring, int64_t *since)
{
    const struct shm_worker *sw = &run_of(ctx)->shm->w[i];
    int h = acquiring ? atomic_load(&sw->acquiring) : atomic_load(&sw->holding);
    if (since)
        *since = acquiring ? atomic_load(&sw->acquire_since) : atomic_load(&sw->hold_since);
    return h;
}

/* Contract: SIGSTOP pid (group: its process group) and wait up to confirm
 * ns until it is in state T; a FAULT_PAUSE_* outcome (resumed again on a
 * timeout). */
static int stop_confirmed(pid_t pid, int group, int64_t confirm, int *sys_errno)
{
    if (kill(group ? -pid : pid, SIGSTOP) < 0) {
        *sys_errno = errno;
        return FAULT_PAUSE_SIGNAL;
    }
    if (proc_wait_state(pid, 'T', 1, confirm) < 0) {
        kill(group ? -pid : pid, SIGCONT);
        return FAULT_PAUSE_TIMEOUT;
    }
    return FAULT_PAUSED;
}

static int e_pause_worker(void *ctx, int i, int64_t confirm, int *pid, int *sys_errno)
{
    struct run *r = run_of(ctx);
    /* an exited worker's pid may belong to another process by now */
    *pid = i >= 0 && i < r->nworkers && !r->workers[i].exited ? r->workers[i].pid : 0;
    if (*pid <= 0) { /* never kill(0) or kill(-0): that is the harness's own group */
        *sys_errno = ESRCH;
        return FAULT_PAUSE_SIGNAL;
    }
    return stop_confirmed(*pid, 1, confirm, sys_errno);
}

static void e_resume(void *ctx, int pid, int group, int64_t confirm)
{
    (void)ctx;
    if (pid <= 0)
        return;
    kill(group ? -pid : pid, SIGCONT);
    if (confirm <= 0)
        return;
    int64_t until = ls_now_ns() + confirm;
    while (proc_state(pid, 1) == 'T' && ls_now_ns() < until)
        ls_sleep_ns(LS_NS_PER_MS);
}

/* ---- stall requests: through shm to the worker (harness/shm.h) ---- */

#define STALL_LOOK (LS_NS_PER_MS)

/* Contract: the worker's answer code as a FAULT_STALL_* one, why copied. */
static int stall_code(const struct shm_worker *sw, int64_t result, char *why, size_t n)
{
    snprintf(why, n, "%s", sw->stall_why);
    return result == SHM_STALL_UNSUPPORTED ? FAULT_STALL_UNSUPPORTED
           : result == SHM_STALL_DROPPED   ? FAULT_STALL_NOT_TAKEN
                                           : FAULT_STALL_FAILED;
}

static int e_stall_worker(void *ctx, int i, int64_t ns, int64_t take, int64_t *sent_at, int *held,
                          int *ticket, char *why, size_t n)
{
    struct run *r = run_of(ctx);
    *sent_at = 0;
    *held = -1;
    *ticket = 0;
    if (i < 0 || i >= r->nworkers) {
        snprintf(why, n, "no worker %d", i);
        return FAULT_STALL_NOT_TAKEN;
    }
    struct shm_worker *sw = &r->shm->w[i];
    int32_t seq = atomic_load(&sw->stall_seq) + 1;
    int64_t by = ls_now_ns() + take;
    atomic_store(&sw->stall_ns, ns);
    atomic_store(&sw->stall_by, by);
    atomic_store(&sw->stall_seq, seq);
    /* the worker drops a request it takes after `by`: wait a little past it */
    while (atomic_load(&sw->stall_taken) != seq) {
        if (ls_now_ns() > by + 20 * STALL_LOOK || run_sleep(r, STALL_LOOK) ||
            !e_worker_alive(ctx, i)) {
            snprintf(why, n, "worker %d did not take the stall request within %.0fms", i,
                     (double)take / 1e6);
            return FAULT_STALL_NOT_TAKEN;
        }
    }
    *sent_at = atomic_load(&sw->stall_sent);
    *held = atomic_load(&sw->stall_held);
    *ticket = seq;
    /* an answer at once: the request never left (no stall cap), or was dropped */
    if (atomic_load(&sw->stall_done) == seq) {
        int64_t res = atomic_load(&sw->stall_result);
        if (res < 0)
            return stall_code(sw, res, why, n);
    }
    return FAULT_STALL_SENT;
}

static int e_stall_result(void *ctx, int i, int ticket, int64_t wait, int64_t *stalled_ns,
                          char *why, size_t n)
{
    struct run *r = run_of(ctx);
    *stalled_ns = 0;
    if (i < 0 || i >= r->nworkers) {
        snprintf(why, n, "no worker %d", i);
        return FAULT_STALL_FAILED;
    }
    struct shm_worker *sw = &r->shm->w[i];
    int64_t until = ls_now_ns() + wait;
    while (atomic_load(&sw->stall_done) != ticket) {
        if (ls_now_ns() >= until || !e_worker_alive(ctx, i) ||
            atomic_load(&sw->stall_taken) != ticket) {
            snprintf(why, n, "worker %d had no answer to its stall request yet", i);
            return FAULT_STALL_PENDING;
        }
        /* interruptible: a stopped run leaves the answer pending */
        if (run_sleep(r, STALL_LOOK)) {
            snprintf(why, n, "run interrupted before worker %d answered its stall request", i);
            return FAULT_STALL_PENDING;
        }
    }
    int64_t res = atomic_load(&sw->stall_result);
    if (res < 0)
        return stall_code(sw, res, why, n);
    *stalled_ns = res;
    return FAULT_STALLED;
}

/* o.key = the name of resource res (workload_resource_name: "rN" unless
 * the workload names them), or null when res < 0. */
static void res_field(struct json *o, const char *key, int res, const struct workload *w)
{
    char name[16];
    json_obj_set(o, key, res >= 0 ? json_new_str(workload_resource_name(w, res, name, sizeof(name)))
                                  : json_new_null());
}

/* o.exit = a wait status as text ("exited 0", "killed by signal 9 (Killed)"). */
static void status_field(struct json *o, int status)
{
    char st[64];
    json_obj_set_str(o, "exit", proc_status_text(status, st, sizeof(st)));
}

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
    if (v->pid <= 0 || r->workers[i].exited) /* its pid may be another process's by now */
        return ls_err_set(err, LS_EENV, "worker %d: %s: the worker has exited", i,
                          strsignal(sig));
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
 * deadline or a signal, then SIGKILL) and its process group is empty. A
 * worker that was SIGKILLed gets a crash record (time: the kill; res: the
 * resource it held, else the one it was acquiring, as shm says once it is
 * dead) in its current epoch's log. Marks it ended by fi (down when it
 * will be restarted) and describes it in a new entry of arr. Returns 0, or
 * a negative code with err set when it would not die. */
static int finish_worker(struct run *r, struct fault_inst *fi, int restart, struct victim *v,
                         int64_t deadline, struct json *arr, struct ls_err *err)
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
    run_worker_reaped(r, v->i);
    rw->status = st;
    rw->end_ns = gone;
    rw->fault = fi->id;
    rw->down = restart;

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
    res_field(o, "held_resource", killed ? holding : v->held, r->w);
    res_field(o, "acquiring_resource", killed ? acquiring : v->acquiring, r->w);
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

static int e_end_workers(void *ctx, const int *idx, int n, const struct fault_end *how,
                         struct fault_inst *fi, struct json *arr, struct ls_err *err)
{
    struct run *r = run_of(ctx);
    struct victim v[1024];
    int nv = 0, rc = 0;
    for (int k = 0; k < n && nv < 1024 && rc == 0; k++) {
        rc = signal_worker(r, idx[k], how->sig, &v[nv], err);
        if (rc == 0)
            nv++;
    }
    if (nv > 0)
        fi->start_ns = v[0].t; /* the first signal (an escalation moves v[k].t) */
    int64_t deadline = ls_now_ns() + (how->sig == SIGKILL ? REAP_TIMEOUT : how->grace);
    for (int k = 0; k < nv; k++) {
        /* first error wins */
        int e = finish_worker(r, fi, how->restart, &v[k], deadline, arr, err);
        if (e < 0 && rc == 0)
            rc = e;
    }
    return rc;
}

static int e_worker_down(void *ctx, int i, int fault_id)
{
    const struct run_worker *rw = &run_of(ctx)->workers[i];
    return rw->exited && rw->fault == fault_id && rw->down;
}

static void e_worker_stays_down(void *ctx, int i)
{
    run_of(ctx)->workers[i].down = 0;
}

static int e_restart_worker(void *ctx, int i, struct json *arr, struct ls_err *err)
{
    struct run *r = run_of(ctx);
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
            run_worker_reaped(r, i);
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

/* ---- lock nodes ---- */

/* Node k of the run, or NULL. */
static struct node_proc *node_of(void *ctx, int k)
{
    struct run *r = run_of(ctx);
    return k >= 0 && k < r->cluster.nnodes ? &r->cluster.nodes[k] : NULL;
}

static int e_node(void *ctx, int k, struct fault_node *out)
{
    const struct node_proc *n = node_of(ctx, k);
    if (!n)
        return -1;
    memset(out, 0, sizeof(*out));
    out->index = k;
    snprintf(out->addr.host, sizeof(out->addr.host), "%s", n->host);
    out->addr.port = n->port;
    out->pid = n->pid > 0 ? n->pid : 0;
    out->stopped = n->pid > 0 && proc_state(n->pid, 0) == 'T';
    out->persistence = n->persistence;
    return 0;
}

static struct redisContext *e_node_connect(void *ctx, int k, struct timeval tv)
{
    const struct node_proc *n = node_of(ctx, k);
    return n ? node_connect(n, tv) : NULL;
}

static int e_pause_node(void *ctx, int k, int64_t confirm, int *pid, int *sys_errno)
{
    const struct node_proc *n = node_of(ctx, k);
    *pid = n ? n->pid : 0;
    if (*pid <= 0) {
        *sys_errno = ESRCH;
        return FAULT_PAUSE_SIGNAL;
    }
    return stop_confirmed(*pid, 0, confirm, sys_errno);
}

static int e_kill_node(void *ctx, int k, int sig, int64_t timeout, int *status,
                       struct ls_err *err)
{
    struct node_proc *n = node_of(ctx, k);
    if (!n)
        return ls_err_set(err, LS_EUSAGE, "no node %d", k);
    return node_kill(n, sig, timeout, status, err);
}

static int e_restart_node(void *ctx, int k, int64_t timeout, struct ls_err *err)
{
    struct node_proc *n = node_of(ctx, k);
    if (!n)
        return ls_err_set(err, LS_EUSAGE, "no node %d", k);
    return node_restart(n, timeout, err);
}

static int e_node_wait_ready(void *ctx, int k, int64_t timeout, struct ls_err *err)
{
    const struct node_proc *n = node_of(ctx, k);
    if (!n)
        return ls_err_set(err, LS_EUSAGE, "no node %d", k);
    return node_wait_ready(n, timeout, err);
}

/* ---- the replicated set ---- */

static int e_replicated(void *ctx)
{
    return run_of(ctx)->repl != NULL;
}

static int e_primary(void *ctx)
{
    return replset_primary(run_of(ctx)->repl);
}

static void e_set_primary(void *ctx, int k)
{
    replset_set_primary(run_of(ctx)->repl, k);
}

static int e_sentinel_primary(void *ctx, int *agree)
{
    return replset_sentinel_primary(run_of(ctx)->repl, agree);
}

static void e_node_role(void *ctx, int k, char *role, size_t n)
{
    const struct node_proc *np = node_of(ctx, k);
    if (!np) {
        if (n)
            role[0] = '\0';
        return;
    }
    replset_role(np, role, n);
}

static int e_failover_busy(void *ctx)
{
    return replset_busy(run_of(ctx)->repl);
}

static void e_set_failover_busy(void *ctx, int busy)
{
    replset_set_busy(run_of(ctx)->repl, busy);
}

static int e_cut_replication(void *ctx, int id, int k, struct json *detail, struct ls_err *err)
{
    return replset_cut(run_of(ctx)->repl, id, k, detail, err);
}

static int e_heal_replication(void *ctx, int id, struct ls_err *err)
{
    return replset_uncut(run_of(ctx)->repl, id, err);
}

static int e_promote(void *ctx, int k, struct ls_err *err)
{
    return replset_promote(run_of(ctx)->repl, k, err);
}

static int e_follow(void *ctx, int k, int primary, struct ls_err *err)
{
    return replset_follow(run_of(ctx)->repl, k, primary, err);
}

static int e_configure_node(void *ctx, int k, struct ls_err *err)
{
    return replset_configure(run_of(ctx)->repl, k, err);
}

/* ---- links ---- */

static int e_has_links(void *ctx)
{
    return run_of(ctx)->proxy != NULL;
}

static int e_links_pid(void *ctx)
{
    const struct run *r = run_of(ctx);
    return r->proxy ? proxy_pid(r->proxy) : 0;
}

static int e_links_set(void *ctx, int id, unsigned what, const struct proxy_rule *rule,
                       const uint8_t *dirs, struct proxy_ack *ack, struct ls_err *err)
{
    struct run *r = run_of(ctx);
    if (!r->proxy)
        return ls_err_set(err, LS_EENV, "this run has no proxy");
    return proxy_fault_set(r->proxy, id, what, rule, dirs, ack, err);
}

static int e_links_clear(void *ctx, int id, struct ls_err *err)
{
    struct run *r = run_of(ctx);
    return r->proxy ? proxy_fault_clear(r->proxy, id, err) : 0;
}

static void e_link_stats(void *ctx, int w, int n, struct proxy_link_stats *out)
{
    const struct run *r = run_of(ctx);
    if (r->proxy)
        proxy_link_stats(r->proxy, w, n, out);
    else
        memset(out, 0, sizeof(*out));
}

static int e_links_cmd_set(void *ctx, int id, const struct proxy_cmd_rule *rule,
                           const uint8_t *sel, struct proxy_ack *ack, struct ls_err *err)
{
    struct run *r = run_of(ctx);
    if (!r->proxy)
        return ls_err_set(err, LS_EENV, "this run has no proxy");
    return proxy_cmd_set(r->proxy, id, rule, sel, ack, err);
}

static void e_links_cmd_stats(void *ctx, int id, struct proxy_cmd_stats *out)
{
    const struct run *r = run_of(ctx);
    if (r->proxy)
        proxy_cmd_stats(r->proxy, id, out);
    else
        memset(out, 0, sizeof(*out));
}

static const struct fault_env_ops run_env_ops = {
    .now = e_now,
    .interrupted = e_interrupted,
    .signalled = e_signalled,
    .ran_out = e_ran_out,
    .sleep = e_sleep,
    .rng = e_rng,
    .next_id = e_next_id,
    .log = e_log,
    .run_dir = e_run_dir,
    .workload = e_workload,
    .nworkers = e_nworkers,
    .nnodes = e_nnodes,
    .kind_state = e_kind_state,
    .worker_alive = e_worker_alive,
    .worker_busy = e_worker_busy,
    .pause_worker = e_pause_worker,
    .end_workers = e_end_workers,
    .worker_down = e_worker_down,
    .worker_stays_down = e_worker_stays_down,
    .restart_worker = e_restart_worker,
    .stall_worker = e_stall_worker,
    .stall_result = e_stall_result,
    .node = e_node,
    .node_connect = e_node_connect,
    .pause_node = e_pause_node,
    .kill_node = e_kill_node,
    .restart_node = e_restart_node,
    .node_wait_ready = e_node_wait_ready,
    .resume = e_resume,
    .replicated = e_replicated,
    .primary = e_primary,
    .set_primary = e_set_primary,
    .sentinel_primary = e_sentinel_primary,
    .node_role = e_node_role,
    .failover_busy = e_failover_busy,
    .set_failover_busy = e_set_failover_busy,
    .cut_replication = e_cut_replication,
    .heal_replication = e_heal_replication,
    .promote = e_promote,
    .follow = e_follow,
    .configure_node = e_configure_node,
    .has_links = e_has_links,
    .links_pid = e_links_pid,
    .links_set = e_links_set,
    .links_clear = e_links_clear,
    .link_stats = e_link_stats,
    .links_cmd_set = e_links_cmd_set,
    .links_cmd_stats = e_links_cmd_stats,
};

int fault_env_init(struct fault_env *env, struct run *r)
{
    struct fenv *fe = calloc(1, sizeof(*fe));
    env->ops = &run_env_ops;
    env->ctx = fe;
    if (!fe)
        return LS_ENOMEM;
    fe->r = r;
    return 0;
}

void fault_env_free(struct fault_env *env)
{
    struct fenv *fe = env->ctx;
    if (!fe)
        return;
    for (int i = 0; i < fe->nkinds; i++)
        free(fe->kinds[i].state);
    free(fe);
    env->ctx = NULL;
}
