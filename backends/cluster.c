/*
 * cluster.c: start and stop the run's redis-server processes (see
 * cluster.h). Ports come from the kernel (bind to 127.0.0.1:0, read the
 * port, close); the small window before redis-server binds it is covered
 * by retrying with a fresh port when the server exits at start-up.
 */
#include "backends/cluster.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

#include "util/proc.h"
#include "model/workload.h"
#include "util/clockctl.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define START_ATTEMPTS 5
#define READY_TIMEOUT (5 * LS_NS_PER_S)

int cluster_free_port(struct ls_err *err)
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

struct redisContext *node_connect(const struct node_proc *n, struct timeval tv)
{
    return ls_redis_connect(n->host, n->port, tv, n->password);
}

/* Write all n bytes of buf to fd; 0 or -1 with errno. */
static int write_full(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int cluster_write_secret(const char *path, const char *password, int raw, struct ls_err *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return ls_err_errno(err, LS_EIO, errno, "create %s", path);
    struct strbuf sb = STRBUF_INIT;
    if (raw)
        sb_printf(&sb, "%s\n", password);
    else
        sb_printf(&sb, "# lockstorm: this node's password (docs/reliability.md \"Security\")\n"
                       "requirepass \"%s\"\nmasterauth \"%s\"\n", password, password);
    int rc = 0;
    /* an existing file keeps its mode through O_TRUNC: make sure it is ours alone */
    if (fchmod(fd, 0600) < 0 || write_full(fd, sb.buf ? sb.buf : "", sb.len) < 0)
        rc = ls_err_errno(err, LS_EIO, errno, "write %s", path);
    if (close(fd) < 0 && rc == 0)
        rc = ls_err_errno(err, LS_EIO, errno, "write %s", path);
    ls_wipe(sb.buf, sb.cap);
    sb_free(&sb);
    return rc;
}

/* Contract: node_wait_ready, also polling stop(arg) (when not NULL) each
 * round: LS_EINTR once it returns non-zero. */
static int wait_ready(const struct node_proc *n, int64_t timeout_ns, int (*stop)(void *),
                      void *arg, struct ls_err *err)
{
    int64_t deadline = ls_now_ns() + timeout_ns;
    for (;;) {
        if (stop && stop(arg))
            return ls_err_set(err, LS_EINTR, "interrupted while starting redis-server %s:%d",
                              n->host, n->port);
        if (proc_wait(n->pid, 0, NULL) == 1)
            return ls_err_set(err, LS_EENV, "%s:%d: redis-server exited at start-up (see %s)",
                              n->host, n->port, n->log);
        struct timeval tv = {0, 200000};
        redisContext *c = node_connect(n, tv);
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

int node_wait_ready(const struct node_proc *n, int64_t timeout_ns, struct ls_err *err)
{
    return wait_ready(n, timeout_ns, NULL, NULL, err);
}

/* Contract: fork+exec redis-server for n on n->port with n's directory,
 * log and persistence; n->pid set on success. Does not wait for it. */
static int spawn_node(struct node_proc *n, struct ls_err *err)
{
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", n->port);
    const char *aof = n->persistence == PERSIST_NONE ? "no" : "yes";
    const char *fsync = n->persistence == PERSIST_AOF_ALWAYS ? "always" : "everysec";
    /* A password comes from the node's config file (argv[1], the place
     * redis-server takes one from); without one, argv[1] starts the options. */
    char *argv[] = {
        "redis-server", n->conf, "--port", portstr, "--bind", "127.0.0.1",
        "--protected-mode", "yes",
        "--dir", n->dir, "--save", "", "--appendonly", (char *)aof,
        "--appendfsync", (char *)fsync, "--daemonize", "no", "--logfile", "",
        "--loglevel", "notice", "--enable-debug-command", "local",
        "--databases", "1", NULL};
    char **args = argv;
    if (!n->password[0]) {
        args = argv + 1;
        args[0] = "redis-server";
    }
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
    pid_t pid = proc_spawn_envp(args, env, n->log, &last);
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

/* Contract: node_start, its wait polling stop(arg) as wait_ready does (an
 * interrupted start stops the node and is not tried again). */
static int start_node(struct node_proc *n, const char *basedir, const char *name, int persistence,
                      int (*stop)(void *), void *arg, struct ls_err *err)
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
    n->conf[0] = '\0';
    if (n->password[0]) {
        if (!ls_password_ok(n->password))
            return ls_err_set(err, LS_EUSAGE, "%s: unusable password (1-%d bytes, no spaces, "
                              "quotes or control characters)", name, LS_PASSWORD_MAX - 1);
        snprintf(n->conf, sizeof(n->conf), "%s.conf", n->dir);
        int rc = cluster_write_secret(n->conf, n->password, 0, err);
        if (rc < 0)
            return rc;
    }

    struct ls_err last = {0};
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        int port = cluster_free_port(err);
        if (port < 0)
            return port;
        n->port = port;
        ls_err_clear(&last);
        int rc = spawn_node(n, err);
        if (rc < 0)
            return rc;
        rc = wait_ready(n, READY_TIMEOUT, stop, arg, &last);
        if (rc == 0)
            return 0;
        proc_stop(n->pid, SIGKILL, 0);
        n->pid = 0;
        if (rc == LS_EINTR)
            return ls_err_set(err, LS_EINTR, "%s: %s", name, last.msg);
    }
    return ls_err_set(err, LS_EENV, "%s: %s (after %d attempts)", name, last.msg, START_ATTEMPTS);
}

int node_start(struct node_proc *n, const char *basedir, const char *name, int persistence,
               struct ls_err *err)
{
    return start_node(n, basedir, name, persistence, NULL, NULL, err);
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

int cluster_password(const struct workload *w, char *buf, size_t n, struct ls_err *err)
{
    if (n > 0)
        buf[0] = '\0';
    if (w->cluster.password == PASSWORD_NONE)
        return 0;
    return ls_password_new(buf, n, err);
}

int cluster_start(struct cluster *c, const char *basedir, int nnodes, int persistence,
                  int with_storage, const char *password, int (*interrupted)(void *), void *arg,
                  struct ls_err *err)
{
    memset(c, 0, sizeof(*c));
    c->nodes = calloc((size_t)nnodes, sizeof(*c->nodes));
    if (!c->nodes)
        return ls_err_set(err, LS_ENOMEM, "cluster: out of memory");
    c->nalloc = nnodes;
    if (password && password[0]) {
        if (!ls_password_ok(password)) {
            cluster_stop(c);
            return ls_err_set(err, LS_EUSAGE, "cluster: unusable password");
        }
        char path[600], nodes_dir[560];
        snprintf(nodes_dir, sizeof(nodes_dir), "%s/nodes", basedir);
        snprintf(path, sizeof(path), "%s/password", nodes_dir);
        int rc = 0;
        if (mkdir(nodes_dir, 0700) < 0 && errno != EEXIST)
            rc = ls_err_errno(err, LS_EIO, errno, "create %s", nodes_dir);
        if (rc == 0)
            rc = cluster_write_secret(path, password, 1, err);
        if (rc < 0) {
            cluster_stop(c);
            return rc;
        }
        for (int i = 0; i < nnodes; i++)
            snprintf(c->nodes[i].password, sizeof(c->nodes[i].password), "%s", password);
        snprintf(c->storage.password, sizeof(c->storage.password), "%s", password);
    }
    for (int i = 0; i < nnodes; i++) {
        if (interrupted && interrupted(arg)) {
            cluster_stop(c);
            return ls_err_set(err, LS_EINTR, "interrupted while starting the cluster");
        }
        char name[32];
        snprintf(name, sizeof(name), "node-%d", i);
        c->nodes[i].index = i;
        int rc = start_node(&c->nodes[i], basedir, name, persistence, interrupted, arg, err);
        c->nnodes = i + 1;
        if (rc < 0) {
            cluster_stop(c);
            return rc;
        }
    }
    if (with_storage) {
        c->storage.index = -1;
        int rc = start_node(&c->storage, basedir, "storage", PERSIST_NONE, interrupted, arg, err);
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
    if (c->nodes) /* every slot: a half-started cluster has passwords past nnodes */
        for (int i = 0; i < c->nalloc; i++)
            ls_wipe(c->nodes[i].password, sizeof(c->nodes[i].password));
    ls_wipe(c->storage.password, sizeof(c->storage.password));
    free(c->nodes);
    c->nodes = NULL;
    c->nnodes = 0;
    c->nalloc = 0;
    c->has_storage = 0;
}
