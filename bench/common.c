/*
 * common.c: see common.h. Children are started by fork+exec (proc_spawn:
 * own process group, PR_SET_PDEATHSIG) and stopped by pid; nothing here
 * signals a process it did not start.
 */
#include "bench/common.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

int bench_parse(int argc, char **argv, struct bench_opts *o, const char *const *extra,
                const char **extra_val)
{
    memset(o, 0, sizeof(*o));
    o->lockstorm = getenv("LS_BINARY");
    if (!o->lockstorm || !*o->lockstorm)
        o->lockstorm = "lockstorm";
    for (int k = 0; extra && extra[k]; k++)
        extra_val[k] = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--smoke") == 0) {
            o->smoke = 1;
        } else if (strcmp(a, "--keep") == 0) {
            o->keep = 1;
        } else if (strcmp(a, "--lockstorm") == 0 && i + 1 < argc) {
            o->lockstorm = argv[++i];
        } else if (strcmp(a, "--tmp") == 0 && i + 1 < argc) {
            o->tmp = argv[++i];
        } else {
            int k = 0;
            for (; extra && extra[k]; k++)
                if (strcmp(a, extra[k]) == 0 && i + 1 < argc) {
                    extra_val[k] = argv[++i];
                    break;
                }
            if (!extra || !extra[k]) {
                fprintf(stderr, "%s: unknown option '%s' (takes --smoke --keep --lockstorm PATH "
                        "--tmp DIR", argv[0], a);
                for (k = 0; extra && extra[k]; k++)
                    fprintf(stderr, " %s X", extra[k]);
                fprintf(stderr, ")\n");
                return -1;
            }
        }
    }
    return 0;
}

int bench_count(const char *opt, const char *s, double min, double max, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    double d = s ? strtod(s, &end) : 0;
    if (!s || end == s || *end || errno || d < min || d > max || d != (double)(int64_t)d) {
        fprintf(stderr, "bench: %s '%s': expected a whole number from %.0f to %.0f\n", opt,
                s ? s : "", min, max);
        return -1;
    }
    *out = (int64_t)d;
    return 0;
}

static void remove_made(void);
static char made_dir[sizeof(((struct bench_opts *)0)->tmpbuf)]; /* bench_tmp's, until exit */

int bench_tmp(struct bench_opts *o)
{
    if (o->tmp) {
        if (mkdir(o->tmp, 0700) < 0 && errno != EEXIST) {
            fprintf(stderr, "bench: mkdir %s: %s\n", o->tmp, strerror(errno));
            return -1;
        }
        return 0;
    }
    const char *td = getenv("TMPDIR");
    if (!td || !*td || strlen(td) + sizeof("/lsbench.XXXXXX") > sizeof(o->tmpbuf))
        td = "/tmp"; /* (a longer one than tmpbuf holds: /tmp) */
    snprintf(o->tmpbuf, sizeof(o->tmpbuf), "%s/lsbench.XXXXXX", td);
    if (!mkdtemp(o->tmpbuf)) {
        fprintf(stderr, "bench: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    o->tmp = o->tmpbuf;
    o->made_tmp = 1;
    if (!o->keep) { /* gone however the program ends: an option refused after this too */
        snprintf(made_dir, sizeof(made_dir), "%s", o->tmp);
        atexit(remove_made);
    }
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_made(void)
{
    if (made_dir[0])
        nftw(made_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    made_dir[0] = '\0';
}

void bench_cleanup(const struct bench_opts *o)
{
    (void)o; /* made_dir is set only for a directory bench_tmp made, without --keep */
    remove_made();
}

pid_t bench_start(char *const argv[], const char *log)
{
    struct ls_err err = {0};
    pid_t pid = proc_spawn(argv, log, &err);
    if (pid < 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    return pid;
}

int bench_finish(pid_t pid, int64_t timeout_ns)
{
    int st = 0;
    int r = proc_wait(pid, timeout_ns, &st);
    if (r != 1) {
        fprintf(stderr, "bench: pid %d still running after %.0f s: killed\n", (int)pid,
                (double)timeout_ns / 1e9);
        kill(-pid, SIGKILL);
        proc_wait(pid, 5 * LS_NS_PER_S, &st);
        return 128 + SIGKILL;
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

int bench_run(char *const argv[], const char *log, int64_t timeout_ns)
{
    pid_t pid = bench_start(argv, log);
    if (pid < 0)
        return -1;
    return bench_finish(pid, timeout_ns);
}

struct json *bench_read_json(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct strbuf sb = STRBUF_INIT;
    for (;;) {
        sb_reserve(&sb, 65536);
        ssize_t r = read(fd, sb.buf + sb.len, sb.cap - sb.len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        sb.len += (size_t)r;
    }
    close(fd);
    struct json *j = NULL;
    char why[128];
    if (sb.len == 0 || json_parse(sb.buf, sb.len, &j, why, sizeof(why)) != 0)
        j = NULL;
    sb_free(&sb);
    return j;
}

int bench_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "we");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static redisContext *connect_local(int port)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    return c;
}

int bench_cmdstats(int port, struct cmdstats *out)
{
    memset(out, 0, sizeof(*out));
    redisContext *c = connect_local(port);
    if (!c)
        return -1;
    redisReply *r = redisCommand(c, "INFO commandstats");
    out->t = ls_now_ns();
    int rc = -1;
    if (r && r->type == REDIS_REPLY_STRING) {
        rc = 0;
        /* lines: cmdstat_evalsha:calls=300000,usec=... */
        for (const char *p = r->str; p && *p;) {
            const char *nl = strchr(p, '\n');
            if (strncmp(p, "cmdstat_", 8) == 0 && out->n < BENCH_MAX_CMDS) {
                const char *colon = strchr(p, ':');
                const char *calls = colon ? strstr(colon, "calls=") : NULL;
                if (colon && calls && (!nl || calls < nl)) {
                    size_t len = (size_t)(colon - (p + 8));
                    if (len >= sizeof(out->name[0]))
                        len = sizeof(out->name[0]) - 1;
                    memcpy(out->name[out->n], p + 8, len);
                    out->name[out->n][len] = '\0';
                    out->calls[out->n] = strtoull(calls + 6, NULL, 10);
                    out->n++;
                }
            }
            p = nl ? nl + 1 : NULL;
        }
    }
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return rc;
}

uint64_t bench_calls(const struct cmdstats *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0)
            return s->calls[i];
    return 0;
}

uint64_t bench_calls_all(const struct cmdstats *s)
{
    uint64_t t = 0;
    for (int i = 0; i < s->n; i++)
        t += s->calls[i];
    return t;
}

int bench_redis(int port, const char *const *argv, int argc, char *buf, size_t n)
{
    redisContext *c = connect_local(port);
    if (!c)
        return -1;
    redisReply *r = redisCommandArgv(c, argc, (const char **)argv, NULL);
    int rc = -1;
    if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)) {
        snprintf(buf, n, "%s", r->str);
        rc = 0;
    } else if (r && r->type == REDIS_REPLY_INTEGER) {
        snprintf(buf, n, "%lld", r->integer);
        rc = 0;
    } else if (r && r->type == REDIS_REPLY_ERROR) {
        snprintf(buf, n, "%s", r->str);
    }
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return rc;
}

struct json *bench_target(struct json *targets, const char *name, double value, const char *op,
                          double target, const char *unit)
{
    int met = strcmp(op, ">=") == 0 ? value >= target : value <= target;
    struct json *o = json_arr_push(targets, json_new_obj());
    json_obj_set_str(o, "name", name);
    json_obj_set_num(o, "value", value);
    json_obj_set_str(o, "op", op);
    json_obj_set_num(o, "target", target);
    json_obj_set_str(o, "unit", unit);
    json_obj_set_bool(o, "met", met);
    return o;
}

struct json *bench_target_unmeasured(struct json *targets, const char *name, const char *op,
                                     double target, const char *unit, const char *why)
{
    struct json *o = json_arr_push(targets, json_new_obj());
    json_obj_set_str(o, "name", name);
    json_obj_set(o, "value", json_new_null());
    json_obj_set_str(o, "op", op);
    json_obj_set_num(o, "target", target);
    json_obj_set_str(o, "unit", unit);
    json_obj_set(o, "met", json_new_null());
    json_obj_set_str(o, "note", why);
    return o;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_run_usage(char *const argv[], const char *log, struct bench_usage *u)
{
    memset(u, 0, sizeof(*u));
    int64_t t0 = ls_now_ns();
    pid_t pid = bench_start(argv, log);
    if (pid < 0)
        return -1;
    struct rusage ru;
    memset(&ru, 0, sizeof(ru));
    int st = 0;
    pid_t r;
    do
        r = wait4(pid, &st, 0, &ru);
    while (r < 0 && errno == EINTR);
    u->wall_s = (double)(ls_now_ns() - t0) / 1e9;
    u->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    u->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    u->rss_kib = ru.ru_maxrss;
    u->majflt = ru.ru_majflt;
    u->exit = r != pid ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

void bench_print(const struct json *section)
{
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, section, 2);
    sb_putc(&sb, '\n');
    fwrite(sb.buf, 1, sb.len, stdout);
    fflush(stdout);
    sb_free(&sb);
}
