/*
 * verdict.h: building the result model (docs/result-format.md "result.json
 * fields") and the CI-gate expectations. The model is a JSON tree: the
 * checkers fill their sections (checkers/check.h), result_build adds the
 * header (format, version, tool version, seed, resolved workload, times)
 * and the overall verdict. Renderers (reports/) only format it.
 */
#ifndef LS_HARNESS_VERDICT_H
#define LS_HARNESS_VERDICT_H

#include "checkers/check.h"
#include "checkers/history.h"
#include "model/resultpath.h"
#include "model/workload.h"
#include "util/json.h"

/* Build the whole result document from a loaded history: runs the checkers
 * (check_run), adds the header, evaluates the workload's expectations and
 * sets "verdict". Caller frees with json_free. */
struct json *result_build(struct history *h, const struct workload *w,
                          const struct check_params *p);

/* Contract: add series.holds (harness/holds.h: every hold, for
 * report.html's timeline) to result, built from h: a second read of the
 * logs, so only for callers about to write report.html (formats with
 * REPORT_HTML, or 0 = all). Nothing when result has no "series". */
void result_add_holds(struct json *result, const struct history *h);

/* Evaluate the expectations of w against result (fills "expectations").
 * Returns the number that failed. */
int result_eval_expectations(struct json *result, const struct workload *w);

/* Exit code for a finished result: 0 pass, 1 fail, 4 unknown. */
int result_exit_code(const struct json *result);

#endif
