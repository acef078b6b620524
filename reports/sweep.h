/*
 * sweep.h: the TTL-tuning report of `lockstorm sweep` (docs/sweep.md).
 * One model, sweep.json, assembled by sweep_model.c from the sweep's plan
 * (what ran: axes, cells, states, written by harness/sweep_run.c) and the
 * cells' run directories (result.json and the event logs); renderers in
 * sweep.c turn it into sweep.txt, sweep.html and gnuplot charts and compute
 * nothing. The arithmetic of the predicted curves is checkers/ttl.h.
 */
#ifndef LS_REPORTS_SWEEP_H
#define LS_REPORTS_SWEEP_H

#include <stdio.h>

#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

#define SWEEP_FORMAT "lockstorm-sweep"
#define SWEEP_VERSION 1

/* Contract: completes plan (a sweep.json document as harness/sweep_run.c
 * writes it: header, axes, cells with their states) in place from the
 * cells' run directories under dir: each done cell gets "measured", and
 * the document gets "series" (one per combination of the axes other than
 * lock.ttl: points per TTL, the predicted curves, the smallest safe TTL),
 * "recommendation", "price" and "warnings". Members it adds are replaced
 * when present, so a finished sweep.json can be assembled again. */
void sweep_model_build(const char *dir, struct json *plan);

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
