/*
 * sweep.c: the renderers of the sweep model (reports/sweep.h): sweep.txt
 * (also stdout), sweep.json, four gnuplot charts in the run charts' style
 * (ttl-overstay: measured vs predicted overstays; ttl-violations: per
 * class per pause; ttl-fencing: lost updates; ttl-price: crash to next
 * grant) and sweep.html, one self-contained page with the charts inlined.
 * Every number comes from the model; nothing is computed here.
 */
#include "reports/sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "reports/reports.h"
#include "util/timeutil.h"

static const struct {
    const char *name, *title;
} charts[] = {
    {"ttl-overstay", "Paused holds that outlived their lease: measured vs predicted"},
    {"ttl-violations", "Violations per injected pause, by class"},
    {"ttl-fencing", "Lost updates per run: plain vs fenced counter"},
    {"ttl-price", "Price of a longer TTL: holder crash to next grant"},
};
#define NCHARTS (int)(sizeof(charts) / sizeof(charts[0]))

static size_t alen(const struct json *v)
{
    return v && v->type == JSON_ARR ? v->n : 0;
}

static double num(const struct json *o, const char *key)
{
    const struct json *v = json_obj_get(o, key);
    return v && v->type == JSON_NUM ? v->d : NAN;
}

/* A duration in ms as "400ms", "2s", "129.4ms"; "-" when missing. */
static void ms_text(double ms, char *buf, size_t n)
{
    if (ms != ms)
        snprintf(buf, n, "-");
    else if (fabs(ms - llround(ms)) < 1e-6)
        ls_format_duration((int64_t)llround(ms) * LS_NS_PER_MS, buf, n);
    else
        snprintf(buf, n, "%.1fms", ms);
}

static void pct(double v, char *buf, size_t n)
{
    if (v != v)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f%%", v * 100);
}

static void fnum(double v, int decimals, char *buf, size_t n)
{
    if (v != v)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", decimals, v);
}

/* ---- text ---------------------------------------------------------------------- */

static int count_state(const struct json *model, const char *state)
{
    const struct json *cells = json_obj_get(model, "cells");
    int n = 0;
    for (size_t i = 0; i < alen(cells); i++)
        n += strcmp(json_get_str(cells->kids[i], "state", ""), state) == 0;
    return n;
}

void render_sweep_text(const struct json *m, struct strbuf *sb)
{
    const struct json *axes = json_obj_get(m, "axes");
    const struct json *cells = json_obj_get(m, "cells");
    sb_printf(sb, "lockstorm sweep %s: base %s, %zu cells (%lld repeats each), seed %lld, %lld at "
                  "once, %.1fs\n",
              json_get_str(m, "name", "?"), json_get_str(m, "workload", "?"), alen(cells),
              (long long)json_get_int(m, "repeats", 1), (long long)json_get_int(m, "seed", 0),
              (long long)json_get_int(m, "parallel", 1), json_get_num(m, "duration_s", 0));
    for (size_t a = 0; a < alen(axes); a++) {
        const struct json *v = json_obj_get(axes->kids[a], "values");
        sb_printf(sb, "  axis %s:", json_get_str(axes->kids[a], "key", "?"));
        for (size_t j = 0; j < alen(v); j++)
            sb_printf(sb, " %s", v->kids[j]->type == JSON_STR ? v->kids[j]->s : "?");
        sb_putc(sb, '\n');
    }
    const struct json *series = json_obj_get(m, "series");
    for (size_t i = 0; i < alen(series); i++) {
        const struct json *s = series->kids[i];
        char a[32], b[32], c[32];
        sb_printf(sb, "\nseries %s\n", json_get_str(s, "label", "?"));
        if (!json_obj_get(s, "hold")) {
            sb_puts(sb, "  no cell of this series finished\n");
            continue;
        }
        sb_printf(sb, "  hold %s; pause %s\n", json_get_str(s, "hold", "?"),
                  json_get_str(s, "pause", "?"));
        sb_puts(sb, "       TTL runs pauses overstayed  predicted  harness stale-holder "
                    "lock-broken stale/pause plain-lost fenced-lost crash->grant\n");
        const struct json *pts = json_obj_get(s, "points");
        for (size_t k = 0; k < alen(pts); k++) {
            const struct json *p = pts->kids[k];
            char t[32], o[16], pr[16], ph[16], sp[16], cr[32], fl[24];
            ms_text(num(p, "ttl_ms"), t, sizeof(t));
            pct(num(p, "overstay_share"), o, sizeof(o));
            pct(num(p, "predicted_p"), pr, sizeof(pr));
            pct(num(p, "predicted_p_harness"), ph, sizeof(ph));
            fnum(num(p, "stale_holder_per_pause"), 2, sp, sizeof(sp));
            ms_text(num(p, "crash_to_next_grant_ms"), cr, sizeof(cr));
            const struct json *f = json_obj_get(p, "fenced_lost_updates");
            if (f && f->type == JSON_NUM)
                snprintf(fl, sizeof(fl), "%lld", (long long)f->i);
            else
                snprintf(fl, sizeof(fl), "-");
            sb_printf(sb, "  %8s %4lld %6lld %10s %10s %8s %12lld %11lld %11s %10lld %11s %12s\n",
                      t, (long long)json_get_int(p, "runs", 0),
                      (long long)json_get_int(p, "pauses", 0), o, pr, ph,
                      (long long)json_get_int(p, "stale_holder", 0),
                      (long long)json_get_int(p, "lock_broken", 0), sp,
                      (long long)json_get_int(p, "plain_lost_updates", 0), fl, cr);
        }
        ms_text(num(s, "smallest_safe_ttl_ms"), a, sizeof(a));
        ms_text(num(s, "predicted_safe_ttl_ms"), b, sizeof(b));
        ms_text(num(s, "predicted_ttl_p1pct_ms"), c, sizeof(c));
        sb_printf(sb, "  smallest TTL without stale-holder violations: %s measured; predicted "
                      "P(hold + pause > TTL) = 0 from %s, < 1%% from %s\n",
                  num(s, "smallest_safe_ttl_ms") == num(s, "smallest_safe_ttl_ms") ? a
                                                                                   : "none swept",
                  b, c);
    }
    const struct json *price = json_obj_get(m, "price");
    const struct json *pm = json_obj_get(price, "measured");
    sb_puts(sb, "\nprice of a longer TTL (holder crash -> next grant): ");
    if (pm && pm->type == JSON_BOOL && pm->i) {
        const struct json *pts = json_obj_get(price, "points");
        for (size_t k = 0; k < alen(pts); k++) {
            char t[32], c[32], x[32];
            ms_text(num(pts->kids[k], "ttl_ms"), t, sizeof(t));
            ms_text(num(pts->kids[k], "crash_to_next_grant_ms"), c, sizeof(c));
            ms_text(num(pts->kids[k], "crash_to_next_grant_max_ms"), x, sizeof(x));
            sb_printf(sb, "%sTTL %s -> %s (max %s, %lld crashes)", k ? "; " : "", t, c, x,
                      (long long)json_get_int(pts->kids[k], "samples", 0));
        }
        sb_putc(sb, '\n');
    } else {
        sb_printf(sb, "%s\n", json_get_str(price, "note", "not measured"));
    }
    const struct json *w = json_obj_get(m, "warnings");
    for (size_t i = 0; i < alen(w); i++)
        sb_printf(sb, "warning: %s\n", w->kids[i]->type == JSON_STR ? w->kids[i]->s : "?");
    const struct json *r = json_obj_get(m, "recommendation");
    sb_printf(sb, "\nrecommendation: %s\n", json_get_str(r, "text", "-"));
    char rt[32], pt[32];
    ms_text(num(r, "ttl_ms"), rt, sizeof(rt));
    ms_text(num(r, "predicted_ttl_ms"), pt, sizeof(pt));
    const struct json *intr = json_obj_get(m, "interrupted");
    sb_printf(sb, "lockstorm: sweep %s cells=%d/%zu errors=%d interrupted=%s recommended_ttl=%s "
                  "predicted_ttl=%s\n",
              json_get_str(m, "name", "?"), count_state(m, "done"), alen(cells),
              count_state(m, "error"), intr && intr->type == JSON_BOOL && intr->i ? "yes" : "no",
              rt, pt);
}

/* ---- charts ---------------------------------------------------------------------- */

static void put_num(struct strbuf *sb, double v)
{
    if (v != v)
        sb_puts(sb, "NaN");
    else
        sb_printf(sb, "%.10g", v);
}

/* Index block 2i per series: the measured points (cols); with curves,
 * block 2i+1: the predicted curve (ttl_ms p p_harness). */
static void put_blocks(struct strbuf *sb, const struct json *series, const char *const *cols,
                       int ncols, int curves)
{
    for (size_t i = 0; i < alen(series); i++) {
        const struct json *s = series->kids[i];
        sb_printf(sb, "%s# series %zu: %s\n# columns:", i ? "\n\n" : "", i,
                  json_get_str(s, "label", "?"));
        for (int c = 0; c < ncols; c++)
            sb_printf(sb, " %s", cols[c]);
        sb_putc(sb, '\n');
        const struct json *pts = json_obj_get(s, "points");
        for (size_t k = 0; k < alen(pts); k++) {
            for (int c = 0; c < ncols; c++) {
                if (c)
                    sb_putc(sb, ' ');
                put_num(sb, num(pts->kids[k], cols[c]));
            }
            sb_putc(sb, '\n');
        }
        if (!alen(pts)) {
            for (int c = 0; c < ncols; c++)
                sb_puts(sb, c ? " NaN" : "NaN");
            sb_putc(sb, '\n');
        }
        if (!curves)
            continue;
        sb_printf(sb, "\n\n# series %zu predicted curve\n# columns: ttl_ms p p_harness\n", i);
        const struct json *rows = json_path(s, "predicted_curve.rows");
        for (size_t k = 0; k < alen(rows); k++) {
            const struct json *r = rows->kids[k];
            for (size_t c = 0; c < alen(r); c++) {
                if (c)
                    sb_putc(sb, ' ');
                put_num(sb, r->kids[c]->type == JSON_NUM ? r->kids[c]->d : NAN);
            }
            sb_putc(sb, '\n');
        }
        if (!alen(rows))
            sb_puts(sb, "NaN NaN NaN\n");
    }
}

static void gp_head(struct strbuf *sb, const char *name, const char *title, const char *ylabel)
{
    sb_printf(sb, "# %s.gp: %s\n# Data: %s.dat (an index block per series). Re-run with: "
                  "cd SWEEP_DIR && gnuplot %s.gp\n# (written by lockstorm sweep from sweep.json; "
                  "docs/sweep.md)\n",
              name, title, name, name);
    sb_printf(sb, "load 'style.gp'\neval ls_terminal(960, 420)\nset output '%s.svg'\n", name);
    sb_puts(sb, "sc(i) = word('#0072B2 #D55E00 #009E73 #CC79A7 #E69F00 #56B4E9 #000000 "
                "#999999', i % 8 + 1)\nset xlabel 'lock TTL (ms)'\nset ylabel ");
    gnuplot_put_str(sb, ylabel);
    sb_puts(sb, "\nset title ");
    gnuplot_put_str(sb, title);
    sb_puts(sb, "\nset xrange [0:*]\nset key outside top center horizontal maxrows 4\n");
}

static void gp_none(struct strbuf *sb, const char *why)
{
    sb_puts(sb, "unset key\nset yrange [0:1]\nset xrange [0:1]\nunset ytics\nunset xtics\n"
                "set label 1 ");
    gnuplot_put_str(sb, why);
    sb_puts(sb, " at graph 0.5, graph 0.5 center font ',13'\n"
                "plot 2 with lines lc rgb '#ffffff' notitle\nunset output\n");
}

/* Contract: NAME.dat and NAME.gp of one chart into dir. Returns 0 or <0. */
static int write_pair(const char *dir, const char *name, const struct strbuf *dat,
                      const struct strbuf *gp, struct ls_err *err)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s.dat", dir, name);
    int rc = sb_write_file(dat, path);
    if (rc == 0) {
        snprintf(path, sizeof(path), "%s/%s.gp", dir, name);
        rc = sb_write_file(gp, path);
    }
    return rc < 0 ? ls_err_errno(err, LS_EIO, -rc, "write %s", path) : 0;
}

/* ttl-overstay: per series the measured overstay and stale shares and the
 * two predicted curves. Returns 0 or <0 (err set). */
static int chart_overstay(const char *dir, const struct json *m, struct ls_err *err)
{
    static const char *const cols[] = {"ttl_ms", "overstay_share", "stale_share", "paused_holds"};
    const struct json *series = json_obj_get(m, "series");
    struct strbuf dat = STRBUF_INIT, gp = STRBUF_INIT;
    put_blocks(&dat, series, cols, 4, 1);
    gp_head(&gp, "ttl-overstay", charts[0].title, "share of pauses that hit a hold");
    sb_puts(&gp, "set yrange [0:1.05]\n");
    if (!alen(series)) {
        gp_none(&gp, "no finished cell");
    } else {
        sb_puts(&gp, "plot ");
        for (size_t i = 0; i < alen(series); i++) {
            const char *lab = json_get_str(series->kids[i], "label", "?");
            struct strbuf t = STRBUF_INIT;
            sb_printf(&gp, "%s'ttl-overstay.dat' index %zu using 1:2 with linespoints lw 2 pt 7 "
                           "ps 0.9 lc rgb sc(%zu) title ", i ? ", \\\n     " : "", 2 * i, i);
            sb_printf(&t, "measured overstays: %s", lab);
            gnuplot_put_str(&gp, sb_cstr(&t));
            sb_reset(&t);
            sb_printf(&gp, ", \\\n     '' index %zu using 1:3 with points pt 6 ps 1.1 lc rgb sc(%zu) "
                           "title ", 2 * i, i);
            sb_printf(&t, "with a stale-holder violation: %s", lab);
            gnuplot_put_str(&gp, sb_cstr(&t));
            sb_reset(&t);
            sb_printf(&gp, ", \\\n     '' index %zu using 1:2 with lines lw 1.2 lc rgb sc(%zu) "
                           "title ", 2 * i + 1, i);
            sb_printf(&t, "P(hold + pause > TTL): %s", lab);
            gnuplot_put_str(&gp, sb_cstr(&t));
            sb_reset(&t);
            sb_printf(&gp, ", \\\n     '' index %zu using 1:3 with lines lw 1.2 dt 2 lc rgb "
                           "sc(%zu) title ", 2 * i + 1, i);
            sb_printf(&t, "as the workers pause: %s", lab);
            gnuplot_put_str(&gp, sb_cstr(&t));
            sb_free(&t);
        }
        sb_puts(&gp, "\nunset output\n");
    }
    int rc = write_pair(dir, "ttl-overstay", &dat, &gp, err);
    sb_free(&dat);
    sb_free(&gp);
    return rc;
}

/* A chart of measured points only: for each series one line per (column,
 * dash type, what) in lines. */
static int chart_points(const char *dir, const struct json *m, int idx, const char *ylabel,
                        const char *const *cols, int ncols, const char *const (*lines)[3],
                        int nlines, const char *none_why)
{
    const struct json *series = json_obj_get(m, "series");
    struct strbuf dat = STRBUF_INIT, gp = STRBUF_INIT;
    put_blocks(&dat, series, cols, ncols, 0);
    gp_head(&gp, charts[idx].name, charts[idx].title, ylabel);
    sb_puts(&gp, "set yrange [0:*]\n");
    if (!alen(series) || none_why) {
        gp_none(&gp, none_why ? none_why : "no finished cell");
    } else {
        sb_puts(&gp, "plot ");
        for (size_t i = 0; i < alen(series); i++) {
            for (int l = 0; l < nlines; l++) {
                struct strbuf t = STRBUF_INIT;
                sb_printf(&gp, "%s'%s.dat' index %zu using 1:%s with linespoints lw 2 pt 7 "
                               "ps 0.8 dt %s lc rgb sc(%zu) title ",
                          i || l ? ", \\\n     " : "", charts[idx].name, i, lines[l][0],
                          lines[l][1], i);
                sb_printf(&t, "%s: %s", lines[l][2], json_get_str(series->kids[i], "label", "?"));
                gnuplot_put_str(&gp, sb_cstr(&t));
                sb_free(&t);
            }
        }
        if (idx == 3) /* the price: one TTL, for scale */
            sb_puts(&gp, ", \\\n     x with lines lc rgb '#999999' dt 3 title 'one TTL'");
        sb_puts(&gp, "\nunset output\n");
    }
    struct ls_err e2 = {0};
    int rc = write_pair(dir, charts[idx].name, &dat, &gp, &e2);
    sb_free(&dat);
    sb_free(&gp);
    return rc;
}

/* Contract: style.gp and the four charts' .dat/.gp into dir, then gnuplot
 * on each. Returns the number of SVGs made (0 without gnuplot: a line on
 * note), or <0 with err set when a file could not be written. */
static int write_charts(const char *dir, const struct json *m, struct strbuf *note,
                        struct strbuf *written, struct ls_err *err)
{
    struct strbuf style = STRBUF_INIT;
    gnuplot_write_style(&style);
    char path[4200];
    snprintf(path, sizeof(path), "%s/style.gp", dir);
    int rc = sb_write_file(&style, path);
    sb_free(&style);
    if (rc < 0)
        return ls_err_errno(err, LS_EIO, -rc, "write %s", path);
    if ((rc = chart_overstay(dir, m, err)) < 0)
        return rc;
    static const char *const vcols[] = {"ttl_ms", "stale_holder_per_pause",
                                        "lock_broken_per_pause"};
    static const char *const vlines[][3] = {{"2", "1", "stale-holder"}, {"3", "2", "lock-broken"}};
    static const char *const fcols[] = {"ttl_ms", "plain_lost_updates_per_run",
                                        "fenced_lost_updates_per_run"};
    static const char *const flines[][3] = {{"2", "1", "plain counter"},
                                            {"3", "2", "fenced counter"}};
    static const char *const pcols[] = {"ttl_ms", "crash_to_next_grant_ms",
                                        "crash_to_next_grant_max_ms"};
    static const char *const plines[][3] = {{"2", "1", "mean"}, {"3", "3", "max"}};
    const struct json *pm = json_path(m, "price.measured");
    int measured = pm && pm->type == JSON_BOOL && pm->i;
    if (chart_points(dir, m, 1, "violations per injected pause", vcols, 3, vlines, 2, NULL) < 0 ||
        chart_points(dir, m, 2, "lost updates per run", fcols, 3, flines, 2, NULL) < 0 ||
        chart_points(dir, m, 3, "crash to next grant (ms)", pcols, 3, plines, 2,
                     measured ? NULL : "not measured: the sweep has no kill fault") < 0)
        return ls_err_set(err, LS_EIO, "write the charts into %s", dir);
    for (int i = 0; i < NCHARTS; i++)
        sb_printf(written, " %s.dat %s.gp", charts[i].name, charts[i].name);
    char gnuplot[4096];
    if (!gnuplot_find(gnuplot, sizeof(gnuplot))) {
        sb_printf(note, "%scharts skipped: gnuplot not found", note->len ? "\n" : "");
        return 0;
    }
    snprintf(path, sizeof(path), "%s/gnuplot.log", dir);
    unlink(path);
    int made = 0;
    for (int i = 0; i < NCHARTS; i++)
        made += gnuplot_run_script(gnuplot, dir, charts[i].name, note);
    if (made == NCHARTS)
        unlink(path);
    sb_printf(written, " (%d of %d charts as .svg)", made, NCHARTS);
    return made;
}

/* ---- html -------------------------------------------------------------------------- */

static const char CSS[] =
    "*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,'Segoe UI',"
    "Helvetica,Arial,sans-serif;color:#1d1d1f;background:#f4f5f7}"
    "main{max-width:1180px;margin:0 auto;padding:0 20px 40px}"
    "header.banner{padding:18px 24px;color:#fff;border-radius:0 0 10px 10px;margin-bottom:18px}"
    "header.pass{background:#1b7f3b}header.fail{background:#b3261e}"
    "header.unknown{background:#8a6d00}.banner .word{font-size:30px;font-weight:700}"
    ".banner .what{font-size:16px;margin-top:4px}"
    ".banner code{display:block;margin-top:10px;font-size:12.5px;white-space:pre-wrap;"
    "background:rgba(0,0,0,.18);padding:6px 8px;border-radius:6px}"
    "section{background:#fff;border:1px solid #dcdfe4;border-radius:10px;padding:14px 20px;"
    "margin:16px 0}h2{font-size:19px;margin:4px 0 10px}h3{font-size:16px;margin:14px 0 6px}"
    "table{border-collapse:collapse;width:100%;font-size:13.5px}"
    "th,td{text-align:left;padding:4px 7px;border-bottom:1px solid #eceef1;vertical-align:top}"
    "th{background:#f7f8fa;font-weight:600}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums}.bad{color:#b3261e;font-weight:600}"
    ".good{color:#1b7f3b;font-weight:600}.missing{color:#8a6d00;font-style:italic}"
    "figure{margin:10px 0 18px}figcaption{font-weight:600;margin-bottom:4px}"
    "figure svg{width:100%;height:auto;display:block;border:1px solid #eceef1;border-radius:6px}"
    "ul.warn li{color:#8a6d00}footer{color:#777;font-size:12.5px;text-align:center;"
    "margin-top:20px}";

static void td(struct strbuf *sb, const char *text, int numeric)
{
    sb_puts(sb, numeric ? "<td class=\"num\">" : "<td>");
    html_esc(sb, text);
    sb_puts(sb, "</td>");
}

static void td_int(struct strbuf *sb, const struct json *o, const char *key)
{
    const struct json *v = json_obj_get(o, key);
    char b[32];
    if (v && v->type == JSON_NUM)
        snprintf(b, sizeof(b), "%lld", (long long)v->i);
    else
        snprintf(b, sizeof(b), "-");
    td(sb, b, 1);
}

static void html_banner(struct strbuf *sb, const struct json *m)
{
    const struct json *r = json_obj_get(m, "recommendation");
    double ttl = num(r, "ttl_ms");
    int errors = count_state(m, "error");
    const struct json *intr = json_obj_get(m, "interrupted");
    int interrupted = intr && intr->type == JSON_BOOL && intr->i;
    const char *cls = errors ? "fail" : ttl == ttl && !interrupted ? "pass" : "unknown";
    char t[32];
    ms_text(ttl, t, sizeof(t));
    sb_printf(sb, "<header class=\"banner %s\" id=\"verdict\" data-verdict=\"%s\">"
                  "<div class=\"word\">", cls, cls);
    if (ttl == ttl)
        sb_printf(sb, "smallest safe TTL %s", t);
    else
        sb_puts(sb, "no swept TTL was safe");
    sb_puts(sb, "</div><div class=\"what\">sweep <b>");
    html_esc(sb, json_get_str(m, "name", "?"));
    sb_puts(sb, "</b> of <b>");
    html_esc(sb, json_get_str(m, "workload", "?"));
    sb_printf(sb, "</b> &middot; cells %d/%zu done", count_state(m, "done"),
              alen(json_obj_get(m, "cells")));
    if (errors)
        sb_printf(sb, " &middot; <b>%d errors</b>", errors);
    if (interrupted)
        sb_puts(sb, " &middot; <b>interrupted</b>");
    sb_puts(sb, "</div><code>");
    html_esc(sb, json_get_str(r, "text", ""));
    sb_puts(sb, "</code></header>\n");
}

static void html_setup(struct strbuf *sb, const struct json *m)
{
    sb_puts(sb, "<section id=\"setup\"><h2>Sweep</h2>");
    const char *d = json_get_str(m, "description", "");
    if (*d) {
        sb_puts(sb, "<p>");
        html_esc(sb, d);
        sb_puts(sb, "</p>");
    }
    sb_puts(sb, "<table><tr><th>base workload</th><td>");
    html_esc(sb, json_get_str(m, "workload", "?"));
    sb_puts(sb, " (");
    html_esc(sb, json_get_str(m, "base", "?"));
    sb_printf(sb, ")</td></tr><tr><th>repeats / seed / at once</th><td>%lld / %lld / %lld"
                  "</td></tr><tr><th>took</th><td>%.1f s</td></tr>",
              (long long)json_get_int(m, "repeats", 1), (long long)json_get_int(m, "seed", 0),
              (long long)json_get_int(m, "parallel", 1), json_get_num(m, "duration_s", 0));
    const struct json *axes = json_obj_get(m, "axes");
    for (size_t a = 0; a < alen(axes); a++) {
        sb_puts(sb, "<tr><th>axis <code>");
        html_esc(sb, json_get_str(axes->kids[a], "key", "?"));
        sb_puts(sb, "</code></th><td>");
        const struct json *v = json_obj_get(axes->kids[a], "values");
        for (size_t j = 0; j < alen(v); j++) {
            sb_puts(sb, j ? ", " : "");
            html_esc(sb, v->kids[j]->type == JSON_STR ? v->kids[j]->s : "?");
        }
        sb_puts(sb, "</td></tr>");
    }
    const struct json *sets = json_obj_get(m, "sets");
    for (size_t i = 0; i < alen(sets); i++) {
        sb_puts(sb, "<tr><th>every cell</th><td><code>--set ");
        html_esc(sb, sets->kids[i]->type == JSON_STR ? sets->kids[i]->s : "?");
        sb_puts(sb, "</code></td></tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

static void html_series(struct strbuf *sb, const struct json *m)
{
    const struct json *series = json_obj_get(m, "series");
    sb_puts(sb, "<section id=\"series\"><h2>Smallest safe TTL per series</h2><table><tr>"
                "<th>series</th><th>hold</th><th>pause</th><th>measured: smallest TTL without "
                "stale-holder violations</th><th>predicted: P = 0 from</th><th>predicted: P &lt; "
                "1% from</th><th>measured hold p99 / max (ms)</th><th>measured pause max (ms)"
                "</th></tr>");
    for (size_t i = 0; i < alen(series); i++) {
        const struct json *s = series->kids[i];
        char a[32], b[32], c[32], h[64], p[32];
        ms_text(num(s, "smallest_safe_ttl_ms"), a, sizeof(a));
        ms_text(num(s, "predicted_safe_ttl_ms"), b, sizeof(b));
        ms_text(num(s, "predicted_ttl_p1pct_ms"), c, sizeof(c));
        char h1[24], h2[24];
        fnum(num(s, "measured_hold_p99_ms"), 1, h1, sizeof(h1));
        fnum(num(s, "measured_hold_max_ms"), 1, h2, sizeof(h2));
        snprintf(h, sizeof(h), "%s / %s", h1, h2);
        fnum(num(s, "measured_pause_max_ms"), 1, p, sizeof(p));
        sb_puts(sb, "<tr>");
        td(sb, json_get_str(s, "label", "?"), 0);
        td(sb, json_get_str(s, "hold", "-"), 0);
        td(sb, json_get_str(s, "pause", "-"), 0);
        sb_printf(sb, "<td class=\"num %s\">", a[0] == '-' ? "bad" : "good");
        html_esc(sb, a[0] == '-' ? "none swept" : a);
        sb_puts(sb, "</td>");
        td(sb, b, 1);
        td(sb, c, 1);
        td(sb, h, 1);
        td(sb, p, 1);
        sb_puts(sb, "</tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

static void html_charts(struct strbuf *sb, const char *dir, const char *note)
{
    sb_puts(sb, "<section id=\"charts\"><h2>Charts</h2>");
    if (note) {
        sb_puts(sb, "<p class=\"missing\" id=\"charts-note\">");
        html_esc(sb, note);
        sb_puts(sb, "</p>");
    }
    for (int i = 0; i < NCHARTS; i++) {
        sb_printf(sb, "<figure id=\"chart-%s\"><figcaption>", charts[i].name);
        html_esc(sb, charts[i].title);
        sb_puts(sb, "</figcaption>");
        if (!html_inline_svg(sb, dir, charts[i].name, charts[i].title))
            sb_printf(sb, "<p class=\"missing\">not drawn (data in %s.dat, script %s.gp)</p>",
                      charts[i].name, charts[i].name);
        sb_puts(sb, "</figure>\n");
    }
    sb_puts(sb, "<p>Predicted curves: P(hold + pause &gt; TTL) from the workload's hold and pause "
                "distributions (solid), and the same event as lockstorm's workers meet it "
                "(dashed: a pause lands at a random point of a length-biased hold, whose end is "
                "fixed when it began). docs/sweep.md explains both.</p></section>\n");
}

static void html_points(struct strbuf *sb, const struct json *m)
{
    const struct json *series = json_obj_get(m, "series");
    sb_puts(sb, "<section id=\"points\"><h2>Violation rate vs TTL</h2><table><tr><th>series</th>"
                "<th>TTL</th><th>runs</th><th>pauses</th><th>paused holds</th><th>overstayed"
                "</th><th>predicted</th><th>as workers pause</th><th>stale-holder</th>"
                "<th>lock-broken</th><th>stale / pause</th><th>broken / pause</th>"
                "<th>plain lost</th><th>fenced lost</th><th>crash &rarr; grant</th></tr>");
    for (size_t i = 0; i < alen(series); i++) {
        const struct json *pts = json_obj_get(series->kids[i], "points");
        for (size_t k = 0; k < alen(pts); k++) {
            const struct json *p = pts->kids[k];
            char b[32];
            sb_puts(sb, "<tr>");
            td(sb, json_get_str(series->kids[i], "label", "?"), 0);
            ms_text(num(p, "ttl_ms"), b, sizeof(b));
            td(sb, b, 1);
            td_int(sb, p, "runs");
            td_int(sb, p, "pauses");
            td_int(sb, p, "paused_holds");
            pct(num(p, "overstay_share"), b, sizeof(b));
            td(sb, b, 1);
            pct(num(p, "predicted_p"), b, sizeof(b));
            td(sb, b, 1);
            pct(num(p, "predicted_p_harness"), b, sizeof(b));
            td(sb, b, 1);
            sb_printf(sb, "<td class=\"num%s\">%lld</td>",
                      json_get_int(p, "stale_holder", 0) ? " bad" : "",
                      (long long)json_get_int(p, "stale_holder", 0));
            sb_printf(sb, "<td class=\"num%s\">%lld</td>",
                      json_get_int(p, "lock_broken", 0) ? " bad" : "",
                      (long long)json_get_int(p, "lock_broken", 0));
            fnum(num(p, "stale_holder_per_pause"), 2, b, sizeof(b));
            td(sb, b, 1);
            fnum(num(p, "lock_broken_per_pause"), 2, b, sizeof(b));
            td(sb, b, 1);
            td_int(sb, p, "plain_lost_updates");
            td_int(sb, p, "fenced_lost_updates");
            ms_text(num(p, "crash_to_next_grant_ms"), b, sizeof(b));
            td(sb, b, 1);
            sb_puts(sb, "</tr>");
        }
    }
    sb_puts(sb, "</table><p>overstayed: share of the holder pauses that hit a hold whose hold "
                "then outlived its lease; stale / pause: stale-holder violations per injected "
                "pause (one pause can let several grants in).</p></section>\n");
    const struct json *price = json_obj_get(m, "price");
    const struct json *pm = json_obj_get(price, "measured");
    sb_puts(sb, "<section id=\"price\"><h2>Price of a longer TTL</h2><p>");
    html_esc(sb, json_get_str(price, "what", ""));
    sb_puts(sb, "</p>");
    if (!(pm && pm->type == JSON_BOOL && pm->i)) {
        sb_puts(sb, "<p class=\"missing\" id=\"price-note\">");
        html_esc(sb, json_get_str(price, "note", "not measured"));
        sb_puts(sb, "</p>");
    } else {
        sb_puts(sb, "<table><tr><th>TTL</th><th>crash &rarr; next grant (mean)</th>"
                    "<th>longest</th><th>holder crashes</th></tr>");
        const struct json *pts = json_obj_get(price, "points");
        for (size_t k = 0; k < alen(pts); k++) {
            char a[32], b[32], c[32];
            ms_text(num(pts->kids[k], "ttl_ms"), a, sizeof(a));
            ms_text(num(pts->kids[k], "crash_to_next_grant_ms"), b, sizeof(b));
            ms_text(num(pts->kids[k], "crash_to_next_grant_max_ms"), c, sizeof(c));
            sb_puts(sb, "<tr>");
            td(sb, a, 1);
            td(sb, b, 1);
            td(sb, c, 1);
            td_int(sb, pts->kids[k], "samples");
            sb_puts(sb, "</tr>");
        }
        sb_puts(sb, "</table>");
    }
    sb_puts(sb, "</section>\n");
}

static void html_cells(struct strbuf *sb, const struct json *m, const char *dir)
{
    const struct json *cells = json_obj_get(m, "cells");
    sb_puts(sb, "<section id=\"cells\"><h2>Cells</h2><table><tr><th>cell</th><th>values</th>"
                "<th>seed</th><th>state</th><th>exit</th><th>verdict</th><th>stale-holder</th>"
                "<th>lock-broken</th><th>fenced lost</th><th>took (s)</th><th>files</th></tr>");
    for (size_t i = 0; i < alen(cells); i++) {
        const struct json *c = cells->kids[i];
        const struct json *mm = json_obj_get(c, "measured");
        const char *cd = json_get_str(c, "dir", "");
        sb_puts(sb, "<tr>");
        td(sb, json_get_str(c, "name", "?"), 0);
        sb_puts(sb, "<td>");
        const struct json *ax = json_obj_get(c, "axes");
        for (size_t k = 0; ax && ax->type == JSON_OBJ && k < ax->n; k++) {
            sb_puts(sb, k ? ", " : "");
            html_esc(sb, ax->keys[k]);
            sb_putc(sb, '=');
            html_esc(sb, ax->kids[k]->type == JSON_STR ? ax->kids[k]->s : "?");
        }
        sb_puts(sb, "</td>");
        td_int(sb, c, "seed");
        const char *st = json_get_str(c, "state", "?");
        sb_printf(sb, "<td class=\"%s\">", strcmp(st, "done") ? "bad" : "");
        html_esc(sb, st);
        if (json_obj_get(c, "why")) {
            sb_puts(sb, ": ");
            html_esc(sb, json_get_str(c, "why", ""));
        }
        sb_puts(sb, "</td>");
        td_int(sb, c, "exit_code");
        td(sb, json_get_str(mm, "verdict", "-"), 0);
        td_int(sb, mm, "stale_holder");
        td_int(sb, mm, "lock_broken");
        td_int(sb, mm, "fenced_lost_updates");
        char b[32];
        fnum(num(c, "wall_s"), 1, b, sizeof(b));
        td(sb, b, 1);
        sb_puts(sb, "<td>");
        static const char *const files[] = {"report.html", "summary.txt", "result.json"};
        int any = 0;
        for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
            char p[4400];
            snprintf(p, sizeof(p), "%s/%s/%s", dir, cd, files[f]);
            if (access(p, R_OK) != 0)
                continue;
            sb_printf(sb, "%s<a href=\"", any++ ? " " : "");
            html_esc(sb, cd);
            sb_printf(sb, "/%s\">%s</a>", files[f], files[f]);
        }
        sb_puts(sb, "</td></tr>");
    }
    sb_puts(sb, "</table></section>\n");
}

/* sweep.html: banner, setup, safe TTL per series, charts (inlined from
 * dir), points, price, cells, warnings. note: why charts are missing. */
static void render_sweep_html(const struct json *m, const char *dir, const char *note,
                              struct strbuf *sb)
{
    sb_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                "<title>lockstorm sweep ");
    html_esc(sb, json_get_str(m, "name", "?"));
    sb_printf(sb, "</title><style>%s</style></head>\n<body>\n", CSS);
    html_banner(sb, m);
    sb_puts(sb, "<main>\n");
    html_setup(sb, m);
    html_series(sb, m);
    html_charts(sb, dir, note);
    html_points(sb, m);
    html_cells(sb, m, dir);
    const struct json *w = json_obj_get(m, "warnings");
    sb_puts(sb, "<section id=\"warnings\"><h2>Warnings</h2>");
    if (!alen(w)) {
        sb_puts(sb, "<p>None.</p>");
    } else {
        sb_puts(sb, "<ul class=\"warn\">");
        for (size_t i = 0; i < w->n; i++) {
            sb_puts(sb, "<li>");
            html_esc(sb, w->kids[i]->type == JSON_STR ? w->kids[i]->s : "?");
            sb_puts(sb, "</li>");
        }
        sb_puts(sb, "</ul>");
    }
    sb_puts(sb, "</section>\n<footer>lockstorm ");
    html_esc(sb, json_get_str(m, "tool_version", "?"));
    sb_puts(sb, " &middot; rendered from sweep.json &middot; docs/sweep.md explains each part"
                "</footer>\n</main>\n</body></html>\n");
}

/* ---- all files ----------------------------------------------------------------------- */

int sweep_write_reports(const char *dir, const struct json *m, FILE *notes,
                        struct strbuf *written, struct ls_err *err)
{
    struct strbuf sb = STRBUF_INIT, note = STRBUF_INIT, names = STRBUF_INIT;
    char path[4200];
    json_write(&sb, m, 2);
    sb_putc(&sb, '\n');
    snprintf(path, sizeof(path), "%s/sweep.json", dir);
    int rc = sb_write_file(&sb, path);
    if (rc == 0) {
        sb_puts(&names, "sweep.json");
        sb_reset(&sb);
        render_sweep_text(m, &sb);
        snprintf(path, sizeof(path), "%s/sweep.txt", dir);
        rc = sb_write_file(&sb, path);
        if (rc == 0)
            sb_puts(&names, " sweep.txt style.gp");
    }
    if (rc < 0) {
        rc = ls_err_errno(err, LS_EIO, -rc, "write %s", path);
    } else if ((rc = write_charts(dir, m, &note, &names, err)) >= 0) {
        sb_reset(&sb);
        render_sweep_html(m, dir, note.len ? sb_cstr(&note) : NULL, &sb);
        snprintf(path, sizeof(path), "%s/sweep.html", dir);
        rc = sb_write_file(&sb, path);
        if (rc < 0)
            rc = ls_err_errno(err, LS_EIO, -rc, "write %s", path);
        else
            sb_puts(&names, " sweep.html");
    }
    if (note.len && notes)
        fprintf(notes, "lockstorm: %s\n", sb_cstr(&note));
    if (written)
        sb_puts(written, sb_cstr(&names));
    sb_free(&sb);
    sb_free(&note);
    sb_free(&names);
    return rc < 0 ? rc : 0;
}
