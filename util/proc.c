/*
 * proc.c: child process start/stop by pid. See proc.h. This file never
 * signals anything but the pids it is handed by the code that started them.
 */
#include "util/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/timeutil.h"

static pid_t spawn(char *const argv[], char *const envp[], const char *log_path,
                   struct ls_err *err);

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
    int oom;
    char **envp = merged_env(env_add, &oom);
    if (oom)
        return ls_err_set(err, LS_ENOMEM, "spawn %s: out of memory", argv[0]);
    pid_t pid = spawn(argv, envp, log_path, err);
    free(envp);
    return pid;
}

pid_t proc_spawn_envp(char *const argv[], char *const envp[], const char *log_path,
                      struct ls_err *err)
{
    static char *const empty[] = {NULL};
    return spawn(argv, envp ? envp : empty, log_path, err);
}

/* Contract: proc_spawn with envp (NULL: the harness's environment). */
static pid_t spawn(char *const argv[], char *const envp[], const char *log_path,
                   struct ls_err *err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0)
        return ls_err_errno(err, LS_EENV, errno, "spawn %s: pipe", argv[0]);
    int logfd = -1;
    if (log_path) {
        logfd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (logfd < 0) {
            int e = errno;
            close(pfd[0]);
            close(pfd[1]);
            return ls_err_errno(err, LS_EIO, e, "spawn %s: open log %s", argv[0], log_path);
        }
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        if (logfd >= 0)
            close(logfd);
        return ls_err_errno(err, LS_EENV, e, "spawn %s: fork", argv[0]);
    }
    if (pid == 0) {
        proc_child_setup(parent);
        int devnull = open("/dev/null", O_RDWR);
        if (devnull >= 0)
            dup2(devnull, 0);
        int out = logfd >= 0 ? logfd : devnull;
        if (out >= 0) {
            dup2(out, 1);
            dup2(out, 2);
        }
        if (envp)
            execvpe(argv[0], argv, envp);
        else
            execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(pfd[1], &e, sizeof(e));
        (void)w;
        _exit(127);
    }
    close(pfd[1]);
    if (logfd >= 0)
        close(logfd);
    int child_errno = 0;
    ssize_t r;
    do
        r = read(pfd[0], &child_errno, sizeof(child_errno));
    while (r < 0 && errno == EINTR);
    close(pfd[0]);
    if (r == (ssize_t)sizeof(child_errno)) {
        waitpid(pid, NULL, 0);
        return ls_err_errno(err, LS_EENV, child_errno, "cannot run %s", argv[0]);
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

static char stat_state(const char *path)
{
    char buf[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may contain spaces and parens; use the last ')' */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 0;
    return p[2];
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
