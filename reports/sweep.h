/*
 * sweep.h: the TTL-tuning report of `lockstorm sweep` (docs/sweep.md).
 * One model, sweep.json, assembled by harness/sweep_model.h from the
 * sweep's plan and the cells' run directories where the sweep runs; the
 * renderers in sweep.c turn it into sweep.txt, sweep.html and gnuplot
 * charts and compute nothing.
 */
#ifndef LS_REPORTS_SWEEP_H
#define LS_REPORTS_SWEEP_H

#include <stdio.h>

#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

#define SWEEP_FORMAT "lockstorm-sweep"
#define SWEEP_VERSION 1

/* The text summary (stdout and sweep.txt): the table of series x TTL and
 * the recommendation; its last line is greppable:
 * "lockstorm: sweep NAME cells=D/N ... recommended_ttl=..." */
void render_sweep_text(const struct json *model, struct strbuf *sb);

/* Writes sweep.json, sweep.txt, the charts (style.gp, ttl-*.dat, ttl-*.gp
 * and ttl-*.svg when gnuplot is there) and sweep.html into dir. A missing
 * gnuplot is one line on notes ("charts skipped: gnuplot not found"), not
 * an error. *written (when not NULL) gets the file names. Returns 0 or a
 * negative code with err set when a file could not be written. */
int sweep_write_reports(const char *dir, const struct json *model, FILE *notes,
                        struct strbuf *written, struct ls_err *err);

#endif
