/*
 * compare.c: the comparison document of `lockstorm compare`
 * (harness/compare_model.h builds it) laid out as text (compare.txt: two
 * tables, overall then one column group per fault kind, split to fit
 * COMPARE_WIDTH columns, and the conclusion), Markdown (compare.md) and
 * HTML (compare.html). Nothing is computed here (docs/compare.md).
 */
#include "reports/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports.h"
#include "util/xalloc.h"

#define MAX_COLS 64
#define GROUP 5              /* columns per fault kind */
#define COMPARE_WIDTH 100    /* the text fits this many columns */

struct table {
    int ncols;
    int group[MAX_COLS];       /* columns of one group stay together (0: column 0) */
    int width[MAX_COLS];
    int left[MAX_COLS];        /* left-aligned column */
    char ***cells;             /* rows x ncols, owned */
    int nrows;
};

/* Append an empty row (cells NULL). */
static void t_row(struct table *t)
{
    t->cells = xrealloc(t->cells, (size_t)(t->nrows + 1) * sizeof(*t->cells));
    t->cells[t->nrows] = xcalloc((size_t)t->ncols, sizeof(char *));
    t->nrows++;
}

/* Set a cell of the last row (copied) and widen its column. */
static void t_set(struct table *t, int col, const char *text)
{
    char **row = t->cells[t->nrows - 1];
    free(row[col]);
    row[col] = xstrdup(text);
    int l = (int)strlen(text);
    if (l > t->width[col])
        t->width[col] = l;
}

/* A number with decimals places ("-" for null); integers as they are when
 * decimals is 0. */
static void t_num(struct table *t, int col, const struct json *v, int decimals)
{
    char buf[64];
    if (!v || v->type != JSON_NUM)
        snprintf(buf, sizeof(buf), "-");
    else if (v->is_int && decimals == 0)
        snprintf(buf, sizeof(buf), "%lld", (long long)v->i);
    else
        snprintf(buf, sizeof(buf), "%.*f", decimals, v->d);
    t_set(t, col, buf);
}

/* Free the rows; the table can be filled again. */
static void t_clear(struct table *t)
{
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cells);
    t->cells = NULL;
    t->nrows = 0;
}

/* Append line (no trailing blanks) and a newline to sb. */
static void put_line(struct strbuf *sb, const struct strbuf *line)
{
    size_t l = line->len;
    while (l > 0 && line->buf[l - 1] == ' ')
        l--;
    sb_append(sb, line->buf, l);
    sb_putc(sb, '\n');
}

/* Append text to sb wrapped at COMPARE_WIDTH columns on blanks, the
 * continuation lines indented by indent blanks; ends with a newline. */
static void put_wrapped(struct strbuf *sb, const char *text, int indent)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        int wl = (int)(e - p);
        if (col > indent && col + 1 + wl > COMPARE_WIDTH) {
            sb_printf(sb, "\n%*s", indent, "");
            col = indent;
        } else if (col > 0) {
            sb_putc(sb, ' ');
            col++;
        }
        sb_append(sb, p, (size_t)wl);
        col += wl;
        p = e;
        while (*p == ' ')
            p++;
    }
    sb_putc(sb, '\n');
}

/* Append the table to sb: column 0 (the run) then as many whole groups
 * as fit COMPARE_WIDTH, then the next groups under a blank line with
 * column 0 again. With tops (one name per group, over its columns; index
 * group - 1), a line of them heads each part. Frees the rows. */
static void t_render(struct table *t, struct strbuf *sb, const char *const *tops)
{
    int c = 1;
    while (c < t->ncols || c == 1) {
        int end = c, w = t->width[0];
        while (end < t->ncols) { /* whole groups while they fit (at least one) */
            int g = t->group[end], e = end, gw = 0;
            while (e < t->ncols && t->group[e] == g)
                gw += 2 + t->width[e++];
            if (end > c && w + gw > COMPARE_WIDTH)
                break;
            w += gw;
            end = e;
        }
        if (c > 1)
            sb_putc(sb, '\n');
        if (tops) {
            struct strbuf line = STRBUF_INIT;
            sb_printf(&line, "%-*s", t->width[0], "");
            for (int k = c; k < end;) {
                int g = t->group[k], gw = 0;
                while (k < end && t->group[k] == g)
                    gw += 2 + t->width[k++];
                sb_printf(&line, "  | %-*s", gw - 4 > 0 ? gw - 4 : 0, tops[g - 1]);
            }
            put_line(sb, &line);
            sb_free(&line);
        }
        for (int r = 0; r < t->nrows; r++) {
            struct strbuf line = STRBUF_INIT;
            for (int k = 0; k < end; k = k == 0 ? c : k + 1) {
                const char *s = t->cells[r][k] ? t->cells[r][k] : "";
                int pad = t->width[k] - (int)strlen(s);
                if (k)
                    sb_puts(&line, "  ");
                if (t->left[k])
                    sb_printf(&line, "%s%*s", s, pad, "");
                else
                    sb_printf(&line, "%*s%s", pad, "", s);
                if (k == 0 && c >= t->ncols)
                    break;
            }
            put_line(sb, &line);
            sb_free(&line);
        }
        if (end <= c)
            break;
        c = end;
    }
    t_clear(t);
}

/* The first line: how many runs of what, and whether they compare;
 * wrapped at COMPARE_WIDTH (the text) or one line each (Markdown, HTML). */
static void put_heading(const struct json *cmp, struct strbuf *sb, int wrap)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    size_t nr = runs ? runs->n : 0;
    const struct json *first = nr ? runs->kids[0] : NULL;
    const struct json *same = json_obj_get(cmp, "same_schedule");
    struct strbuf h = STRBUF_INIT;
    sb_printf(&h, "lockstorm compare: %zu run%s of %s", nr, nr == 1 ? "" : "s",
              first ? json_get_str(first, "workload", "?") : "-");
    const struct json *seed = first ? json_obj_get(first, "seed") : NULL;
    if (seed && seed->type == JSON_NUM)
        sb_printf(&h, ", seed %lld", (long long)seed->i);
    int like = same && same->type == JSON_BOOL && same->i;
    if (like)
        sb_puts(&h, " (same seed, workers and fault schedule in every run)");
    static const char *const warning = "warning: the runs differ in seed, duration, workers or "
                                       "fault schedule; the rows are not a like-for-like "
                                       "comparison";
    if (wrap) {
        put_wrapped(sb, sb_cstr(&h), 2);
        if (!like)
            put_wrapped(sb, warning, 2);
    } else {
        sb_printf(sb, "%s%s%s", sb_cstr(&h), like ? "" : "\n", like ? "" : warning);
    }
    sb_free(&h);
}

void render_compare_conclusion(const struct json *cmp, struct strbuf *sb)
{
    const struct json *cs = json_obj_get(cmp, "conclusions");
    for (size_t i = 0; cs && i < cs->n; i++)
        put_wrapped(sb, json_get_str(cs->kids[i], "text", "?"), 2);
}

void render_compare_text(const struct json *cmp, struct strbuf *sb)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    const struct json *kinds = json_obj_get(cmp, "fault_kinds");
    size_t nr = runs ? runs->n : 0, nk = kinds ? kinds->n : 0;
    put_heading(cmp, sb, 1);

    static const char *const head[] = {"run", "lock", "nodes", "checkers", "grants/s", "acq p99 ms",
                                       "stale", "broken", "plain lost", "fenced lost",
                                       "fence regr", "unknown"};
    struct table t;
    memset(&t, 0, sizeof(t));
    t.ncols = (int)(sizeof(head) / sizeof(head[0]));
    for (int c = 1; c < t.ncols; c++) /* split after acq p99: throughput | damage */
        t.group[c] = c <= 5 ? 1 : 2;
    t.left[0] = t.left[1] = t.left[3] = 1;
    t_row(&t);
    for (int c = 0; c < t.ncols; c++)
        t_set(&t, c, head[c]);
    for (size_t i = 0; i < nr; i++) {
        const struct json *r = runs->kids[i];
        t_row(&t);
        t_set(&t, 0, json_get_str(r, "label", "?"));
        t_set(&t, 1, json_get_str(r, "lock", "?"));
        t_num(&t, 2, json_obj_get(r, "nodes"), 0);
        const struct json *intr = json_obj_get(r, "interrupted");
        char v[48];
        snprintf(v, sizeof(v), "%s%s", json_get_str(r, "findings", "?"),
                 intr && intr->type == JSON_BOOL && intr->i ? " (interrupted)" : "");
        t_set(&t, 3, v);
        t_num(&t, 4, json_obj_get(r, "grants_per_s"), 1);
        t_num(&t, 5, json_obj_get(r, "acquire_p99_ms"), 2);
        t_num(&t, 6, json_obj_get(r, "stale_holder"), 0);
        t_num(&t, 7, json_obj_get(r, "lock_broken"), 0);
        t_num(&t, 8, json_obj_get(r, "plain_lost_updates"), 0);
        t_num(&t, 9, json_obj_get(r, "fenced_lost_updates"), 0);
        t_num(&t, 10, json_obj_get(r, "fence_regressions"), 0);
        t_num(&t, 11, json_obj_get(r, "unknown"), 0);
    }
    t_render(&t, sb, NULL);
    for (size_t i = 0; i < nr; i++) /* why a run could not be judged */
        if (strcmp(json_get_str(runs->kids[i], "findings", ""), "unknown") == 0) {
            struct strbuf l = STRBUF_INIT;
            sb_printf(&l, "unknown: %s: %s", json_get_str(runs->kids[i], "label", "?"),
                      json_get_str(runs->kids[i], "findings_reason", "?"));
            put_wrapped(sb, sb_cstr(&l), 2);
            sb_free(&l);
        }
    if (nk == 0) {
        sb_puts(sb, "\nno fault windows: no per-fault columns\n");
    } else {
        sb_putc(sb, '\n');
        put_wrapped(sb, "per fault kind (inside its windows: grants/s, acquire p99 ms (max over "
                        "windows), violations stale/broken; after: stale/broken begun once it "
                        "ended, no fault active; unknown outcomes):", 2);
        memset(&t, 0, sizeof(t));
        int groups = (int)(nk > MAX_COLS / GROUP - 1 ? MAX_COLS / GROUP - 1 : nk);
        t.ncols = 1 + GROUP * groups;
        t.left[0] = 1;
        const char **tops = xcalloc((size_t)groups, sizeof(*tops));
        t_row(&t);
        t_set(&t, 0, "run");
        static const char *const sub[GROUP] = {"grants/s", "p99", "st/br", "after", "unkn"};
        for (int g = 0; g < groups; g++) {
            tops[g] = kinds->kids[g]->s;
            for (int s = 0; s < GROUP; s++) {
                t.group[1 + GROUP * g + s] = g + 1;
                t_set(&t, 1 + GROUP * g + s, sub[s]);
            }
        }
        for (size_t i = 0; i < nr; i++) {
            const struct json *r = runs->kids[i];
            const struct json *bf = json_obj_get(r, "by_fault");
            t_row(&t);
            t_set(&t, 0, json_get_str(r, "label", "?"));
            for (int g = 0; g < groups; g++) {
                int c = 1 + GROUP * g;
                const struct json *k = json_obj_get(bf, kinds->kids[g]->s);
                const char *na = k ? json_get_str(k, "not_applicable", NULL) : NULL;
                if (!k || na) {
                    for (int s = 0; s < GROUP; s++)
                        t_set(&t, c + s, na ? "n/a" : "-");
                    continue;
                }
                t_num(&t, c, json_obj_get(k, "grants_per_s"), 1);
                t_num(&t, c + 1, json_obj_get(k, "acquire_p99_ms_max"), 1);
                char b[48];
                snprintf(b, sizeof(b), "%lld/%lld", (long long)json_get_int(k, "stale_holder", 0),
                         (long long)json_get_int(k, "lock_broken", 0));
                t_set(&t, c + 2, b);
                snprintf(b, sizeof(b), "%lld/%lld",
                         (long long)json_get_int(k, "after_stale_holder", 0),
                         (long long)json_get_int(k, "after_lock_broken", 0));
                t_set(&t, c + 3, b);
                t_num(&t, c + 4, json_obj_get(k, "unknown"), 0);
            }
        }
        /* a kind's name heads its group: the group is at least that wide */
        for (int g = 0; g < groups; g++) {
            int c = 1 + GROUP * g, w = 0, l = (int)strlen(tops[g]) + 2;
            for (int s = 0; s < GROUP; s++)
                w += 2 + t.width[c + s];
            if (w - 2 < l)
                t.width[c] += l - (w - 2);
        }
        t_render(&t, sb, tops);
        free(tops);
        if ((int)nk > groups)
            sb_printf(sb, "(%zu more fault kinds in compare.json)\n", nk - (size_t)groups);
        for (size_t i = 0; i < nr; i++) { /* why a group is n/a (a compare: variant's skip) */
            const struct json *bf = json_obj_get(runs->kids[i], "by_fault");
            for (size_t k = 0; bf && k < bf->n; k++) {
                const char *na = json_get_str(bf->kids[k], "not_applicable", NULL);
                if (!na)
                    continue;
                struct strbuf l = STRBUF_INIT;
                sb_printf(&l, "n/a: %s, %s: %s", json_get_str(runs->kids[i], "label", "?"),
                          bf->keys[k], na);
                put_wrapped(sb, sb_cstr(&l), 2);
                sb_free(&l);
            }
        }
    }
    sb_puts(sb, "\nconclusion (counts of the tables above; \"after the window\": begun once "
                "it ended):\n");
    render_compare_conclusion(cmp, sb);
}

/* ---- Markdown and HTML ---- */

/* A number as the text table shows it ("-" for null) into buf. */
static const char *num_text(const struct json *v, int decimals, char *buf, size_t n)
{
    if (!v || v->type != JSON_NUM)
        snprintf(buf, n, "-");
    else if (v->is_int && decimals == 0)
        snprintf(buf, n, "%lld", (long long)v->i);
    else
        snprintf(buf, n, "%.*f", decimals, v->d);
    return buf;
}

/* The cells of row r, overall (12) and per kind k (5 each), as text: the
 * same words and numbers as the text tables. cells[i] is buf + i*48. */
static void row_cells(const struct json *r, char (*cells)[48])
{
    const struct json *intr = json_obj_get(r, "interrupted");
    snprintf(cells[0], 48, "%.47s", json_get_str(r, "label", "?"));
    snprintf(cells[1], 48, "%.47s", json_get_str(r, "lock", "?"));
    num_text(json_obj_get(r, "nodes"), 0, cells[2], 48);
    snprintf(cells[3], 48, "%s%s", json_get_str(r, "findings", "?"),
             intr && intr->type == JSON_BOOL && intr->i ? " (interrupted)" : "");
    num_text(json_obj_get(r, "grants_per_s"), 1, cells[4], 48);
    num_text(json_obj_get(r, "acquire_p99_ms"), 2, cells[5], 48);
    static const char *const keys[] = {"stale_holder", "lock_broken", "plain_lost_updates",
                                       "fenced_lost_updates", "fence_regressions", "unknown"};
    for (int i = 0; i < 6; i++)
        num_text(json_obj_get(r, keys[i]), 0, cells[6 + i], 48);
}

static void kind_cells(const struct json *r, const char *kind, char (*cells)[48])
{
    const struct json *k = json_obj_get(json_obj_get(r, "by_fault"), kind);
    const char *na = k ? json_get_str(k, "not_applicable", NULL) : NULL;
    if (!k || na) {
        for (int s = 0; s < GROUP; s++)
            snprintf(cells[s], 48, "%s", na ? "n/a" : "-");
        return;
    }
    num_text(json_obj_get(k, "grants_per_s"), 1, cells[0], 48);
    num_text(json_obj_get(k, "acquire_p99_ms_max"), 1, cells[1], 48);
    snprintf(cells[2], 48, "%lld/%lld", (long long)json_get_int(k, "stale_holder", 0),
             (long long)json_get_int(k, "lock_broken", 0));
    snprintf(cells[3], 48, "%lld/%lld", (long long)json_get_int(k, "after_stale_holder", 0),
             (long long)json_get_int(k, "after_lock_broken", 0));
    num_text(json_obj_get(k, "unknown"), 0, cells[4], 48);
}

static const char *const over_head[] = {"run", "lock", "nodes", "checkers", "grants/s",
                                        "acq p99 ms", "stale", "broken", "plain lost",
                                        "fenced lost", "fence regr", "unknown"};
static const char *const kind_head[GROUP] = {"grants/s", "acq p99 ms (max)", "stale/broken",
                                             "after: stale/broken", "unknown"};

/* The Markdown and HTML forms of the comparison: one walk over the model
 * (compare_walk), each form a table of how it writes a text, a table row,
 * a section and a note. */
struct cmp_form {
    void (*text)(struct strbuf *sb, const char *s);
    /* a row of cells[0..n); heading: the table's first row (Markdown adds
     * the alignment line from align) */
    void (*row)(struct strbuf *sb, const char *const *cells, int n, int heading,
                const char *align);
    void (*table_end)(struct strbuf *sb);
    void (*section)(struct strbuf *sb, const char *title); /* opens a table too */
    void (*note)(struct strbuf *sb, const char *what, const char *label, const char *text);
};

static void md_text(struct strbuf *sb, const char *s)
{
    md_cell(sb, s, strlen(s));
}

static void md_row(struct strbuf *sb, const char *const *cells, int n, int heading,
                   const char *align)
{
    for (int i = 0; i < n; i++) {
        sb_puts(sb, "| ");
        md_text(sb, cells[i]);
        sb_putc(sb, ' ');
    }
    sb_puts(sb, "|\n");
    if (heading)
        sb_printf(sb, "%s\n", align);
}

static void md_table_end(struct strbuf *sb)
{
    (void)sb;
}

static void md_section(struct strbuf *sb, const char *title)
{
    sb_puts(sb, "\n### ");
    sb_puts(sb, title);
    sb_puts(sb, "\n\n");
}

static void md_note(struct strbuf *sb, const char *what, const char *label, const char *text)
{
    sb_printf(sb, "\n%s: ", what);
    md_text(sb, label);
    sb_puts(sb, ": ");
    md_text(sb, text);
    sb_putc(sb, '\n');
}

static void html_row(struct strbuf *sb, const char *const *cells, int n, int heading,
                     const char *align)
{
    (void)align;
    sb_puts(sb, "<tr>");
    for (int i = 0; i < n; i++) {
        sb_puts(sb, heading ? "<th>" : i ? "<td class=n>" : "<td>");
        html_esc(sb, cells[i]);
        sb_puts(sb, heading ? "</th>" : "</td>");
    }
    sb_puts(sb, "</tr>\n");
}

static void html_table_end(struct strbuf *sb)
{
    sb_puts(sb, "</table>\n");
}

static void html_section(struct strbuf *sb, const char *title)
{
    sb_puts(sb, "<h2>");
    html_esc(sb, title);
    sb_puts(sb, "</h2>\n<table>\n");
}

static void html_note(struct strbuf *sb, const char *what, const char *label, const char *text)
{
    sb_printf(sb, "<p>%s: ", what);
    html_esc(sb, label);
    sb_puts(sb, ": ");
    html_esc(sb, text);
    sb_puts(sb, "</p>\n");
}

static const struct cmp_form md_form = {md_text, md_row, md_table_end, md_section, md_note};
static const struct cmp_form html_form = {html_esc, html_row, html_table_end, html_section,
                                          html_note};

/* Contract: the runs table, the unknown runs, and a table per fault kind
 * with its n/a notes, in form f. */
static void compare_walk(const struct json *cmp, const struct cmp_form *f, struct strbuf *sb)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    const struct json *kinds = json_obj_get(cmp, "fault_kinds");
    size_t nr = runs ? runs->n : 0, nk = kinds ? kinds->n : 0;
    f->row(sb, over_head, 12, 1, "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    char cells[12][48];
    const char *cp[12];
    for (int i = 0; i < 12; i++)
        cp[i] = cells[i];
    for (size_t i = 0; i < nr; i++) {
        row_cells(runs->kids[i], cells);
        f->row(sb, cp, 12, 0, NULL);
    }
    f->table_end(sb);
    for (size_t i = 0; i < nr; i++)
        if (strcmp(json_get_str(runs->kids[i], "findings", ""), "unknown") == 0)
            f->note(sb, "unknown", json_get_str(runs->kids[i], "label", "?"),
                    json_get_str(runs->kids[i], "findings_reason", "?"));
    for (size_t k = 0; k < nk; k++) {
        char title[160];
        snprintf(title, sizeof(title), "Under %s", kinds->kids[k]->s);
        f->section(sb, title);
        const char *hd[1 + GROUP] = {"run"};
        for (int s = 0; s < GROUP; s++)
            hd[1 + s] = kind_head[s];
        f->row(sb, hd, 1 + GROUP, 1, "|---|--:|--:|--:|--:|--:|");
        for (size_t i = 0; i < nr; i++) {
            char kc[GROUP + 1][48];
            snprintf(kc[0], 48, "%.47s", json_get_str(runs->kids[i], "label", "?"));
            kind_cells(runs->kids[i], kinds->kids[k]->s, kc + 1);
            const char *kp[GROUP + 1];
            for (int s = 0; s <= GROUP; s++)
                kp[s] = kc[s];
            f->row(sb, kp, 1 + GROUP, 0, NULL);
        }
        f->table_end(sb);
        for (size_t i = 0; i < nr; i++) {
            const struct json *e = json_obj_get(json_obj_get(runs->kids[i], "by_fault"),
                                                kinds->kids[k]->s);
            const char *na = e ? json_get_str(e, "not_applicable", NULL) : NULL;
            if (na)
                f->note(sb, "n/a", json_get_str(runs->kids[i], "label", "?"), na);
        }
    }
}

void render_compare_md(const struct json *cmp, struct strbuf *sb)
{
    struct strbuf h = STRBUF_INIT;
    put_heading(cmp, &h, 0);
    sb_puts(sb, "## lockstorm compare\n\n");
    md_cell(sb, h.buf, h.len);
    sb_puts(sb, "\n\n### Conclusion\n\n");
    sb_free(&h);
    const struct json *cs = json_obj_get(cmp, "conclusions");
    for (size_t i = 0; cs && i < cs->n; i++) {
        sb_puts(sb, "- ");
        md_text(sb, json_get_str(cs->kids[i], "text", "?"));
        sb_putc(sb, '\n');
    }
    sb_puts(sb, "\n### Runs\n\n");
    compare_walk(cmp, &md_form, sb);
}

void render_compare_html(const struct json *cmp, struct strbuf *sb)
{
    struct strbuf h = STRBUF_INIT;
    put_heading(cmp, &h, 0);
    sb_puts(sb, "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
                "<title>lockstorm compare</title>\n<style>body{font-family:sans-serif;"
                "margin:1.5em;max-width:70em}table{border-collapse:collapse;margin:.5em 0}"
                "th,td{border:1px solid #bbb;padding:.2em .5em}td.n{text-align:right}"
                "th{background:#eee}li{margin:.2em 0}</style></head><body>\n"
                "<h1>lockstorm compare</h1>\n<p>");
    html_esc(sb, sb_cstr(&h));
    sb_free(&h);
    sb_puts(sb, "</p>\n<h2>Conclusion</h2>\n<ul id=conclusion>\n");
    const struct json *cs = json_obj_get(cmp, "conclusions");
    for (size_t i = 0; cs && i < cs->n; i++) {
        sb_puts(sb, "<li>");
        html_esc(sb, json_get_str(cs->kids[i], "text", "?"));
        sb_puts(sb, "</li>\n");
    }
    sb_puts(sb, "</ul>\n<h2>Runs</h2>\n<table id=runs>\n");
    compare_walk(cmp, &html_form, sb);
    sb_puts(sb, "</body></html>\n");
}

/* Contract: write name into dir from sb; 0 or a negative code with err set. */
static int write_one(const char *dir, const char *name, const struct strbuf *sb,
                     struct ls_err *err)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int rc = sb_write_file(sb, path);
    return rc < 0 ? ls_err_errno(err, LS_EIO, -rc, "write %s", path) : 0;
}

int compare_write_files(const char *dir, const struct json *cmp, unsigned formats,
                        struct ls_err *err)
{
    int all = formats == 0;
    int rc = 0;
    for (int f = 0; f < 4 && rc == 0; f++) {
        static const char *const names[] = {"compare.txt", "compare.json", "compare.md",
                                            "compare.html"};
        static const unsigned bits[] = {REPORT_TEXT, REPORT_JSON, REPORT_MD, REPORT_HTML};
        if (!all && !(formats & bits[f]) && f >= 2)
            continue; /* compare.txt and compare.json are always written */
        struct strbuf sb = STRBUF_INIT;
        if (f == 0)
            render_compare_text(cmp, &sb);
        else if (f == 1) {
            json_write(&sb, cmp, 2);
            sb_putc(&sb, '\n');
        } else if (f == 2)
            render_compare_md(cmp, &sb);
        else
            render_compare_html(cmp, &sb);
        rc = write_one(dir, names[f], &sb, err);
        sb_free(&sb);
    }
    return rc;
}
