/*
 * cluster.c: start and stop the run's redis-server processes (see
 * cluster.h). Ports come from the kernel (bind to 127.0.0.1:0, read the
 * port, close); the small window before redis-server binds it is covered
 * by retrying with a fresh port when the server exits at start-up.
 */
#include "harness/cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/proc.h"
#include "harness/workload.h"
#include "util/clockctl.h"
#include "util/timeutil.h"

#define START_ATTEMPTS 5
#define READY_TIMEOUT (5 * LS_NS_PER_S)

static int free_port(struct ls_err *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return ls_err_errno(err, LS_EENV, errno, "free port: socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
        int e = errno;
        close(fd);
        return ls_err_errno(err, LS_EENV, e, "free port on 127.0.0.1");
    }
    close(fd);
    return ntohs(a.sin_port);
}

int node_wait_ready(const struct node_proc *n, int64_t timeout_ns, struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + timeout_ns;
    for (;;) {
        if (proc_wait(n->pid, 0, NULL) == 1)
            return ls_err_set(err, LS_EENV, "%s:%d: redis-server exited at start-up (see %s)",
                              n->host, n->port, n->log);
        struct timeval tv = {0, 200000};
        redisContext *c = redisConnectWithTimeout(n->host, n->port, tv);
        if (c && !c->err) {
            redisSetTimeout(c, tv);
            redisReply *r = redisCommand(c, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
            if (r)
                freeReplyObject(r);
            redisFree(c);
            if (ok)
                return 0;
        } else if (c) {
            redisFree(c);
        }
        if (ls_now_ns() >= deadline)
            return ls_err_set(err, LS_ETIMEOUT,
                              "%s:%d: redis-server did not answer PING within %llds (see %s)",
                              n->host, n->port, (long long)(timeout_ns / LS_NS_PER_S), n->log);
        ls_sleep_ns(5 * LS_NS_PER_MS);
    }
}

/* Contract: fork+exec redis-server for n on n->port with n's directory,
 * log and persistence; n->pid set on success. Does not wait for it. */
static int spawn_node(struct node_proc *n, struct ls_err *err)
{
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", n->port);
    const char *aof = n->persistence == PERSIST_NONE ? "no" : "yes";
    const char *fsync = n->persistence == PERSIST_AOF_ALWAYS ? "always" : "everysec";
    char *argv[] = {
        "redis-server", "--port", portstr, "--bind", "127.0.0.1", "--protected-mode", "yes",
        "--dir", n->dir, "--save", "", "--appendonly", (char *)aof,
        "--appendfsync", (char *)fsync, "--daemonize", "no", "--logfile", "",
        "--loglevel", "notice", "--enable-debug-command", "local",
        "--databases", "1", NULL};
    struct ls_err last = {0};
    /* The environment is given explicitly (docs/reliability.md): PATH, and
     * the clock shim's two variables for a node under clock faults; nothing
     * else of the harness's (no stray LD_PRELOAD, no REDIS_* settings). */
    const char *path = getenv("PATH");
    char pathvar[4096], preload[PATH_MAX + 16], file[sizeof(n->clock_file) + 32];
    snprintf(pathvar, sizeof(pathvar), "PATH=%s",
             path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    char *env[] = {pathvar, NULL, NULL, NULL};
    if (n->clock_file[0]) { /* clock faults: the shim shifts this node's CLOCK_REALTIME */
        char shim[PATH_MAX];
        int rc = clockctl_shim_path(shim, sizeof(shim), err);
        if (rc < 0)
            return rc;
        snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", shim);
        snprintf(file, sizeof(file), "%s=%s", LS_CLOCKCTL_ENV, n->clock_file);
        env[1] = preload;
        env[2] = file;
    }
    pid_t pid = proc_spawn_envp(argv, env, n->log, &last);
    if (pid < 0) {
        if (strstr(last.msg, "cannot run"))
            return ls_err_set(err, LS_EENV,
                              "%s; install it (apt-get install redis-server) or put it on PATH",
                              last.msg);
        return ls_err_set(err, last.code, "%s", last.msg);
    }
    n->pid = pid;
    return 0;
}

int node_start(struct node_proc *n, const char *basedir, const char *name, int persistence,
               struct ls_err *err)
{
    char nodes_dir[512];
    snprintf(nodes_dir, sizeof(nodes_dir), "%s/nodes", basedir);
    if (mkdir(nodes_dir, 0700) < 0 && errno != EEXIST)
        return ls_err_errno(err, LS_EIO, errno, "create %s", nodes_dir);
    if ((size_t)snprintf(n->dir, sizeof(n->dir), "%s/%s", nodes_dir, name) >= sizeof(n->dir))
        return ls_err_set(err, LS_EIO, "path too long: %s/%s", nodes_dir, name);
    if ((size_t)snprintf(n->log, sizeof(n->log), "%s/%s.log", nodes_dir, name) >= sizeof(n->log))
        return ls_err_set(err, LS_EIO, "path too long: %s/%s.log", nodes_dir, name);
    if (mkdir(n->dir, 0700) < 0 && errno != EEXIST)
        return ls_err_errno(err, LS_EIO, errno, "create %s", n->dir);
    snprintf(n->host, sizeof(n->host), "127.0.0.1");
    n->persistence = persistence;
    snprintf(n->clock_file, sizeof(n->clock_file), "%s.clock", n->dir);
    if (access(n->clock_file, F_OK) != 0)
        n->clock_file[0] = '\0';

    struct ls_err last = {0};
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        int port = free_port(err);
        if (port < 0)
            return port;
        n->port = port;
        ls_err_clear(&last);
        int rc = spawn_node(n, err);
        if (rc < 0)
            return rc;
        if (node_wait_ready(n, READY_TIMEOUT, &last) == 0)
            return 0;
        proc_stop(n->pid, SIGKILL, 0);
        n->pid = 0;
    }
    return ls_err_set(err, LS_EENV, "%s: %s (after %d attempts)", name, last.msg, START_ATTEMPTS);
}

int node_restart(struct node_proc *n, int64_t timeout_ns, struct ls_err *err)
{
    if (n->pid > 0)
        return ls_err_set(err, LS_EENV, "%s:%d: restart while redis-server %d still runs",
                          n->host, n->port, (int)n->pid);
    if (n->port <= 0 || !n->dir[0])
        return ls_err_set(err, LS_EENV, "node %d: restart of a node that never started",
                          n->index);
    int rc = spawn_node(n, err);
    if (rc < 0)
        return rc;
    rc = node_wait_ready(n, timeout_ns, err);
    if (rc < 0) {
        proc_stop(n->pid, SIGKILL, 0);
        n->pid = 0;
    }
    return rc;
}

int node_kill(struct node_proc *n, int sig, int64_t timeout_ns, int *status, struct ls_err *err)
{
    if (n->pid <= 0)
        return ls_err_set(err, LS_EENV, "%s:%d: not running", n->host, n->port);
    pid_t pid = n->pid;
    if (kill(pid, sig) < 0)
        return ls_err_errno(err, LS_EENV, errno, "%s:%d: signal redis-server %d", n->host,
                            n->port, (int)pid);
    if (sig == SIGTERM)
        kill(pid, SIGCONT); /* a paused node could not act on SIGTERM */
    int rc = proc_wait(pid, timeout_ns, status);
    if (rc != 1)
        return ls_err_set(err, LS_ETIMEOUT, "%s:%d: redis-server %d still runs %llds after %s",
                          n->host, n->port, (int)pid, (long long)(timeout_ns / LS_NS_PER_S),
                          strsignal(sig));
    n->pid = 0;
    return 0;
}

void node_stop(struct node_proc *n)
{
    if (!n || n->pid <= 0)
        return;
    proc_stop(n->pid, SIGTERM, 2 * LS_NS_PER_S);
    n->pid = 0;
}

int cluster_start(struct cluster *c, const char *basedir, int nnodes, int persistence,
                  int with_storage, int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    memset(c, 0, sizeof(*c));
    c->nodes = calloc((size_t)nnodes, sizeof(*c->nodes));
    if (!c->nodes)
        return ls_err_set(err, LS_ENOMEM, "cluster: out of memory");
    for (int i = 0; i < nnodes; i++) {
        if (interrupted && interrupted(arg)) {
            cluster_stop(c);
            return ls_err_set(err, LS_EINTR, "interrupted while starting the cluster");
        }
        char name[32];
        snprintf(name, sizeof(name), "node-%d", i);
        c->nodes[i].index = i;
        int rc = node_start(&c->nodes[i], basedir, name, persistence, err);
        c->nnodes = i + 1;
        if (rc < 0) {
            cluster_stop(c);
            return rc;
        }
    }
    if (with_storage) {
        c->storage.index = -1;
        int rc = node_start(&c->storage, basedir, "storage", PERSIST_NONE, err);
        c->has_storage = 1;
        if (rc < 0) {
            cluster_stop(c);
            return rc;
        }
    }
    return 0;
}

void cluster_stop(struct cluster *c)
{
    if (!c)
        return;
    /* SIGTERM all first so they shut down in parallel, then reap each */
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].pid > 0)
            kill(c->nodes[i].pid, SIGTERM);
    if (c->has_storage && c->storage.pid > 0)
        kill(c->storage.pid, SIGTERM);
    for (int i = 0; i < c->nnodes; i++) {
        proc_stop(c->nodes[i].pid, 0, 2 * LS_NS_PER_S);
        c->nodes[i].pid = 0;
    }
    if (c->has_storage) {
        proc_stop(c->storage.pid, 0, 2 * LS_NS_PER_S);
        c->storage.pid = 0;
    }
    free(c->nodes);
    c->nodes = NULL;
    c->nnodes = 0;
    c->has_storage = 0;
}
