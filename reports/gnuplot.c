/*
 * gnuplot.c: the chart renderer (docs/reports.md). For each chart it
 * writes NAME.dat (the model's "series" table(s), a header comment naming
 * the columns; several tables are gnuplot index blocks) and NAME.gp, which
 * loads the shared style.gp (reports/gnuplot/style.gp, embedded at build
 * time and copied into the run directory) and faults.gp (every fault
 * window, shaded on the time axis). Then it runs gnuplot on each script
 * as a child process (util/proc.h: argv, no shell, bounded time), so a
 * user can re-run `cd RUN_DIR && gnuplot timeline.gp` by hand. It formats
 * the model only: the data is computed in checkers/series.c.
 */
#include "reports/reports.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/proc.h"
#include "util/timeutil.h"

#include "gnuplot_style.h" /* generated from reports/gnuplot/style.gp by CMake */

#define GNUPLOT_TIMEOUT (60 * LS_NS_PER_S)
#define MAX_FAULT_OBJECTS 400
#define MAX_FAULT_LABELS 12

const struct chart_info report_charts[] = {
    {"timeline", "Timeline: holds per resource and worker"},
    {"latency", "Acquire latency"},
    {"rate", "Acquire outcomes per second"},
    {"fencing", "Lost updates: plain vs fenced counter"},
};
const int report_ncharts = (int)(sizeof(report_charts) / sizeof(report_charts[0]));

/* ---- small writers ---------------------------------------------------- */

/* A number for a .dat or .gp file: up to 10 significant digits, so both
 * sub-microsecond latencies and hour-long times in ms keep their value. */
static void put_num(struct strbuf *sb, double d)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.10g", d);
    sb_puts(sb, buf);
}

static void put_cell(struct strbuf *sb, const struct json *v)
{
    if (!v || v->type == JSON_NULL) {
        sb_puts(sb, "NaN");
    } else if (v->type == JSON_NUM) {
        if (v->is_int)
            sb_printf(sb, "%lld", (long long)v->i);
        else
            put_num(sb, v->d);
    } else if (v->type == JSON_BOOL) {
        sb_putc(sb, v->i ? '1' : '0');
    } else if (v->type == JSON_STR && v->n) {
        for (size_t i = 0; i < v->n; i++)
            sb_putc(sb, (unsigned char)v->s[i] <= ' ' ? '_' : v->s[i]);
    } else {
        sb_puts(sb, "NaN");
    }
}

static size_t rows_of(const struct json *tab)
{
    const struct json *r = json_obj_get(tab, "rows");
    return r && r->type == JSON_ARR ? r->n : 0;
}

/* One table as a .dat block: "# what", "# columns: a b c", the rows. An
 * empty table gets one row of NaN, so gnuplot still counts the block. */
static void put_table(struct strbuf *sb, const struct json *tab, const char *what)
{
    const struct json *cols = json_obj_get(tab, "columns");
    const struct json *rows = json_obj_get(tab, "rows");
    size_t nc = cols && cols->type == JSON_ARR ? cols->n : 0;
    sb_printf(sb, "# %s\n# columns:", what);
    for (size_t i = 0; i < nc; i++) {
        const struct json *c = json_arr_get(cols, i);
        sb_printf(sb, " %s", c && c->type == JSON_STR ? c->s : "?");
    }
    sb_putc(sb, '\n');
    if (!rows_of(tab)) {
        for (size_t i = 0; i < (nc ? nc : 1); i++)
            sb_puts(sb, i ? " NaN" : "NaN");
        sb_putc(sb, '\n');
        return;
    }
    for (size_t r = 0; r < rows->n; r++) {
        const struct json *row = rows->kids[r];
        for (size_t i = 0; row && row->type == JSON_ARR && i < row->n; i++) {
            if (i)
                sb_putc(sb, ' ');
            put_cell(sb, row->kids[i]);
        }
        sb_putc(sb, '\n');
    }
}

void gnuplot_put_str(struct strbuf *sb, const char *s)
{
    sb_putc(sb, '\'');
    for (; s && *s; s++) {
        if (*s == '\'')
            sb_putc(sb, '\'');
        sb_putc(sb, (unsigned char)*s < ' ' ? ' ' : *s);
    }
    sb_putc(sb, '\'');
}

static int write_file(const char *dir, const char *name, const struct strbuf *sb,
                      struct ls_err *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = sb_write_file(sb, path);
    if (rc < 0)
        return ls_err_errno(err, LS_EIO, -rc, "write %s", path);
    return 0;
}

static void gp_head(struct strbuf *sb, const char *name, const char *what, int w, int h)
{
    sb_printf(sb, "# %s.gp: %s\n# Data: %s.dat. Re-run with: cd RUN_DIR && gnuplot %s.gp\n"
                  "# (written by lockstorm from result.json \"series\"; docs/reports.md)\n",
              name, what, name, name);
    sb_printf(sb, "load 'style.gp'\neval ls_terminal(%d, %d)\nload 'faults.gp'\n", w, h);
    sb_printf(sb, "set output '%s.svg'\n", name);
}

/* ", NaN with boxes ... title 'fault window'": a key entry for the shading. */
static void gp_fault_key(struct strbuf *sb, int nfaults)
{
    if (nfaults > 0)
        sb_puts(sb, ", \\\n     NaN with boxes fc rgb ls_fault fs solid 0.35 "
                    "title 'fault window'");
}

/* ---- faults.gp ---------------------------------------------------------- */

static int write_faults(const char *dir, const struct json *result, struct ls_err *err)
{
    struct strbuf sb = STRBUF_INIT;
    sb_puts(&sb, "# faults.gp: fault windows from result.json \"faults\" (injected ones),\n"
                 "# shaded on the time axis of every chart (x in seconds since run start).\n"
                 "# columns of the comments: id kind target start_s end_s\n");
    const struct json *faults = json_obj_get(result, "faults");
    int n = 0;
    for (size_t i = 0; faults && faults->type == JSON_ARR && i < faults->n; i++) {
        const struct json *f = faults->kids[i];
        const struct json *sk = json_obj_get(f, "skipped");
        if (sk && sk->type == JSON_BOOL && sk->i)
            continue;
        double a = json_get_num(f, "start_ms", 0) / 1e3, b = json_get_num(f, "end_ms", 0) / 1e3;
        sb_printf(&sb, "# %lld %s %s ", (long long)json_get_int(f, "id", -1),
                  json_get_str(f, "kind", "?"), json_get_str(f, "target", "?"));
        put_num(&sb, a);
        sb_putc(&sb, ' ');
        put_num(&sb, b);
        sb_putc(&sb, '\n');
        if (n >= MAX_FAULT_OBJECTS)
            continue;
        if (b <= a)
            b = a + 0.001; /* keep a zero-length window visible as a line */
        sb_printf(&sb, "set object %d rect from ", 100 + n);
        put_num(&sb, a);
        sb_puts(&sb, ", graph 0 to ");
        put_num(&sb, b);
        sb_puts(&sb, ", graph 1 behind clip fc rgb ls_fault fs solid 0.35 noborder\n");
        n++;
    }
    sb_printf(&sb, "ls_nfaults = %d\n", n);
    int rc = write_file(dir, "faults.gp", &sb, err);
    sb_free(&sb);
    return rc < 0 ? rc : n;
}

/* ---- the charts ---------------------------------------------------------- */

static double run_end_s(const struct json *result)
{
    double d = json_get_num(result, "duration_s", 0);
    return d > 0 ? d : 1;
}

/* The x range in seconds; never empty (gnuplot refuses x_min == x_max). */
static void gp_xrange(struct strbuf *sb, double from, double to)
{
    sb_puts(sb, "set xrange [");
    put_num(sb, from);
    sb_putc(sb, ':');
    put_num(sb, to > from + 0.001 ? to : from + 0.001);
    sb_puts(sb, "]\n");
}

/* A chart with nothing to draw still makes an SVG saying so. */
static void gp_empty(struct strbuf *sb, const char *why)
{
    sb_puts(sb, "unset key\nset yrange [0:1]\nunset ytics\nset label 1 ");
    gnuplot_put_str(sb, why);
    sb_puts(sb, " at graph 0.5, graph 0.5 center font ',14'\n"
                "plot 2 with lines lc rgb '#ffffff' notitle\nunset output\n");
}

static int chart_rate(const char *dir, const struct json *r, int nf, struct ls_err *err)
{
    const struct json *t = json_path(r, "series.rate");
    struct strbuf dat = STRBUF_INIT, gp = STRBUF_INIT;
    put_table(&dat, t, "rate: acquire outcomes per second, per bucket starting at t_ms");
    gp_head(&gp, "rate", "acquire outcomes per second over time", 960, 340);
    sb_puts(&gp, "set title 'Acquire outcomes per second'\nset ylabel 'per second'\n"
                 "set yrange [0:*]\n");
    gp_xrange(&gp, 0, run_end_s(r));
    if (!rows_of(t)) {
        gp_empty(&gp, "no acquire attempts");
    } else {
        sb_puts(&gp, "plot 'rate.dat' using ($1/1e3):3 with steps ls 2 title 'busy/s', \\\n"
                     "     '' using ($1/1e3):2 with steps ls 1 title 'grants/s', \\\n"
                     "     '' using ($1/1e3):4 with steps ls 3 title 'unknown/s', \\\n"
                     "     '' using ($1/1e3):5 with steps ls 4 title 'failed/s'");
        gp_fault_key(&gp, nf);
        sb_puts(&gp, "\nunset output\n");
    }
    int rc = write_file(dir, "rate.dat", &dat, err);
    if (rc == 0)
        rc = write_file(dir, "rate.gp", &gp, err);
    sb_free(&dat);
    sb_free(&gp);
    return rc;
}

static int chart_latency(const char *dir, const struct json *r, int nf, struct ls_err *err)
{
    const struct json *sc = json_path(r, "series.latency");
    const struct json *q = json_path(r, "series.latency_quantiles");
    struct strbuf dat = STRBUF_INIT, gp = STRBUF_INIT;
    put_table(&dat, sc, "latency (index 0): one acquire call per row, invoked at t_ms; "
                        "outcome grant|busy|unknown|failed; sampled (see result.json "
                        "series.latency.sampled_every)");
    sb_puts(&dat, "\n\n");
    put_table(&dat, q, "latency quantiles (index 1): p50 and p99 of the acquire calls invoked "
                       "in each bucket, t_ms = bucket middle");
    gp_head(&gp, "latency", "acquire latency scatter with p50/p99 over time", 960, 380);
    sb_puts(&gp, "set title 'Acquire latency (one point per call, sampled), p50 and p99'\n"
                 "set ylabel 'latency (ms)'\nset logscale y\n");
    gp_xrange(&gp, 0, run_end_s(r));
    if (!rows_of(sc)) {
        sb_puts(&gp, "unset logscale y\n");
        gp_empty(&gp, "no acquire calls");
    } else {
        static const char *const oc[][3] = {
            {"busy", "2", "busy"}, {"grant", "1", "grant"},
            {"unknown", "3", "unknown outcome"}, {"failed", "4", "failed"}};
        sb_puts(&gp, "plot ");
        for (size_t i = 0; i < 4; i++)
            sb_printf(&gp, "%s'latency.dat' index 0 using (strcol(3) eq '%s' ? $1/1e3 : NaN):"
                           "($2 > 0 ? $2 : NaN) with points ls %s title '%s'",
                      i ? ", \\\n     " : "", oc[i][0], oc[i][1], oc[i][2]);
        if (rows_of(q))
            sb_puts(&gp, ", \\\n     '' index 1 using ($1/1e3):2 with lines ls 5 title 'p50', "
                         "\\\n     '' index 1 using ($1/1e3):3 with lines ls 6 title 'p99'");
        gp_fault_key(&gp, nf);
        sb_puts(&gp, "\nunset output\n");
    }
    int rc = write_file(dir, "latency.dat", &dat, err);
    if (rc == 0)
        rc = write_file(dir, "latency.gp", &gp, err);
    sb_free(&dat);
    sb_free(&gp);
    return rc;
}

static int chart_fencing(const char *dir, const struct json *r, int nf, struct ls_err *err)
{
    const struct json *t = json_path(r, "series.fencing");
    const struct json *off = json_obj_get(t, "offered");
    int offered = off && off->type == JSON_BOOL && off->i;
    struct strbuf dat = STRBUF_INIT, gp = STRBUF_INIT;
    put_table(&dat, t, "fencing: at the end of each bucket, lost updates so far (accepted "
                       "writes minus the counter's value) of the plain and fenced counters, "
                       "and stale fenced ops rejected so far");
    gp_head(&gp, "fencing", "lost updates of the plain and the fenced counter over time", 960,
            340);
    sb_puts(&gp, offered ? "set title 'Lost updates so far: plain vs fenced counter'\n"
                         : "set title 'Lost updates so far: plain counter (no fences offered)'\n");
    sb_puts(&gp, "set ylabel 'updates'\nset yrange [0:*]\n");
    gp_xrange(&gp, 0, run_end_s(r));
    if (!rows_of(t)) {
        gp_empty(&gp, "no protected-resource writes");
    } else {
        sb_puts(&gp, "plot 'fencing.dat' using ($1/1e3):2 with steps ls 7 "
                     "title 'plain counter: lost updates'");
        if (offered)
            sb_puts(&gp, ", \\\n     '' using ($1/1e3):3 with steps ls 8 "
                         "title 'fenced counter: lost updates', \\\n"
                         "     '' using ($1/1e3):4 with steps ls 9 "
                         "title 'stale fenced ops rejected'");
        gp_fault_key(&gp, nf);
        sb_puts(&gp, "\nunset output\n");
    }
    int rc = write_file(dir, "fencing.dat", &dat, err);
    if (rc == 0)
        rc = write_file(dir, "fencing.gp", &gp, err);
    sb_free(&dat);
    sb_free(&gp);
    return rc;
}

static int chart_timeline(const char *dir, const struct json *r, int nf, struct ls_err *err)
{
    const struct json *t = json_path(r, "series.timeline");
    const struct json *lanes = json_obj_get(t, "lanes");
    int nl = lanes && lanes->type == JSON_ARR ? (int)lanes->n : 0;
    const struct json *zv = json_obj_get(t, "zoomed");
    int zoomed = zv && zv->type == JSON_BOOL && zv->i;
    double from = json_get_num(t, "from_ms", 0) / 1e3, to = json_get_num(t, "to_ms", 0) / 1e3;
    struct strbuf dat = STRBUF_INIT, gp = STRBUF_INIT;
    put_table(&dat, json_obj_get(t, "holds"),
              "holds (index 0): one hold per row on its lane (see timeline.gp ytics); "
              "valid_until_ms NaN = no lease; end exit|crash|open");
    sb_puts(&dat, "\n\n");
    put_table(&dat, json_obj_get(t, "overlaps"),
              "overlaps (index 1): each listed violation's overlap on each holder's lane");
    sb_puts(&dat, "\n\n");
    put_table(&dat, json_obj_get(t, "overview"),
              "overview (index 2): grants per second over the whole run (zoomed timelines)");
    sb_puts(&dat, "\n\n");
    put_table(&dat, json_obj_get(t, "markers"),
              "markers (index 3): start of each listed violation");

    int h = 150 + 22 * nl + (zoomed ? 150 : 0);
    h = h < 320 ? 320 : h > 1500 ? 1500 : h;
    gp_head(&gp, "timeline", "holds per resource and worker, overlaps, fault windows", 960, h);
    sb_printf(&gp, "NLANES = %d\n", nl);
    sb_puts(&gp, "# the part of a hold within its lease ends at min(exit, valid_until)\n"
                 "inl(x, l) = (l == l && l < x) ? l : x\n");
    if (zoomed && nl > 0) {
        double pw = 150.0 / h;
        sb_printf(&gp, "set multiplot\nset origin 0, %.4f\nset size 1, %.4f\n", pw, 1 - pw);
    }
    sb_puts(&gp, "set title ");
    struct strbuf title = STRBUF_INIT;
    sb_puts(&title, "Holds per resource and worker");
    if (zoomed) {
        sb_puts(&title, " (zoomed on ");
        put_num(&title, round(from * 1000) / 1000);
        sb_puts(&title, "-");
        put_num(&title, round(to * 1000) / 1000);
        sb_puts(&title, " s; the strip below shows the whole run)");
    }
    const struct json *tr = json_obj_get(t, "truncated");
    if (tr && tr->type == JSON_BOOL && tr->i)
        sb_puts(&title, " (first holds only)");
    int64_t dropped = json_get_int(t, "lanes_dropped", 0);
    if (dropped > 0)
        sb_printf(&title, " (%lld lanes not shown)", (long long)dropped);
    gnuplot_put_str(&gp, sb_cstr(&title));
    sb_free(&title);
    sb_puts(&gp, "\nunset ylabel\nset grid noytics\n");
    gp_xrange(&gp, from, to);
    if (nl == 0) {
        gp_empty(&gp, "no holds in this window");
    } else {
        sb_printf(&gp, "set yrange [NLANES - 0.4 : -0.6]\nset ytics font ',10' (");
        const char *prev_res = NULL;
        for (int i = 0; i < nl; i++) {
            const struct json *l = lanes->kids[i];
            const char *res = json_get_str(l, "res", "?");
            struct strbuf lab = STRBUF_INIT;
            sb_printf(&lab, "%s w%lld", res, (long long)json_get_int(l, "worker", -1));
            sb_puts(&gp, i ? ", " : "");
            gnuplot_put_str(&gp, sb_cstr(&lab));
            sb_printf(&gp, " %d", i);
            sb_free(&lab);
        }
        sb_puts(&gp, ")\n");
        int arrow = 1;
        for (int i = 0; i < nl; i++) { /* a dashed line between resources */
            const char *res = json_get_str(lanes->kids[i], "res", "?");
            if (prev_res && strcmp(prev_res, res) != 0)
                sb_printf(&gp, "set arrow %d from graph 0, first %.1f to graph 1, first %.1f "
                               "nohead dt 2 lc rgb '#888888'\n", arrow++, i - 0.5, i - 0.5);
            prev_res = res;
        }
        sb_puts(&gp,
                "plot 'timeline.dat' index 0 using (($2 + inl($3, $4)) / 2e3):1:"
                "((inl($3, $4) - $2) / 2e3):(0.3) with boxxyerror fc rgb ls_hold "
                "title 'hold (within its lease)', \\\n"
                "     '' index 0 using (($4 == $4 && $4 < $3) ? ($4 + $3) / 2e3 : NaN):1:"
                "(($3 - $4) / 2e3):(0.3) with boxxyerror fc rgb ls_lease "
                "title 'hold past its lease', \\\n"
                "     '' index 1 using (strcol(4) eq 'stale-holder' ? ($2 + $3) / 2e3 : NaN):1:"
                "(($3 - $2) / 2e3):(0.16) with boxxyerror fc rgb ls_stale "
                "fs transparent solid 0.85 title 'overlap: stale-holder', \\\n"
                "     '' index 1 using (strcol(4) eq 'lock-broken' ? ($2 + $3) / 2e3 : NaN):1:"
                "(($3 - $2) / 2e3):(0.16) with boxxyerror fc rgb ls_broken "
                "fs pattern 4 border lc rgb ls_broken title 'overlap: lock-broken', \\\n"
                "     '' index 0 using (strcol(5) eq 'crash' ? $3 / 1e3 : NaN):1 with points "
                "pt 2 ps 1.2 lc rgb '#000000' title 'holder killed'");
        gp_fault_key(&gp, nf);
        sb_putc(&gp, '\n');
        if (zoomed) {
            double rs = run_end_s(r);
            sb_printf(&gp, "# overview strip: the whole run, the zoom window framed\n"
                           "unset arrow\nset origin 0, 0\nset size 1, %.4f\n", 150.0 / h);
            sb_puts(&gp, "set title 'whole run: grants/s (grey), violations (ticks), zoom "
                         "window (frame)' font ',10'\nunset key\nset yrange [0:*]\n"
                         "set ytics auto font ',9'\nset y2range [0:1]\nunset y2tics\n"
                         "set grid noytics\nunset xlabel\n");
            gp_xrange(&gp, 0, rs);
            sb_puts(&gp, "set object 99 rect from ");
            put_num(&gp, from);
            sb_puts(&gp, ", graph 0 to ");
            put_num(&gp, to);
            sb_puts(&gp, ", graph 1 front fs empty border lc rgb '#000000' lw 1.5\n");
            sb_puts(&gp, "plot 'timeline.dat' index 2 using ($1/1e3):2 with filledcurves y1=0 "
                         "fc rgb '#999999' fs transparent solid 0.5 notitle, \\\n"
                         "     '' index 3 using (strcol(2) eq 'stale-holder' ? $1/1e3 : NaN):(1) "
                         "axes x1y2 with impulses lc rgb ls_stale lw 1.5 notitle, \\\n"
                         "     '' index 3 using (strcol(2) eq 'lock-broken' ? $1/1e3 : NaN):(1) "
                         "axes x1y2 with impulses lc rgb ls_broken lw 1.5 notitle\n"
                         "unset multiplot\n");
        }
        sb_puts(&gp, "unset output\n");
    }
    int rc = write_file(dir, "timeline.dat", &dat, err);
    if (rc == 0)
        rc = write_file(dir, "timeline.gp", &gp, err);
    sb_free(&dat);
    sb_free(&gp);
    return rc;
}

/* ---- running gnuplot -------------------------------------------------- */

/* Contract: the gnuplot program to run into buf (LS_GNUPLOT or "gnuplot"),
 * resolved through PATH. Returns 1 when it exists and is executable. */
static int find_gnuplot(char *buf, size_t n)
{
    const char *want = getenv("LS_GNUPLOT");
    if (!want || !*want)
        want = "gnuplot";
    if (strchr(want, '/')) {
        snprintf(buf, n, "%s", want);
        return access(buf, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(buf, n, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", want);
        struct stat st;
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
            return 1;
        if (!colon)
            break;
        path = colon + 1;
    }
    return 0;
}

/* Run gnuplot on dir/NAME.gp with dir as its working directory. Returns 1
 * when NAME.svg was made (non-empty), else 0 with a line added to note. */
static int run_gnuplot(const char *gnuplot, const char *dir, const char *name,
                       struct strbuf *note)
{
    struct strbuf cd = STRBUF_INIT;
    sb_puts(&cd, "cd ");
    gnuplot_put_str(&cd, dir);
    char script[256], log[4096], svg[4096];
    snprintf(script, sizeof(script), "%s.gp", name);
    snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
    snprintf(svg, sizeof(svg), "%s/%s.svg", dir, name);
    unlink(svg);
    char *argv[] = {(char *)gnuplot, (char *)"-e", (char *)sb_cstr(&cd), script, NULL};
    struct ls_err err = {0, ""};
    pid_t pid = proc_spawn(argv, log, &err);
    sb_free(&cd);
    if (pid < 0) {
        sb_printf(note, "%scharts: %s: %s", note->len ? "\n" : "", name, err.msg);
        return 0;
    }
    int status = 0;
    int rc = proc_wait(pid, GNUPLOT_TIMEOUT, &status);
    if (rc != 1) {
        proc_stop(pid, SIGKILL, LS_NS_PER_S);
        sb_printf(note, "%scharts: gnuplot did not finish %s.gp within %llds", note->len ? "\n" : "",
                  name, (long long)(GNUPLOT_TIMEOUT / LS_NS_PER_S));
        return 0;
    }
    struct stat st;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(svg, &st) < 0 || st.st_size == 0) {
        sb_printf(note, "%scharts: gnuplot failed on %s.gp (see gnuplot.log)",
                  note->len ? "\n" : "", name);
        return 0;
    }
    return 1;
}

/* For other chart sets (reports/sweep.c): see reports.h. */
int gnuplot_find(char *buf, size_t n)
{
    return find_gnuplot(buf, n);
}

int gnuplot_run_script(const char *gnuplot, const char *dir, const char *name,
                       struct strbuf *note)
{
    return run_gnuplot(gnuplot, dir, name, note);
}

void gnuplot_write_style(struct strbuf *sb)
{
    sb_append(sb, (const char *)ls_gnuplot_style, sizeof(ls_gnuplot_style) - 1);
}

int render_charts(const char *dir, const struct json *result, struct strbuf *note,
                  struct ls_err *err)
{
    struct strbuf style = STRBUF_INIT;
    sb_append(&style, (const char *)ls_gnuplot_style, sizeof(ls_gnuplot_style) - 1);
    int rc = write_file(dir, "style.gp", &style, err);
    sb_free(&style);
    if (rc < 0)
        return rc;
    int nf = write_faults(dir, result, err);
    if (nf < 0)
        return nf;
    typedef int (*chart_fn)(const char *, const struct json *, int, struct ls_err *);
    static const chart_fn fns[] = {chart_timeline, chart_latency, chart_rate, chart_fencing};
    for (int i = 0; i < report_ncharts; i++)
        if ((rc = fns[i](dir, result, nf, err)) < 0)
            return rc;

    char gnuplot[4096];
    if (!find_gnuplot(gnuplot, sizeof(gnuplot))) {
        sb_printf(note, "%scharts skipped: gnuplot not found", note->len ? "\n" : "");
        return 0;
    }
    char log[4096];
    snprintf(log, sizeof(log), "%s/gnuplot.log", dir);
    unlink(log);
    int made = 0;
    for (int i = 0; i < report_ncharts; i++)
        made += run_gnuplot(gnuplot, dir, report_charts[i].name, note);
    if (made == report_ncharts)
        unlink(log); /* only gnuplot's warnings (an empty series): nothing to look at */
    return made;
}
