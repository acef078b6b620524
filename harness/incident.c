/*
 * incident.c: recording the run's own processes dying under it (see
 * incident.h). It only looks (waitpid WNOHANG on our own children,
 * /proc/PID/stat) and writes lines; what the run then does is run.c's.
 */
#include "harness/incident.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "util/proc.h"

void incident_add(struct run *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (!r->incidents)
        r->incidents = json_new_arr();
    json_arr_push(r->incidents, json_new_str(line));
}

void incident_scan_workers(struct run *r)
{
    for (int i = 0; r->workers && i < r->nworkers; i++) {
        const struct run_worker *rw = &r->workers[i];
        if (rw->pid <= 0 || !rw->exited || rw->fault >= 0 || rw->killed_by_harness)
            continue;
        if (WIFEXITED(rw->status) && WEXITSTATUS(rw->status) == 0)
            continue; /* it reached the deadline and ended on its own */
        char st[96];
        proc_status_text(rw->status, st, sizeof(st));
        incident_add(r, "worker %d (pid %d, epoch %u) ended at %.3f s, not by a fault or the "
                     "harness: %s", i, (int)rw->pid, rw->epoch, (double)rw->end_ns / 1e9, st);
    }
}

int incident_worker_error(struct run *r, struct ls_err *err)
{
    for (int i = 0; r->shm && i < r->nworkers; i++) {
        struct shm_worker *sw = &r->shm->w[i];
        if (atomic_load(&sw->state) != WS_FAILED)
            continue;
        char msg[sizeof(sw->error)];
        memcpy(msg, sw->error, sizeof(msg));
        msg[sizeof(msg) - 1] = '\0';
        return ls_err_set(err, LS_EIO, "%s", msg); /* names the worker itself */
    }
    return 0;
}

/* Contract: one node expected alive: reap it if it has exited. */
static void scan_node(struct run *r, struct node_proc *n, const char *what)
{
    if (n->pid <= 0)
        return;
    int st;
    if (waitpid(n->pid, &st, WNOHANG) != n->pid)
        return;
    char s[96];
    proc_status_text(st, s, sizeof(s));
    incident_add(r, "%s (redis-server pid %d, 127.0.0.1:%d) died during the run, not by a "
                 "fault: %s; see its log", what, (int)n->pid, n->port, s);
    n->pid = 0;
}

void incident_scan_nodes(struct run *r)
{
    char what[32];
    for (int i = 0; i < r->cluster.nnodes; i++) {
        snprintf(what, sizeof(what), "lock node %d", i);
        scan_node(r, &r->cluster.nodes[i], what);
    }
    if (r->cluster.has_storage)
        scan_node(r, &r->cluster.storage, "the storage node");
}

int incident_proxy_dead(struct run *r, const struct ls_err *eh)
{
    char s = r->proxy_pid > 0 ? proc_state(r->proxy_pid, 0) : 0;
    if (r->proxy_pid <= 0 || (s != 0 && s != 'Z' && s != 'X'))
        return 0; /* alive: the failure to heal is a real error */
    incident_add(r, "the proxy (pid %d) died during the run: %s; workers lost their links to "
                 "the lock nodes; see nodes/proxy.log", (int)r->proxy_pid, eh->msg);
    return 1;
}
