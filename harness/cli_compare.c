/*
 * cli_compare.c: `lockstorm compare` and the compare: side of `lockstorm
 * run` (see cli_compare.h). Argument handling and exit statuses only; the
 * runs are harness/matrix.c's, the table reports/compare.c's.
 */
#include "harness/cli_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/matrix.h"
#include "harness/compare_model.h"
#include "reports/compare.h"
#include "harness/verdict.h"
#include "util/err.h"
#include "util/strbuf.h"

/* The comparison on stdout: the tables, or the document with as_json. */
static void emit(const struct json *table, int as_json)
{
    struct strbuf sb = STRBUF_INIT;
    if (as_json) {
        json_write(&sb, table, 2);
        sb_putc(&sb, '\n');
    } else {
        render_compare_text(table, &sb);
    }
    fwrite(sb.buf, 1, sb.len, stdout);
    fflush(stdout);
    sb_free(&sb);
}

int cli_compare_main(int argc, char **argv)
{
    const char **dirs = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*dirs));
    if (!dirs)
        return 3;
    int n = 0, as_json = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "lockstorm: compare: unknown option '%s'; see 'lockstorm help "
                            "compare'\n", argv[i]);
            free(dirs);
            return 2;
        } else {
            dirs[n++] = argv[i];
        }
    }
    if (n < 1) {
        fprintf(stderr, "lockstorm: compare needs at least one RUN_DIR; see 'lockstorm help "
                        "compare'\n");
        free(dirs);
        return 2;
    }
    struct json *table = NULL;
    struct ls_err err = {0};
    int rc = compare_build(dirs, n, NULL, &table, &err);
    free(dirs);
    if (rc < 0) {
        fprintf(stderr, "lockstorm: error: %s\n", err.msg);
        return rc == LS_EINPUT || rc == LS_EUSAGE ? 2 : ls_exit_code(rc);
    }
    emit(table, as_json);
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
        emit(m.table, as_json);
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
