/*
 * compare.h: the renderings of `lockstorm compare`: the comparison
 * document (format "lockstorm-compare", built by harness/compare_model.h)
 * as text (compare.txt, at most 100 columns), Markdown (compare.md) and
 * HTML (compare.html); nothing computed.
 */
#ifndef LS_COMPARE_H
#define LS_COMPARE_H

#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

/* The comparison as text tables and its conclusion (see docs/compare.md
 * for the columns); no line longer than 100 columns when the run labels
 * are at most 40 characters. */
void render_compare_text(const struct json *cmp, struct strbuf *sb);
/* The conclusion lines alone (one per fault kind, then the whole run),
 * wrapped at 100 columns: what `-q` prints. */
void render_compare_conclusion(const struct json *cmp, struct strbuf *sb);
/* compare.md: heading, conclusion, the runs table, one table per fault kind. */
void render_compare_md(const struct json *cmp, struct strbuf *sb);
/* compare.html: the same, one self-contained page (inline CSS). */
void render_compare_html(const struct json *cmp, struct strbuf *sb);

/* Contract: write the comparison into dir: compare.txt and compare.json
 * always, compare.md with REPORT_MD and compare.html with REPORT_HTML in
 * formats (reports/reports.h bits; 0 means all). 0, or a negative code
 * with err set (the file named). */
int compare_write_files(const char *dir, const struct json *cmp, unsigned formats,
                        struct ls_err *err);

#endif
