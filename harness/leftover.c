/*
 * leftover.c: processes of earlier runs still alive (see leftover.h). Reads
 * run.json and /proc only. A recorded pid counts as that run's process only
 * when three things agree: it is alive (not a zombie), its command line is
 * what the run started, and it started within the run's lifetime, so a pid
 * the kernel has since handed to an unrelated process is not blamed.
 */
#include "harness/leftover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/json.h"
#include "util/xalloc.h"

#define RUNJSON_MAX (16u << 20)      /* bytes of run.json read at most */
#define SLACK_NS (120LL * 1000000000LL) /* nodes start before the recorded run start */

enum kind { K_LOCKSTORM, K_REDIS };

struct proc_info {
    char cmd[200];          /* command line, NULs as spaces, truncated */
    int64_t start_real_ns;  /* when it started (CLOCK_REALTIME), 0 unknown */
};

/* Contract: read at most max-1 bytes of path into buf (NUL-terminated).
 * Returns the length, or -1. Never blocks on a FIFO. */
static ssize_t read_small(const char *path, char *buf, size_t max)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n + 1 < max) {
        ssize_t r = read(fd, buf + n, max - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* Boot time (CLOCK_REALTIME ns), from /proc/stat's btime; 0 unknown. */
static int64_t boot_real_ns(void)
{
    char buf[8192];
    if (read_small("/proc/stat", buf, sizeof(buf)) <= 0)
        return 0;
    const char *p = strstr(buf, "\nbtime ");
    if (!p)
        return 0;
    return strtoll(p + 7, NULL, 10) * 1000000000LL;
}

/* Contract: fill pi for a live, non-zombie pid. Returns 1 when pid is such
 * a process, 0 otherwise. */
static int proc_read(pid_t pid, int64_t boot_ns, struct proc_info *pi)
{
    char path[64], stat[1024];
    memset(pi, 0, sizeof(*pi));
    if (pid <= 1)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_small(path, stat, sizeof(stat)) <= 0)
        return 0;
    const char *p = strrchr(stat, ')'); /* comm may hold spaces and parens */
    if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
        return 0;
    /* after ") S": fields 4.. ; starttime is field 22 */
    const char *q = p + 2;
    for (int field = 3; field < 22 && q; field++) {
        q = strchr(q, ' ');
        if (q)
            q++;
    }
    long tck = sysconf(_SC_CLK_TCK);
    if (q && boot_ns > 0 && tck > 0) {
        long long ticks = strtoll(q, NULL, 10);
        pi->start_real_ns = boot_ns + ticks * (1000000000LL / tck);
    }
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    ssize_t n = read_small(path, pi->cmd, sizeof(pi->cmd));
    if (n <= 0)
        return 0; /* kernel thread or gone */
    for (ssize_t i = 0; i < n; i++)
        if (pi->cmd[i] == '\0' || pi->cmd[i] == '\n')
            pi->cmd[i] = ' ';
    while (n > 0 && pi->cmd[n - 1] == ' ')
        pi->cmd[--n] = '\0';
    return 1;
}

/* Contract: does command line cmd look like what a run started as kind
 * (redis-server on port when port > 0; `lockstorm run`)? */
static int cmd_matches(const char *cmd, enum kind k, int64_t port)
{
    const char *sp = strchr(cmd, ' ');
    size_t l0 = sp ? (size_t)(sp - cmd) : strlen(cmd);
    const char *base = cmd;
    for (size_t i = 0; i < l0; i++)
        if (cmd[i] == '/')
            base = cmd + i + 1;
    size_t lb = l0 - (size_t)(base - cmd);
    if (k == K_LOCKSTORM)
        return lb >= 9 && strncmp(base, "lockstorm", 9) == 0 && sp && strncmp(sp, " run", 4) == 0 &&
               (sp[4] == ' ' || sp[4] == '\0');
    if (lb < 12 || strncmp(base, "redis-server", 12) != 0)
        return 0;
    if (port <= 0)
        return 1;
    /* redis-server retitles itself "redis-server 127.0.0.1:PORT"; its argv
     * form has "--port PORT" */
    char a[32], b[32];
    snprintf(a, sizeof(a), ":%lld", (long long)port);
    snprintf(b, sizeof(b), "--port %lld", (long long)port);
    const char *hit = strstr(cmd, a);
    if (hit && (hit[strlen(a)] == ' ' || hit[strlen(a)] == '\0'))
        return 1;
    hit = strstr(cmd, b);
    return hit && (hit[strlen(b)] == ' ' || hit[strlen(b)] == '\0');
}

struct scan {
    const char *dir;
    FILE *say;
    int64_t boot_ns;
    int64_t from_ns, to_ns;   /* the run's lifetime, with slack; 0 = unknown */
    int found;
    pid_t seen[64];           /* pids already reported (a worker's pid is also its epoch's) */
    int nseen;
};

/* Report pid when it is alive as what the run started. */
static void consider(struct scan *s, int64_t pid, enum kind k, int64_t port, const char *what)
{
    if (pid <= 1 || pid > INT32_MAX)
        return;
    for (int i = 0; i < s->nseen; i++)
        if (s->seen[i] == (pid_t)pid)
            return;
    struct proc_info pi;
    if (!proc_read((pid_t)pid, s->boot_ns, &pi) || !cmd_matches(pi.cmd, k, port))
        return;
    if (s->from_ns && pi.start_real_ns &&
        (pi.start_real_ns < s->from_ns || pi.start_real_ns > s->to_ns))
        return; /* the pid was reused by a process started outside that run */
    if (s->nseen < (int)(sizeof(s->seen) / sizeof(s->seen[0])))
        s->seen[s->nseen++] = (pid_t)pid;
    s->found++;
    if (s->say)
        fprintf(s->say,
                "lockstorm: warning: a process of an earlier run is still alive: pid %lld "
                "(%s: %.80s, %s); lockstorm never stops it by name: `kill %lld` if it is yours\n",
                (long long)pid, what, pi.cmd, s->dir, (long long)pid);
}

static int64_t obj_pid(const struct json *o)
{
    return o && o->type == JSON_OBJ ? json_get_int(o, "pid", 0) : 0;
}

int leftover_check_dir(const char *rundir, int quiet_if_running, FILE *say)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/run.json", rundir);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > RUNJSON_MAX) {
        close(fd);
        return 0;
    }
    close(fd);
    /* most run directories finished cleanly: their state, near the top,
     * says so without parsing the whole file */
    char head[4096];
    if (read_small(path, head, sizeof(head)) <= 0 || !strstr(head, "\"state\": \"running\""))
        return 0;
    char *buf = xmalloc((size_t)st.st_size + 2);
    ssize_t n = read_small(path, buf, (size_t)st.st_size + 2);
    struct json *run = NULL;
    char why[128];
    int bad = n <= 0 || json_parse(buf, (size_t)n, &run, why, sizeof(why)) != 0 ||
              run->type != JSON_OBJ;
    free(buf);
    if (bad) {
        json_free(run);
        return 0;
    }
    struct scan s = {.dir = rundir, .say = say, .boot_ns = boot_real_ns()};
    int64_t start = json_get_int(run, "start_real_ns", 0);
    int64_t dur = json_get_int(run, "duration_ns", 0);
    if (start > 0 && dur >= 0 && dur < INT64_MAX / 4) {
        s.from_ns = start - SLACK_NS;
        s.to_ns = start + dur + SLACK_NS;
    }
    int running = strcmp(json_get_str(run, "state", ""), "running") == 0;
    int64_t hpid = obj_pid(json_obj_get(run, "harness"));
    struct proc_info pi;
    if (!running || hpid <= 0) {
        /* finished cleanly, or written before run.json named its harness:
         * no way to tell a dead run from one in progress */
        json_free(run);
        return 0;
    }
    if (proc_read((pid_t)hpid, s.boot_ns, &pi) && cmd_matches(pi.cmd, K_LOCKSTORM, 0)) {
        if (!quiet_if_running && say)
            fprintf(say, "lockstorm: warning: %s: the run is still in progress (its harness, pid "
                    "%lld, is alive)\n", rundir, (long long)hpid);
        json_free(run);
        return 0;
    }
    const struct json *ws = json_obj_get(run, "workers");
    for (size_t i = 0; ws && ws->type == JSON_ARR && i < ws->n; i++) {
        const struct json *w = ws->kids[i];
        consider(&s, obj_pid(w), K_LOCKSTORM, 0, "a worker");
        const struct json *eps = json_obj_get(w, "epochs");
        for (size_t k = 0; eps && eps->type == JSON_ARR && k < eps->n; k++)
            consider(&s, obj_pid(eps->kids[k]), K_LOCKSTORM, 0, "a worker");
    }
    const struct json *ns = json_obj_get(run, "nodes");
    for (size_t i = 0; ns && ns->type == JSON_ARR && i < ns->n; i++)
        consider(&s, obj_pid(ns->kids[i]), K_REDIS, json_get_int(ns->kids[i], "port", 0),
                 "a lock node");
    const struct json *sto = json_obj_get(run, "storage");
    consider(&s, obj_pid(sto), K_REDIS, sto && sto->type == JSON_OBJ ? json_get_int(sto, "port", 0)
                                                                     : 0, "the storage node");
    consider(&s, obj_pid(json_obj_get(run, "proxy")), K_LOCKSTORM, 0, "the proxy");
    json_free(run);
    return s.found;
}

int leftover_check_siblings(const char *parent, FILE *say)
{
    DIR *d = opendir(parent);
    if (!d)
        return 0;
    int found = 0, seen = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && seen < LEFTOVER_MAX_DIRS) {
        if (de->d_name[0] == '.')
            continue;
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
        struct stat st;
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) /* runs/latest is a symlink */
            continue;
        seen++;
        found += leftover_check_dir(path, 1, say);
    }
    closedir(d);
    return found;
}
