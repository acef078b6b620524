/*
 * series.h: the time series the charts draw (reports/gnuplot.c), computed
 * from the history and stored in the result model as "series", so that the
 * renderers only format (STYLE.md rule 9). Every series is bounded in size
 * whatever the run's length (buckets, stride sampling, a zoom window for
 * the timeline), so a run of 10^7 events still charts in seconds. Not a
 * checker: it judges nothing. Layout in docs/result-format.md "series".
 */
#ifndef LS_SERIES_H
#define LS_SERIES_H

#include "checkers/history.h"
#include "util/json.h"

/* Contract: a new "series" object (caller frees) for h. result is the
 * model built so far: its "violations" place the timeline's zoom window
 * and overlaps, and "checks.mutex.holds" sizes it. */
struct json *series_build(const struct history *h, const struct json *result);

#endif
