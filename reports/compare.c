/*
 * compare.c: the comparison document of `lockstorm compare`
 * (harness/compare_model.h builds it) laid out as two text tables:
 * overall, then one column group per fault kind (docs/compare.md).
 */
#include "reports/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define MAX_COLS 64
#define GROUP 5              /* columns per fault kind */

struct table {
    int ncols;
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

/* Append the rows to sb (columns two blanks apart, no trailing blanks)
 * and free them; the table can be filled again. */
static void t_render(struct table *t, struct strbuf *sb)
{
    for (int r = 0; r < t->nrows; r++) {
        struct strbuf line = STRBUF_INIT;
        for (int c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r][c] ? t->cells[r][c] : "";
            int pad = t->width[c] - (int)strlen(s);
            if (c)
                sb_puts(&line, "  ");
            if (t->left[c]) {
                sb_puts(&line, s);
                sb_printf(&line, "%*s", pad, "");
            } else {
                sb_printf(&line, "%*s", pad, "");
                sb_puts(&line, s);
            }
        }
        size_t l = line.len; /* no trailing blanks */
        while (l > 0 && line.buf[l - 1] == ' ')
            l--;
        sb_append(sb, line.buf, l);
        sb_putc(sb, '\n');
        sb_free(&line);
    }
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++)
            free(t->cells[r][c]);
        free(t->cells[r]);
    }
    free(t->cells);
    t->cells = NULL;
    t->nrows = 0;
}

void render_compare_text(const struct json *cmp, struct strbuf *sb)
{
    const struct json *runs = json_obj_get(cmp, "runs");
    const struct json *kinds = json_obj_get(cmp, "fault_kinds");
    size_t nr = runs ? runs->n : 0, nk = kinds ? kinds->n : 0;
    const struct json *first = nr ? runs->kids[0] : NULL;
    const struct json *same = json_obj_get(cmp, "same_schedule");
    sb_printf(sb, "lockstorm compare: %zu run%s of workload %s", nr, nr == 1 ? "" : "s",
              first ? json_get_str(first, "workload", "?") : "-");
    const struct json *seed = first ? json_obj_get(first, "seed") : NULL;
    if (seed && seed->type == JSON_NUM)
        sb_printf(sb, ", seed %lld", (long long)seed->i);
    sb_puts(sb, same && same->type == JSON_BOOL && same->i
                    ? " (same seed, workers and fault schedule in every run)\n"
                    : "\nwarning: the runs differ in seed, duration, workers or fault schedule; "
                      "the rows are not a like-for-like comparison\n");

    static const char *const head[] = {"run", "lock", "nodes", "checkers", "grants/s", "acq p99 ms",
                                       "stale", "broken", "plain lost", "fenced lost",
                                       "fence regr", "unknown"};
    struct table t;
    memset(&t, 0, sizeof(t));
    t.ncols = (int)(sizeof(head) / sizeof(head[0]));
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
    t_render(&t, sb);
    for (size_t i = 0; i < nr; i++) /* why a run could not be judged */
        if (strcmp(json_get_str(runs->kids[i], "findings", ""), "unknown") == 0)
            sb_printf(sb, "unknown: %s: %s\n", json_get_str(runs->kids[i], "label", "?"),
                      json_get_str(runs->kids[i], "findings_reason", "?"));
    if (nk == 0) {
        sb_puts(sb, "\nno fault windows: no per-fault columns\n");
        return;
    }

    /* per fault kind: grants/s, acquire p99 (max over windows), stale/broken, unknown */
    sb_puts(sb, "\nper fault kind (inside its windows: grants/s, acquire p99 ms (max over "
                "windows), violations stale/broken; after: stale/broken begun once it ended, no "
                "fault active; unknown outcomes):\n");
    memset(&t, 0, sizeof(t));
    t.ncols = 1 + GROUP * (int)(nk > 12 ? 12 : nk);
    t.left[0] = 1;
    int groups = (t.ncols - 1) / GROUP;
    t_row(&t);
    t_row(&t);
    t_set(&t, 0, "run");
    for (int g = 0; g < groups; g++) {
        int c = 1 + GROUP * g;
        t.left[c] = 0;
        /* the kind's name heads its group, left-aligned over grants/s */
        t.cells[0][c] = xstrdup(kinds->kids[g]->s);
        static const char *const sub[GROUP] = {"grants/s", "p99", "st/br", "after", "unkn"};
        for (int s = 0; s < GROUP; s++) {
            char **row = t.cells[1];
            row[c + s] = xstrdup(sub[s]);
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
            char sb2[48];
            snprintf(sb2, sizeof(sb2), "%lld/%lld", (long long)json_get_int(k, "stale_holder", 0),
                     (long long)json_get_int(k, "lock_broken", 0));
            t_set(&t, c + 2, sb2);
            snprintf(sb2, sizeof(sb2), "%lld/%lld",
                     (long long)json_get_int(k, "after_stale_holder", 0),
                     (long long)json_get_int(k, "after_lock_broken", 0));
            t_set(&t, c + 3, sb2);
            t_num(&t, c + 4, json_obj_get(k, "unknown"), 0);
        }
    }
    /* widths: the header cells set directly above must count too */
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < t.ncols; c++)
            if (t.cells[r][c]) {
                int l = (int)strlen(t.cells[r][c]);
                /* a kind name may spill over its group's first column */
                if (r == 0 && c > 0)
                    continue;
                if (l > t.width[c])
                    t.width[c] = l;
            }
    /* the kind names are printed over the group, not a column */
    struct strbuf top = STRBUF_INIT;
    sb_printf(&top, "%-*s", t.width[0], "");
    for (int g = 0; g < groups; g++) {
        int c = 1 + GROUP * g, w = 0;
        for (int s = 0; s < GROUP; s++)
            w += t.width[c + s] + 2;
        const char *name = t.cells[0][c];
        sb_printf(&top, "  | %-*s", w - 4 > 0 ? w - 4 : 0, name);
    }
    size_t l = top.len;
    while (l > 0 && top.buf[l - 1] == ' ')
        l--;
    sb_append(sb, top.buf, l);
    sb_putc(sb, '\n');
    sb_free(&top);
    for (int c = 0; c < t.ncols; c++) {
        free(t.cells[0][c]);
        t.cells[0][c] = NULL;
    }
    free(t.cells[0]);
    memmove(&t.cells[0], &t.cells[1], (size_t)(t.nrows - 1) * sizeof(t.cells[0]));
    t.nrows--;
    t_render(&t, sb);
    if (nk > 12)
        sb_printf(sb, "(%zu more fault kinds in compare.json)\n", nk - 12);
    /* why a group is n/a (a compare: variant's skip) */
    for (size_t i = 0; i < nr; i++) {
        const struct json *bf = json_obj_get(runs->kids[i], "by_fault");
        for (size_t k = 0; bf && k < bf->n; k++) {
            const char *na = json_get_str(bf->kids[k], "not_applicable", NULL);
            if (na)
                sb_printf(sb, "n/a: %s, %s: %s\n", json_get_str(runs->kids[i], "label", "?"),
                          bf->keys[k], na);
        }
    }
}
