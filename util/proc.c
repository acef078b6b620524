/*
 * proc.c: child process start/stop by pid. See proc.h. This file signals
 * only the pids it is handed by the code that started them, and processes
 * carrying the run's tag or adopted by the caller (proc_kill_tagged); it
 * reaps the dead children the caller adopted (proc_reap_adopted).
 */
#include "util/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/timeutil.h"

static pid_t spawn(char *const argv[], char *const envp[], char *const env_add[],
                   const char *log_path, struct ls_err *err);
static void track(pid_t pid);

void proc_child_setup(pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* the parent may have died between fork and prctl */
    if (getppid() != parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

pid_t proc_fork(unsigned flags)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        if (flags & PROC_NO_DEATHSIG)
            setpgid(0, 0);
        else
            proc_child_setup(parent);
    } else if (pid > 0) {
        setpgid(pid, pid);
        track(pid);
    }
    return pid;
}

/* Contract: environ with each "KEY=value" of add (NULL-terminated)
 * replacing any entry of the same KEY; NULL when add is NULL or out of
 * memory (*oom set then). The array is the caller's to free; its strings
 * are borrowed from environ and add. */
static char **merged_env(char *const add[], int *oom)
{
    extern char **environ;
    *oom = 0;
    if (!add)
        return NULL;
    size_t ne = 0, na = 0;
    while (environ && environ[ne])
        ne++;
    while (add[na])
        na++;
    char **env = calloc(ne + na + 1, sizeof(*env));
    if (!env) {
        *oom = 1;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < ne; i++) {
        const char *eq = strchr(environ[i], '=');
        size_t kl = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
        int replaced = 0;
        for (size_t j = 0; j < na && !replaced; j++)
            replaced = strncmp(add[j], environ[i], kl) == 0;
        if (!replaced)
            env[k++] = environ[i];
    }
    for (size_t j = 0; j < na; j++)
        env[k++] = add[j];
    return env;
}

pid_t proc_spawn(char *const argv[], const char *log_path, struct ls_err *err)
{
    return proc_spawn_env(argv, NULL, log_path, err);
}

pid_t proc_spawn_env(char *const argv[], char *const env_add[], const char *log_path,
                     struct ls_err *err)
{
    return spawn(argv, NULL, env_add, log_path, err);
}

pid_t proc_spawn_envp(char *const argv[], char *const envp[], const char *log_path,
                      struct ls_err *err)
{
    static char *const empty[] = {NULL};
    return spawn(argv, envp ? envp : empty, NULL, log_path, err);
}

/* Contract: envp with the run's tag (PROC_RUN_TAG from the harness's
 * environment, in tag's n bytes) added when the harness has one; a new
 * array (the caller's to free; strings borrowed), NULL when out of memory. */
static char **tagged_env(char *const envp[], char *tag, size_t n)
{
    const char *run = getenv(PROC_RUN_TAG);
    size_t k = 0;
    while (envp[k])
        k++;
    char **env = calloc(k + 2, sizeof(*env));
    if (!env)
        return NULL;
    for (size_t i = 0; i < k; i++)
        env[i] = envp[i];
    if (run && (size_t)snprintf(tag, n, "%s=%s", PROC_RUN_TAG, run) < n)
        env[k] = tag;
    return env;
}

/* Contract: proc_spawn to log_path with envp (NULL: the harness's
 * environment, with env_add when non-NULL). */
static pid_t spawn(char *const argv[], char *const envp[], char *const env_add[],
                   const char *log_path, struct ls_err *err)
{
    int logfd = -1;
    if (log_path) {
        logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (logfd < 0)
            return ls_err_errno(err, LS_EIO, errno, "spawn %s: open log %s", argv[0], log_path);
    }
    struct spawn_opts o = {.envp = envp, .env_add = env_add, .use_fds = 1, .fd_in = -1, .fd_out = logfd,
                          .fd_err = logfd};
    pid_t pid = proc_spawn_opts(argv, &o, err);
    if (logfd >= 0)
        close(logfd);
    return pid;
}

/* Contract: in the child, point fd at target (-1: devnull); async-signal-safe. */
static void child_stdio(int target, int fd, int devnull)
{
    int from = target >= 0 ? target : devnull;
    if (from >= 0 && from != fd)
        dup2(from, fd);
    else if (from == fd)
        fcntl(fd, F_SETFD, 0); /* already there: only drop close-on-exec */
}

/* Contract: in the child, report errno e through fd and _exit(127). */
static void child_fail(int fd, int e)
{
    ssize_t w = write(fd, &e, sizeof(e));
    (void)w;
    _exit(127);
}

pid_t proc_spawn_opts(char *const argv[], const struct spawn_opts *o, struct ls_err *err)
{
    static const struct spawn_opts defaults = {0};
    if (!o)
        o = &defaults;
    const char *prog = o->path ? o->path : argv[0];
    char *const *envp = o->envp;
    char **merged = NULL, tag[128];
    int oom = 0;
    if (envp) { /* exactly this environment, and the run's tag (proc.h) */
        merged = tagged_env(envp, tag, sizeof(tag));
        oom = !merged;
        envp = merged;
    } else if (o->env_add) {
        merged = merged_env(o->env_add, &oom);
        envp = merged;
    }
    if (oom)
        return ls_err_set(err, LS_ENOMEM, "spawn %s: out of memory", argv[0]);
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) {
        int e = errno;
        free(merged);
        if (o->what)
            return ls_err_errno(err, LS_EENV, e, "%s: pipe", o->what);
        return ls_err_errno(err, LS_EENV, e, "spawn %s: pipe", argv[0]);
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        free(merged);
        if (o->what)
            return ls_err_errno(err, LS_EENV, e, "%s: fork", o->what);
        return ls_err_errno(err, LS_EENV, e, "spawn %s: fork", argv[0]);
    }
    if (pid == 0) {
        /* async-signal-safe calls only from here on; the error pipe goes
         * above the descriptors a hook may place (PG_DIRFD: pgcluster.c) */
        if (pfd[1] < 10) {
            int moved = fcntl(pfd[1], F_DUPFD_CLOEXEC, 10);
            if (moved >= 0) {
                close(pfd[1]);
                pfd[1] = moved;
            }
        }
        if (!(o->flags & PROC_SAME_GROUP))
            setpgid(0, 0);
        int deathsig = !(o->flags & PROC_NO_DEATHSIG);
        if (deathsig && !o->drop) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) /* the parent died between fork and prctl */
                _exit(127);
        }
        if (!(o->flags & PROC_KEEP_SIGNALS))
            for (int s = 1; s < NSIG; s++)
                if (s != SIGKILL && s != SIGSTOP)
                    signal(s, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        child_stdio(o->use_fds ? o->fd_in : -1, 0, devnull);
        child_stdio(o->use_fds ? o->fd_out : -1, 1, devnull);
        child_stdio(o->use_fds ? o->fd_err : -1, 2, devnull);
        if (o->cwd && chdir(o->cwd) < 0)
            child_fail(pfd[1], errno);
        if (o->child_hook && o->child_hook(o->hook_arg) < 0)
            child_fail(pfd[1], errno);
        if (o->drop && (setgroups(0, NULL) < 0 || setgid(o->gid) < 0 || setuid(o->uid) < 0))
            child_fail(pfd[1], errno);
        if (deathsig && o->drop) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* after setuid, which clears it */
            if (getppid() != parent)
                _exit(127);
        }
        if (o->path)
            envp ? execve(prog, argv, envp) : execv(prog, argv);
        else
            envp ? execvpe(prog, argv, envp) : execvp(prog, argv);
        child_fail(pfd[1], errno);
    }
    free(merged);
    close(pfd[1]);
    track(pid);
    int child_errno = 0;
    ssize_t r;
    do
        r = read(pfd[0], &child_errno, sizeof(child_errno));
    while (r < 0 && errno == EINTR);
    close(pfd[0]);
    if (r == (ssize_t)sizeof(child_errno) && !(o->flags & PROC_EXEC_EXIT)) {
        waitpid(pid, NULL, 0);
        return ls_err_errno(err, LS_EENV, child_errno, "%s%scannot run %s%s%s",
                            o->what ? o->what : "", o->what ? ": " : "", prog,
                            o->as_user ? " as " : "", o->as_user ? o->as_user : "");
    }
    return pid;
}

int proc_wait(pid_t pid, int64_t timeout_ns, int *status)
{
    int64_t deadline = ls_now_ns() + timeout_ns;
    int64_t step = 200 * LS_NS_PER_US;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (status)
                *status = st;
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return errno == ECHILD ? 1 : -errno;
        if (ls_now_ns() >= deadline)
            return 0;
        ls_sleep_ns(step);
        if (step < 10 * LS_NS_PER_MS)
            step *= 2;
    }
}

int proc_stop(pid_t pid, int sig, int64_t grace_ns)
{
    if (pid <= 0)
        return 0;
    int r = proc_wait(pid, 0, NULL);
    if (r != 0)
        return 0; /* already gone and reaped */
    kill(pid, SIGCONT);
    if (sig != SIGKILL) {
        if (sig)
            kill(pid, sig);
        if (proc_wait(pid, grace_ns, NULL) != 0)
            return 0;
    }
    kill(pid, SIGKILL);
    return proc_wait(pid, 5 * LS_NS_PER_S, NULL) == 1 ? 0 : LS_ETIMEOUT;
}

/* Contract: read a /proc stat file ("pid (comm) S ppid ...") at path into
 * buf (n bytes); returns a pointer to its state letter (the fields after
 * the command, which may hold spaces and parens: found by the last ')'),
 * or NULL when the process is gone or the line is not one. */
static char *stat_fields(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got <= 0)
        return NULL;
    buf[got] = '\0';
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return NULL;
    return p + 2;
}

static char stat_state(const char *path)
{
    char buf[512];
    const char *st = stat_fields(path, buf, sizeof(buf));
    return st ? *st : 0;
}

char proc_state(pid_t pid, int all_threads)
{
    char path[64];
    if (!all_threads) {
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        return stat_state(path);
    }
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    char state = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char tpath[300];
        snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/stat", (int)pid, de->d_name);
        char s = stat_state(tpath);
        if (!s)
            continue;
        if (!state || (state == 'T' && s != 'T'))
            state = s;
    }
    closedir(d);
    return state;
}

int proc_wait_state(pid_t pid, char want, int all_threads, int64_t timeout_ns)
{
    int64_t deadline = ls_now_ns() + timeout_ns;
    for (;;) {
        char s = proc_state(pid, all_threads);
        /* 't' is tracing stop; treat both as stopped */
        if (s == want || (want == 'T' && s == 't'))
            return 0;
        if (ls_now_ns() >= deadline)
            return LS_ETIMEOUT;
        ls_sleep_ns(100 * LS_NS_PER_US);
    }
}

char *proc_status_text(int status, char *buf, size_t n)
{
    if (n == 0)
        return buf;
    buf[0] = '\0';
    if (WIFEXITED(status))
        snprintf(buf, n, "exited %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, n, "wait status %d", status);
    return buf;
}

/* Contract: 1 when /proc/PID/environ holds the exact entry (a NUL-separated
 * "KEY=value"), 0 otherwise (gone, unreadable, not there), -1 when it read
 * empty (no environment, or a process in the middle of an exec: the file
 * opened on the memory the exec is dropping reads nothing). */
static int environ_has(pid_t pid, const char *entry)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t el = strlen(entry);
    char buf[8192];
    size_t have = 0; /* bytes of the current entry kept at buf's start */
    int found = 0, skip = 0, any = 0;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof(buf) - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        any = 1;
        size_t end = have + (size_t)r, start = 0;
        for (size_t i = have; i < end && !found; i++) {
            if (buf[i] != '\0')
                continue;
            if (!skip && i - start == el && memcmp(buf + start, entry, el) == 0)
                found = 1;
            skip = 0;
            start = i + 1;
        }
        if (found)
            break;
        have = end - start;
        if (have >= sizeof(buf) / 2) { /* an entry longer than ours: not it */
            have = 0;
            skip = 1;
        } else {
            memmove(buf, buf + start, have);
        }
    }
    close(fd);
    return found ? 1 : any ? 0 : -1;
}

/* Contract: the parent pid from /proc/PID/stat (0 when gone), *zombie set
 * when the process is a zombie (dead, waiting for its parent) and, when
 * start is non-NULL, *start its start time (field 22, clock ticks since
 * boot; with the pid, one process exactly). */
static pid_t stat_read(pid_t pid, int *zombie, unsigned long long *start)
{
    char path[64], buf[1024];
    *zombie = 0;
    if (start)
        *start = 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    char *st = stat_fields(path, buf, sizeof(buf));
    if (!st)
        return 0;
    *zombie = *st == 'Z' || *st == 'X';
    char *end;
    long pp = strtol(st + 1, &end, 10);
    if (end == st + 1)
        return 0;
    if (start) { /* fields 5..21 after the ppid (field 4), then starttime */
        char *q = end;
        for (int f = 5; f <= 21 && q; f++)
            q = strchr(q + 1, ' ');
        if (q)
            *start = strtoull(q + 1, NULL, 10);
    }
    return (pid_t)pp;
}

/* One process exactly: its pid and its start time. */
struct proc_id {
    pid_t pid;
    unsigned long long start;
};

/* Contract: 1 when (pid, start) is one of set's n entries. */
static int ids_have(const struct proc_id *set, size_t n, pid_t pid, unsigned long long start)
{
    for (size_t i = 0; i < n; i++)
        if (set[i].pid == pid && set[i].start == start)
            return 1;
    return 0;
}

/* Contract: (pid, start) added to *set (n entries, cap allocated; grown
 * as needed). Returns 0, or -1 when out of memory (the set unchanged). */
static int ids_add(struct proc_id **set, size_t *n, size_t *cap, pid_t pid,
                   unsigned long long start)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct proc_id *g = realloc(*set, nc * sizeof(*g));
        if (!g)
            return -1;
        *set = g;
        *cap = nc;
    }
    (*set)[(*n)++] = (struct proc_id){pid, start};
    return 0;
}

/* The children this process started (proc_fork, proc_spawn_opts): their
 * owners reap them for their status, so proc_reap_adopted never does.
 * Pruned of the children gone at each proc_reap_adopted. Owned here. */
static struct proc_id *tracked;
static size_t ntracked, captracked;

/* Contract: pid (the caller's new child) is tracked; out of memory, it is
 * not, and proc_reap_adopted may then reap it (its owner's waitpid then
 * fails with ECHILD, which proc_wait reads as gone). */
static void track(pid_t pid)
{
    int z;
    unsigned long long start;
    if (stat_read(pid, &z, &start) == getpid())
        ids_add(&tracked, &ntracked, &captracked, pid, start);
}

int proc_group_live(pid_t pgid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 1; /* cannot tell: say live */
    int live = 0;
    struct dirent *de;
    while (!live && (de = readdir(d))) {
        char path[300], buf[1024];
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = '\0';
        char *p = strrchr(buf, ')'), *end; /* ") S PPID PGRP ..." */
        if (!p || p[1] != ' ' || !p[2] || p[2] == 'Z' || p[2] == 'X')
            continue;
        strtol(p + 3, &end, 10);
        live = strtol(end, NULL, 10) == (long)pgid;
    }
    closedir(d);
    return live;
}

int proc_group_gone(pid_t pgid)
{
    if (pgid <= 1)
        return 1;
    while (waitpid(-pgid, NULL, WNOHANG) > 0)
        ;
    return kill(-pgid, 0) < 0 && errno == ESRCH;
}

/* Contract: the pid of a /proc entry's name, or 0 when it is not a
 * process of pid > 1 other than self. */
static pid_t proc_entry(const char *name, pid_t self)
{
    char *end;
    long v = strtol(name, &end, 10);
    if (*end || end == name || v <= 1 || (pid_t)v == self)
        return 0;
    return (pid_t)v;
}

/* Contract: does process pid (parent pp) carry tag_entry in its initial
 * environment? An empty one is read again after 1 ms unless pid is a
 * kernel thread (a process in the middle of an exec reads empty). */
static int has_tag(pid_t pid, pid_t pp, const char *tag_entry)
{
    int has = environ_has(pid, tag_entry);
    if (has < 0 && pp != 2) {
        ls_sleep_ns(LS_NS_PER_MS);
        has = environ_has(pid, tag_entry);
    }
    return has == 1;
}

/* Contract: proc_kill_tagged, never touching a process of skip (nskip
 * entries): the caller's children from before the containment. */
static int kill_tagged(const char *tag_entry, int children, int64_t timeout_ns,
                       const struct proc_id *skip, size_t nskip)
{
    pid_t self = getpid();
    int64_t deadline = ls_now_ns() + timeout_ns;
    struct proc_id *killed = NULL; /* each process counted once, by pid and start */
    size_t nkilled = 0, capkilled = 0;
    int total = 0;
    for (;;) {
        int round = 0;
        DIR *d = opendir("/proc");
        if (!d)
            break;
        struct dirent *de;
        while ((de = readdir(d))) {
            pid_t pid = proc_entry(de->d_name, self);
            if (!pid)
                continue;
            int zombie;
            unsigned long long start;
            pid_t pp = stat_read(pid, &zombie, &start);
            if (!pp || ids_have(skip, nskip, pid, start))
                continue;
            int mine = children && pp == self;
            if (zombie) {
                if (mine)
                    waitpid(pid, NULL, WNOHANG);
                continue;
            }
            if (!mine && !(tag_entry && has_tag(pid, pp, tag_entry)))
                continue;
            if (kill(pid, SIGKILL) == 0) {
                round++;
                if (!ids_have(killed, nkilled, pid, start)) {
                    total++;
                    ids_add(&killed, &nkilled, &capkilled, pid, start);
                }
            }
            if (pp == self)
                proc_wait(pid, 100 * LS_NS_PER_MS, NULL);
        }
        closedir(d);
        if (!round || ls_now_ns() >= deadline)
            break;
        ls_sleep_ns(LS_NS_PER_MS);
    }
    free(killed);
    return total;
}

int proc_kill_tagged(const char *tag_entry, int children, int64_t timeout_ns)
{
    return kill_tagged(tag_entry, children, timeout_ns, NULL, 0);
}

int proc_tagged_alive(const char *tag_entry)
{
    pid_t self = getpid();
    int alive = 0;
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        pid_t pid = proc_entry(de->d_name, self);
        int zombie;
        unsigned long long start;
        pid_t pp = pid ? stat_read(pid, &zombie, &start) : 0;
        if (!pp || zombie)
            continue;
        alive += has_tag(pid, pp, tag_entry);
    }
    closedir(d);
    return alive;
}

int proc_reap_adopted(void)
{
    pid_t self = getpid();
    /* the tracked children gone (reaped by their owners) are forgotten:
     * a pid used again is another process, with another start time */
    size_t keep = 0;
    for (size_t i = 0; i < ntracked; i++) {
        int z;
        unsigned long long st;
        if (stat_read(tracked[i].pid, &z, &st) == self && st == tracked[i].start)
            tracked[keep++] = tracked[i];
    }
    ntracked = keep;
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int reaped = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        pid_t pid = proc_entry(de->d_name, self);
        int zombie;
        unsigned long long start;
        if (pid && stat_read(pid, &zombie, &start) == self && zombie &&
            !ids_have(tracked, ntracked, pid, start) && waitpid(pid, NULL, WNOHANG) == pid)
            reaped++;
    }
    closedir(d);
    return reaped;
}

const char *proc_contain_begin(struct proc_contain *c, const char *id)
{
    memset(c, 0, sizeof(*c));
    const char *prev = getenv(PROC_RUN_TAG);
    c->prev = prev ? strdup(prev) : NULL;
    prctl(PR_GET_CHILD_SUBREAPER, &c->prev_subreaper);
    /* the caller's children from before (a wrapper's `cmd & exec lockstorm`)
     * are not the run's: the sweep leaves them alone */
    pid_t self = getpid();
    DIR *d = opendir("/proc");
    struct dirent *de;
    size_t cap = 0;
    while (d && (de = readdir(d))) {
        pid_t pid = proc_entry(de->d_name, self);
        int zombie;
        unsigned long long start;
        if (pid && stat_read(pid, &zombie, &start) == self &&
            !ids_have(tracked, ntracked, pid, start))
            ids_add(&c->before, &c->nbefore, &cap, pid, start);
    }
    if (d)
        closedir(d);
    snprintf(c->tag, sizeof(c->tag), "%s=%s", PROC_RUN_TAG, id);
    c->tagged = setenv(PROC_RUN_TAG, id, 1) == 0;
    int sub = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    c->begun = 1;
    return sub && c->tagged ? "subreaper+environ" : c->tagged ? "environ" : "groups";
}

int proc_contain_sweep(struct proc_contain *c, int64_t timeout_ns)
{
    return c->tagged ? kill_tagged(c->tag, 1, timeout_ns, c->before, c->nbefore) : 0;
}

void proc_contain_end(struct proc_contain *c)
{
    if (c->begun) {
        if (c->tagged && c->prev)
            setenv(PROC_RUN_TAG, c->prev, 1);
        else if (c->tagged)
            unsetenv(PROC_RUN_TAG);
        prctl(PR_SET_CHILD_SUBREAPER, c->prev_subreaper);
    }
    c->begun = c->tagged = 0;
    free(c->prev);
    c->prev = NULL;
    free(c->before);
    c->before = NULL;
    c->nbefore = 0;
}
