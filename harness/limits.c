/*
 * limits.c: descriptor, process and file-size limits checked before a run
 * starts (see limits.h). The counts are deliberately generous upper bounds
 * (every worker's connections open at once, restarts overlapping), since
 * running out mid-run is far worse than raising a soft limit that was not
 * strictly needed.
 */
#include "harness/limits.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness/workload.h"
#include "locks/lock.h"

#define BASE_FDS 64                     /* stdio, logs, epoll, timers, eventfds, slack */
#define REDIS_RESERVED 32               /* redis-server keeps these for itself */
#define LOG_MIN_FSIZE ((int64_t)64 << 20) /* event logs grow in 4 MiB chunks */

void limits_need_of(const struct workload *w, struct limits_need *n)
{
    int64_t W = w->workers.count, N = w->cluster.nodes > 0 ? w->cluster.nodes : 1;
    int renew_thread = w->lock.renew_every > 0 && w->lock.renew_mode == RENEW_THREAD;
    int64_t conns = 1 + (renew_thread ? 1 : 0); /* per worker and node */
    int external = w->lock.ops && (strcmp(w->lock.ops->name, "external") == 0 ||
                                   strcmp(w->lock.ops->name, "record") == 0); /* a process each */
    memset(n, 0, sizeof(*n));
    /* a lock node (and the storage node): every worker's connections */
    n->nofile = W * conns + REDIS_RESERVED + BASE_FDS;
    n->nofile_who = "each redis-server node";
    if (w->cluster.proxy) {
        /* the proxy: one listener per (worker, node) link, two descriptors
         * per proxied connection (client side, node side) */
        int64_t links = W * N;
        int64_t p = links + 2 * links * conns + BASE_FDS;
        if (p > n->nofile) {
            n->nofile = p;
            n->nofile_who = "the proxy";
        }
    }
    /* workers (+ their renew threads, + adapters), nodes, storage, proxy,
     * replicas and sentinels, gnuplot at the end */
    n->nproc = W * (1 + (renew_thread ? 1 : 0) + (external ? 1 : 0)) + N + 1 + 1 +
               w->cluster.replicas + w->cluster.sentinels + 8;
    n->fsize = LOG_MIN_FSIZE;
}

/* Contract: raise the soft limit of res to need when the hard limit allows.
 * Returns 0 when the (possibly raised) soft limit is >= need, else -1 with
 * *soft and *hard set. */
static int ensure(int res, int64_t need, int64_t *soft, int64_t *hard)
{
    struct rlimit rl;
    if (getrlimit(res, &rl) != 0)
        return 0; /* cannot tell: let the run find out */
    *soft = rl.rlim_cur == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_cur;
    *hard = rl.rlim_max == RLIM_INFINITY ? INT64_MAX : (int64_t)rl.rlim_max;
    if (*soft >= need)
        return 0;
    if (*hard >= need) {
        rl.rlim_cur = (rlim_t)need;
        if (setrlimit(res, &rl) == 0) {
            *soft = need;
            return 0;
        }
    }
    return -1;
}

/* Processes and threads this user runs now (the kernel counts threads
 * against RLIMIT_NPROC). Reads /proc; 0 when it cannot. */
static int64_t user_threads(uid_t uid)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int64_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char path[300], buf[4096];
        snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t r = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (r <= 0)
            continue;
        buf[r] = '\0';
        const char *u = strstr(buf, "\nUid:");
        const char *t = strstr(buf, "\nThreads:");
        if (u && t && strtoul(u + 5, NULL, 10) == uid)
            n += strtol(t + 9, NULL, 10);
    }
    closedir(d);
    return n;
}

int limits_check(const struct workload *w, struct ls_err *err)
{
    struct limits_need n;
    limits_need_of(w, &n);
    int64_t soft = 0, hard = 0;
    if (ensure(RLIMIT_NOFILE, n.nofile, &soft, &hard) != 0)
        return ls_err_set(err, LS_EENV,
                          "open files: %lld workers need about %lld descriptors in %s, but the "
                          "limit is %lld (hard %lld); raise it (ulimit -n %lld, or LimitNOFILE= "
                          "for a service) or run fewer workers",
                          (long long)w->workers.count, (long long)n.nofile, n.nofile_who,
                          (long long)soft, (long long)hard, (long long)n.nofile);
    if (geteuid() != 0) { /* root is not held to RLIMIT_NPROC */
        int64_t have = user_threads(geteuid());
        int64_t need = have + n.nproc;
        if (ensure(RLIMIT_NPROC, need, &soft, &hard) != 0)
            return ls_err_set(err, LS_EENV,
                              "processes: the run adds about %lld processes and threads to the "
                              "%lld this user has, but the limit is %lld (hard %lld); raise it "
                              "(ulimit -u %lld) or run fewer workers",
                              (long long)n.nproc, (long long)have, (long long)soft,
                              (long long)hard, (long long)need);
    }
    if (ensure(RLIMIT_FSIZE, n.fsize, &soft, &hard) != 0)
        return ls_err_set(err, LS_EENV,
                          "file size: event logs grow in 4 MiB steps and need files of at least "
                          "%lld MiB, but the limit is %lld bytes (hard %lld); raise it (ulimit -f "
                          "unlimited)", (long long)(n.fsize >> 20), (long long)soft,
                          (long long)hard);
    return 0;
}
