/*
 * checkproc.h: the checker pass of a finished run (history -> result model
 * -> reports in the run directory) in a child process, so that a signal
 * can stop it at once. On a large history the checkers and gnuplot take
 * longer than anyone waits after Ctrl-C, and they have no place to poll a
 * signal (they only read the run directory); a child can simply be killed.
 * Not here: what the checkers compute (checkers/), the reports (reports/).
 */
#ifndef LS_CHECKPROC_H
#define LS_CHECKPROC_H

#include "util/err.h"
#include "util/json.h"

/* Check the run directory dir and write its reports (formats as in
 * reports_write_all, notes on stderr unless quiet) in a child process of
 * its own process group; the child hands the result model back on a pipe.
 * Meanwhile stop(arg) is polled every 20 ms: when it returns non-zero the
 * child's group is SIGKILLed by pid (gnuplot dies with the child: death
 * signal), reaped, its temporary files removed, and LS_EINTR returned with
 * no result. Otherwise returns what the checker pass returned: 0, or a
 * negative code with err set; *result is the result model whenever one was
 * built, the reports' error included (caller frees). */
int checkproc_run(const char *dir, unsigned formats, int quiet, int (*stop)(void *), void *arg,
                  struct json **result, struct ls_err *err);

struct history;

/* Contract: load run directory dir's history for the result model
 * (history_load_rundir) and its resolved workload.yaml through the loader
 * into *w for the result's echo, seed and expectations (the checkers read
 * h->meta). A workload.yaml the loader refuses is checked with default
 * parameters, a warning and an evidence gap (history_load_rundir_refused),
 * and *w is NULL. Returns what the history loader returned; the caller
 * frees h with history_free and *w with workload_free either way. */
struct workload;
int checkproc_load(const char *dir, struct history *h, struct workload **w, struct ls_err *err);

#endif
