/*
 * main.c: the lockstorm command line (docs/lockstorm.1, `lockstorm help`). Parses
 * arguments, dispatches to the library, and is the only place that turns
 * error codes into exit statuses: 0 pass, 1 fail, 2 usage or workload
 * error (nothing started), 3 environment error, 4 unknown verdict.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "checkers/check.h"
#include "checkers/history.h"
#include "checkers/pass.h"
#include "faults/fault.h"
#include "harness/leftover.h"
#include "harness/adapter_init.h"
#include "harness/adapter_test.h"
#include "harness/checkproc.h"
#include "harness/cli_compare.h"
#include "harness/cli_help.h"
#include "harness/cli_init.h"
#include "harness/progress.h"
#include "harness/run.h"
#include "harness/stress.h"
#include "harness/suite.h"
#include "harness/sweep.h"
#include "harness/workload.h"
#include "locks/lock.h"
#include "reports/reports.h"
#include "reports/result.h"
#include "harness/verdict.h"
#include "util/err.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/exedir.h"

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_usage_errorv("; see 'lockstorm --help'", fmt, ap);
    va_end(ap);
    return rc;
}

static int env_error(const struct ls_err *err)
{
    fprintf(stderr, "lockstorm: error: %s\n", err->msg);
    return ls_exit_code(err->code);
}

/* A run directory or history that cannot be loaded: one line, exit 2 when
 * it is not what lockstorm writes (missing, foreign, corrupt core files),
 * 3 when the environment failed reading it (docs/reliability.md). */
static int load_error(const struct ls_err *err)
{
    fprintf(stderr, "lockstorm: error: %s\n", err->msg);
    int c = err->code;
    return c == LS_EINPUT || c == LS_EUSAGE || c == LS_ECORRUPT ? 2 : ls_exit_code(c);
}

/* Directories holding bundled workloads: next to the binary (build tree or
 * install prefix) and the source tree it was built from. */
static int workload_dirs(char dirs[][PATH_MAX], int max)
{
    int n = 0;
    static const char *const rel[] = {"/../share/lockstorm/workloads", "/../workloads",
                                      "/workloads"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]) && n < max; i++)
        n += exe_relative(&rel[i], 1, 1, dirs[n]);
#ifdef LS_SOURCE_DIR
    if (n < max) {
        snprintf(dirs[n], PATH_MAX, "%s/workloads", LS_SOURCE_DIR);
        struct stat st;
        if (stat(dirs[n], &st) == 0 && S_ISDIR(st.st_mode))
            n++;
    }
#endif
    return n;
}

/* A workload argument is a path, or the name of a bundled workload. */
static const char *resolve_workload(const char *arg, char *buf, size_t n)
{
    struct stat st;
    if (stat(arg, &st) == 0)
        return arg;
    char dirs[4][PATH_MAX];
    int nd = workload_dirs(dirs, 4);
    for (int i = 0; i < nd; i++) {
        snprintf(buf, n, "%s/%s%s", dirs[i], arg, strstr(arg, ".yaml") ? "" : ".yaml");
        if (stat(buf, &st) == 0)
            return buf;
    }
    return arg; /* the loader reports it missing, with the name as given */
}

/* Collects "name" (or "sub/name") of every .yaml under dir, one level of
 * subdirectories deep. Returns the count; names are malloc'd. */
static int collect_workloads(const char *dir, const char *prefix, char **names, int nn, int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return nn;
    struct dirent *de;
    while ((de = readdir(d)) && nn < max) {
        if (de->d_name[0] == '.')
            continue;
        size_t l = strlen(de->d_name);
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && !*prefix) {
            nn = collect_workloads(path, de->d_name, names, nn, max);
        } else if (S_ISREG(st.st_mode) && l > 5 && strcmp(de->d_name + l - 5, ".yaml") == 0) {
            char name[PATH_MAX];
            snprintf(name, sizeof(name), "%s%s%.*s", prefix, *prefix ? "/" : "", (int)(l - 5),
                     de->d_name);
            names[nn++] = strdup(name);
        }
    }
    closedir(d);
    return nn;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_workloads(void)
{
    char dirs[4][PATH_MAX];
    int nd = workload_dirs(dirs, 4);
    if (nd == 0) {
        printf("no bundled workloads found\n");
        return;
    }
    char *names[1024];
    int nn = collect_workloads(dirs[0], "", names, 0, 1024);
    qsort(names, (size_t)nn, sizeof(names[0]), cmp_str);
    printf("bundled workloads in %s (run one by name: lockstorm run NAME):\n", dirs[0]);
    for (int i = 0; i < nn; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s.yaml", dirs[0], names[i]);
        struct workload *w = NULL;
        struct ls_err err = {0};
        const char *desc = "(does not load: run lockstorm validate on it)";
        char sdesc[256];
        if (names[i] && sweep_file_is_sweep(path, sdesc, sizeof(sdesc))) { /* harness/sweep.h */
            printf("  %-32s (sweep: lockstorm sweep %s) %s\n", names[i], names[i], sdesc);
            free(names[i]);
            continue;
        }
        if (names[i] && workload_load(path, NULL, 0, &w, NULL, &err) == 0)
            desc = w->description;
        printf("  %-32s %s\n", names[i] ? names[i] : "?", desc);
        workload_free(w);
        free(names[i]);
    }
}

struct common_args {
    const char *pos[4];
    int npos;
    const char *sets[256];
    int nsets;
    const char *out, *history, *seed, *capacity, *near_miss, *replay, *jobs;
    const char *format, *progress; /* --format LIST, --progress MODE */
    int json, md, quiet, reference; /* --json, --md, --quiet/-q, --reference */
};

static int parse_args(int argc, char **argv, struct common_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        const char **slot = NULL;
        if (strcmp(s, "--json") == 0) {
            a->json = 1;
        } else if (strcmp(s, "--md") == 0) {
            a->md = 1;
        } else if (strcmp(s, "--quiet") == 0 || strcmp(s, "-q") == 0) {
            a->quiet = 1;
        } else if (strcmp(s, "--reference") == 0) {
            a->reference = 1;
        } else if (strcmp(s, "--out") == 0) {
            slot = &a->out;
        } else if (strcmp(s, "--replay") == 0) {
            slot = &a->replay;
        } else if (strcmp(s, "--format") == 0) {
            slot = &a->format;
        } else if (strcmp(s, "--progress") == 0) {
            slot = &a->progress;
        } else if (strcmp(s, "--history") == 0) {
            slot = &a->history;
        } else if (strcmp(s, "--seed") == 0) {
            slot = &a->seed;
        } else if (strcmp(s, "--capacity") == 0) {
            slot = &a->capacity;
        } else if (strcmp(s, "--near-miss") == 0) {
            slot = &a->near_miss;
        } else if (strcmp(s, "--jobs") == 0 || strcmp(s, "-j") == 0) {
            slot = &a->jobs;
        } else if (strcmp(s, "--set") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", s);
            if (a->nsets >= 250)
                return usage_error("%s: too many overrides", s);
            a->sets[a->nsets++] = argv[++i];
        } else if (strncmp(s, "--set=", 6) == 0) {
            if (a->nsets >= 250)
                return usage_error("%s: too many overrides", s);
            a->sets[a->nsets++] = s + 6;
        } else if (s[0] == '-' && s[1]) {
            return usage_error("unknown option '%s'", s);
        } else {
            if (!*s)
                return usage_error("%s", "an argument is empty ('')");
            if (a->npos >= 4)
                return usage_error("unexpected argument '%s'", s);
            a->pos[a->npos++] = s;
        }
        if (slot) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", s);
            if (!argv[i + 1][0])
                return usage_error("%s needs a non-empty value", s);
            *slot = argv[++i];
        }
    }
    return 0;
}

/* Contract: the diagnostics a load wrote to log (one error a line, then
 * perhaps "FILE: N more errors not shown") as ONE line on stderr: the first
 * error, and how many more there are and how to see them. */
static void print_first_error(char *log, size_t len, const char *given)
{
    if (!log || !len)
        return;
    long more = -1; /* lines after the first */
    size_t first = len;
    for (char *line = log; line < log + len;) {
        char *nl = memchr(line, '\n', (size_t)(log + len - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(log + len - line);
        if (more < 0)
            first = n;
        line[n] = '\0';
        const char *q = strstr(line, " more errors not shown");
        if (more >= 0 && q) { /* "FILE: N more errors not shown" */
            while (q > line && q[-1] >= '0' && q[-1] <= '9')
                q--;
            more += strtol(q, NULL, 10);
        } else {
            more++;
        }
        line += n + 1;
    }
    if (more > 0)
        fprintf(stderr, "%.*s (and %ld more: lockstorm validate %s)\n", (int)first, log, more,
                given);
    else
        fprintf(stderr, "%.*s\n", (int)first, log);
}

/* Loads the command's workload. Errors: `validate` lists every one (its
 * purpose), every other command prints one line (print_first_error). */
static int load_workload(const struct common_args *a, struct workload **w, int all_errors)
{
    char seedset[64];
    const char *sets[260];
    int nsets = 0;
    for (int i = 0; i < a->nsets; i++)
        sets[nsets++] = a->sets[i];
    if (a->seed) {
        snprintf(seedset, sizeof(seedset), "seed=%s", a->seed);
        sets[nsets++] = seedset;
    }
    char buf[PATH_MAX];
    const char *path = resolve_workload(a->pos[0], buf, sizeof(buf));
    struct ls_err err = {0};
    char *text = NULL; /* read once: a workload piped through /dev/stdin has one reading */
    size_t len = 0;
    char *log = NULL;
    size_t loglen = 0;
    FILE *errlog = all_errors ? stderr : open_memstream(&log, &loglen);
    if (!errlog)
        errlog = stderr;
    int rc = workload_read(path, &text, &len, errlog, &err);
    if (rc == 0 && sweep_text_is_sweep(text, len, NULL, 0)) { /* a TTL sweep, not a workload */
        fprintf(stderr, "lockstorm: %s is a sweep file; run it with: lockstorm sweep %s\n", path,
                a->pos[0]);
        free(text);
        if (errlog != stderr)
            fclose(errlog);
        free(log);
        return 2;
    }
    if (rc == 0)
        rc = workload_load_text(path, text, len, sets, nsets, w, errlog, &err);
    free(text);
    if (errlog != stderr) {
        fclose(errlog);
        print_first_error(log, loglen, a->pos[0]);
        free(log);
    }
    if (rc < 0)
        return ls_exit_code(rc) == 3 ? 2 : ls_exit_code(rc);
    return 0;
}

/* The command line's overrides as load_workload applies them (--seed last),
 * for the variants of a compare: block; sets has room for 260, seedset
 * (64 bytes) holds the seed override. */
static int compare_sets(const struct common_args *a, const char **sets, char *seedset)
{
    int n = 0;
    for (int i = 0; i < a->nsets; i++)
        sets[n++] = a->sets[i];
    if (a->seed) {
        snprintf(seedset, 64, "seed=%s", a->seed);
        sets[n++] = seedset;
    }
    return n;
}

/* The result on stdout: the JSON document (--json), the Markdown summary
 * (--md), the verdict line alone (--quiet), or the text summary. */
static int emit_result(const struct json *res, const struct common_args *a)
{
    struct strbuf sb = STRBUF_INIT;
    if (a->json)
        render_json(res, &sb);
    else if (a->md)
        render_markdown(res, &sb);
    else if (a->quiet)
        render_verdict_line(res, &sb);
    else
        render_text(res, &sb);
    fwrite(sb.buf, 1, sb.len, stdout);
    fflush(stdout);
    sb_free(&sb);
    return result_exit_code(res);
}

/* --format and --progress, for run, check and report: formats 0 = all. */
static int report_opts(const struct common_args *a, unsigned *formats, int *progress)
{
    char why[160];
    *formats = 0;
    if (a->json && a->md)
        return usage_error("%s", "--json and --md both choose what goes to stdout; give one");
    if (a->format && reports_parse_formats(a->format, formats, why, sizeof(why)) < 0)
        return usage_error("--format: %s", why);
    if (progress) {
        *progress = PROGRESS_AUTO;
        if (a->progress && progress_parse(a->progress, progress) < 0)
            return usage_error("--progress '%s': expected auto, plain or off", a->progress);
    } else if (a->progress) {
        return usage_error("%s", "--progress applies to run only");
    }
    return 0;
}

static int cmd_run(struct common_args *a)
{
    unsigned formats;
    int progress;
    int orc = report_opts(a, &formats, &progress);
    if (orc)
        return orc;
    char replay_wl[PATH_MAX];
    if (a->replay) { /* the workload is the replayed run's resolved one */
        if (a->npos != 0)
            return usage_error("%s", "run --replay RUN_DIR takes no WORKLOAD (it runs "
                                     "RUN_DIR/workload.yaml)");
        snprintf(replay_wl, sizeof(replay_wl), "%s/workload.yaml", a->replay);
        a->pos[a->npos++] = replay_wl;
    }
    if (a->npos != 1)
        return usage_error("%s", "run needs exactly one WORKLOAD");
    if (!a->replay && suite_is_dir(a->pos[0])) { /* a directory: the suite (harness/suite.h) */
        if (a->json || a->md)
            return usage_error("run DIR prints one line per scenario; %s is per run",
                               a->json ? "--json" : "--md");
        struct suite_opts so = {a->sets, a->nsets, a->seed, a->out, formats};
        return suite_run(a->pos[0], &so, stdout);
    }
    struct workload *w = NULL;
    int rc = load_workload(a, &w, 0);
    if (rc)
        return rc;
    if (w->compare.n > 0 && a->md) {
        workload_free(w);
        return usage_error("%s", "a compare: block prints the comparison; --md is per run "
                                 "(each variant's run directory has its summary.md)");
    }
    if (w->compare.n > 0) { /* a compare: block: one run per variant (harness/cli_compare.h) */
        char buf[PATH_MAX];
        const char *sets[260];
        char seedset[64];
        int nsets = compare_sets(a, sets, seedset);
        struct run_opts mo = {.out = a->out, .quiet = a->quiet, .progress = progress,
                              .formats = formats};
        rc = a->replay ? usage_error("%s", "run --replay of a workload with a compare: block; "
                                           "replay one variant's run directory instead")
                       : cli_run_compare(resolve_workload(a->pos[0], buf, sizeof(buf)), sets,
                                         nsets, w, &mo, a->json);
        workload_free(w);
        return rc;
    }
    {   /* earlier runs next to this one that died leaving processes: say so (leftover.h) */
        char parent[PATH_MAX];
        snprintf(parent, sizeof(parent), "%s", a->out ? a->out : "runs/x");
        size_t pl = strlen(parent);
        while (pl > 1 && parent[pl - 1] == '/')
            parent[--pl] = '\0';
        char *slash = strrchr(parent, '/');
        if (slash)
            *(slash == parent ? slash + 1 : slash) = '\0';
        leftover_check_siblings(slash ? parent : ".", stderr);
    }
    struct run_opts o = {.out = a->out, .quiet = a->quiet, .replay = a->replay,
                         .progress = progress, .formats = formats};
    struct json *res = NULL;
    char *dir = NULL;
    struct ls_err err = {0};
    rc = run_workload(w, &o, &res, &dir, &err);
    int code;
    if (rc < 0) {
        code = env_error(&err);
        if (dir)
            fprintf(stderr, "lockstorm: the run directory is %s\n", dir);
    } else {
        code = emit_result(res, a);
        if (!a->quiet)
            fprintf(stderr, "lockstorm: run directory: %s\n", dir);
    }
    json_free(res);
    free(dir);
    workload_free(w);
    return code;
}

/* Write the reports of formats into dir, saying which on say unless quiet
 * (check says it on stderr: its stdout ends with the verdict line or is the
 * JSON document). Returns 0 or 3. */
static int write_reports(const char *dir, const struct json *res, unsigned formats,
                         const struct common_args *a, FILE *say)
{
    struct strbuf written = STRBUF_INIT;
    struct ls_err err = {0};
    int rc = reports_write_all(dir, res, formats, a->quiet ? NULL : stderr, &written, &err);
    if (rc < 0) {
        sb_free(&written);
        fprintf(stderr, "lockstorm: error: %s\n", err.msg);
        return 3;
    }
    if (!a->quiet)
        fprintf(say, "lockstorm: wrote into %s: %s\n", dir, sb_cstr(&written));
    sb_free(&written);
    return 0;
}

/* Contract: --jobs of check and report into *jobs (0 when not given: one
 * thread per usable CPU, at most 4); 0, or a usage error (exit 2) before anything is
 * read. */
static int jobs_arg(const struct common_args *a, int *jobs)
{
    *jobs = 0;
    if (!a->jobs)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(a->jobs, &end, 10);
    if (*end || end == a->jobs || a->jobs[0] < '0' || a->jobs[0] > '9' || errno || v < 1 || v > PASS_JOBS_MAX)
        return usage_error("--jobs '%s': expected an integer from 1 to %d (threads of the "
                           "check's pass)", a->jobs, PASS_JOBS_MAX);
    *jobs = (int)v;
    return 0;
}

static int cmd_check(struct common_args *a)
{
    struct history h;
    memset(&h, 0, sizeof(h));
    struct ls_err err = {0};
    int rc;
    struct workload *w = NULL;
    unsigned formats;
    int jobs;
    if ((rc = report_opts(a, &formats, NULL)) != 0 || (rc = jobs_arg(a, &jobs)) != 0)
        return rc;
    /* --format writes files: into the run directory, or --out DIR for a
     * JSONL history (which has no directory of its own). */
    const char *report_dir = a->history ? a->out : (a->npos ? a->pos[0] : NULL);
    if (a->format && a->history && !a->out)
        return usage_error("%s", "check --history --format needs --out DIR for the files");
    if (a->out && !a->history)
        return usage_error("%s", "check RUN_DIR writes into RUN_DIR; --out is for --history");
    if (a->history) {
        if (a->npos)
            return usage_error("%s", "check takes a RUN_DIR or --history FILE, not both");
        rc = history_load_jsonl(a->history, &h, &err);
    } else {
        if (a->npos != 1)
            return usage_error("%s", "check needs a RUN_DIR (or --history FILE.jsonl)");
        rc = checkproc_load(a->pos[0], &h, &w, &err);
    }
    if (rc < 0) {
        history_free(&h);
        workload_free(w);
        return load_error(&err);
    }
    if (!a->history)
        leftover_check_dir(a->pos[0], 0, stderr);
    if (h.incomplete)
        fprintf(stderr, "lockstorm: warning: %s: the run is incomplete (its harness did not "
                "finish it); the verdict covers what was recorded\n", a->pos[0]);
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = jobs;
    if (a->capacity) {
        char *end;
        errno = 0;
        long v = strtol(a->capacity, &end, 10);
        if (*end || errno || v < 1 || v > 1000000) {
            history_free(&h);
            workload_free(w);
            return usage_error("--capacity '%s': expected an integer from 1 to 1000000",
                               a->capacity);
        }
        p.capacity = (int)v;
    }
    if (a->near_miss) {
        const char *why;
        if (ls_parse_duration(a->near_miss, &p.near_miss, &why) < 0) {
            history_free(&h);
            workload_free(w);
            return usage_error("--near-miss: %s", why);
        }
    }
    /* the result is built, written and dropped at once: in an arena */
    struct json_arena *arena = json_arena_begin();
    struct json *res = result_build(&h, w, &p);
    if (a->format && report_dir && (formats == 0 || (formats & REPORT_HTML)))
        result_add_holds(res, &h); /* report.html's timeline */
    history_free(&h);
    workload_free(w);
    int code = emit_result(res, a);
    if (a->format && report_dir) {
        if (a->history && mkdir(report_dir, 0755) < 0 && errno != EEXIST) {
            fprintf(stderr, "lockstorm: error: create %s: %s\n", report_dir, strerror(errno));
            code = 3;
        } else if (write_reports(report_dir, res, formats, a, stderr) != 0) {
            code = 3;
        }
    }
    json_free(res);
    json_arena_end(arena);
    return code;
}

static int cmd_report(struct common_args *a)
{
    if (a->npos != 1)
        return usage_error("%s", "report needs a RUN_DIR");
    if (a->md)
        return usage_error("%s", "--md applies to run and check; report writes summary.md with "
                                 "--format md");
    unsigned formats;
    int jobs;
    int rc = report_opts(a, &formats, NULL);
    if (rc || (rc = jobs_arg(a, &jobs)) != 0)
        return rc;
    struct history h;
    memset(&h, 0, sizeof(h));
    struct ls_err err = {0};
    struct workload *w = NULL;
    if (checkproc_load(a->pos[0], &h, &w, &err) < 0) {
        history_free(&h);
        workload_free(w);
        return load_error(&err);
    }
    struct check_params p;
    check_params_from(&h, &p);
    p.jobs = jobs;
    struct json_arena *arena = json_arena_begin(); /* as in cmd_check */
    struct json *res = result_build(&h, w, &p);
    if (formats == 0 || (formats & REPORT_HTML))
        result_add_holds(res, &h); /* report.html's timeline */
    history_free(&h);
    workload_free(w);
    int code = result_exit_code(res);
    if (write_reports(a->pos[0], res, formats, a, stdout) != 0)
        code = 3;
    json_free(res);
    json_arena_end(arena);
    return code;
}

static int cmd_validate(struct common_args *a)
{
    if (a->reference) {
        struct strbuf sb = STRBUF_INIT;
        workload_write_reference(&sb);
        fwrite(sb.buf, 1, sb.len, stdout);
        sb_free(&sb);
        return 0;
    }
    if (a->npos != 1)
        return usage_error("%s", "validate needs exactly one WORKLOAD");
    struct workload *w = NULL;
    int rc = load_workload(a, &w, 1);
    if (rc)
        return rc;
    if (w->compare.n > 0) { /* every variant must load too */
        char buf[PATH_MAX];
        const char *sets[260];
        char seedset[64];
        int nsets = compare_sets(a, sets, seedset);
        rc = cli_validate_compare(resolve_workload(a->pos[0], buf, sizeof(buf)), sets, nsets, w);
        if (rc) {
            workload_free(w);
            return rc;
        }
    }
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w, &sb);
    fwrite(sb.buf, 1, sb.len, stdout);
    sb_free(&sb);
    fprintf(stderr, "lockstorm: %s: ok\n", w->file);
    workload_free(w);
    return 0;
}

static int cmd_list(struct common_args *a)
{
    const char *what = a->npos ? a->pos[0] : "all";
    int all = strcmp(what, "all") == 0;
    if (!all && strcmp(what, "locks") && strcmp(what, "faults") && strcmp(what, "workloads"))
        return usage_error("list: unknown category '%s' (locks, faults, workloads)", what);
    if (all || !strcmp(what, "locks")) {
        if (all)
            printf("locks:\n");
        lock_print_list(stdout);
    }
    if (all || !strcmp(what, "faults")) {
        if (all)
            printf("\nfaults:\n");
        fault_print_list(stdout);
    }
    if (all || !strcmp(what, "workloads")) {
        if (all)
            printf("\n");
        list_workloads();
    }
    return 0;
}

static int cmd_log(struct common_args *a)
{
    if (a->npos != 2 || strcmp(a->pos[0], "export"))
        return usage_error("%s", "usage: lockstorm log export RUN_DIR");
    struct history h;
    memset(&h, 0, sizeof(h));
    struct ls_err err = {0};
    if (history_load_rundir(a->pos[1], &h, &err) < 0) {
        history_free(&h);
        return load_error(&err);
    }
    history_export_jsonl(&h, stdout);
    history_free(&h);
    return fflush(stdout) == 0 ? 0 : 3;
}

/* `lockstorm get RUN_DIR PATH...`: one line per path, the JSON value
 * compact ("null" when absent); exit 1 when any path is absent. */
static int cmd_get(struct common_args *a, int argc, char **argv)
{
    if (argc < 2)
        return usage_error("%s", "usage: lockstorm get RUN_DIR|FILE.json PATH...");
    char path[PATH_MAX];
    struct stat st;
    if (stat(argv[0], &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(path, sizeof(path), "%s/result.json", argv[0]);
    else
        snprintf(path, sizeof(path), "%s", argv[0]);
    (void)a;
    struct json *doc = NULL;
    char why[128];
    int lrc = json_load_file(path, &doc, why, sizeof(why));
    if (lrc < 0) {
        fprintf(stderr, "lockstorm: error: %s: %s%s\n", path, lrc == -2 ? "not JSON: " : "", why);
        return 3;
    }
    int missing = 0;
    for (int i = 1; i < argc; i++) {
        const struct json *v = json_path(doc, argv[i]);
        struct strbuf out = STRBUF_INIT;
        if (!v) {
            missing = 1;
            sb_puts(&out, "null");
        } else if (v->type == JSON_STR) {
            sb_append(&out, v->s, v->n);
        } else {
            json_write(&out, v, -1);
        }
        printf("%s\n", sb_cstr(&out));
        sb_free(&out);
    }
    json_free(doc);
    return missing;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return cli_help_main(argc - 2, argv + 2, stdout, stderr); /* harness/cli_help.c */
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))
        return cli_version(argc - 2, argv + 2, stdout, stderr);
    const char *cmd = argv[1];
    if (cli_is_command(cmd) && cli_wants_help(argc - 2, argv + 2))
        return cli_help_command(cmd, stdout, stderr); /* COMMAND --help */
    if (!strcmp(cmd, "init"))
        return cli_init_main(argc - 2, argv + 2);
    struct common_args a;
    if (!strcmp(cmd, "adapter-test"))
        return adapter_test_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "adapter")) /* adapter init (harness/adapter_init.c) */
        return adapter_cli_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "get"))
        return cmd_get(&a, argc - 2, argv + 2);
    if (!strcmp(cmd, "compare")) /* any number of RUN_DIRs (harness/cli_compare.c) */
        return cli_compare_main(argc - 2, argv + 2);
    if (!strcmp(cmd, "sweep"))
        return sweep_command(argc - 2, argv + 2, resolve_workload); /* harness/sweep_run.c */
    if (!strcmp(cmd, "stress"))
        return stress_command(argc - 2, argv + 2, resolve_workload); /* harness/stress.c */
    if (!cli_is_command(cmd)) /* before its options: `bogus --jobs 2` is an unknown command */
        return usage_error("unknown command '%s'", cmd);
    int rc = parse_args(argc - 2, argv + 2, &a);
    if (rc)
        return rc;
    if (a.jobs && strcmp(cmd, "check") != 0 && strcmp(cmd, "report") != 0)
        return usage_error("--jobs applies to check and report (the threads of the checkers' "
                           "pass), not to %s", cmd);
    if (!strcmp(cmd, "run"))
        return cmd_run(&a);
    if (!strcmp(cmd, "check"))
        return cmd_check(&a);
    if (!strcmp(cmd, "report"))
        return cmd_report(&a);
    if (!strcmp(cmd, "validate"))
        return cmd_validate(&a);
    if (!strcmp(cmd, "list"))
        return cmd_list(&a);
    if (!strcmp(cmd, "log"))
        return cmd_log(&a);
    return usage_error("unknown command '%s'", cmd);
}
