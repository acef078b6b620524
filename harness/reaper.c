/*
 * reaper.c: the process that kills the workers' process groups once the
 * harness is done with them or dead (see reaper.h). It holds nothing but
 * the read end of its pipe and the shared worker table; every signal but
 * SIGKILL is blocked, so neither a terminal's ^C nor a stray SIGTERM ends
 * it before it has done its one job. A group id is the pid of a worker
 * the run started; a worker's pid is not reused while its group has
 * members, and after that only once pid numbers wrap (pid_max), long after
 * the few milliseconds between a worker's end and the reaper's kill.
 */
#include "harness/reaper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/iptables.h"
#include "util/proc.h"
#include "harness/shm.h"
#include "util/timeutil.h"

/* written before the harness closes the pipe at its teardown: EOF without
 * it means the harness died */
#define REAPER_ORDERLY 'q'

/* Contract: the reaper process's life: block until fd says the harness is
 * done ('q' then EOF) or gone (EOF alone), then kill every group named in
 * shm; when the harness is gone, also every process carrying the run's tag
 * (tag: "LOCKSTORM_RUN=<id>", proc.h), whatever its group or session.
 * Never returns. */
static void reaper_main(int fd, struct shm *shm, const char *tag)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    char c;
    int orderly = 0;
    for (;;) {
        ssize_t n = read(fd, &c, 1);
        if (n == 1 && c == REAPER_ORDERLY)
            orderly = 1;
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    pid_t self = getpid();
    for (int i = 0; i < shm->nworkers; i++) {
        pid_t g = (pid_t)atomic_load(&shm->w[i].pid);
        if (g > 1 && g != self)
            kill(-g, SIGKILL); /* ESRCH: the group is gone already */
    }
    /* the harness is gone: no teardown will sweep what escaped the groups */
    if (!orderly && tag[0])
        proc_kill_tagged(tag, 0, 2 * LS_NS_PER_S);
    _exit(0);
}

/* How long after the harness died one of its iptables calls may still add
 * a rule when the reaper cannot tell (the run has no tag): each call waits
 * at most 5 s for the xtables lock (util/iptables.c), and the process
 * reaper kills what carries the tag within 2 s. */
#define RULES_LATE_NS (10 * LS_NS_PER_S)

/* Contract: delete the rules tagged comment (a second try if the first
 * fails: the xtables lock may be busy). */
static void rules_sweep(const char *comment)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        struct ls_err e = {0};
        if (ipt_remove_tagged(comment, &e) >= 0)
            break;
    }
}

/* Contract: the rules reaper's life: block until EOF on fd or until the
 * parent is gone, then delete the rules tagged comment and exit. After the
 * harness's goodbye (REAPER_ORDERLY) one sweep: the harness waits for each
 * of its iptables calls. Without it the harness died, possibly in the middle
 * of an `iptables -A` that commits its rule after a sweep has listed the
 * rules; so it sweeps again, at growing intervals, until two sweeps in a
 * row have begun after no process carrying the run's tag (tag:
 * "LOCKSTORM_RUN=<id>", which every iptables call of the harness carries)
 * was seen, or, tag "" or unreadable, for RULES_LATE_NS (the bound in every
 * case). Never returns. */
static void rules_reaper_main(int fd, pid_t parent, const char *comment, const char *tag)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    /* it must outlive the run to delete the rules: its iptables children
     * do not carry the run's tag, or a reaper's sweep could kill them */
    unsetenv(PROC_RUN_TAG);
    int orderly = 0;
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int n = poll(&pf, 1, 100);
        if (getppid() != parent) {
            orderly = 0;
            break;
        }
        if (n > 0) {
            char c;
            ssize_t k = read(fd, &c, 1);
            if (k == 1 && c == REAPER_ORDERLY)
                orderly = 1;
            if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
                break;
        } else if (n < 0 && errno != EINTR) {
            break;
        }
    }
    int64_t deadline = ls_now_ns() + RULES_LATE_NS;
    int64_t pause = 20 * LS_NS_PER_MS;
    /* nothing tagged seen on two rounds in a row: a child forked by the
     * harness but not yet exec'd (the tag is in its environment only once
     * it has) is not missed */
    for (int quiet = 0;;) {
        int alive = orderly ? 0 : tag[0] ? proc_tagged_alive(tag) : -1;
        rules_sweep(comment);
        quiet = alive == 0 ? quiet + 1 : 0;
        if (orderly || quiet == 2 || ls_now_ns() >= deadline)
            break;
        ls_sleep_ns(pause);
        if (pause < LS_NS_PER_S / 2)
            pause *= 2;
    }
    _exit(0);
}

/* Contract: fork a reaper process (what names it in errors) holding only
 * the read end of a new pipe, as fd 3, in a process group of its own and
 * without a death signal (it must outlive the harness); in the parent rp
 * is filled. Returns 0 in the child, the pid in the parent, or LS_EENV
 * with err set. */
static pid_t fork_reaper(struct reaper *rp, const char *what, struct ls_err *err)
{
    rp->pid = 0;
    rp->fd = -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return ls_err_errno(err, LS_EENV, errno, "%s: pipe", what);
    /* a group of its own (a pause or kill of a group never reaches it), no
     * death signal, its signals left for it to block (util/proc.h) */
    pid_t pid = proc_fork(PROC_NO_DEATHSIG);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return ls_err_errno(err, LS_EENV, e, "%s: fork", what);
    }
    if (pid == 0) {
        /* only the pipe's read end (3): the harness's end closes the pipe */
        if (p[0] != 3) {
            dup2(p[0], 3);
            close(p[0]);
        }
        close_range(4, ~0U, 0);
        return 0;
    }
    close(p[0]);
    rp->pid = pid;
    rp->fd = p[1];
    return pid;
}

int reaper_rules_start(struct reaper *rp, const char *comment, struct ls_err *err)
{
    char cmt[IPT_COMMENT_MAX];
    snprintf(cmt, sizeof(cmt), "%s", comment);
    char tag[128] = "";
    const char *run = getenv(PROC_RUN_TAG);
    if (run && (size_t)snprintf(tag, sizeof(tag), "%s=%s", PROC_RUN_TAG, run) >= sizeof(tag))
        tag[0] = '\0'; /* too long to be ours: the fixed wait */
    pid_t parent = getpid();
    pid_t pid = fork_reaper(rp, "rules reaper", err);
    if (pid == 0)
        rules_reaper_main(3, parent, cmt, tag);
    return pid < 0 ? (int)pid : 0;
}

int reaper_start(struct reaper *rp, struct shm *shm, const char *run_id, struct ls_err *err)
{
    char tag[128] = "";
    if (run_id && run_id[0])
        snprintf(tag, sizeof(tag), "%s=%s", PROC_RUN_TAG, run_id);
    pid_t pid = fork_reaper(rp, "reaper", err);
    if (pid == 0)
        reaper_main(3, shm, tag);
    return pid < 0 ? (int)pid : 0;
}

int reaper_died(struct reaper *rp, int *status)
{
    if (!rp || rp->pid <= 0)
        return 0;
    int st = 0;
    pid_t r = waitpid(rp->pid, &st, WNOHANG);
    if (r != rp->pid)
        return 0;
    close(rp->fd);
    rp->fd = -1;
    rp->pid = 0;
    if (status)
        *status = st;
    return 1;
}

void reaper_stop(struct reaper *rp)
{
    if (!rp || rp->pid <= 0)
        return;
    char q = REAPER_ORDERLY; /* the harness is alive: its teardown sweeps the rest */
    ssize_t w = write(rp->fd, &q, 1);
    (void)w;
    close(rp->fd);
    rp->fd = -1;
    proc_stop(rp->pid, 0, 2 * LS_NS_PER_S);
    rp->pid = 0;
}
