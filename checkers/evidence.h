/*
 * evidence.h: is the record of a run all there? (docs/checkers.md "Evidence".)
 * While a run directory is loaded, its event logs are compared with what
 * run.json lists (workers, epochs, run id) and with how each process
 * ended; whatever the verdict needed and cannot have (a missing, foreign
 * or damaged log, a run that failed or whose harness died, a damaged
 * side file) becomes a gap: one line naming the file, worker or epoch and
 * what is wrong. Any gap makes the checkers' verdict unknown. This file
 * judges the record only, never the lock.
 */
#ifndef LS_EVIDENCE_H
#define LS_EVIDENCE_H

#include <stddef.h>
#include <stdint.h>

#include "checkers/history.h"
#include "util/json.h"

/* What the load found. Counts are exact; gaps lists at most
 * EVIDENCE_MAX_GAPS lines, the rest are counted in more. */
#define EVIDENCE_MAX_GAPS 100

struct ev_expect;

struct hist_evidence {
    int compared;               /* a run directory (run.json) was compared; 0: JSONL */
    char run_id[2 * EVLOG_RUN_ID_LEN + 1];  /* run.json's run_id, "" when none */
    uint8_t run_id_raw[EVLOG_RUN_ID_LEN];   /* the same, all zeros when none */
    char run_state[16];         /* run.json's state ("finished" ...), "" when unknown */
    int listed;                 /* run.json lists its workers (else logs are not matched
                                 * against a list: that is a gap of its own) */
    int expected, found, missing, foreign, damaged;
    int ngaps, more;            /* lines in gaps; gaps past EVIDENCE_MAX_GAPS */
    char **gaps;
    struct ev_expect *exp;      /* the logs run.json lists, sorted by worker, epoch */
    size_t nexp;
};

/* Record a gap (one line, printf-style) in h's evidence (made when NULL). */
void history_gap(struct history *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Where the evidence stands (gaps and damaged logs so far), to go back to
 * when a worker is loaded again (history.c load_worker). */
struct ev_mark {
    int ngaps, damaged;
};
struct ev_mark evidence_mark(const struct history *h);
void evidence_rewind(struct history *h, struct ev_mark m);

/* ---- used by the run directory loader (history.c), in this order ---- */

/* Read run.json (h->run, parsed): its state, run id and the logs its
 * workers' epochs had. */
void evidence_begin(struct history *h);
/* events/<name>, the log of worker id epoch by its name: 1 to load it, 0
 * when it is foreign (another run's id, a header naming another worker or
 * epoch, a log run.json does not list):
 * then a gap is recorded and the log is not read. */
int evidence_admit(struct history *h, const char *dir, const char *name, int id, uint32_t epoch);
/* The log events/<name> as read (f; deferred: its records are left for
 * the pass, see history.h "unverified"): damage, a missing header or an
 * end that does not match how its process ended are gaps. */
void evidence_log(struct history *h, const char *name, int id, uint32_t epoch,
                  const struct evlog_file *f, int deferred);
/* After every log: the listed ones that are not there. */
void evidence_end(struct history *h);
/* The pass cut worker wi's stream before record n (history_cut). */
void evidence_cut(struct history *h, int wi, size_t n);

void evidence_free(struct hist_evidence *ev);

/* ---- used by the checkers (check.c) ---- */

/* 1 when nothing the verdict needed is missing. */
int evidence_complete(const struct history *h);
/* The result model's "evidence" object (docs/result-format.md); caller
 * frees. A JSONL history has no run to compare with: complete, run_id and
 * run_state null, logs.expected null and logs.found its workers. */
struct json *evidence_json(const struct history *h);

#endif
