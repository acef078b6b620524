/*
 * sweep_run.c: running a loaded sweep (harness/sweep.h) and the `lockstorm
 * sweep` command. Each cell is the lockstorm binary itself run as a child
 * (`run BASE --out cells/NAME --quiet --set ...`, argv, no shell; harness/
 * proc.h), at most `parallel` at once, so cells share nothing but the
 * machine. Like `run`, the process is single-threaded and takes SIGINT /
 * SIGTERM / SIGHUP synchronously (sigtimedwait): on one it starts no more
 * cells, sends SIGTERM to each running child by pid (a run winds down and
 * writes its result), and reports what finished. It measures nothing: the
 * report is assembled by harness/sweep_model.c from the cells' directories.
 */
#include "harness/sweep.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"
#include "harness/childrun.h"
#include "harness/cli_help.h"
#include "harness/progress.h"
#include "harness/sweep_model.h"
#include "reports/sweep.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define TICK_NS (100 * LS_NS_PER_MS)          /* main loop period */
#define CELL_SLACK_NS (60 * LS_NS_PER_S)      /* a cell may take 2 x duration + this */
#define CELL_GRACE_NS (30 * LS_NS_PER_S)      /* SIGTERM -> SIGKILL for a cell */
#define LIVE_EVERY_NS (250 * LS_NS_PER_MS)
#define PLAIN_EVERY_NS (10 * LS_NS_PER_S)

static const char *const state_names[] = {"not run", "running", "done", "error", "interrupted"};

struct sweep_ctx {
    struct sweep *s;
    char dir[PATH_MAX];
    char self[PATH_MAX];   /* the lockstorm binary */
    int jobs;
    int64_t t0;            /* CLOCK_MONOTONIC at start */
    int64_t real0;         /* CLOCK_REALTIME at start */
    int signal;            /* first signal taken */
    int halted;            /* a cell failed: start no more */
    int running, done, errors, interrupted;
    int64_t stale, broken; /* violations of the finished cells */
    double load_max;       /* highest 1-minute load average seen (start, each cell end) */
    /* progress */
    int style;             /* 0 none, 1 live, 2 plain */
    int64_t last_print;
    int drawn;
};

static int64_t elapsed(const struct sweep_ctx *x)
{
    return ls_now_ns() - x->t0;
}

/* The 1-minute load average: other work on the machine distorts the
 * timings a TTL sweep measures, so the report says when it was busy. */
static void sample_load(struct sweep_ctx *x)
{
    FILE *f = fopen("/proc/loadavg", "re");
    double l;
    if (!f)
        return;
    if (fscanf(f, "%lf", &l) == 1 && l > x->load_max)
        x->load_max = l;
    fclose(f);
}

/* ---- the sweep directory ---------------------------------------------------- */

/* Contract: creates the sweep directory (out, or runs/NAME-UTC) and its
 * cells/ subdirectory; x->dir is set. Returns 0 or a negative code. */
static int make_dir(struct sweep_ctx *x, const char *out, struct ls_err *err)
{
    if (out) {
        snprintf(x->dir, sizeof(x->dir), "%s", out);
        int rc = childrun_mkdirs(x->dir, 0755);
        if (rc == -EEXIST && !childrun_dir_is_empty(x->dir))
            return ls_err_set(err, LS_EUSAGE, "--out %s: exists and is not an empty directory; "
                                              "choose a new path or remove it", x->dir);
        if (rc < 0 && rc != -EEXIST)
            return ls_err_errno(err, LS_EIO, -rc, "create sweep directory %s", x->dir);
    } else {
        if (mkdir("runs", 0755) < 0 && errno != EEXIST)
            return ls_err_errno(err, LS_EIO, errno, "create runs/ in the current directory");
        char ts[32];
        ls_format_utc(x->real0, 1, ts, sizeof(ts));
        int k;
        for (k = 1; k < 1000; k++) {
            if (k == 1)
                snprintf(x->dir, sizeof(x->dir), "runs/%s-%s", x->s->name, ts);
            else
                snprintf(x->dir, sizeof(x->dir), "runs/%s-%s-%d", x->s->name, ts, k);
            if (mkdir(x->dir, 0755) == 0)
                break;
            if (errno != EEXIST)
                return ls_err_errno(err, LS_EIO, errno, "create sweep directory %s", x->dir);
        }
        if (k == 1000)
            return ls_err_set(err, LS_EIO, "create sweep directory under runs/: too many");
    }
    char sub[PATH_MAX + 8];
    snprintf(sub, sizeof(sub), "%s/cells", x->dir);
    if (mkdir(sub, 0755) < 0 && errno != EEXIST)
        return ls_err_errno(err, LS_EIO, errno, "create %s", sub);
    return 0;
}

/* A copy of the sweep file as it was, for the record. */
static void copy_sweep_file(const struct sweep_ctx *x)
{
    FILE *in = fopen(x->s->file, "re");
    if (!in)
        return;
    struct strbuf sb = STRBUF_INIT;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        sb_append(&sb, buf, n);
    fclose(in);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/sweep.yaml", x->dir);
    sb_write_file(&sb, path);
    sb_free(&sb);
}

/* ---- cells ------------------------------------------------------------------- */

/* Contract: argv of cell c into args (NULL-terminated; strings borrowed
 * from x, s and the buffers the caller passes, valid while they live). */
static void cell_argv(const struct sweep_ctx *x, const struct sweep_cell *c, const char **args,
                      int max, char *outbuf, size_t outlen, char *seedbuf, size_t seedlen)
{
    const char *sets[96];
    int ns = sweep_cell_sets(x->s, c, sets, 96, seedbuf, seedlen);
    snprintf(outbuf, outlen, "%s/cells/%s", x->dir, c->name);
    int n = 0;
    const char *fixed[] = {x->self, "run", x->s->base, "--out", outbuf, "--quiet",
                           "--progress", "off", "--format", x->s->formats};
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]) && n < max - 1; i++)
        args[n++] = fixed[i];
    for (int i = 0; i < ns && n < max - 2; i++) {
        args[n++] = "--set";
        args[n++] = sets[i];
    }
    args[n] = NULL;
}

/* Contract: spawn cell c (its output to cells/NAME.log); running on 0,
 * error (and no further cell starts) on -1. */
static int start_cell(struct sweep_ctx *x, struct sweep_cell *c)
{
    const char *args[220];
    char out[PATH_MAX + 200], seed[64], log[PATH_MAX + 200];
    cell_argv(x, c, args, 220, out, sizeof(out), seed, sizeof(seed));
    snprintf(log, sizeof(log), "%s/cells/%s.log", x->dir, c->name);
    struct ls_err err = {0};
    pid_t pid = proc_spawn((char *const *)args, log, &err);
    c->t_start = elapsed(x);
    if (pid < 0) {
        c->state = CELL_ERROR;
        snprintf(c->why, sizeof(c->why), "%s", err.msg);
        c->t_end = c->t_start;
        x->errors++;
        x->halted = 1;
        return -1;
    }
    c->pid = pid;
    c->state = CELL_RUNNING;
    x->running++;
    return 0;
}

/* Why a cell failed, in its words: the last "error:" line of its log, else
 * its last non-empty line. */
static void last_log_line(const struct sweep_ctx *x, const struct sweep_cell *c, char *buf,
                          size_t n)
{
    char path[PATH_MAX + 200];
    snprintf(path, sizeof(path), "%s/cells/%s.log", x->dir, c->name);
    childrun_log_reason(path, buf, n);
}

/* Read the finished cell's violations (for the progress line) and whether
 * its run says it was interrupted. */
static void read_cell_result(const struct sweep_ctx *x, struct sweep_cell *c, int *interrupted)
{
    char path[PATH_MAX + 200];
    snprintf(path, sizeof(path), "%s/cells/%s/result.json", x->dir, c->name);
    *interrupted = 0;
    struct json *doc = NULL;
    char why[128];
    if (json_load_file(path, &doc, why, sizeof(why)) == 0) {
        const struct json *bc = json_path(doc, "checks.mutex.by_class");
        c->stale_holder = json_get_int(bc, "stale_holder", 0);
        c->lock_broken = json_get_int(bc, "lock_broken", 0);
        const struct json *in = json_obj_get(doc, "interrupted");
        *interrupted = in && in->type == JSON_BOOL && in->i;
    }
    json_free(doc);
}

/* Contract: record the end of a reaped cell: done (exit 0, 1 or 4: a
 * verdict), interrupted (its run says so), or error (anything else; no
 * new cell starts after one). */
static void finish_cell(struct sweep_ctx *x, struct sweep_cell *c, int status)
{
    sample_load(x);
    c->t_end = elapsed(x);
    c->pid = 0;
    x->running--;
    c->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int intr = 0;
    if (c->exit_code == 0 || c->exit_code == 1 || c->exit_code == 4)
        read_cell_result(x, c, &intr);
    if (intr || (x->signal && c->exit_code != 0 && c->exit_code != 1)) {
        c->state = CELL_INTERRUPTED;
        x->interrupted++;
    } else if (c->exit_code == 0 || c->exit_code == 1 || c->exit_code == 4) {
        c->state = CELL_DONE;
        x->done++;
        x->stale += c->stale_holder;
        x->broken += c->lock_broken;
    } else {
        c->state = CELL_ERROR;
        char line[200];
        last_log_line(x, c, line, sizeof(line));
        char st[64];
        if (WIFSIGNALED(status)) /* "killed by signal 9 (Killed)": util/proc.h */
            snprintf(c->why, sizeof(c->why), "%s%s%s", proc_status_text(status, st, sizeof(st)),
                     *line ? ": " : "", line);
        else
            snprintf(c->why, sizeof(c->why), "exit %d: %s", c->exit_code,
                     *line ? line : "(no output)");
        x->errors++;
        x->halted = 1;
    }
}

/* ---- progress --------------------------------------------------------------- */

static void progress(struct sweep_ctx *x, int final, const struct sweep_cell *just)
{
    if (!x->style)
        return;
    int64_t now = elapsed(x);
    if (!final && !just && x->style == 1 && x->drawn && now - x->last_print < LIVE_EVERY_NS)
        return;
    if (!final && !just && x->style == 2 && now - x->last_print < PLAIN_EVERY_NS)
        return;
    /* eta: planned time left over the jobs, plus the overhead per cell seen so far */
    int64_t left = 0, over = 0;
    int nover = 0;
    for (int i = 0; i < x->s->ncells; i++) {
        const struct sweep_cell *c = &x->s->cells[i];
        if (c->state == CELL_PENDING && !x->halted && !x->signal)
            left += c->planned_ns;
        else if (c->state == CELL_RUNNING && c->planned_ns > now - c->t_start)
            left += c->planned_ns - (now - c->t_start);
        if (c->state == CELL_DONE && c->t_end - c->t_start > c->planned_ns) {
            over += c->t_end - c->t_start - c->planned_ns;
            nover++;
        }
    }
    int pending = 0;
    for (int i = 0; i < x->s->ncells; i++)
        pending += x->s->cells[i].state == CELL_PENDING;
    int64_t per = nover ? over / nover : 2 * LS_NS_PER_S;
    double eta = (double)(left + (pending + x->running) * per) / 1e9 / x->jobs;
    int fin = x->done + x->errors + x->interrupted;
    double el = (double)now / 1e9;
    if (x->style == 1) {
        fprintf(stderr, "\r\033[K[sweep %6.1fs] cells %d/%d done, %d running, %d errors  "
                        "stale-holder %lld  lock-broken %lld  eta %s%.0fs%s",
                el, fin, x->s->ncells, x->running, x->errors, (long long)x->stale,
                (long long)x->broken, final ? "" : "~", final ? 0.0 : eta, final ? "\n" : "");
    } else {
        fprintf(stderr, "lockstorm: sweep %.1fs cells=%d/%d running=%d errors=%d "
                        "stale_holder=%lld lock_broken=%lld eta=%.0fs%s%s%s\n",
                el, fin, x->s->ncells, x->running, x->errors, (long long)x->stale,
                (long long)x->broken, final ? 0.0 : eta, just ? " finished=" : "",
                just ? just->name : "", final ? " (done)" : "");
    }
    fflush(stderr);
    x->drawn = !final;
    x->last_print = now;
}

/* ---- the run loop ------------------------------------------------------------- */

/* SIGTERM every running cell by pid, then wait for each (SIGKILL after
 * CELL_GRACE_NS); their runs wind down and write what they saw. */
static void stop_all(struct sweep_ctx *x)
{
    for (int i = 0; i < x->s->ncells; i++)
        if (x->s->cells[i].state == CELL_RUNNING && x->s->cells[i].pid > 0)
            kill(x->s->cells[i].pid, SIGTERM);
    for (int i = 0; i < x->s->ncells; i++) {
        struct sweep_cell *c = &x->s->cells[i];
        if (c->state != CELL_RUNNING || c->pid <= 0)
            continue;
        int status = 0;
        if (proc_wait(c->pid, CELL_GRACE_NS, &status) != 1) {
            proc_stop(c->pid, SIGKILL, 0);
            status = SIGKILL; /* as if signalled */
        }
        finish_cell(x, c, status);
    }
}

/* Contract: runs every cell (at most x->jobs at once) until all ended, a
 * signal arrived, or a cell failed (then the running ones finish). */
static void run_cells(struct sweep_ctx *x)
{
    sigset_t sigs, old;
    childrun_stop_signals(&sigs);
    sigprocmask(SIG_BLOCK, &sigs, &old);
    int next = 0;
    sample_load(x);
    progress(x, 0, NULL);
    for (;;) {
        while (!x->signal && !x->halted && x->running < x->jobs && next < x->s->ncells)
            start_cell(x, &x->s->cells[next++]);
        if (x->running == 0)
            break;
        struct timespec ts = {0, TICK_NS};
        int sig = sigtimedwait(&sigs, NULL, &ts);
        if (sig > 0 && !x->signal) {
            x->signal = sig;
            stop_all(x);
            break;
        }
        for (int i = 0; i < x->s->ncells; i++) {
            struct sweep_cell *c = &x->s->cells[i];
            if (c->state != CELL_RUNNING)
                continue;
            int status = 0;
            int r = proc_wait(c->pid, 0, &status);
            if (r == 1) {
                finish_cell(x, c, status);
                progress(x, 0, c);
            } else if (elapsed(x) - c->t_start > 2 * c->planned_ns + CELL_SLACK_NS) {
                proc_stop(c->pid, SIGTERM, CELL_GRACE_NS);
                finish_cell(x, c, SIGKILL);
                snprintf(c->why, sizeof(c->why), "did not finish within %llds",
                         (long long)((2 * c->planned_ns + CELL_SLACK_NS) / LS_NS_PER_S));
            }
        }
        progress(x, 0, NULL);
    }
    progress(x, 1, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* ---- the plan (sweep.json before the measurements) ---------------------------- */

/* Contract: the sweep.json document as far as the runner knows it (header,
 * axes, cells with their states and commands); the model adds the rest.
 * Caller frees. */
static struct json *plan_json(const struct sweep_ctx *x)
{
    const struct sweep *s = x->s;
    struct json *p = json_new_obj();
    json_obj_set_str(p, "format", SWEEP_FORMAT);
    json_obj_set_int(p, "version", SWEEP_VERSION);
    json_obj_set_str(p, "tool_version", LS_VERSION);
    json_obj_set_str(p, "name", s->name);
    json_obj_set_str(p, "description", s->description ? s->description : "");
    json_obj_set_str(p, "file", s->file);
    json_obj_set_str(p, "workload", s->workload);
    json_obj_set_str(p, "base", s->base);
    json_obj_set_int(p, "seed", (int64_t)s->seed);
    json_obj_set_int(p, "repeats", s->repeats);
    json_obj_set_int(p, "parallel", x->jobs);
    json_obj_set_str(p, "formats", s->formats);
    childrun_json_times(p, x->real0, x->t0);
    json_obj_set_bool(p, "interrupted", x->signal != 0);
    json_obj_set_int(p, "cores", sweep_parallelism(1 << 20, 0));
    json_obj_set_num(p, "load_max", x->load_max);
    struct json *sets = json_obj_set(p, "sets", json_new_arr());
    for (int i = 0; i < s->nsets; i++)
        json_arr_push(sets, json_new_str(s->sets[i]));
    struct json *axes = json_obj_set(p, "axes", json_new_arr());
    for (int a = 0; a < s->naxes; a++) {
        struct json *o = json_arr_push(axes, json_new_obj());
        json_obj_set_str(o, "key", s->axes[a].key);
        struct json *v = json_obj_set(o, "values", json_new_arr());
        for (int j = 0; j < s->axes[a].nvalues; j++)
            json_arr_push(v, json_new_str(s->axes[a].values[j]));
    }
    struct json *cells = json_obj_set(p, "cells", json_new_arr());
    for (int i = 0; i < s->ncells; i++) {
        const struct sweep_cell *c = &s->cells[i];
        struct json *o = json_arr_push(cells, json_new_obj());
        json_obj_set_int(o, "index", c->index);
        json_obj_set_str(o, "name", c->name);
        char d[200];
        snprintf(d, sizeof(d), "cells/%s", c->name);
        json_obj_set_str(o, "dir", d);
        json_obj_set_int(o, "repeat", c->repeat);
        json_obj_set_int(o, "seed", (int64_t)c->seed);
        struct json *ax = json_obj_set(o, "axes", json_new_obj());
        for (int a = 0; a < s->naxes; a++)
            json_obj_set_str(ax, s->axes[a].key, s->axes[a].values[c->vi[a]]);
        json_obj_set_str(o, "state", state_names[c->state]);
        json_obj_set(o, "exit_code", c->exit_code >= 0 && c->state != CELL_PENDING
                                         ? json_new_int(c->exit_code) : json_new_null());
        json_obj_set_num(o, "planned_s", (double)c->planned_ns / 1e9);
        json_obj_set(o, "wall_s", c->state == CELL_PENDING
                                      ? json_new_null()
                                      : json_new_num((double)(c->t_end - c->t_start) / 1e9));
        if (c->why[0])
            json_obj_set_str(o, "why", c->why);
        /* how to run this cell again by hand */
        const char *args[220];
        char out[PATH_MAX + 200], seed[64];
        cell_argv(x, c, args, 220, out, sizeof(out), seed, sizeof(seed));
        struct json *cmd = json_obj_set(o, "command", json_new_arr());
        json_arr_push(cmd, json_new_str("lockstorm"));
        for (int k = 1; args[k]; k++)
            json_arr_push(cmd, json_new_str(args[k]));
    }
    return p;
}

/* ---- the command -------------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_usage_errorv("; usage: lockstorm sweep SWEEP.yaml [--out DIR] [--jobs N] "
                              "[--progress auto|plain|off] [--quiet] [--json] | --report "
                              "SWEEP_DIR", fmt, ap);
    va_end(ap);
    return rc;
}

struct sweep_args {
    const char *file, *out, *report, *progress;
    int jobs, quiet, json;
};

/* The command line after "sweep" into *a. Returns 0 or 2 (said why). */
static int parse(int argc, char **argv, struct sweep_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char **slot = NULL;
        if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
            a->quiet = 1;
        } else if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--out")) {
            slot = &a->out;
        } else if (!strcmp(s, "--report")) {
            slot = &a->report;
        } else if (!strcmp(s, "--progress")) {
            slot = &a->progress;
        } else if (!strcmp(s, "--jobs") || !strcmp(s, "-j")) {
            if (i + 1 >= argc)
                return usage("%s needs a value", s);
            char *end;
            errno = 0;
            long v = strtol(argv[++i], &end, 10);
            if (*end || errno || v < 1 || v > 256 || end == argv[i])
                return usage("--jobs '%s': expected an integer from 1 to 256", argv[i]);
            a->jobs = (int)v;
        } else if (s[0] == '-' && s[1]) {
            return usage("unknown option '%s'", s);
        } else if (!a->file && *s) {
            a->file = s;
        } else {
            return usage("unexpected argument '%s'", s);
        }
        if (slot) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return usage("%s needs a value", s);
            *slot = argv[++i];
        }
    }
    if (a->report && (a->file || a->out))
        return usage("%s", "--report SWEEP_DIR takes no SWEEP file and no --out");
    if (!a->report && !a->file)
        return usage("%s", "sweep needs a SWEEP file (or --report SWEEP_DIR)");
    return 0;
}

/* Contract: *out = the sweep.json at path (caller frees); 0, or 2 after
 * saying why on stderr (missing, not JSON, not a sweep.json). */
static int read_json_file(const char *path, struct json **out)
{
    char why[128];
    int rc = json_load_file(path, out, why, sizeof(why));
    if (rc == -1) {
        fprintf(stderr, "lockstorm: error: %s: %s\n", path, why);
        return 2;
    }
    if (rc < 0 || strcmp(json_get_str(*out, "format", ""), SWEEP_FORMAT) != 0) {
        fprintf(stderr, "lockstorm: error: %s: not a sweep.json (%s)\n", path,
                rc < 0 ? why : "wrong format");
        json_free(*out);
        *out = NULL;
        return 2;
    }
    return 0;
}

/* Assemble, write and print the report of the sweep in dir. */
static int report(const char *dir, struct json *plan, const struct sweep_args *a)
{
    sweep_model_build(dir, plan);
    struct strbuf written = STRBUF_INIT;
    struct ls_err err = {0};
    int rc = sweep_write_reports(dir, plan, a->quiet ? NULL : stderr, &written, &err);
    if (rc < 0) {
        fprintf(stderr, "lockstorm: error: %s\n", err.msg);
        sb_free(&written);
        return 3;
    }
    struct strbuf out = STRBUF_INIT;
    if (a->json) {
        json_write(&out, plan, 2);
        sb_putc(&out, '\n');
    } else {
        render_sweep_text(plan, &out);
    }
    fwrite(out.buf, 1, out.len, stdout);
    fflush(stdout);
    sb_free(&out);
    if (!a->quiet)
        fprintf(stderr, "lockstorm: wrote into %s: %s\n", dir, sb_cstr(&written));
    sb_free(&written);
    return 0;
}

int sweep_command(int argc, char **argv, sweep_resolver resolve)
{
    struct sweep_args a;
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    int mode = PROGRESS_AUTO;
    if (a.progress && progress_parse(a.progress, &mode) < 0)
        return usage("--progress '%s': expected auto, plain or off", a.progress);
    if (a.report) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof(path), "%s/sweep.json", a.report);
        struct json *plan = NULL;
        if ((rc = read_json_file(path, &plan)) != 0)
            return rc;
        rc = report(a.report, plan, &a);
        json_free(plan);
        return rc;
    }
    char buf[PATH_MAX];
    const char *file = a.file;
    struct stat st;
    if (stat(file, &st) < 0 && resolve)
        file = resolve(file, buf, sizeof(buf));
    struct sweep *s = NULL;
    struct ls_err err = {0};
    if ((rc = sweep_load(file, resolve, &s, stderr, &err)) < 0)
        return ls_exit_code(rc) == 3 ? 2 : ls_exit_code(rc);

    struct sweep_ctx x;
    memset(&x, 0, sizeof(x));
    x.s = s;
    x.t0 = ls_now_ns();
    x.real0 = ls_realtime_ns();
    x.jobs = sweep_parallelism(a.jobs ? a.jobs : (int)s->parallel, s->ncells);
    childrun_self(x.self, sizeof(x.self));
    if (a.quiet || mode == PROGRESS_OFF)
        x.style = 0;
    else if (mode == PROGRESS_PLAIN)
        x.style = 2;
    else
        x.style = isatty(STDERR_FILENO) ? 1 : 0;
    if ((rc = make_dir(&x, a.out, &err)) < 0) {
        fprintf(stderr, "lockstorm: error: %s\n", err.msg);
        sweep_free(s);
        return ls_exit_code(rc);
    }
    copy_sweep_file(&x);
    if (!a.quiet)
        fprintf(stderr, "lockstorm: sweep %s: %d cells (%d values x %lld repeats), %d at once, "
                        "into %s\n", s->name, s->ncells, (int)(s->ncells / s->repeats),
                (long long)s->repeats, x.jobs, x.dir);
    run_cells(&x);
    struct json *plan = plan_json(&x);
    rc = report(x.dir, plan, &a);
    json_free(plan);
    if (!a.quiet)
        fprintf(stderr, "lockstorm: sweep directory: %s\n", x.dir);
    int code = rc ? rc : x.signal ? 4 : x.errors ? 3 : 0;
    if (x.errors)
        for (int i = 0; i < s->ncells; i++)
            if (s->cells[i].state == CELL_ERROR)
                fprintf(stderr, "lockstorm: error: cell %s: %s\n", s->cells[i].name,
                        s->cells[i].why);
    sweep_free(s);
    return code;
}
