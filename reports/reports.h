/*
 * reports.h: the renderers beyond text and JSON (JUnit XML, gnuplot charts,
 * HTML) and reports_write_all, the one call that writes the selected
 * report files into a run directory (harness/run.c after a run, `lockstorm
 * check --format` and `lockstorm report`). Every renderer formats the result
 * model (reports/result.h) and computes nothing; the charts' data is the
 * model's "series" (checkers/series.h).
 */
#ifndef LS_REPORTS_H
#define LS_REPORTS_H

#include <stdio.h>

#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

/* Report formats (--format): bits of a set. */
enum report_format {
    REPORT_TEXT = 1,    /* summary.txt */
    REPORT_JSON = 2,    /* result.json */
    REPORT_JUNIT = 4,   /* junit.xml */
    REPORT_CHARTS = 8,  /* *.dat, *.gp, style.gp, faults.gp -> *.svg with gnuplot */
    REPORT_HTML = 16,   /* report.html (implies charts) */
    REPORT_MD = 32,     /* summary.md (Markdown: CI step summaries, PR comments) */
    REPORT_ALL = 63
};

/* Parse a comma-separated list ("text,json,junit,html,charts,md", or "all";
 * "markdown" is "md")
 * into *out. Returns 0, or -1 with why naming the bad item. */
int reports_parse_formats(const char *list, unsigned *out, char *why, size_t whylen);

/* Contract: writes the reports of formats into dir (0 means all), in the
 * order json, text, md, junit, charts, html (HTML embeds the charts' SVG).
 * Each file is replaced atomically. One line per notable condition (e.g.
 * "charts skipped: gnuplot not found") goes to notes when not NULL; a
 * missing gnuplot is not an error. *written (when not NULL) gets the file
 * names written, space separated (caller frees with sb_free). Returns 0 or
 * a negative code with err set when a file could not be written. */
int reports_write_all(const char *dir, const struct json *result, unsigned formats, FILE *notes,
                      struct strbuf *written, struct ls_err *err);

/* The Markdown summary (markdown.c): summary.md, for $GITHUB_STEP_SUMMARY
 * and pull-request comments. */
void render_markdown(const struct json *result, struct strbuf *sb);
/* s[0..n) as the text of a Markdown table cell: | \ ` * _ [ ] escaped with
 * a backslash, < and & as entities, a newline as <br>, other controls as
 * spaces (markdown.c). */
void md_cell(struct strbuf *sb, const char *s, size_t n);

/* JUnit XML (junit.c): one testsuite, a testcase per expectation and per
 * checker; tests/junit.xsd validates it. */
void render_junit(const struct json *result, struct strbuf *sb);

/* The charts (gnuplot.c). Writes style.gp, faults.gp and per chart NAME.dat
 * and NAME.gp into dir, then runs gnuplot (LS_GNUPLOT or `gnuplot` in PATH)
 * on each, at most 60 s each, making NAME.svg. Returns the number of SVG
 * files made; when gnuplot is missing returns 0 and sets note to "charts
 * skipped: gnuplot not found" (the .dat and .gp files are still written);
 * other trouble is also described in note. Returns negative only when a
 * file could not be written (err set). */
int render_charts(const char *dir, const struct json *result, struct strbuf *note,
                  struct ls_err *err);

/* The charts, in the order the HTML shows them: names (file stems) and
 * titles. */
struct chart_info {
    const char *name;
    const char *title;
};
extern const struct chart_info report_charts[];
extern const int report_ncharts;

/* Shared with other chart sets and pages (the sweep report, reports/sweep.c):
 * the gnuplot program (LS_GNUPLOT or `gnuplot` in PATH) into buf, 1 when it
 * is there; run it on dir/NAME.gp in dir (bounded, 60 s), 1 when NAME.svg
 * was made, else 0 with a line on note; the shared style.gp text; append
 * dir/NAME.svg inline with its ids prefixed by "NAME-" (0 when missing). */
int gnuplot_find(char *buf, size_t n);
int gnuplot_run_script(const char *gnuplot, const char *dir, const char *name,
                       struct strbuf *note);
void gnuplot_write_style(struct strbuf *sb);
int html_inline_svg(struct strbuf *sb, const char *dir, const char *name, const char *title);
/* A fault of result's faults[] by name, for people: "pause(w1)",
 * "latency(node_0)", "KIND(TARGET)"; "#ID" when id is not there (text.c). */
void report_fault_name(struct strbuf *sb, const struct json *result, const struct json *id);
/* s escaped for HTML text and attribute values (& < > " '); NULL is "". */
void html_esc(struct strbuf *sb, const char *s);
/* s as a gnuplot single-quoted string ('' for a quote, controls as spaces). */
void gnuplot_put_str(struct strbuf *sb, const char *s);

/* report.html (html.c): self-contained (inline CSS and SVG, no network).
 * The charts are read from dir/NAME.svg; a missing one is shown as
 * chart_note (e.g. "charts skipped: gnuplot not found") or "not drawn". */
void render_html(const struct json *result, const char *dir, const char *chart_note,
                 struct strbuf *sb);

#endif
