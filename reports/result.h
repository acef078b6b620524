/*
 * result.h: the result model (DESIGN.md "result.json core fields") and the
 * CI-gate expectations. The model is a JSON tree: checkers fill their
 * sections (checkers/check.h), result_build adds the header (format,
 * version, tool version, seed, resolved workload, times) and the overall
 * verdict; renderers (text, JSON) only format it, they compute nothing.
 */
#ifndef LS_RESULT_H
#define LS_RESULT_H

#include <stdio.h>

#include "util/json.h"
#include "util/strbuf.h"
#include "checkers/history.h"
#include "checkers/check.h"

#define RESULT_FORMAT "lockstorm-result"
#define RESULT_VERSION 1

/* Build the whole result document from a loaded history: runs the checkers
 * (check_run), adds the header, evaluates the workload's expectations and
 * sets "verdict". Caller frees with json_free. */
struct json *result_build(struct history *h, const struct check_params *p);

/* Evaluate the expectations of w against result (fills "expectations").
 * Returns the number that failed. */
int result_eval_expectations(struct json *result, const struct workload *w);

/* Exit code for a finished result: 0 pass, 1 fail, 4 unknown. */
int result_exit_code(const struct json *result);

/* Is path a documented result.json path an expectation may name?
 * (contract paths of DESIGN.md plus the documented extras). */
int result_path_valid(const char *path);

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
