/*
 * run.c: one run, start to verdict (see run.h). The order of teardown is
 * fixed: heal faults (SIGCONT everything) -> let workers finish their
 * iteration -> SIGTERM -> SIGKILL (a crash record goes into the killed
 * worker's log) -> record leftover lock keys and the storage's final state
 * -> stop the nodes -> final run.json -> checkers. Every step runs whatever
 * happened before it, so an interrupted run still leaves a directory that
 * `lockstorm check` can read.
 */
#include "harness/run.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faults/clock.h"
#include "locks/lock.h"
#include "harness/childrun.h"
#include "harness/nemesis.h"
#include "faults/proxy.h"
#include "faults/schedule.h"
#include "harness/fault_env.h"
#include "harness/checkproc.h"
#include "model/evlog.h"
#include "harness/incident.h"
#include "harness/limits.h"
#include "harness/jobs.h"
#include "backends/backend.h"
#include "backends/cmdstats.h"
#include "backends/replset.h"
#include "harness/workload_cluster.h"
#include "util/proc.h"
#include "harness/replset_host.h"
#include "harness/progress.h"
#include "harness/worker.h"
#include "util/secret.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define READY_TIMEOUT (15 * LS_NS_PER_S)
#define TERM_GRACE (2 * LS_NS_PER_S)

int64_t run_now(const struct run *r)
{
    return ls_now_ns() - r->start_mono;
}

static const char *signal_name(int s)
{
    return s == SIGINT ? "SIGINT" : s == SIGTERM ? "SIGTERM" : s == SIGHUP ? "SIGHUP"
         : s == SIGUSR1 ? "SIGUSR1" : s == SIGUSR2 ? "SIGUSR2" : s == SIGALRM ? "SIGALRM"
                        : "signal";
}

/* Signals whose default action would end the harness like a SIGKILL
 * (nothing torn down, run.json left "running"): a run takes and ignores
 * them, saying so once per run (docs/reliability.md "Signals"). */
static int ignored_signal(int s)
{
    return s == SIGUSR1 || s == SIGUSR2 || s == SIGALRM;
}

/* Contract: take one pending signal of r->sigs, waiting up to ns for it
 * (0: a poll). Records it (r->signal is the first, r->nsignals counts
 * them) and says in one stderr line what the harness does about it, quiet
 * or not: users and CI logs see when the teardown started. Returns the
 * signal, or 0 when none came. */
static int take_signal(struct run *r, int64_t ns)
{
    struct timespec ts = {(time_t)(ns / LS_NS_PER_S), (long)(ns % LS_NS_PER_S)};
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int s = sigtimedwait(&r->sigs, &si, &ts);
    if (s <= 0)
        return 0;
    /* who sent it: a signal nobody meant for this run shows its sender */
    char from[48] = "";
    if (si.si_code == SI_USER || si.si_code == SI_QUEUE)
        snprintf(from, sizeof(from), "; sent by pid %d", (int)si.si_pid);
    if (ignored_signal(s)) {
        if (!r->said_ignored++)
            fprintf(stderr, "lockstorm: %s ignored (a run stops on SIGINT, SIGTERM or SIGHUP)\n",
                    signal_name(s));
        return 0;
    }
    if (!r->signal)
        r->signal = s;
    r->nsignals++;
    if (r->checking)
        fprintf(stderr, "lockstorm: %s: checking stopped (`lockstorm check %s` gives the verdict "
                "later%s)\n", signal_name(s), r->dir, from);
    else if (r->nsignals == 1)
        fprintf(stderr, "lockstorm: %s: stopping (teardown started%s)\n", signal_name(s), from);
    else
        fprintf(stderr, "lockstorm: %s again: already stopping; a grace still running is cut "
                "short%s\n", signal_name(s), from);
    return s;
}

int run_interrupted(struct run *r)
{
    while (take_signal(r, 0) > 0)
        ;
    return r->signal != 0;
}

int run_sleep(struct run *r, int64_t ns)
{
    return take_signal(r, ns > 0 ? ns : 0) > 0;
}

static int interrupted_cb(void *arg)
{
    return run_interrupted(arg);
}

void run_fault_log(struct run *r, struct json *line)
{
    if (r->faults_log) {
        struct strbuf sb = STRBUF_INIT;
        json_write(&sb, line, -1);
        sb_putc(&sb, '\n');
        fwrite(sb.buf, 1, sb.len, r->faults_log);
        fflush(r->faults_log);
        sb_free(&sb);
    }
    json_free(line);
}

/* ---- run directory ---- */

static int make_rundir(struct run *r, struct ls_err *err)
{
    if (r->opts->out) {
        snprintf(r->dir, sizeof(r->dir), "%s", r->opts->out);
        int rc = childrun_mkdirs(r->dir, 0700);
        if (rc == -EEXIST) {
            /* an existing empty directory is taken only when it is ours and
             * not a symlink, and made 0700: nobody else can then plant a
             * symlink in it for us to write through (docs/reliability.md) */
            struct stat st;
            if (lstat(r->dir, &st) == 0 && S_ISLNK(st.st_mode))
                return ls_err_set(err, LS_EUSAGE, "--out %s: is a symbolic link; give the "
                                  "directory itself", r->dir);
            if (lstat(r->dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
                !childrun_dir_is_empty(r->dir))
                return ls_err_set(err, LS_EUSAGE,
                                  "--out %s: exists and is not an empty directory; choose a new "
                                  "path or remove it", r->dir);
            if (st.st_uid != geteuid())
                return ls_err_set(err, LS_EUSAGE, "--out %s: an empty directory of another user "
                                  "(uid %u); choose a directory of your own", r->dir,
                                  (unsigned)st.st_uid);
            if (chmod(r->dir, 0700) < 0)
                return ls_err_errno(err, LS_EIO, errno, "chmod 0700 %s", r->dir);
        } else if (rc < 0) {
            return ls_err_errno(err, LS_EIO, -rc, "create run directory %s", r->dir);
        }
        /* The claim: two runs given one --out at once both see it empty (or
         * one creates it and the other finds it empty); the one whose
         * O_EXCL create of the claim file wins takes it, the other writes
         * nothing there (docs/reliability.md "Run directories"). */
        char claim[2100];
        snprintf(claim, sizeof(claim), "%s/%s", r->dir, RUN_CLAIM_FILE);
        int fd = open(claim, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno == EEXIST)
            return ls_err_set(err, LS_EUSAGE, "--out %s: another run has just taken it; choose "
                              "a new path", r->dir);
        if (fd < 0)
            return ls_err_errno(err, LS_EIO, errno, "create %s", claim);
        char pid[32];
        int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
        ssize_t wr = write(fd, pid, (size_t)n);
        close(fd);
        if (wr != n)
            return ls_err_errno(err, LS_EIO, errno, "write %s", claim);
    } else {
        int rc = mkdir("runs", 0755);
        if (rc < 0 && errno != EEXIST)
            return ls_err_errno(err, LS_EIO, errno, "create runs/ in the current directory");
        char ts[32];
        ls_format_utc(ls_realtime_ns(), 1, ts, sizeof(ts));
        for (int k = 1; k < 1000; k++) {
            if (k == 1)
                snprintf(r->dir, sizeof(r->dir), "runs/%s-%s", r->w->name, ts);
            else
                snprintf(r->dir, sizeof(r->dir), "runs/%s-%s-%d", r->w->name, ts, k);
            if (mkdir(r->dir, 0700) == 0)
                break;
            if (errno != EEXIST)
                return ls_err_errno(err, LS_EIO, errno, "create run directory %s", r->dir);
        }
        r->auto_dir = 1; /* runs/latest points at it once it has a result: point_latest */
    }
    char sub[2100];
    snprintf(sub, sizeof(sub), "%s/events", r->dir);
    if (mkdir(sub, 0700) < 0 && errno != EEXIST)
        return ls_err_errno(err, LS_EIO, errno, "create %s", sub);
    return 0;
}

/* runs/latest -> this run (replaced atomically), for a run in runs/ that
 * produced a result: a run that failed to start never takes the link. */
static void point_latest(const struct run *r)
{
    char tmp[64];
    if (!r->auto_dir)
        return;
    snprintf(tmp, sizeof(tmp), "runs/.latest.%d", (int)getpid());
    unlink(tmp);
    if (symlink(r->dir + 5, tmp) == 0 && rename(tmp, "runs/latest") < 0)
        unlink(tmp);
}

static int write_text(const struct run *r, const char *name, struct strbuf *sb, struct ls_err *err)
{
    char path[2100];
    snprintf(path, sizeof(path), "%s/%s", r->dir, name);
    int rc = sb_write_file(sb, path);
    if (rc < 0)
        return ls_err_errno(err, LS_EIO, -rc, "write %s", path);
    return 0;
}

/* Contract: e.exit = "running", "exited N" or "killed by signal N (name)". */
static void exit_text(int exited, int status, struct json *e)
{
    char st[64] = "running";
    if (exited)
        proc_status_text(status, st, sizeof(st));
    json_obj_set_str(e, "exit", st);
}

/* run.json: written at the start (interrupted: true, so a harness that dies
 * leaves a directory the checker knows is incomplete) and again at the end;
 * failed (final only): the one-line error the run ended with (state
 * "failed"), NULL when it did not end with one. */
static int write_run_json(struct run *r, int final, int64_t end_ns, const struct json *leftover,
                          const char *failed, struct ls_err *err)
{
    struct json *j = json_new_obj();
    json_obj_set_str(j, "format", "lockstorm-run");
    json_obj_set_int(j, "version", 1);
    json_obj_set_str(j, "tool_version", LS_VERSION);
    char id[2 * sizeof(r->run_id) + 1];
    _Static_assert(sizeof(r->run_id) == EVLOG_RUN_ID_LEN, "run id length");
    evlog_run_id_hex(r->run_id, id);
    json_obj_set_str(j, "run_id", id);
    failed = final ? failed : NULL;
    json_obj_set_str(j, "state", !final ? "running" : failed ? "failed"
                                 : r->signal ? "interrupted" : "finished");
    json_obj_set(j, "error", failed ? json_new_str(failed) : json_new_null());
    /* who ran it: a later run or check tells a dead run from one in progress (leftover.h) */
    json_obj_set_int(json_obj_set(j, "harness", json_new_obj()), "pid", (int64_t)getpid());
    /* how what the run started is found and killed (docs/reliability.md) */
    json_obj_set_str(j, "containment", r->containment ? r->containment : "groups");
    struct json *rj = json_obj_set(j, "reaper", json_new_obj());
    json_obj_set_int(rj, "pid", r->reaper_pid);
    json_obj_set(rj, "restarts", r->reaper_restarts ? json_clone(r->reaper_restarts)
                                                   : json_new_arr());
    json_obj_set_int(j, "start_real_ns", r->start_real);
    json_obj_set_int(j, "start_mono_ns", r->start_mono);
    char ts[40];
    ls_format_utc(r->start_real, 0, ts, sizeof(ts));
    json_obj_set_str(j, "started_at", ts);
    if (final) {
        ls_format_utc(r->start_real + end_ns, 0, ts, sizeof(ts));
        json_obj_set_str(j, "ended_at", ts);
        json_obj_set_int(j, "end_ns", end_ns);
    }
    json_obj_set_int(j, "duration_ns", r->w->duration);
    struct json *rn = json_obj_set(j, "resources", json_new_arr()); /* index -> name, key */
    for (int64_t i = 0; i < r->w->workers.resources; i++) {
        char nb[32];
        json_arr_push(rn, json_new_str(workload_resource_name(r->w, i, nb, sizeof(nb))));
    }
    json_obj_set_str(j, "key_prefix", workload_key_prefix(r->w));
    json_obj_set_bool(j, "interrupted", !final || r->signal != 0 || r->incidents);
    json_obj_set(j, "incidents", r->incidents ? json_clone(r->incidents) : json_new_arr());
    json_obj_set(j, "signal", r->signal ? json_new_str(strsignal(r->signal)) : json_new_null());
    struct json *ws = json_obj_set(j, "workers", json_new_arr());
    for (int i = 0; i < r->nworkers; i++) {
        const struct run_worker *rw = &r->workers[i];
        struct json *e = json_arr_push(ws, json_new_obj());
        json_obj_set_int(e, "worker", i);
        json_obj_set_int(e, "pid", rw->pid);
        json_obj_set_int(e, "epoch", rw->epoch);
        exit_text(rw->exited, rw->status, e);
        json_obj_set_bool(e, "killed_by_harness", rw->killed_by_harness);
        /* every process that had this id, restarts included */
        struct json *eps = json_obj_set(e, "epochs", json_new_arr());
        for (int k = 0; k <= rw->npast; k++) {
            struct run_epoch cur = {rw->epoch, rw->pid, rw->status, rw->killed_by_harness,
                                    rw->fault, rw->start_ns, rw->end_ns};
            const struct run_epoch *p = k < rw->npast ? &rw->past[k] : &cur;
            struct json *o = json_arr_push(eps, json_new_obj());
            json_obj_set_int(o, "epoch", p->epoch);
            json_obj_set_int(o, "pid", p->pid);
            char path[2100];
            evlog_path(path, sizeof(path), "", i, p->epoch);
            json_obj_set_str(o, "log", path + 1);
            json_obj_set_num(o, "start_ms", (double)p->start_ns / 1e6);
            int ended = k < rw->npast || rw->exited;
            json_obj_set(o, "end_ms", ended ? json_new_num((double)p->end_ns / 1e6) : json_new_null());
            exit_text(ended, p->status, o);
            json_obj_set_bool(o, "killed_by_harness", p->killed_by_harness);
            json_obj_set(o, "fault", p->fault >= 0 ? json_new_int(p->fault) : json_new_null());
            if (ended) { /* a process killed before it created its log leaves none */
                char full[2100];
                evlog_path(full, sizeof(full), r->dir, i, p->epoch);
                json_obj_set_bool(o, "log_made", access(full, F_OK) == 0);
            }
        }
    }
    struct json *ns = json_obj_set(j, "nodes", json_new_arr());
    for (int i = 0; i < r->cluster.nnodes; i++) {
        struct json *e = json_arr_push(ns, json_new_obj());
        json_obj_set_int(e, "index", i);
        json_obj_set_int(e, "port", r->cluster.nodes[i].port);
        json_obj_set_int(e, "pid", r->cluster.nodes[i].pid);
    }
    if (r->proxy_pid > 0) {
        struct json *e = json_obj_set(j, "proxy", json_new_obj());
        json_obj_set_int(e, "pid", r->proxy_pid);
        json_obj_set_str(e, "log", "nodes/proxy.log");
    } else {
        json_obj_set(j, "proxy", json_new_null());
    }
    struct json *pc = json_obj_set(j, "proxy_choice", json_new_obj()); /* cluster.proxy */
    json_obj_set_str(pc, "setting", workload_proxy_setting(r->w));
    json_obj_set_bool(pc, "proxy", r->w->cluster.proxy == PROXY_ON);
    json_obj_set_str(pc, "why", r->w->cluster.proxy_why);
    if (r->cluster.has_storage) {
        struct json *e = json_obj_set(j, "storage", json_new_obj());
        json_obj_set_int(e, "port", r->cluster.storage.port);
        json_obj_set_int(e, "pid", r->cluster.storage.pid);
    } else {
        json_obj_set(j, "storage", json_new_null());
    }
    json_obj_set(j, "leftover_keys", leftover ? json_clone(leftover) : json_new_arr());
    json_obj_set(j, "replication", replset_json(r->repl));
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, j, 2);
    sb_putc(&sb, '\n');
    json_free(j);
    int rc = write_text(r, "run.json", &sb, err);
    sb_free(&sb);
    return rc;
}

/* ---- proxy ---- */

/* Start the proxy between the workers and the lock nodes (faults/proxy.h):
 * every worker reaches every node through its own link, so link faults can
 * act on any subset. Fills r->nodes with worker i's addresses at
 * [i * nnodes]. The storage node is never proxied. */
static int start_proxy(struct run *r, struct ls_err *err)
{
    int nn = r->cluster.nnodes;
    if (nn == 0)
        return 0;
    for (int n = 0; n < nn; n++) { /* where the nodes really are, for the proxy */
        snprintf(r->nodes[n].host, sizeof(r->nodes[n].host), "%s", r->cluster.nodes[n].host);
        r->nodes[n].port = r->cluster.nodes[n].port;
        memcpy(r->nodes[n].password, r->cluster.nodes[n].password, sizeof(r->nodes[n].password));
    }
    if (!r->w->cluster.proxy) { /* cluster.proxy: false: every worker dials the nodes */
        for (int i = 1; i < r->nworkers; i++)
            memcpy(r->nodes + (size_t)i * (size_t)nn, r->nodes, (size_t)nn * sizeof(*r->nodes));
        return 0;
    }
    char log[2100];
    snprintf(log, sizeof(log), "%s/nodes/proxy.log", r->dir);
    struct proxy_config cfg = {
        .nworkers = r->nworkers,
        .nnodes = nn,
        .nodes = r->nodes,
        .log_path = log,
        .seed = r->w->seed,
    };
    int rc = proxy_start(&cfg, &r->proxy, err);
    if (rc < 0)
        return rc;
    r->proxy_pid = proxy_pid(r->proxy);
    for (int i = 0; i < r->nworkers; i++)
        memcpy(r->nodes + (size_t)i * (size_t)nn, proxy_worker_nodes(r->proxy, i),
               (size_t)nn * sizeof(*r->nodes));
    return 0;
}

/* ---- workers ---- */

int run_spawn_worker(struct run *r, int i, uint32_t epoch, struct ls_err *err)
{
    struct run_worker *rw = &r->workers[i];
    if (rw->pid > 0) {
        if (!rw->exited)
            return ls_err_set(err, LS_EENV, "worker %d: restart while process %d still runs", i,
                              (int)rw->pid);
        struct run_epoch *p = realloc(rw->past, (size_t)(rw->npast + 1) * sizeof(*p));
        if (!p)
            return ls_err_set(err, LS_ENOMEM, "worker %d: out of memory", i);
        rw->past = p;
        p[rw->npast++] = (struct run_epoch){rw->epoch, rw->pid, rw->status, rw->killed_by_harness,
                                            rw->fault, rw->start_ns, rw->end_ns};
    }
    struct shm_worker *sw = &r->shm->w[i];
    atomic_store(&sw->state, WS_STARTING);
    atomic_store(&sw->holding, -1);
    atomic_store(&sw->acquiring, -1);
    atomic_store(&sw->hold_since, 0);
    atomic_store(&sw->acquire_since, 0);
    atomic_store(&sw->pid, 0);
    struct worker_args a = {
        .id = i,
        .epoch = epoch,
        .w = r->w,
        .rundir = r->dir,
        .shm = r->shm,
        .nodes = r->nodes + (size_t)i * (size_t)r->cluster.nnodes,
        .nnodes = r->cluster.nnodes,
        .replset = replset_map_of(r->repl),
        .storage_host = r->cluster.storage.host,
        .storage_port = r->cluster.storage.port,
        .storage_password = r->cluster.storage.password,
        .run_id = r->run_id,
        .start_mono = r->start_mono,
        .start_real = r->start_real,
    };
    pid_t pid = proc_fork(0); /* its own group, dying with the harness (util/proc.h) */
    if (pid < 0)
        return ls_err_errno(err, LS_EENV, errno, "fork worker %d (epoch %u)", i, epoch);
    if (pid == 0) {
        if (r->faults_log)
            fclose(r->faults_log); /* nothing buffered: it is flushed per line */
        /* A restart forks mid-run: drop the harness's sockets and files (fault
         * connections, proxy sockets) so that closing them in the harness
         * really closes them. The worker opens everything it needs itself. */
        close_range(3, ~0U, 0);
        /* An external cluster's password reached the worker in memory; the
         * variable naming it is not passed on to adapters (reliability.md) */
        if (r->w->cluster.password_env && r->w->cluster.password_env[0])
            unsetenv(r->w->cluster.password_env);
        _exit(worker_main(&a));
    }
    rw->pid = pid;
    rw->exited = 0;
    rw->status = 0;
    rw->killed_by_harness = 0;
    rw->epoch = epoch;
    rw->fault = -1;
    rw->down = 0;
    rw->start_ns = run_now(r);
    rw->end_ns = 0;
    return 0;
}

static int spawn_workers(struct run *r, struct ls_err *err)
{
    for (int i = 0; i < r->nworkers; i++) {
        int rc = run_spawn_worker(r, i, 0, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void run_worker_reaped(struct run *r, int i)
{
    r->workers[i].exited = 1;
    atomic_store(&r->shm->w[i].pid, 0);
}

static void reap_workers(struct run *r)
{
    for (int i = 0; i < r->nworkers; i++) {
        struct run_worker *rw = &r->workers[i];
        if (rw->pid <= 0 || rw->exited)
            continue;
        int st;
        pid_t p = waitpid(rw->pid, &st, WNOHANG);
        if (p == rw->pid) {
            run_worker_reaped(r, i);
            rw->status = st;
            rw->end_ns = run_now(r);
        }
    }
}

static int workers_alive(const struct run *r)
{
    int n = 0;
    for (int i = 0; i < r->nworkers; i++)
        n += r->workers[i].pid > 0 && !r->workers[i].exited;
    return n;
}

/* Workers killed by a fault that will restart them. */
static int workers_down(const struct run *r)
{
    int n = 0;
    for (int i = 0; i < r->nworkers; i++)
        n += r->workers[i].down;
    return n;
}

/* A reaper that keeps dying is restarted this many times, no more. */
#define REAPER_MAX_RESTARTS 10

/* Contract: when the reaper has died under the run, start a new one over
 * the same workers and tag, record the death ({at_ms, exit, pid}) in
 * r->reaper_restarts and rewrite run.json, so a harness killed next still
 * has a reaper. A failed restart is an incident; so is a death after
 * REAPER_MAX_RESTARTS restarts, recorded once, with no restart. Polled with
 * the workers (start-up and the run). */
static void reaper_watch(struct run *r)
{
    int st;
    pid_t old = r->reaper.pid;
    if (!reaper_died(&r->reaper, &st))
        return;
    char text[64];
    proc_status_text(st, text, sizeof(text));
    if (!r->reaper_restarts)
        r->reaper_restarts = json_new_arr();
    size_t restarts = 0;
    while (json_arr_get(r->reaper_restarts, restarts))
        restarts++;
    struct ls_err e1 = {0};
    if (restarts >= REAPER_MAX_RESTARTS) {
        /* reaper_died answers once per reaper: with no new one, this is once */
        incident_add(r, "the reaper (pid %d) %s after %d restarts: not restarted again", (int)old,
                     text, REAPER_MAX_RESTARTS);
        if (write_run_json(r, 0, 0, NULL, NULL, &e1) < 0)
            ls_err_clear(&e1);
        return;
    }
    struct json *e = json_arr_push(r->reaper_restarts, json_new_obj());
    json_obj_set_num(e, "at_ms", (double)run_now(r) / 1e6);
    json_obj_set_int(e, "pid", old);
    json_obj_set_str(e, "exit", text);
    char id[2 * sizeof(r->run_id) + 1];
    evlog_run_id_hex(r->run_id, id);
    if (reaper_start(&r->reaper, r->shm, id, &e1) < 0) {
        incident_add(r, "the reaper (pid %d) %s and could not be restarted: %s", (int)old, text,
                     e1.msg);
        ls_err_clear(&e1);
    }
    r->reaper_pid = r->reaper.pid;
    if (write_run_json(r, 0, 0, NULL, NULL, &e1) < 0)
        ls_err_clear(&e1);
}

/* Contract: the adopted orphans (an adapter's helpers, reparented to the
 * harness as subreaper) reaped at most every 250 ms; never a child the
 * harness started (util/proc.h proc_reap_adopted). */
static void reap_adopted(void)
{
    static int64_t next;
    int64_t now = ls_now_ns();
    if (now < next)
        return;
    next = now + 250 * LS_NS_PER_MS;
    proc_reap_adopted();
}

static int wait_ready(struct run *r, struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + READY_TIMEOUT;
    for (;;) {
        int ready = 0;
        reap_workers(r);
        reaper_watch(r);
        reap_adopted();
        for (int i = 0; i < r->nworkers; i++) {
            int st = atomic_load(&r->shm->w[i].state);
            if (st == WS_FAILED)
                return ls_err_set(err, LS_EENV, "worker %d could not start: %s", i,
                                  r->shm->w[i].error);
            if (r->workers[i].exited)
                return ls_err_set(err, LS_EENV, "worker %d exited during start-up", i);
            ready += st == WS_READY;
        }
        if (ready == r->nworkers)
            return 0;
        if (run_interrupted(r))
            return ls_err_set(err, LS_EINTR, "interrupted while starting the workers");
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT, "only %d of %d workers were ready within 15s",
                              ready, r->nworkers);
        run_sleep(r, 500 * LS_NS_PER_US);
    }
}

/* Stop every worker: wait for a natural end (unless interrupted: a signal
 * ends this wait), then SIGTERM (abort the hold, release, close the log),
 * then SIGKILL with a crash record appended to the log. A signal taken
 * during the SIGTERM grace (a second Ctrl-C) ends the grace: SIGKILL now. */
static void stop_workers(struct run *r, int64_t grace_ns)
{
    atomic_store(&r->shm->stop, r->signal ? 1 : 0);
    int64_t until = ls_now_ns() + grace_ns;
    if (!r->signal) {
        while (workers_alive(r) && ls_now_ns() < until) {
            reap_workers(r);
            if (!workers_alive(r) || run_interrupted(r))
                break;
            run_sleep(r, LS_NS_PER_MS);
        }
    }
    atomic_store(&r->shm->stop, 1);
    for (int i = 0; i < r->nworkers; i++)
        if (r->workers[i].pid > 0 && !r->workers[i].exited) {
            kill(-r->workers[i].pid, SIGCONT);
            kill(r->workers[i].pid, SIGTERM);
        }
    until = ls_now_ns() + TERM_GRACE;
    while (workers_alive(r) && ls_now_ns() < until) {
        reap_workers(r);
        /* a second signal cuts the grace short, wherever it was taken (a
         * fault's stop during the heal polls for signals too) */
        if (!workers_alive(r) || r->nsignals > 1 || run_sleep(r, LS_NS_PER_MS))
            break;
    }
    for (int i = 0; i < r->nworkers; i++) {
        struct run_worker *rw = &r->workers[i];
        if (rw->pid <= 0 || rw->exited)
            continue;
        int holding = atomic_load(&r->shm->w[i].holding);
        kill(-rw->pid, SIGKILL);
        int64_t t = run_now(r);
        proc_wait(rw->pid, 5 * LS_NS_PER_S, &rw->status);
        run_worker_reaped(r, i);
        rw->killed_by_harness = 1;
        rw->end_ns = run_now(r);
        char path[2100];
        evlog_path(path, sizeof(path), r->dir, i, rw->epoch);
        struct ev_rec cr = {.t = t, .type = EV_CRASH, .res = (uint16_t)(holding >= 0 ? holding : 0)};
        struct ls_err e = {0};
        evlog_append_offline(path, &cr, &e);
    }
}

/* ---- after the workers ---- */

/* Lock keys still on the nodes once every worker stopped and released. */
static struct json *leftover_keys(const struct run *r)
{
    struct json *arr = json_new_arr();
    struct timeval tv = {2, 0};
    struct lock_config kc = {0};
    workload_lock_keys(r->w, &kc);
    for (int n = 0; n < r->cluster.nnodes; n++) {
        redisContext *c = node_connect(&r->cluster.nodes[n], tv);
        if (!c || c->err) {
            if (c)
                redisFree(c);
            continue;
        }
        redisSetTimeout(c, tv);
        for (int i = 0; i < r->w->workers.resources; i++) {
            char key[LOCK_KEY_MAX];
            size_t kl = lock_key(&kc, i, 0, key, sizeof(key));
            redisAppendCommand(c, "PTTL %b", key, kl);
        }
        for (int i = 0; i < r->w->workers.resources; i++) {
            redisReply *rep = NULL;
            if (redisGetReply(c, (void **)&rep) != REDIS_OK)
                break;
            if (rep->type == REDIS_REPLY_INTEGER && rep->integer != -2) {
                struct json *e = json_arr_push(arr, json_new_obj());
                json_obj_set_int(e, "res", i);
                json_obj_set_int(e, "node", n);
                json_obj_set_int(e, "pttl_ms", rep->integer);
            }
            freeReplyObject(rep);
        }
        redisFree(c);
    }
    return arr;
}

/* ---- command load (backends/cmdstats.h) ---- */

#define CMDSTATS_TIMEOUT (500 * LS_NS_PER_MS)

/* Contract: the load phase's first sample of the lock nodes' command
 * counters (NULL when they are not Redis servers), taken before go while
 * every worker waits for it: the counters as they stand at go (time 0),
 * so no command of a grant the run counts is missed, and the schedule's
 * first faults are not held up by it. */
static struct json *cmdload_start(struct run *r)
{
    if (!r->cluster.nnodes || !(r->w->cluster.backend->caps & BACKEND_CAP_REDIS))
        return NULL;
    return cmdstats_sample(&r->cluster, CMDSTATS_TIMEOUT);
}

/* Contract: the last sample, then commands.json (start: taken). Returns 0
 * or LS_EIO with err set when the file could not be written. */
static int cmdload_write(struct run *r, struct json *start, double t_start_ms, struct ls_err *err)
{
    const struct workload *w = r->w;
    char why[160];
    const char *not = NULL;
    if (!(w->cluster.backend->caps & BACKEND_CAP_REDIS)) {
        snprintf(why, sizeof(why), "the lock nodes are not Redis servers (cluster.topology %s)",
                 w->cluster.backend->name);
        not = why;
    } else if (!r->cluster.nnodes) {
        not = "no lock node";
    }
    struct json *end = not ? NULL : cmdstats_sample(&r->cluster, CMDSTATS_TIMEOUT);
    double t_end_ms = (double)run_now(r) / 1e6;
    struct json *doc = cmdstats_document(&r->cluster, start, end, t_start_ms, t_end_ms, not);
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, doc, 2);
    sb_putc(&sb, '\n');
    json_free(doc);
    int rc = write_text(r, "commands.json", &sb, err);
    sb_free(&sb);
    return rc;
}

static void progress(struct run *r, struct progress *pg, const struct schedule *s, int final)
{
    progress_tick(pg, r->shm, run_now(r), s ? schedule_active(s) : 0, final);
}

static int64_t worker_grace(const struct workload *w)
{
    int64_t hold = dist_max(&w->workers.hold);
    if (hold < 0)
        hold = 5 * LS_NS_PER_S; /* unbounded distribution: SIGTERM cuts it */
    return hold + w->lock.retry.delay + w->lock.retry.jitter + 2 * LS_NS_PER_S;
}

/* Checking stops on a signal taken after it began (one taken before, which
 * interrupted the run, does not stop the checking of what was recorded). */
struct check_stop {
    struct run *r;
    int nsignals; /* taken before checking began */
};

static int checking_stopped(void *arg)
{
    struct check_stop *c = arg;
    run_interrupted(c->r);
    return c->r->nsignals > c->nsignals;
}

/* The checker pass runs in a child (harness/checkproc.h): a signal during
 * it stops it at once, with no result; run.json keeps the run's own state
 * (a run that finished stays finished) and `lockstorm check` gives the
 * verdict later. */
static int check_and_report(struct run *r, struct json **result, struct ls_err *err)
{
    struct check_stop cs = {r, r->nsignals};
    r->checking = 1;
    int rc = checkproc_run(r->dir, r->opts->formats, r->opts->quiet, checking_stopped, &cs,
                           result, err);
    r->checking = 0;
    if (rc == LS_EINTR)
        ls_err_set(err, LS_EINTR, "checking stopped by a signal; `lockstorm check %s` gives "
                   "the verdict", r->dir);
    return rc;
}

int run_workload(const struct workload *w, const struct run_opts *opts, struct json **result,
                 char **dir_out, struct ls_err *err)
{
    struct run run;
    memset(&run, 0, sizeof(run));
    struct run *r = &run;
    struct fault_env fenv; /* what the fault kinds act through (harness/fault_env.h) */
    fault_env_init(&fenv, r); /* out of memory: fenv.ctx NULL, refused before the schedule */
    r->w = w;
    r->opts = opts;
    r->nworkers = (int)w->workers.count;
    *result = NULL;
    if (dir_out)
        *dir_out = NULL;
    rng_seed(&r->fault_rng, w->seed, 0xfa17);

    sigemptyset(&r->sigs);
    sigaddset(&r->sigs, SIGINT);
    sigaddset(&r->sigs, SIGTERM);
    sigaddset(&r->sigs, SIGHUP);
    sigaddset(&r->sigs, SIGUSR1); /* taken and ignored: ignored_signal */
    sigaddset(&r->sigs, SIGUSR2);
    sigaddset(&r->sigs, SIGALRM);
    sigset_t old;
    sigprocmask(SIG_BLOCK, &r->sigs, &old);
    signal(SIGPIPE, SIG_IGN);

    struct schedule sched;
    memset(&sched, 0, sizeof(sched));
    struct progress pg;
    progress_init(&pg, PROGRESS_OFF, 1, 0, NULL);
    struct json *leftover = NULL;
    struct json *cmd_start = NULL; /* the lock nodes' command counters at go */
    double cmd_start_ms = 0;       /* go: the sample was taken while every worker waited */
    int started = 0;
    /* the nemesis's schedule (drawn from the seed, or replayed) is fixed first */
    struct fault_spec *drawn = NULL;
    int ndrawn = 0;
    int rc = nemesis_plan(w, opts->replay, &drawn, &ndrawn, NULL, err);
    if (rc == 0)
        rc = limits_check(w, err); /* ulimit -n / -u / -f, before anything exists */
    if (rc == 0) /* the run's id: run.json and every event log's header name it */
        rc = ls_random_bytes(r->run_id, sizeof(r->run_id), "run id", err);
    /* Every process of the run inherits LOCKSTORM_RUN=<run id> and the
     * harness is its descendants' child subreaper (docs/reliability.md
     * "Nothing escapes the run"); both are put back as they were at done. */
    struct proc_contain box = {0};
    char run_hex[2 * sizeof(r->run_id) + 1] = "";
    if (rc == 0) {
        evlog_run_id_hex(r->run_id, run_hex);
        r->containment = proc_contain_begin(&box, run_hex);
    }
    if (rc == 0)
        rc = make_rundir(r, err);
    if (rc < 0)
        goto done;
    if (dir_out)
        *dir_out = strdup(r->dir);
    {
        struct strbuf sb = STRBUF_INIT;
        workload_to_yaml(w, &sb);
        rc = write_text(r, "workload.yaml", &sb, err);
        sb_free(&sb);
        if (rc == 0)
            rc = nemesis_write(r->dir, w, opts->replay, drawn, ndrawn, err);
        if (rc < 0)
            goto done;
        char path[2100];
        snprintf(path, sizeof(path), "%s/faults.jsonl", r->dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        r->faults_log = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (fd >= 0 && !r->faults_log)
            close(fd);
        if (!r->faults_log) {
            rc = ls_err_errno(err, LS_EIO, errno, "create %s", path);
            goto done;
        }
    }

    rc = clockfault_prepare(w, r->dir, err); /* clock faults: control files; nodes get the shim */
    if (rc < 0)
        goto teardown;
    /* the topology's nodes and storage (backends/backend.h) */
    rc = w->cluster.backend->start(&r->cluster, w, r->dir, interrupted_cb, r, err);
    if (rc < 0)
        goto teardown;
    r->nodes = calloc((size_t)r->cluster.nnodes * (size_t)r->nworkers + 1, sizeof(*r->nodes));
    r->workers = calloc((size_t)r->nworkers, sizeof(*r->workers));
    r->shm = shm_create(r->nworkers);
    if (!r->nodes || !r->workers || !r->shm) {
        rc = ls_err_set(err, LS_ENOMEM, "out of memory setting up %d workers", r->nworkers);
        goto teardown;
    }
    rc = start_proxy(r, err);
    if (rc == 0 && (w->cluster.backend->caps & BACKEND_CAP_REPLICAS))
        rc = run_replset_start(r, err); /* replicas in sync, sentinels ready */
    if (rc == 0) /* after the proxies (they must not hold its pipe), before the workers */
        rc = reaper_start(&r->reaper, r->shm, run_hex, err);
    r->reaper_pid = r->reaper.pid;
    if (rc < 0)
        goto teardown;

    r->start_mono = ls_now_ns();
    r->start_real = ls_realtime_ns();
    rc = write_run_json(r, 0, 0, NULL, NULL, err);
    if (rc < 0)
        goto teardown;
    started = 1;
    rc = spawn_workers(r, err);
    if (rc == 0) /* record the workers' pids too: a harness that dies now leaves them named */
        rc = write_run_json(r, 0, 0, NULL, NULL, err);
    if (rc == 0)
        rc = wait_ready(r, err);
    if (rc < 0)
        goto teardown;
    cmd_start = cmdload_start(r);

    /* Time 0 of the run is "go": fault times, event stamps and the duration
     * count from the moment every worker is ready, whatever start-up cost
     * (an adapter's Node start-up can take seconds on a loaded machine). */
    r->start_mono = ls_now_ns();
    r->start_real = ls_realtime_ns();
    r->deadline_mono = r->start_mono + w->duration;
    atomic_store(&r->shm->start_mono, r->start_mono);
    atomic_store(&r->shm->start_real, r->start_real);
    atomic_store(&r->shm->deadline, r->deadline_mono);
    atomic_store(&r->shm->go, 1);
    rc = write_run_json(r, 0, 0, NULL, NULL, err);
    if (rc < 0)
        goto teardown;
    rc = fenv.ctx ? schedule_init(&sched, w) : LS_ENOMEM;
    if (rc == 0)
        rc = schedule_add(&sched, drawn, ndrawn);
    if (rc < 0) {
        ls_err_set(err, rc, "out of memory");
        goto teardown;
    }
    {
        int64_t next_progress = ls_now_ns();
        int64_t base = r->start_mono;
        progress_init(&pg, r->opts->progress, r->opts->quiet, w->duration, stderr);
        /* a signal taken anywhere (a fault waiting for its target takes it
         * with run_interrupted) ends the loop: r->signal is the one flag */
        while (ls_now_ns() < r->deadline_mono && !run_interrupted(r)) {
            int64_t now = ls_now_ns();
            if (now >= next_progress) {
                progress(r, &pg, &sched, 0);
                next_progress = now + 250 * LS_NS_PER_MS;
            }
            int64_t wake = r->deadline_mono;
            int64_t sn = schedule_next(&sched);
            if (sn != INT64_MAX && base + sn < wake)
                wake = base + sn;
            if (next_progress < wake)
                wake = next_progress;
            if (wake > now + 50 * LS_NS_PER_MS)
                wake = now + 50 * LS_NS_PER_MS; /* reap workers at least every 50 ms */
            if (run_sleep(r, wake - now))
                break;
            schedule_tick(&sched, &fenv);
            reap_workers(r);
            reaper_watch(r);
            reap_adopted();
            if (!workers_alive(r) && !workers_down(r))
                break;
        }
    }
    progress(r, &pg, &sched, 1);

teardown:
    incident_scan_workers(r); /* died under the run, before teardown stops the rest */
    if (fenv.ctx)
        schedule_heal(&sched, &fenv);
    if (r->proxy) {
        struct ls_err eh = {0}; /* no rule may outlive the faults (failed starts included) */
        if (proxy_heal(r->proxy, &eh) < 0 && rc == 0 && !incident_proxy_dead(r, &eh))
            rc = ls_err_set(err, eh.code, "final heal: %s", eh.msg);
    }
    if (r->workers)
        stop_workers(r, worker_grace(w));
    reaper_stop(&r->reaper); /* what the workers' adapters started dies with their groups */
    if (rc == 0)
        rc = incident_worker_error(r, err); /* a worker the environment failed (disk full) */
    proxy_stop(r->proxy); /* after the workers, before the nodes */
    r->proxy = NULL;
    replset_stop(r->repl); /* sentinels and the replication proxy, before the nodes */
    if (started) {
        int64_t end_ns = run_now(r);
        incident_scan_nodes(r);
        struct ls_err e2 = {0};
        /* before leftover_keys: its PTTLs are the harness's, not the load's */
        if (cmdload_write(r, cmd_start, cmd_start_ms, &e2) < 0 && rc == 0)
            rc = ls_err_set(err, e2.code, "%s", e2.msg);
        ls_err_clear(&e2);
        cmd_start = NULL;
        if (r->cluster.nnodes && (w->cluster.backend->caps & BACKEND_CAP_REDIS))
            leftover = leftover_keys(r);
        char path[2100];
        snprintf(path, sizeof(path), "%s/storage.jsonl", r->dir);
        if (w->cluster.backend->dump_storage(&r->cluster, w, path, &e2) < 0) {
            if (e2.code != LS_EIO) /* the storage failed us: lost updates unknown */
                incident_add(r, "final storage state not read: %s", e2.msg);
            else if (rc == 0) /* we could not write it: the environment's */
                rc = ls_err_set(err, e2.code, "%s", e2.msg);
            ls_err_clear(&e2);
        }
        if (r->cluster.has_storage && r->cluster.storage.pid > 0) {
            snprintf(path, sizeof(path), "%s/jobs.jsonl", r->dir);
            if (w->workers.mode == WMODE_JOBS &&
                jobs_dump(r->cluster.storage.host, r->cluster.storage.port,
                          r->cluster.storage.password, w, path, &e2) < 0 &&
                rc == 0)
                rc = ls_err_set(err, e2.code, "%s", e2.msg);
        }
        /* the final run.json records the nodes (ports, pids), so it is
         * written before cluster_stop frees them; the run is over already */
        struct ls_err e3 = {0};
        /* an error now (not an interrupt) ended the run: recorded as failed */
        const char *failed = rc < 0 && rc != LS_EINTR ? err->msg : NULL;
        if (write_run_json(r, 1, end_ns, leftover, failed, &e3) < 0 && rc == 0)
            rc = ls_err_set(err, e3.code, "%s", e3.msg);
        w->cluster.backend->stop(&r->cluster);
    } else {
        w->cluster.backend->stop(&r->cluster);
    }
    /* everything the run started is stopped: what is left carrying its tag,
     * or reparented to the harness (subreaper), escaped it; killed by pid */
    proc_contain_sweep(&box, 2 * LS_NS_PER_S);
    if (r->faults_log) {
        fclose(r->faults_log);
        r->faults_log = NULL;
    }
    schedule_free(&sched);
    json_free(leftover);
    if (started && (rc == 0 || rc == LS_EINTR)) {
        int crc = check_and_report(r, result, err);
        if (rc == 0)
            rc = crc;
    }
    if (rc == LS_EINTR && *result)
        rc = 0; /* interrupted runs still have a (never passing) verdict */
    if (*result)
        point_latest(r);
    if (r->signal && !*result && rc == 0)
        rc = ls_err_set(err, LS_EINTR, "interrupted by %s", strsignal(r->signal));
done:
    json_free(cmd_start);
    nemesis_specs_free(drawn, ndrawn);
    replset_free(r->repl);
    r->repl = NULL;
    shm_destroy(r->shm);
    free(r->nodes);
    for (int i = 0; r->workers && i < r->nworkers; i++)
        free(r->workers[i].past);
    free(r->workers);
    fault_env_free(&fenv);
    json_free(r->incidents);
    json_free(r->reaper_restarts);
    proc_contain_end(&box);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}
