/*
 * iptables.c: the tagged DROP rules of `cut: iptables` (see iptables.h).
 * iptables runs as a child (util/proc.h proc_spawn_opts: an argv array,
 * the caller's group, no death signal) with its output read back through
 * a pipe (the listing is parsed); `-w 5` bounds the wait for the xtables lock. A rule
 * is deleted by turning its `iptables -S` line into `-D` arguments: only
 * lines whose comment is lockstorm:<digits> are ever parsed or deleted.
 */
#include "util/iptables.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"

#define OUT_MAX 65536
#define MAX_ARGS 48
#define MAX_RULES 256

/* Contract: the next sep-separated token of *p (empty ones skipped),
 * NUL-terminated in place; *p advanced past it. NULL at the end. */
static char *next_tok(char **p, char sep)
{
    char *s = *p;
    while (*s == sep)
        s++;
    if (!*s)
        return NULL;
    char *e = strchr(s, sep);
    if (e) {
        *e = '\0';
        *p = e + 1;
    } else {
        *p = s + strlen(s);
    }
    return s;
}

/* Contract: the path of the iptables program (PATH, then /usr/sbin and
 * /sbin, which a non-login root shell may lack) into buf; 0, or -1. */
static int find_iptables(char *buf, size_t n)
{
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/sbin", path && *path ? path : "/usr/bin:/bin");
    char *cur = dirs;
    for (char *d = next_tok(&cur, ':'); d; d = next_tok(&cur, ':')) {
        if ((size_t)snprintf(buf, n, "%s/iptables", *d ? d : ".") >= n)
            continue;
        if (access(buf, X_OK) == 0)
            return 0;
    }
    return -1;
}

int ipt_usable(char *why, size_t n)
{
    char p[PATH_MAX];
    if (geteuid() != 0) {
        snprintf(why, n, "cut: iptables needs root (it adds iptables rules); run lockstorm as "
                         "root, or use cut: proxy (no root needed)");
        return -1;
    }
    if (find_iptables(p, sizeof(p)) < 0) {
        snprintf(why, n, "cut: iptables needs the iptables command (not found on PATH, "
                         "/usr/sbin or /sbin); install it (apt-get install iptables), or use "
                         "cut: proxy");
        return -1;
    }
    return 0;
}

void ipt_comment(pid_t harness, char *buf, size_t n)
{
    snprintf(buf, n, IPT_TAG "%lld", (long long)harness);
}

/* Contract: run `iptables -w 5 ARGS` (args NULL-terminated), its stdout
 * and stderr into out (NUL-terminated, truncated to len). Returns its exit
 * status (0: success), or negative with err set when it could not be run. */
static int ipt_exec(char *const args[], char *out, size_t len, struct ls_err *err)
{
    char prog[PATH_MAX];
    if (find_iptables(prog, sizeof(prog)) < 0)
        return ls_err_set(err, LS_EENV, "iptables not found; install it (apt-get install "
                          "iptables)");
    char *argv[MAX_ARGS + 4] = {prog, "-w", "5"};
    int na = 3;
    for (int i = 0; args[i] && na < MAX_ARGS + 3; i++)
        argv[na++] = args[i];
    argv[na] = NULL;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return ls_err_errno(err, LS_EENV, errno, "iptables: pipe");
    /* the caller's group and signal dispositions, no death signal (the rules
     * reaper runs it after the harness died); a failed exec is exit 127 */
    struct spawn_opts po = {.path = prog, .use_fds = 1, .fd_in = -1, .fd_out = p[1],
                           .fd_err = p[1], .what = "iptables",
                           .flags = PROC_SAME_GROUP | PROC_NO_DEATHSIG | PROC_KEEP_SIGNALS |
                                    PROC_EXEC_EXIT};
    pid_t pid = proc_spawn_opts(argv, &po, err);
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return (int)pid;
    }
    close(p[1]);
    size_t got = 0;
    for (;;) {
        char tmp[4096];
        ssize_t k = read(p[0], tmp, sizeof(tmp));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        size_t c = (size_t)k;
        if (len > 0 && got + c > len - 1)
            c = len - 1 - got;
        memcpy(out + got, tmp, c);
        got += c;
    }
    close(p[0]);
    if (len > 0)
        out[got] = '\0';
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0); /* exit-code style: ipt_exec */
}

int ipt_cut_pair(int add, const char *comment, const char *src, int port, struct ls_err *err)
{
    char ps[16], out[1024];
    snprintf(ps, sizeof(ps), "%d", port);
    char *op = add ? "-A" : "-D";
    char *to[] = {op, "OUTPUT", "-p", "tcp", "-s", (char *)src, "-d", "127.0.0.1", "--dport", ps,
                  "-m", "comment", "--comment", (char *)comment, "-j", "DROP", NULL};
    char *from[] = {op, "OUTPUT", "-p", "tcp", "-s", "127.0.0.1", "--sport", ps, "-d", (char *)src,
                    "-m", "comment", "--comment", (char *)comment, "-j", "DROP", NULL};
    char *const *rules[] = {to, from};
    for (int i = 0; i < 2; i++) {
        int rc = ipt_exec(rules[i], out, sizeof(out), err);
        if (rc < 0)
            return rc;
        if (rc != 0) {
            out[strcspn(out, "\n")] = '\0';
            return ls_err_set(err, LS_EENV, "iptables %s OUTPUT (%s %s port %d) exited %d: %s",
                              op, i ? "from" : "to", src, port, rc, out);
        }
    }
    return 0;
}

/* Contract: the comment of an `iptables -S` line when it is one of
 * lockstorm's (IPT_TAG then digits, quoted or not) copied into buf; else
 * buf is "". */
static void line_comment(const char *line, char *buf, size_t n)
{
    buf[0] = '\0';
    const char *c = strstr(line, "--comment ");
    if (!c)
        return;
    c += strlen("--comment ");
    if (*c == '"')
        c++;
    size_t k = strcspn(c, "\" \n");
    if (k >= n || strncmp(c, IPT_TAG, strlen(IPT_TAG)) != 0 || k == strlen(IPT_TAG))
        return;
    for (size_t i = strlen(IPT_TAG); i < k; i++)
        if (c[i] < '0' || c[i] > '9')
            return;
    memcpy(buf, c, k);
    buf[k] = '\0';
}

/* Contract: delete the rule of `iptables -S` line (an "-A CHAIN ..." line
 * of ours: no spaces inside quotes) by its spec. 0 or negative with err. */
static int delete_line(char *line, struct ls_err *err)
{
    char *args[MAX_ARGS + 1];
    int na = 0;
    char *cur = line;
    for (char *t = next_tok(&cur, ' '); t && na < MAX_ARGS; t = next_tok(&cur, ' ')) {
        size_t l = strlen(t);
        if (l >= 2 && t[0] == '"' && t[l - 1] == '"') {
            t[l - 1] = '\0';
            t++;
        }
        args[na++] = t;
    }
    args[na] = NULL;
    if (na < 2 || strcmp(args[0], "-A") != 0)
        return ls_err_set(err, LS_EENV, "iptables: unexpected rule line");
    args[0] = "-D";
    char out[1024];
    int rc = ipt_exec(args, out, sizeof(out), err);
    if (rc > 0) {
        out[strcspn(out, "\n")] = '\0';
        return ls_err_set(err, LS_EENV, "iptables -D exited %d: %s", rc, out);
    }
    return rc;
}

/* Contract: delete each OUTPUT rule of ours for which keep() says 0
 * (comment and pid given); say (may be NULL) gets one warning per pid
 * whose rules are deleted when warn. Count or negative with err. */
static int remove_where(int (*keep)(const char *comment, long long pid, const void *arg),
                        const void *arg, FILE *say, struct ls_err *err)
{
    char *out = malloc(OUT_MAX);
    if (!out)
        return ls_err_set(err, LS_ENOMEM, "iptables: out of memory");
    char *list[] = {"-S", "OUTPUT", NULL};
    int rc = ipt_exec(list, out, OUT_MAX, err);
    if (rc > 0) {
        out[strcspn(out, "\n")] = '\0';
        rc = ls_err_set(err, LS_EENV, "iptables -S OUTPUT exited %d: %s", rc, out);
    }
    int removed = 0;
    long long warned = -1;
    char *cur = out;
    for (char *line = rc < 0 ? NULL : next_tok(&cur, '\n'); line && removed < MAX_RULES;
         line = next_tok(&cur, '\n')) {
        char c[IPT_COMMENT_MAX + 8];
        line_comment(line, c, sizeof(c));
        if (!c[0])
            continue;
        long long pid = strtoll(c + strlen(IPT_TAG), NULL, 10);
        if (keep(c, pid, arg))
            continue;
        if (say && pid != warned) {
            fprintf(say, "lockstorm: warning: removing stale iptables rules of an earlier run "
                         "(comment %s: harness pid %lld is gone)\n", c, pid);
            warned = pid;
        }
        rc = delete_line(line, err);
        if (rc < 0)
            break;
        removed++;
    }
    free(out);
    return rc < 0 ? rc : removed;
}

/* Contract (remove_where): keep every rule but those with comment arg. */
static int keep_other(const char *comment, long long pid, const void *arg)
{
    (void)pid;
    return strcmp(comment, (const char *)arg) != 0;
}

/* Contract (remove_where): keep the rules of a harness pid that is alive
 * (or that cannot be told: EPERM). */
static int keep_alive(const char *comment, long long pid, const void *arg)
{
    (void)comment;
    (void)arg;
    return pid <= 0 || pid > INT_MAX || kill((pid_t)pid, 0) == 0 || errno != ESRCH;
}

int ipt_remove_tagged(const char *comment, struct ls_err *err)
{
    return remove_where(keep_other, comment, NULL, err);
}

int ipt_remove_stale(FILE *say, struct ls_err *err)
{
    return remove_where(keep_alive, NULL, say, err);
}
