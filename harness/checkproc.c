/*
 * checkproc.c: the checker pass in a child process (checkproc.h). The
 * child writes to the pipe: its return code on the first line, its error
 * message on the second, then the result model as compact JSON (nothing
 * when none was built). The parent reads while polling its stop predicate.
 */
#include "harness/checkproc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/history.h"
#include "harness/workload.h"
#include "util/proc.h"
#include "reports/reports.h"
#include "harness/verdict.h"
#include "model/rundir.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

#define POLL_MS 20

/* Contract: the resources of h named as the run's workload.yaml lists them
 * (workers.resources: [names]); the event log holds indices, so the
 * stories, tables and result.json say the names only through this. */
static int name_resources(struct history *h, int rc)
{
    if (rc < 0 || !h->meta || !h->meta->res_names)
        return rc;
    for (int i = 0; i < h->nres && i < h->meta->nres_names; i++) {
        free(h->res_names[i]);
        h->res_names[i] = xstrdup(h->meta->res_names[i]);
    }
    return rc;
}

int checkproc_load(const char *dir, struct history *h, struct workload **w, struct ls_err *err)
{
    *w = NULL;
    char path[4096];
    struct stat st;
    snprintf(path, sizeof(path), "%s/workload.yaml", dir);
    if (stat(path, &st) != 0) /* missing: history.c says so */
        return history_load_rundir(dir, h, err);
    struct ls_err werr = {0, ""};
    if (workload_load(path, NULL, 0, w, NULL, &werr) != 0) {
        *w = NULL; /* checked with defaults, an evidence gap */
        return name_resources(h, history_load_rundir_refused(dir, werr.msg, h, err));
    }
    return name_resources(h, history_load_rundir(dir, h, err));
}

/* Contract: the checker pass itself, in this process (what the child runs). */
static int check_here(const char *dir, unsigned formats, int quiet, struct json **result,
                      struct ls_err *err)
{
    struct history h;
    memset(&h, 0, sizeof(h));
    struct workload *w = NULL;
    int rc = checkproc_load(dir, &h, &w, err);
    if (rc < 0) {
        history_free(&h);
        workload_free(w);
        return rc;
    }
    struct check_params p;
    check_params_from(&h, &p);
    struct json *res = result_build(&h, w, &p);
    if (formats == 0 || (formats & REPORT_HTML))
        result_add_holds(res, &h); /* report.html's timeline */
    history_free(&h);
    workload_free(w);
    rc = reports_write_all(dir, res, formats, quiet ? NULL : stderr, NULL, err);
    *result = res;
    return rc;
}

/* Contract: write all of buf to fd; 0 or -1. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Contract: the child's side; never returns. */
static void child_main(int fd, const char *dir, unsigned formats, int quiet)
{
    struct json *res = NULL;
    struct ls_err err = {0};
    int rc = check_here(dir, formats, quiet, &res, &err);
    for (char *c = err.msg; *c; c++) /* the message is one line of the pipe */
        if (*c == '\n')
            *c = ' ';
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb, "%d\n%s\n", rc, err.msg);
    if (res)
        json_write(&sb, res, -1);
    int w = write_all(fd, sb.buf, sb.len);
    _exit(w == 0 ? 0 : 1);
}

/* Contract: remove dir's "NAME.tmp.PID" files of the killed child pid (an
 * atomic rewrite it did not finish, util/strbuf.h sb_write_file). */
static void remove_tmp_files(const char *dir, pid_t pid)
{
    char suffix[32];
    int sl = snprintf(suffix, sizeof(suffix), ".tmp.%d", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > (size_t)sl && strcmp(de->d_name + n - (size_t)sl, suffix) == 0) {
            char path[4096];
            if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < (int)sizeof(path))
                unlink(path);
        }
    }
    closedir(d);
}

/* Contract: parse what the child wrote into rc, err and *result. */
static int parse_reply(const struct strbuf *sb, struct json **result, struct ls_err *err)
{
    const char *s = sb->buf ? sb->buf : "";
    const char *nl1 = memchr(s, '\n', sb->len);
    const char *nl2 = nl1 ? memchr(nl1 + 1, '\n', sb->len - (size_t)(nl1 + 1 - s)) : NULL;
    if (!nl2)
        return ls_err_set(err, LS_EENV, "checker process: ended without a result (%zu bytes)",
                          sb->len);
    char *end;
    long rc = strtol(s, &end, 10);
    if (end != nl1 || rc > 0 || rc < -1000)
        return ls_err_set(err, LS_EENV, "checker process: unreadable return code");
    size_t jl = sb->len - (size_t)(nl2 + 1 - s);
    if (jl > 0) {
        char why[160];
        if (json_parse(nl2 + 1, jl, result, why, sizeof(why)) < 0)
            return ls_err_set(err, LS_EENV, "checker process: result not readable: %s", why);
    }
    if (rc < 0)
        ls_err_set(err, (int)rc, "%.*s", (int)(nl2 - nl1 - 1), nl1 + 1);
    return (int)rc;
}

int checkproc_run(const char *dir, unsigned formats, int quiet, int (*stop)(void *), void *arg,
                  struct json **result, struct ls_err *err)
{
    *result = NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        return ls_err_errno(err, LS_EENV, errno, "checker process: pipe");
    fflush(stderr);
    pid_t pid = proc_fork(0); /* its own group, dying with the harness (util/proc.h) */
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return ls_err_errno(err, LS_EENV, e, "checker process: fork");
    }
    if (pid == 0) {
        close(fds[0]);
        child_main(fds[1], dir, formats, quiet);
    }
    close(fds[1]);
    struct strbuf sb = STRBUF_INIT;
    int stopped = 0, rc = 0;
    for (;;) {
        if (stop && stop(arg)) {
            stopped = 1;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int n = poll(&p, 1, POLL_MS);
        if (n < 0 && errno != EINTR) {
            rc = ls_err_errno(err, LS_EENV, errno, "checker process: poll");
            break;
        }
        if (n <= 0)
            continue;
        char buf[65536];
        ssize_t k = read(fds[0], buf, sizeof(buf));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* end of file: the child is done (or died) */
        sb_append(&sb, buf, (size_t)k);
    }
    close(fds[0]);
    int status = 0;
    if (stopped || rc < 0) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        remove_tmp_files(dir, pid);
        sb_free(&sb);
        return stopped ? LS_EINTR : rc;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    rc = parse_reply(&sb, result, err);
    if (WIFSIGNALED(status)) /* crashed or OOM-killed mid-write */
        remove_tmp_files(dir, pid);
    if (rc == LS_EENV && !*result && WIFSIGNALED(status)) {
        char st[64];
        ls_err_clear(err);
        rc = ls_err_set(err, LS_EENV, "checker process: %s",
                        proc_status_text(status, st, sizeof(st)));
    }
    sb_free(&sb);
    return rc;
}
