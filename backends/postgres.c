/*
 * postgres.c: the PostgreSQL server of `cluster.topology: postgres` (see
 * postgres.h). Both initdb and postgres refuse to run as root, so when the
 * harness is root the child drops to the PostgreSQL OS user before exec
 * (and only then sets PR_SET_PDEATHSIG, which a change of credentials
 * clears). The data directory nodes/pg is that user's (0700) inside the
 * run directory, which stays root's and 0700 like every directory above
 * it: the child opens the data directory while still root and hands it
 * over as descriptor PG_DIRFD, and the programs are given
 * -D /proc/self/fd/PG_DIRFD, a link the kernel resolves without searching
 * the directories above (initdb's bootstrap children and the server's
 * backends inherit it). Nothing is loosened and nothing lives elsewhere.
 */
#include "backends/postgres.h"

#include "backends/cluster.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/pgstore.h"
#include "util/proc.h"
#include "model/workload.h"
#include "locks/lock.h"
#include "locks/pg_conn.h"
#include "model/yamltree.h"
#include "util/timeutil.h"

#define INITDB_TIMEOUT (60 * LS_NS_PER_S)
#define READY_TIMEOUT (20 * LS_NS_PER_S)
#define START_ATTEMPTS 3
#define PG_DIRFD 3 /* the data directory's descriptor in initdb and postgres (as root) */
#define PG_DIRFD_PATH "/proc/self/fd/3"

struct pg_env {
    char bindir[512];
    int drop;          /* run the server as uid/gid (the harness is root) */
    uid_t uid;
    gid_t gid;
    char user[64];
};

/* The directory of initdb and postgres: LS_PG_BINDIR, else the highest
 * /usr/lib/postgresql/N/bin that has both. */
static int find_bindir(struct pg_env *e, struct ls_err *err)
{
    const char *env = getenv("LS_PG_BINDIR");
    char cand[600];
    if (env && *env) {
        snprintf(cand, sizeof(cand), "%s/postgres", env);
        if (access(cand, X_OK) != 0)
            return ls_err_set(err, LS_EENV, "postgres: LS_PG_BINDIR=%s has no postgres binary", env);
        snprintf(e->bindir, sizeof(e->bindir), "%s", env);
        return 0;
    }
    DIR *d = opendir("/usr/lib/postgresql");
    long best = -1;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char *end;
        long v = strtol(de->d_name, &end, 10);
        if (*end || v <= best)
            continue;
        snprintf(cand, sizeof(cand), "/usr/lib/postgresql/%s/bin/initdb", de->d_name);
        if (access(cand, X_OK) != 0)
            continue;
        best = v;
        snprintf(e->bindir, sizeof(e->bindir), "/usr/lib/postgresql/%s/bin", de->d_name);
    }
    if (d)
        closedir(d);
    if (best < 0)
        return ls_err_set(err, LS_EENV,
                          "postgres: no PostgreSQL server found (/usr/lib/postgresql/N/bin); "
                          "install it (scripts/install-deps.sh: postgresql-15) or set LS_PG_BINDIR");
    return 0;
}

/* Whom the server runs as: the harness itself, or (as root) LS_PG_USER,
 * else `postgres`, else `nobody`. */
static int find_user(struct pg_env *e, struct ls_err *err)
{
    if (geteuid() != 0)
        return 0;
    const char *names[] = {getenv("LS_PG_USER"), "postgres", "nobody"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (!names[i] || !*names[i])
            continue;
        struct passwd *pw = getpwnam(names[i]);
        if (pw && pw->pw_uid != 0) {
            e->drop = 1;
            e->uid = pw->pw_uid;
            e->gid = pw->pw_gid;
            snprintf(e->user, sizeof(e->user), "%s", names[i]);
            return 0;
        }
    }
    return ls_err_set(err, LS_EENV, "postgres: running as root and no non-root user to run "
                      "the server as (set LS_PG_USER, or create the user postgres)");
}

/* The data directory as initdb and postgres are told it: as root, the
 * descriptor spawn_as hands over (the run directory stays closed to e's
 * user); otherwise its path. */
static char *data_arg(const struct pg_env *e, const struct node_proc *n)
{
    return e->drop ? PG_DIRFD_PATH : (char *)n->dir;
}

/* In the child, before the change of user (util/proc.h child_hook): the
 * data directory arg opened as PG_DIRFD. 0, or -1 with errno set. */
static int open_dirfd(void *arg)
{
    int dfd = open((const char *)arg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (dfd < 0)
        return -1;
    if (dfd != PG_DIRFD) {
        int bad = dup2(dfd, PG_DIRFD) < 0;
        close(dfd);
        if (bad)
            return -1;
    }
    return 0;
}

/* fork + exec argv (bindir/argv[0], at most 30 arguments) as e's user, output appended to log,
 * in a process group of its own, dying with the harness. As root, datadir
 * is opened before the change of user and left open as PG_DIRFD
 * (data_arg). Returns the pid or a negative code (exec failures are
 * reported through a CLOEXEC pipe). */
static pid_t spawn_as(const struct pg_env *e, char *const argv[], const char *datadir,
                      const char *log, struct ls_err *err)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", e->bindir, argv[0]);
    int logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (logfd < 0)
        return ls_err_errno(err, LS_EIO, errno, "open %s", log);
    char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", "LANG=C", NULL};
    char *args[32];
    int k = 0;
    args[k++] = path; /* initdb finds postgres next to its own argv[0] */
    for (int i = 1; argv[i] && k < 31; i++)
        args[k++] = argv[i];
    args[k] = NULL;
    /* util/proc.h: own group, death signal after the change of user */
    struct spawn_opts po = {.path = path, .envp = envp, .use_fds = 1, .fd_in = -1,
                           .fd_out = logfd, .fd_err = logfd, .what = "postgres",
                           .child_hook = e->drop ? open_dirfd : NULL, .hook_arg = (void *)datadir,
                           .drop = e->drop, .uid = e->uid, .gid = e->gid,
                           .as_user = e->drop ? e->user : NULL};
    pid_t pid = proc_spawn_opts(args, &po, err);
    close(logfd);
    return pid;
}

/* Run initdb into n->dir and wait for it (bounded). */
static int run_initdb(const struct pg_env *e, const struct node_proc *n, const char *log,
                      int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    char *const argv[] = {"initdb", "-D", data_arg(e, n), "-U", PG_USER, "--auth=trust",
                          "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions", NULL};
    pid_t pid = spawn_as(e, argv, n->dir, log, err);
    if (pid < 0)
        return pid;
    int64_t deadline = ls_now_ns() + INITDB_TIMEOUT;
    int status = 0;
    for (;;) {
        int w = proc_wait(pid, 50 * LS_NS_PER_MS, &status);
        if (w == 1)
            break;
        if ((interrupted && interrupted(arg)) || ls_now_ns() >= deadline) {
            proc_stop(pid, SIGKILL, LS_NS_PER_S);
            return interrupted && interrupted(arg)
                       ? ls_err_set(err, LS_EINTR, "interrupted while running initdb")
                       : ls_err_set(err, LS_ETIMEOUT, "postgres: initdb did not finish in 60s "
                                    "(see %s)", log);
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return ls_err_set(err, LS_EENV, "postgres: initdb failed (see %s)", log);
    return 0;
}

/* Start postgres on a fresh port and wait until it takes connections.
 * maxconn: its max_connections (each worker holds two: lock and storage). */
static int start_server(const struct pg_env *e, struct node_proc *n, int maxconn,
                        int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    char maxc[48];
    snprintf(maxc, sizeof(maxc), "max_connections=%d", maxconn);
    struct ls_err last = {0};
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
        int port = cluster_free_port(err);
        if (port < 0)
            return port;
        n->port = port;
        char ports[16];
        snprintf(ports, sizeof(ports), "%d", port);
        char *const argv[] = {"postgres", "-D", data_arg(e, n), "-p", ports,
                              "-c", "listen_addresses=127.0.0.1",
                              "-c", "unix_socket_directories=",
                              "-c", "fsync=off", "-c", "synchronous_commit=off",
                              "-c", "full_page_writes=off", "-c", maxc,
                              "-c", "shared_buffers=16MB", "-c", "log_min_messages=warning",
                              NULL};
        pid_t pid = spawn_as(e, argv, n->dir, n->log, err);
        if (pid < 0)
            return pid;
        n->pid = pid;
        int64_t deadline = ls_now_ns() + READY_TIMEOUT;
        for (;;) {
            char why[256];
            if (proc_wait(pid, 0, NULL) == 1) {
                n->pid = 0;
                ls_err_set(&last, LS_EENV, "postgres exited at start-up (see %s)", n->log);
                break;
            }
            PGconn *c = pgc_connect(n->host, port, ls_now_ns() + 500 * LS_NS_PER_MS, why,
                                    sizeof(why));
            if (c) {
                PQfinish(c);
                return 0;
            }
            if (interrupted && interrupted(arg)) {
                pgcluster_stop(&(struct cluster){.nnodes = 1, .nodes = n});
                return ls_err_set(err, LS_EINTR, "interrupted while starting postgres");
            }
            if (ls_now_ns() >= deadline) {
                ls_err_set(&last, LS_ETIMEOUT, "postgres did not take connections within 20s "
                           "(%s; see %s)", why, n->log);
                proc_stop(pid, SIGKILL, LS_NS_PER_S);
                n->pid = 0;
                break;
            }
            ls_sleep_ns(20 * LS_NS_PER_MS);
        }
    }
    return ls_err_set(err, last.code ? last.code : LS_EENV, "%s", last.msg);
}

int pgcluster_start(struct cluster *c, const struct workload *w, const char *basedir,
                    int (*interrupted)(void *), void *arg, struct ls_err *err)
{
    memset(c, 0, sizeof(*c));
    struct pg_env e;
    memset(&e, 0, sizeof(e));
    char why[256];
    if (pq_load(why, sizeof(why)) != 0) /* before anything starts: every client needs it */
        return ls_err_set(err, LS_EENV, "postgres: %s", why);
    int rc = find_bindir(&e, err);
    if (rc == 0)
        rc = find_user(&e, err);
    if (rc < 0)
        return rc;
    c->nodes = calloc(1, sizeof(*c->nodes));
    if (!c->nodes)
        return ls_err_set(err, LS_ENOMEM, "postgres: out of memory");
    c->nnodes = 1;
    struct node_proc *n = &c->nodes[0];
    n->index = 0;
    snprintf(n->host, sizeof(n->host), "127.0.0.1");
    char nodes[512], initlog[600];
    snprintf(nodes, sizeof(nodes), "%s/nodes", basedir);
    if (mkdir(nodes, 0700) < 0 && errno != EEXIST) {
        rc = ls_err_errno(err, LS_EIO, errno, "create %s", nodes);
        goto fail;
    }
    snprintf(n->dir, sizeof(n->dir), "%s/pg", nodes);
    snprintf(n->log, sizeof(n->log), "%s/pg.log", nodes);
    snprintf(initlog, sizeof(initlog), "%s/pg-initdb.log", nodes);
    if (mkdir(n->dir, 0700) < 0) {
        rc = ls_err_errno(err, LS_EIO, errno, "create %s", n->dir);
        goto fail;
    }
    if (e.drop) { /* the run directory and nodes/ stay root's and 0700 */
        if (chown(n->dir, e.uid, e.gid) < 0) {
            rc = ls_err_errno(err, LS_EIO, errno, "chown %s to %s", n->dir, e.user);
            goto fail;
        }
    }
    rc = run_initdb(&e, n, initlog, interrupted, arg, err);
    if (rc == 0)
        rc = start_server(&e, n, 2 * (int)w->workers.count + 20, interrupted, arg, err);
    if (rc == 0)
        rc = pgstore_setup(n->host, n->port, (int)w->workers.resources, err);
    if (rc < 0)
        goto fail;
    c->has_storage = 1;
    c->storage = *n;
    c->storage.index = -1;
    c->storage.pid = 0; /* the same server: stopped as node 0 */
    return 0;
fail:
    pgcluster_stop(c);
    free(c->nodes);
    c->nodes = NULL;
    c->nnodes = 0;
    return rc;
}

void pgcluster_stop(struct cluster *c)
{
    if (!c || c->nnodes < 1 || !c->nodes)
        return;
    struct node_proc *n = &c->nodes[0];
    if (n->pid > 0) {
        kill(n->pid, SIGCONT); /* a paused server could not act on SIGINT */
        kill(n->pid, SIGINT);  /* fast shutdown: sessions are ended, not waited for */
        if (proc_wait(n->pid, 5 * LS_NS_PER_S, NULL) != 1) {
            kill(-n->pid, SIGKILL);
            proc_wait(n->pid, 2 * LS_NS_PER_S, NULL);
        }
        n->pid = 0;
    }
}

/* Contract: pgcluster_stop, then free c (cluster_stop). */
static void pg_stop(struct cluster *c)
{
    pgcluster_stop(c);
    cluster_stop(c);
}

/* Contract: storage.jsonl from the table on the server (node 0); 0 when
 * no server was started. */
static int pg_dump(const struct cluster *c, const struct workload *w, const char *path,
                   struct ls_err *err)
{
    if (!c->nnodes)
        return 0;
    return pgstore_dump(c->nodes[0].host, c->nodes[0].port, (int)w->workers.resources,
                        w->lock.fencing, path, err);
}

/* The node to blame: root.section.key, else root.section, else root. */
static const struct ynode *at_key(const struct ynode *root, const char *section, const char *key)
{
    const struct ynode *s = ymap_get(root, section);
    const struct ynode *k = s ? ymap_get(s, key) : NULL;
    return k ? k : s ? s : root;
}

/* Contract: once loaded: the lock is pg-advisory, one server, no
 * wait_replicas, no jobs mode (its records live on a Redis storage node).
 * What a fault may do to the server is the loader's rule (no
 * BACKEND_CAP_REDIS: link faults only on node targets). */
static void pg_check(const struct workload *w, const struct ynode *root, struct ydiag *dg)
{
    if (w->lock.ops && strcmp(w->lock.ops->name, "pg-advisory") != 0)
        ydiag_at(dg, at_key(root, "lock", "impl"),
                 "lock.impl: '%s' is a Redis lock; cluster.topology postgres runs pg-advisory",
                 w->lock.ops->name);
    if (w->cluster.nodes != 1)
        ydiag_at(dg, at_key(root, "cluster", "nodes"),
                 "cluster.nodes: topology postgres has one server (got %lld)",
                 (long long)w->cluster.nodes);
    if (w->lock.wait_replicas > 0)
        ydiag_at(dg, at_key(root, "lock", "wait_replicas"),
                 "lock.wait_replicas: must be 0 with cluster.topology postgres");
    if (w->workers.mode == WMODE_JOBS)
        ydiag_at(dg, at_key(root, "workers", "mode"),
                 "workers.mode: jobs keeps its records on the Redis storage node; topology "
                 "postgres has none");
}

const struct backend_ops backend_postgres = {
    .version = BACKEND_OPS_VERSION,
    .name = "postgres",
    .help = "one PostgreSQL server lockstorm starts (lock node 0 and the storage table), for "
            "lock.impl pg-advisory",
    .caps = BACKEND_CAP_NODE_CONTROL,
    .start = pgcluster_start,
    .stop = pg_stop,
    .dump_storage = pg_dump,
    .store = &store_pg,
    .check = pg_check,
};
