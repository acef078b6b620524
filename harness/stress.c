/*
 * stress.c: the `lockstorm stress` command (harness/stress.h,
 * docs/stress.md): its arguments, the checks made before anything starts
 * (the class, the workload, the output directory), the stress phase (one
 * batch of seeds, harness/stress_runs.c), the reduction
 * (harness/stress_reduce.c), stress.json and the summary on stdout. It
 * judges nothing itself: a run's verdict and classes are its result.json's.
 */
#include "harness/stress_int.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/childrun.h"
#include "harness/cli_help.h"
#include "harness/workload.h"
#include "reports/reports.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define STRESS_FORMAT "lockstorm-stress"
#define STRESS_VERSION 1

#ifndef LS_VERSION
#define LS_VERSION "0.0.0"
#endif

static const char *const phase_names[] = {"stress", "reduce", "confirm"};
static const char *const state_names[] = {"running", "done", "error", "stopped"};

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_usage_errorv("; see 'lockstorm stress --help'", fmt, ap);
    va_end(ap);
    return rc;
}

/* ---- arguments ---------------------------------------------------------------- */

struct stress_args {
    const char *file, *out, *until, *format, *seed, *seeds, *time, *jobs, *tries, *confirm,
        *max_runs, *reduce_time, *min_duration;
    const char *sets[256];
    int nsets, quiet;
};

/* The command line after "stress" into *a. Returns 0 or 2 (said why). */
static int parse(int argc, char **argv, struct stress_args *a)
{
    static const struct {
        const char *flag;
        size_t off;
    } slots[] = {
        {"--out", offsetof(struct stress_args, out)},
        {"--until", offsetof(struct stress_args, until)},
        {"--format", offsetof(struct stress_args, format)},
        {"--seed", offsetof(struct stress_args, seed)},
        {"--seeds", offsetof(struct stress_args, seeds)},
        {"--time", offsetof(struct stress_args, time)},
        {"--jobs", offsetof(struct stress_args, jobs)},
        {"-j", offsetof(struct stress_args, jobs)},
        {"--tries", offsetof(struct stress_args, tries)},
        {"--confirm", offsetof(struct stress_args, confirm)},
        {"--max-runs", offsetof(struct stress_args, max_runs)},
        {"--reduce-time", offsetof(struct stress_args, reduce_time)},
        {"--min-duration", offsetof(struct stress_args, min_duration)},
    };
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char **slot = NULL;
        for (size_t k = 0; k < sizeof(slots) / sizeof(slots[0]); k++)
            if (strcmp(s, slots[k].flag) == 0)
                slot = (const char **)((char *)a + slots[k].off);
        if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
            a->quiet = 1;
        } else if (!strcmp(s, "--set")) {
            if (i + 1 >= argc)
                return usage("%s needs a value", s);
            if (a->nsets >= 250)
                return usage("%s: too many overrides", s);
            a->sets[a->nsets++] = argv[++i];
        } else if (slot) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return usage("%s needs a value", s);
            *slot = argv[++i];
        } else if (s[0] == '-' && s[1]) {
            return usage("unknown option '%s'", s);
        } else if (!a->file && *s) {
            a->file = s;
        } else {
            return usage("unexpected argument '%s'", s);
        }
    }
    if (!a->file)
        return usage("%s", "stress needs a WORKLOAD");
    if (a->seeds && a->time)
        return usage("%s", "--seeds and --time both bound the stress; give one");
    return 0;
}

/* Contract: *v = the integer text in [lo, hi]; 0, or 2 after saying why. */
static int int_arg(const char *flag, const char *text, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long r = strtol(text, &end, 10);
    if (*end || errno || end == text || r < lo || r > hi)
        return usage("%s '%s': expected an integer from %ld to %ld", flag, text, lo, hi);
    *v = r;
    return 0;
}

static int dur_arg(const char *flag, const char *text, int64_t lo, int64_t *v)
{
    const char *why = NULL;
    if (ls_parse_duration(text, v, &why) < 0)
        return usage("%s '%s': %s", flag, text, why);
    if (*v < lo) {
        char b[32];
        ls_format_duration(lo, b, sizeof(b));
        return usage("%s '%s': at least %s", flag, text, b);
    }
    return 0;
}

/* Contract: the numeric options of a into x (defaults for those not
 * given); 0 or 2. */
static int numbers(const struct stress_args *a, struct stress_ctx *x)
{
    long v = 0;
    int rc = 0;
    x->nseeds = 10;
    x->tries = 3;
    x->confirm = 3;
    x->max_runs = 40;
    x->reduce_time = 15 * 60 * LS_NS_PER_S;
    x->min_duration = LS_NS_PER_S;
    if (a->seeds && !(rc = int_arg("--seeds", a->seeds, 1, 100000, &v)))
        x->nseeds = v;
    if (!rc && a->time && !(rc = dur_arg("--time", a->time, LS_NS_PER_S, &x->time_budget)))
        x->nseeds = 0;
    if (!rc && a->jobs && !(rc = int_arg("--jobs", a->jobs, 1, 256, &v)))
        x->jobs = (int)v;
    if (!rc && a->tries && !(rc = int_arg("--tries", a->tries, 1, 20, &v)))
        x->tries = (int)v;
    if (!rc && a->confirm && !(rc = int_arg("--confirm", a->confirm, 0, 20, &v)))
        x->confirm = (int)v;
    if (!rc && a->max_runs && !(rc = int_arg("--max-runs", a->max_runs, 0, 10000, &v)))
        x->max_runs = (int)v;
    if (!rc && a->reduce_time)
        rc = dur_arg("--reduce-time", a->reduce_time, 0, &x->reduce_time);
    if (!rc && a->min_duration)
        rc = dur_arg("--min-duration", a->min_duration, 100 * LS_NS_PER_MS, &x->min_duration);
    if (!rc && a->seed) {
        char *end;
        errno = 0;
        unsigned long long s = strtoull(a->seed, &end, 10);
        if (*end || errno || end == a->seed || a->seed[0] == '-')
            return usage("--seed '%s': expected a non-negative integer", a->seed);
        x->seed0 = s;
    }
    return rc;
}

/* Contract: x->formats from --format (json always in: the verdict is read
 * from result.json); 0 or 2. */
static int formats(const char *list, struct stress_ctx *x)
{
    unsigned f;
    char why[160];
    if (!list) {
        snprintf(x->formats, sizeof(x->formats), "json,text");
        return 0;
    }
    if (reports_parse_formats(list, &f, why, sizeof(why)) < 0)
        return usage("--format: %s", why);
    int has_json = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        has_json |= (n == 4 && !strncmp(p, "json", 4)) || (n == 3 && !strncmp(p, "all", 3));
        p += n + (p[n] == ',');
    }
    if (snprintf(x->formats, sizeof(x->formats), "%s%s", list, has_json ? "" : ",json") >=
        (int)sizeof(x->formats))
        return usage("--format '%s': too long", list);
    return 0;
}

/* Contract: the workload at a->file loaded with the user's overrides into
 * x->base; 0, or 2 after one line on stderr (FILE:LINE:COL for a bad
 * workload). Nothing is started. */
static int load_base(const struct stress_args *a, struct stress_ctx *x, sweep_resolver resolve,
                     char *buf, size_t n)
{
    x->file = a->file;
    struct stat st;
    if (stat(x->file, &st) < 0 && resolve)
        x->file = resolve(a->file, buf, n);
    if (stat(x->file, &st) == 0 && !S_ISREG(st.st_mode))
        return usage("%s: stress runs the workload many times; give a workload file (not a "
                     "pipe or directory)", a->file);
    char *text = NULL;
    size_t len = 0;
    struct ls_err err = {0};
    int rc = workload_read(x->file, &text, &len, NULL, &err);
    if (rc == 0 && sweep_text_is_sweep(text, len, NULL, 0)) {
        free(text);
        return usage("%s is a sweep file; stress takes one workload", x->file);
    }
    if (rc == 0)
        rc = workload_load_text(x->file, text, len, x->sets, x->nsets, &x->base, NULL, &err);
    free(text);
    if (rc < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    if (x->base->compare.n > 0)
        return usage("%s has a compare: block; stress one variant (its lock as --set "
                     "overrides, or its own file)", x->file);
    return 0;
}

/* Contract: create the stress directory (--out, which must be new or
 * empty, or runs/stress-NAME-UTC); 0, 2 (usage) or 3. */
static int make_dir(struct stress_ctx *x, const char *out)
{
    if (out) {
        snprintf(x->dir, sizeof(x->dir), "%s", out);
        int rc = childrun_mkdirs(x->dir, 0755);
        if (rc == -EEXIST && childrun_dir_is_empty(x->dir))
            rc = 0;
        if (rc == -EEXIST)
            return usage("--out %s: exists and is not an empty directory; choose a new path or "
                         "remove it", x->dir);
        if (rc < 0) {
            fprintf(stderr, "lockstorm: error: create %s: %s\n", x->dir, strerror(-rc));
            return 3;
        }
        return 0;
    }
    char ts[32];
    ls_format_utc(x->real0, 1, ts, sizeof(ts));
    if (mkdir("runs", 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "lockstorm: error: create runs/ in the current directory: %s\n",
                strerror(errno));
        return 3;
    }
    for (int k = 1; k < 1000; k++) {
        snprintf(x->dir, sizeof(x->dir), k == 1 ? "runs/stress-%s-%s" : "runs/stress-%s-%s-%d",
                 x->base->name, ts, k);
        if (mkdir(x->dir, 0755) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    fprintf(stderr, "lockstorm: error: create the stress directory %s: %s\n", x->dir,
            strerror(errno));
    return 3;
}

/* ---- stress.json ------------------------------------------------------------------ */

static struct json *run_json(const struct srun *r)
{
    struct json *o = json_new_obj();
    json_obj_set_str(o, "phase", phase_names[r->phase]);
    json_obj_set(o, "candidate", r->cand > 0 ? json_new_int(r->cand) : json_new_null());
    json_obj_set_int(o, "seed", (int64_t)r->seed);
    json_obj_set_str(o, "dir", r->dir);
    json_obj_set_str(o, "state", state_names[r->state]);
    json_obj_set(o, "verdict", r->verdict[0] ? json_new_str(r->verdict) : json_new_null());
    json_obj_set(o, "classes", r->classes ? json_clone(r->classes) : json_new_null());
    json_obj_set_bool(o, "hit", r->hit);
    json_obj_set(o, "exit_code", r->state == SRUN_RUNNING || r->exit_code < 0
                                     ? json_new_null() : json_new_int(r->exit_code));
    json_obj_set_num(o, "wall_s", (double)(r->t_end - r->t_start) / 1e9);
    if (r->why[0])
        json_obj_set_str(o, "why", r->why);
    return o;
}

/* Contract: the stress-phase runs that FAILed without being a hit (with
 * --until CLASS: a FAIL without the class), and the first of them (*first,
 * NULL when none). */
static int failed_otherwise(const struct stress_ctx *x, const struct srun **first)
{
    int k = 0;
    *first = NULL;
    for (int i = 0; i < x->nruns; i++) {
        const struct srun *r = x->runs[i];
        if (r->phase == PHASE_STRESS && r->state == SRUN_DONE && !r->hit &&
            strcmp(r->verdict, "fail") == 0) {
            if (!k++)
                *first = r;
        }
    }
    return k;
}

static const char *outcome(const struct stress_ctx *x, int final, int code)
{
    if (!final)
        return "running";
    if (x->signal)
        return "interrupted";
    if (x->found >= 0)
        return "failure found";
    const struct srun *first;
    if (code == 0 && failed_otherwise(x, &first) > 0)
        return "no hit, other failures";
    return code == 0 ? "no failure" : code == 4 ? "not judged" : "error";
}

int stress_write_json(const struct stress_ctx *x, int final, int code)
{
    struct json *p = json_new_obj();
    json_obj_set_str(p, "format", STRESS_FORMAT);
    json_obj_set_int(p, "version", STRESS_VERSION);
    json_obj_set_str(p, "tool_version", LS_VERSION);
    json_obj_set_str(p, "workload", x->given);
    json_obj_set_str(p, "file", x->file);
    json_obj_set_str(p, "name", x->base->name);
    struct json *sets = json_obj_set(p, "sets", json_new_arr());
    for (int i = 0; i < x->nsets; i++)
        json_arr_push(sets, json_new_str(x->sets[i]));
    json_obj_set(p, "until", x->until ? json_new_str(x->until) : json_new_null());
    json_obj_set(p, "class", x->cls[0] ? json_new_str(x->cls) : json_new_null());
    json_obj_set_bool(p, "needs_fail_verdict", x->need_fail);
    json_obj_set_int(p, "first_seed", (int64_t)x->seed0);
    json_obj_set(p, "seeds", x->nseeds ? json_new_int(x->nseeds) : json_new_null());
    json_obj_set(p, "time_s", x->time_budget ? json_new_num((double)x->time_budget / 1e9)
                                             : json_new_null());
    json_obj_set_int(p, "jobs", x->jobs);
    json_obj_set_str(p, "formats", x->formats);
    childrun_json_times(p, x->real0, x->t0);
    json_obj_set_str(p, "outcome", outcome(x, final, code));
    json_obj_set(p, "exit_code", final ? json_new_int(code) : json_new_null());
    json_obj_set_bool(p, "interrupted", x->signal != 0);
    json_obj_set(p, "signal", x->signal ? json_new_str(strsignal(x->signal)) : json_new_null());
    if (x->error[0])
        json_obj_set_str(p, "error", x->error);
    if (x->found >= 0) {
        struct json *f = json_obj_set(p, "found", json_new_obj());
        json_obj_set_int(f, "seed", (int64_t)x->runs[x->found]->seed);
        json_obj_set_str(f, "dir", x->runs[x->found]->dir);
        json_obj_set_int(f, "run", x->found);
    } else {
        json_obj_set(p, "found", json_new_null());
    }
    int nstress = 0;
    for (int i = 0; i < x->nruns; i++)
        nstress += x->runs[i]->phase == PHASE_STRESS;
    json_obj_set_int(p, "stress_runs", nstress);
    const struct srun *first_other;
    json_obj_set_int(p, "failed_otherwise", failed_otherwise(x, &first_other));
    struct json *runs = json_obj_set(p, "runs", json_new_arr());
    for (int i = 0; i < x->nruns; i++)
        json_arr_push(runs, run_json(x->runs[i]));
    if (x->found < 0 || x->reduce_t0 == 0) {
        json_obj_set(p, "reduction", json_new_null());
    } else {
        struct json *rd = json_obj_set(p, "reduction", json_new_obj());
        char rule[256];
        snprintf(rule, sizeof(rule), "accepted when the class appears in at least 1 of up to "
                 "%d runs (the last reproducing seed, then the next ones)", x->tries);
        json_obj_set_str(rd, "rule", rule);
        json_obj_set_int(rd, "tries", x->tries);
        json_obj_set_int(rd, "max_runs", x->max_runs);
        json_obj_set_num(rd, "max_time_s", (double)x->reduce_time / 1e9);
        json_obj_set_int(rd, "runs", x->reduce_runs);
        json_obj_set(rd, "stopped", x->stopped_why[0] ? json_new_str(x->stopped_why)
                                                      : json_new_null());
        struct json *st = json_obj_set(rd, "steps", json_new_arr());
        for (int i = 0; i < x->nsteps; i++) {
            const struct sstep *s = &x->steps[i];
            struct json *o = json_arr_push(st, json_new_obj());
            json_obj_set(o, "candidate", s->cand > 0 ? json_new_int(s->cand) : json_new_null());
            json_obj_set_str(o, "change", s->change);
            json_obj_set(o, "file", s->yaml[0] ? json_new_str(s->yaml) : json_new_null());
            json_obj_set_int(o, "tries", s->tries);
            json_obj_set_int(o, "hits", s->hits);
            json_obj_set_bool(o, "accepted", s->accepted);
            json_obj_set(o, "seed", s->accepted ? json_new_int((int64_t)s->hit_seed)
                                                : json_new_null());
            if (s->why[0])
                json_obj_set_str(o, "why", s->why);
        }
        json_obj_set(rd, "reduced", x->reduced[0] ? json_new_str("reduced.yaml")
                                                  : json_new_null());
        json_obj_set(rd, "reduced_from", x->reduced_from[0] ? json_new_str(x->reduced_from)
                                                            : json_new_null());
        json_obj_set(rd, "reduced_seed", x->reduced[0] ? json_new_int((int64_t)x->reduced_seed)
                                                       : json_new_null());
        struct json *c = json_obj_set(rd, "confirmation", json_new_obj());
        json_obj_set_int(c, "runs", x->confirm_runs);
        json_obj_set_int(c, "hits", x->confirm_hits);
    }
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, p, 2);
    sb_putc(&sb, '\n');
    json_free(p);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/stress.json", x->dir);
    int rc = sb_write_file(&sb, path);
    sb_free(&sb);
    return rc;
}

/* ---- the summary ----------------------------------------------------------------- */

static void classes_text(const struct srun *r, struct strbuf *sb)
{
    for (size_t i = 0; r->classes && i < r->classes->n; i++)
        sb_printf(sb, " %s=%lld", r->classes->keys[i], (long long)r->classes->kids[i]->i);
}

/* Contract: appends "; K FAILed otherwise, the first at seed S: CLASSES"
 * (the runs that FAILed without the class --until names), or nothing. */
static void others_text(const struct stress_ctx *x, struct strbuf *sb)
{
    const struct srun *f;
    int k = failed_otherwise(x, &f);
    if (!k)
        return;
    sb_printf(sb, "; %d FAILed otherwise, the first at seed %llu:", k,
              (unsigned long long)f->seed);
    if (f->classes && f->classes->n)
        classes_text(f, sb);
    else
        sb_puts(sb, " no class (an expectation)");
}

static void summary(const struct stress_ctx *x, int code, int nstress, int unknown,
                    const char *first_unknown)
{
    struct strbuf sb = STRBUF_INIT;
    const char *what = x->until ? x->until : "FAIL";
    if (x->found >= 0) {
        const struct srun *f = x->runs[x->found];
        sb_printf(&sb, "stress %s: %s at seed %llu (run %d):", x->base->name,
                  x->until ? x->until : "FAIL", (unsigned long long)f->seed, x->found + 1);
        classes_text(f, &sb);
        sb_printf(&sb, "\n  failing run: %s/%s\n", x->dir, f->dir);
        int ntried = 0, nacc = 0;
        for (int i = 0; i < x->nsteps; i++) {
            ntried += x->steps[i].cand > 0;
            nacc += x->steps[i].accepted;
        }
        sb_printf(&sb, "reduction%s%s: %d of %d candidates accepted, %d runs; stopped: %s\n",
                  x->cls[0] ? " for " : "", x->cls, nacc, ntried, x->reduce_runs,
                  x->stopped_why[0] ? x->stopped_why : "not started");
        for (int i = 0; i < x->nsteps; i++)
            if (x->steps[i].accepted)
                sb_printf(&sb, "  %s (in %d of %d tries)\n", x->steps[i].change,
                          x->steps[i].hits, x->steps[i].tries);
        if (x->confirm_runs)
            sb_printf(&sb, "  confirmation: reduced.yaml showed it in %d of %d runs\n",
                      x->confirm_hits, x->confirm_runs);
        if (x->reduced[0])
            sb_printf(&sb, "  run it: lockstorm run %s\n", x->reduced);
    } else if (x->signal) {
        sb_printf(&sb, "stress %s: interrupted by %s after %d run%s; no %s seen so far\n",
                  x->base->name, stress_signal_name(x->signal), nstress,
                  nstress == 1 ? "" : "s", what);
    } else if (code == 0) {
        const struct srun *f;
        sb_printf(&sb, "stress %s: no %s in %d run%s (seeds %llu..%llu, every one judged",
                  x->base->name, failed_otherwise(x, &f) ? what : "failure", nstress,
                  nstress == 1 ? "" : "s", (unsigned long long)x->seed0,
                  (unsigned long long)(x->seed0 + (uint64_t)nstress - 1));
        others_text(x, &sb);
        sb_puts(&sb, "); this is not a proof\n");
    } else if (code == 4) {
        sb_printf(&sb, "stress %s: no %s in %d run%s, but %d could not be judged (UNKNOWN: "
                       "%s", x->base->name, what, nstress, nstress == 1 ? "" : "s", unknown,
                  first_unknown ? first_unknown : "see stress.json");
        others_text(x, &sb);
        sb_puts(&sb, "); that is not a clean result\n");
    } else {
        sb_printf(&sb, "stress %s: stopped: %s\n", x->base->name, x->error);
    }
    if (x->error[0] && x->found >= 0)
        sb_printf(&sb, "  note: %s\n", x->error);
    sb_printf(&sb, "wrote %s/stress.json%s%s%s\n", x->dir, x->reduced[0] ? ", " : "",
              x->reduced[0] ? x->dir : "", x->reduced[0] ? "/reduced.yaml" : "");
    fwrite(sb.buf, 1, sb.len, stdout);
    fflush(stdout);
    sb_free(&sb);
}

/* ---- the command ----------------------------------------------------------------- */

static void ctx_free(struct stress_ctx *x)
{
    for (int i = 0; i < x->nruns; i++) {
        json_free(x->runs[i]->classes);
        free(x->runs[i]);
    }
    free(x->runs);
    free(x->steps);
    workload_free(x->base);
}

/* Contract: the class the reduction keeps when no --until named one: the
 * failing run's first class (harness/stress_class.c), read again from its
 * result.json. */
static void primary_class(struct stress_ctx *x)
{
    char path[PATH_MAX + 120], why[128];
    snprintf(path, sizeof(path), "%s/%s/result.json", x->dir, x->runs[x->found]->dir);
    struct json *res = NULL;
    if (json_load_file(path, &res, why, sizeof(why)) == 0) {
        const char *c = stress_primary_class(res);
        if (c)
            snprintf(x->cls, sizeof(x->cls), "%s", c);
    }
    json_free(res);
}

int stress_command(int argc, char **argv, sweep_resolver resolve)
{
    struct stress_args a;
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    struct stress_ctx x;
    memset(&x, 0, sizeof(x));
    x.found = -1;
    x.given = a.file;
    x.sets = a.sets;
    x.nsets = a.nsets;
    x.quiet = a.quiet;
    x.until = a.until;
    if (a.until && !stress_class_valid(a.until)) {
        char list[600];
        stress_class_list(list, sizeof(list));
        return usage("--until '%s': not a class; one of %s", a.until, list);
    }
    if ((rc = numbers(&a, &x)) || (rc = formats(a.format, &x)))
        return rc;
    char buf[PATH_MAX];
    if ((rc = load_base(&a, &x, resolve, buf, sizeof(buf)))) {
        workload_free(x.base);
        return rc;
    }
    if (!a.seed)
        x.seed0 = x.base->seed;
    x.need_fail = !a.until || strcmp(a.until, "fail") == 0;
    if (a.until && strcmp(a.until, "fail") != 0)
        snprintf(x.cls, sizeof(x.cls), "%s", a.until);
    x.jobs = sweep_parallelism(x.jobs, x.nseeds > 0 ? (int)x.nseeds : 0);
    x.t0 = ls_now_ns();
    x.real0 = ls_realtime_ns();
    childrun_self(x.self, sizeof(x.self));
    /* signals are taken synchronously from here on (harness/stress_runs.c) */
    sigset_t sigs, old;
    childrun_stop_signals(&sigs);
    sigprocmask(SIG_BLOCK, &sigs, &old);
    if ((rc = make_dir(&x, a.out))) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        ctx_free(&x);
        return rc;
    }
    if (!x.quiet) {
        char bound[48];
        if (x.nseeds)
            snprintf(bound, sizeof(bound), "up to %lld seeds", (long long)x.nseeds);
        else
            ls_format_duration(x.time_budget, bound + snprintf(bound, sizeof(bound), "for "),
                               sizeof(bound) - 4);
        fprintf(stderr, "lockstorm: stress %s: %s from seed %llu, %d at once, until %s; into "
                        "%s\n", x.base->name, bound, (unsigned long long)x.seed0, x.jobs,
                x.until ? x.until : "a FAIL verdict", x.dir);
    }
    stress_write_json(&x, 0, -1);

    struct sbatch b = {.phase = PHASE_STRESS, .cand = -1, .yaml = x.file, .with_user_sets = 1,
                       .planned = x.base->duration, .seed0 = x.seed0,
                       .count = x.nseeds ? x.nseeds : -1, .deadline = x.time_budget,
                       .stop_on_hit = 1};
    stress_batch_run(&x, &b);
    int code;
    const char *first_unknown = NULL;
    for (int i = 0; i < x.nruns && !first_unknown; i++)
        if (x.runs[i]->state == SRUN_DONE && !strcmp(x.runs[i]->verdict, "unknown"))
            first_unknown = x.runs[i]->why[0] ? x.runs[i]->why : "no reason given";
    if (b.first_hit >= 0) {
        x.found = b.first_hit;
        if (!x.until)
            primary_class(&x);
        if (!stress_poll_signal(&x))
            stress_reduce(&x);
        code = 1;
    } else if (b.first_error >= 0) {
        snprintf(x.error, sizeof(x.error), "%s could not run: %s", x.runs[b.first_error]->dir,
                 x.runs[b.first_error]->why);
        code = 3;
    } else {
        code = b.unknown > 0 || b.judged == 0 ? 4 : 0;
    }
    if (x.signal)
        code = 128 + x.signal;
    if (stress_write_json(&x, 1, code) < 0) {
        fprintf(stderr, "lockstorm: error: write %s/stress.json: %s\n", x.dir, strerror(errno));
        if (code == 0)
            code = 3;
    }
    summary(&x, code, b.started, b.unknown, first_unknown);
    if (x.error[0] && !x.quiet)
        fprintf(stderr, "lockstorm: error: %s\n", x.error);
    sigprocmask(SIG_SETMASK, &old, NULL);
    ctx_free(&x);
    return code;
}
