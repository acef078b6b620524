/*
 * series.h: the time series the charts draw (reports/gnuplot.c), computed
 * from the history and stored in the result model as "series", so that the
 * renderers only format (they compute nothing). Every series is bounded in size
 * whatever the run's length (buckets, a decimated scatter, a zoom window
 * for the timeline), so a run of 10^8 events charts in a second. Not a
 * checker: it judges nothing. Layout in docs/result-format.md "series".
 */
#ifndef LS_SERIES_H
#define LS_SERIES_H

#include "checkers/history.h"
#include "checkers/pass.h"
#include "util/json.h"

/* Contract: a new "series" object (caller frees) for h. result is the
 * model built so far: its "violations" place the timeline's zoom window
 * and overlaps, and "checks.mutex.holds" sizes it. Uses (and frees) what
 * check_run's pass accumulated for h (h->memo), else makes its own pass. */
struct json *series_build(struct history *h, const struct json *result);

/* The accumulators, as a consumer of the checkers' pass (check.c). They
 * take the holds from the checker that pairs them (checker_def.listen:
 * the mutex checker) through series_hold_listener, and are one unit of
 * the pass with it (pass_consumer.unit). */
struct series_acc;
struct series_acc *series_acc_new(const struct history *h);
void series_acc_free(struct series_acc *a); /* NULL is fine */
extern const struct pass_ops series_pass_ops;
/* Contract: the listener that feeds a the holds as they end. */
struct hold_listener series_hold_listener(struct series_acc *a);

#endif
