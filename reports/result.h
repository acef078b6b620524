/*
 * result.h: the renderers of the result model (docs/result-format.md "result.json
 * fields") as text and JSON. The model is a JSON tree built by
 * harness/verdict.h (the checkers' sections, the header, the verdict);
 * these only format it, they compute nothing.
 */
#ifndef LS_RESULT_H
#define LS_RESULT_H

#include <stdio.h>

#include "util/json.h"
#include "util/strbuf.h"

/* Renderers. text: the human summary ending with the one greppable verdict
 * line; json: result.json (pretty, 2-space indent). */
void render_text(const struct json *result, struct strbuf *sb);
void render_json(const struct json *result, struct strbuf *sb);
/* The verdict line alone (also the last line of render_text). */
void render_verdict_line(const struct json *result, struct strbuf *sb);
/* How the verdict follows from the expectations and the checkers, one
 * line without its newline ("PASS: 5 of 5 expectations met; ..."; text.c). */
void render_verdict_why(const struct json *result, struct strbuf *sb);

#endif
