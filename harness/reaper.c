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
#include <signal.h>
#include <unistd.h>

#include "harness/proc.h"
#include "harness/shm.h"
#include "util/timeutil.h"

/* Contract: the reaper process's life: block until EOF on fd, then kill
 * every group named in shm. Never returns. */
static void reaper_main(int fd, struct shm *shm)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    char c;
    for (;;) {
        ssize_t n = read(fd, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    pid_t self = getpid();
    for (int i = 0; i < shm->nworkers; i++) {
        pid_t g = (pid_t)atomic_load(&shm->w[i].pid);
        if (g > 1 && g != self)
            kill(-g, SIGKILL); /* ESRCH: the group is gone already */
    }
    _exit(0);
}

int reaper_start(struct reaper *rp, struct shm *shm, struct ls_err *err)
{
    rp->pid = 0;
    rp->fd = -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return ls_err_errno(err, LS_EENV, errno, "reaper: pipe");
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return ls_err_errno(err, LS_EENV, e, "reaper: fork");
    }
    if (pid == 0) {
        setpgid(0, 0); /* a pause or kill of a group never reaches it */
        /* no death signal: it must outlive the harness; it holds only its
         * pipe's read end (3) so that the harness's end closes the pipe */
        if (p[0] != 3) {
            dup2(p[0], 3);
            close(p[0]);
        }
        close_range(4, ~0U, 0);
        reaper_main(3, shm);
    }
    setpgid(pid, pid);
    close(p[0]);
    rp->pid = pid;
    rp->fd = p[1];
    return 0;
}

void reaper_stop(struct reaper *rp)
{
    if (!rp || rp->pid <= 0)
        return;
    close(rp->fd);
    rp->fd = -1;
    proc_stop(rp->pid, 0, 2 * LS_NS_PER_S);
    rp->pid = 0;
}
