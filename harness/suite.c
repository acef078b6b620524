/*
 * suite.c: `lockstorm run DIR` (see suite.h). Loads and runs each workload
 * of the directory in turn with the same overrides, and prints one line
 * per scenario: its verdict, how long it ran, and each expectation as
 * name=measured value (the last part of the result path), marked "!!!"
 * when it was not met. It judges nothing itself: every verdict is the
 * run's own (its expect: block).
 */
#include "harness/suite.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness/progress.h"
#include "harness/run.h"
#include "harness/workload.h"
#include "harness/verdict.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define SUITE_MAX 256

int suite_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.yaml names in dir, sorted (caller frees each and the array).
 * Returns the count, or -errno. */
static int list_yaml(const char *dir, char ***names)
{
    *names = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return -errno;
    char **v = calloc(SUITE_MAX, sizeof(*v));
    int n = 0;
    struct dirent *de;
    while (v && (de = readdir(d)) && n < SUITE_MAX) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] != '.' && l > 5 && strcmp(de->d_name + l - 5, ".yaml") == 0)
            v[n++] = strdup(de->d_name);
    }
    closedir(d);
    if (!v)
        return -ENOMEM;
    qsort(v, (size_t)n, sizeof(*v), cmp_name);
    *names = v;
    return n;
}

/* "checks.mutex.by_class.lock_broken" -> "lock_broken"; a last part that
 * says little alone ("p99_ms", "valid") keeps its parent: "acquire_wait.p99_ms". */
static const char *short_path(const char *path, char *buf, size_t n)
{
    const char *last = strrchr(path, '.');
    if (!last)
        return path;
    const char *l = last + 1;
    int generic = (l[0] == 'p' && l[1] >= '0' && l[1] <= '9') || strcmp(l, "valid") == 0 ||
                  strcmp(l, "max_ms") == 0 || strcmp(l, "mean_ms") == 0 || strcmp(l, "count") == 0;
    if (!generic)
        return l;
    const char *p = last;
    while (p > path && p[-1] != '.')
        p--;
    snprintf(buf, n, "%s", p);
    return buf;
}

/* The scenario's line after its name: verdict and expectations (no
 * newline). */
static void put_line(struct strbuf *sb, const struct json *res, double secs)
{
    const char *v = json_get_str(res, "verdict", "unknown");
    sb_printf(sb, " %-7s %5.1fs ", strcmp(v, "pass") == 0 ? "PASS" : strcmp(v, "fail") == 0
                                                                         ? "FAIL" : "UNKNOWN",
              secs);
    const struct json *ex = json_obj_get(res, "expectations");
    for (size_t i = 0; ex && ex->type == JSON_ARR && i < ex->n; i++) {
        const struct json *e = ex->kids[i];
        char buf[128];
        sb_printf(sb, " %s=", short_path(json_get_str(e, "path", "?"), buf, sizeof(buf)));
        const struct json *got = json_obj_get(e, "got");
        if (!got || got->type == JSON_NULL)
            sb_puts(sb, "-");
        else if (got->type == JSON_NUM && !got->is_int)
            sb_printf(sb, "%.1f", got->d);
        else
            json_write(sb, got, -1);
        const struct json *ok = json_obj_get(e, "ok");
        if (ok && ok->type == JSON_BOOL && !ok->i)
            sb_printf(sb, " (want %s) !!!", json_get_str(e, "want", "?"));
    }
    if (!ex || ex->type != JSON_ARR || ex->n == 0)
        sb_printf(sb, " checks=%s", json_get_str(res, "verdict_checks", "unknown"));
}

static int worse(int a, int b)
{
    /* severity: 0 < 1 (fail) < 4 (unknown) < 3 (environment) < 2 (workload) */
    static const int rank[] = {0, 1, 4, 3, 2};
    int ra = a >= 0 && a <= 4 ? rank[a] : 4, rb = b >= 0 && b <= 4 ? rank[b] : 4;
    return ra >= rb ? a : b;
}

int suite_run(const char *dir, const struct suite_opts *o, FILE *out)
{
    char **names = NULL;
    int n = list_yaml(dir, &names);
    if (n <= 0) {
        fprintf(stderr, "lockstorm: error: %s: %s\n", dir,
                n == 0 ? "no workload files (*.yaml) in this directory" : strerror(-n));
        free(names);
        return 2;
    }
    const char *sets[260];
    int nsets = 0;
    for (int i = 0; i < o->nsets && nsets < 256; i++)
        sets[nsets++] = o->sets[i];
    char seedset[64];
    if (o->seed) {
        snprintf(seedset, sizeof(seedset), "seed=%s", o->seed);
        sets[nsets++] = seedset;
    }
    int code = 0, passed = 0, failed = 0, other = 0;
    int64_t t0 = ls_now_ns();
    fprintf(out, "suite %s: %d scenarios\n", dir, n);
    fflush(out);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX], rundir[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        struct strbuf sb = STRBUF_INIT;
        struct workload *w = NULL;
        struct ls_err err = {0};
        sb_printf(&sb, "%-28.*s", (int)(strlen(names[i]) - 5), names[i]);
        if (workload_load(path, sets, nsets, &w, NULL, &err) < 0) { /* first error on its line */
            sb_printf(&sb, " ERROR   workload: %s\n", err.msg);
            code = worse(code, 2);
            other++;
        } else {
            struct run_opts ro = {.quiet = 1, .progress = PROGRESS_OFF, .formats = o->formats};
            if (o->out) {
                snprintf(rundir, sizeof(rundir), "%s/%s", o->out, w->name);
                ro.out = rundir;
            }
            struct json *res = NULL;
            char *rdir = NULL;
            int64_t s0 = ls_now_ns();
            int rc = run_workload(w, &ro, &res, &rdir, &err);
            double secs = (double)(ls_now_ns() - s0) / 1e9;
            if (rc < 0 || !res) {
                sb_printf(&sb, " ERROR   %5.1fs %s\n", secs, err.msg);
                code = worse(code, ls_exit_code(rc < 0 ? rc : LS_EENV));
                other++;
            } else {
                put_line(&sb, res, secs);
                int ec = result_exit_code(res);
                code = worse(code, ec);
                passed += ec == 0;
                failed += ec == 1;
                other += ec != 0 && ec != 1;
            }
            if (res && rdir && !o->out)
                sb_printf(&sb, "  [%s]", rdir);
            if (res)
                sb_putc(&sb, '\n');
            const struct json *intr = res ? json_obj_get(res, "interrupted") : NULL;
            /* a signal stops the suite: taken in a run (interrupted), or in
             * its start-up or checking (LS_EINTR without a result) */
            int stop = rc == LS_EINTR || (intr && intr->type == JSON_BOOL && intr->i);
            json_free(res);
            free(rdir);
            if (stop) {
                fwrite(sb.buf, 1, sb.len, out);
                sb_free(&sb);
                workload_free(w);
                fprintf(out, "suite interrupted after %d of %d scenarios\n", i + 1, n);
                code = worse(code, 4);
                for (int k = i; k < n; k++)
                    free(names[k]);
                free(names);
                return code;
            }
        }
        workload_free(w);
        fwrite(sb.buf, 1, sb.len, out);
        fflush(out);
        sb_free(&sb);
        free(names[i]);
    }
    free(names);
    fprintf(out, "suite %s: %d scenarios, %d passed, %d failed, %d other, %.1fs\n", dir, n, passed,
            failed, other, (double)(ls_now_ns() - t0) / 1e9);
    return code;
}
