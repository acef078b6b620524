/*
 * holds.h: every hold of a history as one compact table of the result
 * model (`series.holds`, docs/result-format.md), for the report's
 * interactive timeline (reports/html_timeline.c): worker, resource, grant,
 * enter, exit, lease, fence, how the hold ended and how its release went.
 * Read from the logs after the checkers' pass; bounded in size (sampled
 * past HOLDS_MAX holds, the holds of listed violations always kept).
 */
#ifndef LS_HARNESS_HOLDS_H
#define LS_HARNESS_HOLDS_H

#include "checkers/history.h"
#include "util/json.h"

#define HOLDS_MAX 100000 /* holds listed whole; past it every k-th (k = 2, 4, ...) */

/* Contract: a new "holds" object (caller frees) for h: {total, kept,
 * sampled_every, resources, ends, releases, columns}, each column one
 * string of comma-separated numbers (docs/result-format.md "series"). result is the model so far:
 * the holders of its listed "violations" are always kept. Reads each
 * worker's records once; memory bounded by HOLDS_MAX rows plus the named. */
struct json *holds_build(const struct history *h, const struct json *result);

#endif
