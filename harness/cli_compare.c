/*
 * cli_compare.c: `lockstorm compare` and the compare: side of `lockstorm
 * run` (see cli_compare.h). Argument handling and exit statuses only; the
 * runs are harness/matrix.c's, the tables reports/compare.c's (text,
 * Markdown, HTML; -q prints the conclusion lines alone).
 */
#include "harness/cli_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/matrix.h"
#include "harness/compare_model.h"
#include "reports/compare.h"
#include "reports/reports.h"
#include "harness/verdict.h"
#include "util/err.h"
#include "util/strbuf.h"

/* What stdout gets: the text tables (0), the document (1), the Markdown
 * (2), the HTML page (3), or the conclusion lines alone (4, -q). */
enum { OUT_TEXT, OUT_JSON, OUT_MD, OUT_HTML, OUT_QUIET };

/* The comparison on stdout, as `what`. */
static void emit(const struct json *table, int what)
{
    struct strbuf sb = STRBUF_INIT;
    if (what == OUT_JSON) {
        json_write(&sb, table, 2);
        sb_putc(&sb, '\n');
    } else if (what == OUT_MD) {
        render_compare_md(table, &sb);
    } else if (what == OUT_HTML) {
        render_compare_html(table, &sb);
    } else if (what == OUT_QUIET) {
        render_compare_conclusion(table, &sb);
    } else {
        render_compare_text(table, &sb);
    }
    fwrite(sb.buf, 1, sb.len, stdout);
    fflush(stdout);
    sb_free(&sb);
}

/* Contract: a usage error of `compare` on stderr; returns 2. */
static int usage(const char *what)
{
    fprintf(stderr, "lockstorm: compare: %s; see 'lockstorm help compare'\n", what);
    return 2;
}

int cli_compare_main(int argc, char **argv)
{
    const char **dirs = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*dirs));
    if (!dirs)
        return 3;
    int n = 0, as_json = 0, quiet = 0, bad = 0;
    const char *format = NULL, *out = NULL;
    for (int i = 0; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(argv[i], "--format") == 0 || strcmp(argv[i], "--out") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "lockstorm: compare: %s needs a value; see 'lockstorm help "
                                "compare'\n", argv[i]);
                bad = 1;
                break;
            }
            *(argv[i][2] == 'f' ? &format : &out) = argv[i + 1];
            i++;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "lockstorm: compare: unknown option '%s'; see 'lockstorm help "
                            "compare'\n", argv[i]);
            bad = 1;
        } else {
            dirs[n++] = argv[i];
        }
    }
    unsigned formats = 0;
    char why[160];
    if (!bad && format && reports_parse_formats(format, &formats, why, sizeof(why)) < 0) {
        fprintf(stderr, "lockstorm: compare: --format: %s\n", why);
        bad = 1;
    }
    /* without --out, --format names what stdout gets: one of text, json, md, html */
    int what = quiet ? OUT_QUIET : as_json ? OUT_JSON : OUT_TEXT;
    if (!bad && format && !out) {
        static const unsigned bits[] = {REPORT_TEXT, REPORT_JSON, REPORT_MD, REPORT_HTML};
        int k = -1;
        for (int b = 0; b < 4; b++)
            if (formats == bits[b])
                k = b;
        if (k < 0)
            bad = usage("--format without --out prints one of text, json, md or html (give "
                        "--out DIR to write several files)") != 0;
        else if (as_json || quiet)
            bad = usage("--format without --out is what stdout gets: drop --json or -q") != 0;
        else
            what = k;
    }
    if (!bad && as_json && quiet)
        bad = usage("--json and -q: choose one") != 0;
    if (bad) {
        free(dirs);
        return 2;
    }
    if (n < 1) {
        free(dirs);
        return usage("needs at least one RUN_DIR");
    }
    struct json *table = NULL;
    struct ls_err err = {0};
    int rc = compare_build(dirs, n, NULL, &table, &err);
    free(dirs);
    if (rc < 0) {
        fprintf(stderr, "lockstorm: error: %s\n", err.msg);
        return rc == LS_EINPUT || rc == LS_EUSAGE ? 2 : ls_exit_code(rc);
    }
    if (out && compare_write_files(out, table, formats, &err) < 0) {
        fprintf(stderr, "lockstorm: error: %s; is --out an existing, writable directory?\n",
                err.msg);
        json_free(table);
        return 3;
    }
    emit(table, what);
    rc = compare_exit_code(table); /* a report, not a gate: 4 only when a run is unknown */
    json_free(table);
    return rc;
}

int cli_validate_compare(const char *path, const char *const *sets, int nsets,
                         const struct workload *w)
{
    struct ls_err err = {0};
    return matrix_validate(path, sets, nsets, w, stderr, &err) < 0 ? 2 : 0;
}

int cli_run_compare(const char *path, const char *const *sets, int nsets,
                    const struct workload *w, const struct run_opts *o, int as_json)
{
    struct matrix_result m;
    struct ls_err err = {0};
    int rc = matrix_run(path, sets, nsets, w, o, stderr, &m, &err);
    int code = 0;
    if (rc < 0) {
        fprintf(stderr, "lockstorm: error: %s\n", err.msg);
        code = rc == LS_EWORKLOAD || rc == LS_EUSAGE ? 2 : ls_exit_code(rc);
    }
    if (m.table)
        emit(m.table, as_json ? OUT_JSON : o->quiet ? OUT_QUIET : OUT_TEXT);
    if (code == 0 && m.interrupted)
        code = 1;
    if (code == 0 && w->nexpects > 0) { /* a gate: the worst of the runs */
        for (int i = 0; i < m.n; i++) {
            int c = m.results[i] ? result_exit_code(m.results[i]) : 4;
            if (c == 1 || (c == 4 && code == 0))
                code = c;
        }
    } else if (code == 0 && m.table) { /* a report: as `lockstorm compare` */
        code = compare_exit_code(m.table);
    }
    if (m.parent && !o->quiet)
        fprintf(stderr, "lockstorm: compare directory: %s (compare.txt, compare.json, one run "
                        "directory per variant)\n", m.parent);
    matrix_result_free(&m);
    return code;
}
