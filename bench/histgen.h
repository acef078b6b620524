/*
 * histgen.h: synthetic histories with planted violations, for the checker
 * and report benchmarks: a run directory written through the real event-log
 * writer and/or the same history as JSONL. Resource r is used in turn by
 * workers r, r+R, r+2R, r+3R, one 12-event grant per slot; a planted
 * violation stretches one hold into the next slot (lock-broken also
 * stretches its lease past the next grant), with one plain lost update.
 * Optionally each worker is restarted between its slots (epochs).
 */
#ifndef LS_BENCH_HISTGEN_H
#define LS_BENCH_HISTGEN_H

#include <stdint.h>

#include "util/json.h"

struct histgen_opts {
    int64_t events;         /* about this many events in total */
    int resources;          /* R (workers = 4 R) */
    int64_t violate_every;  /* plant one violation every this many slots (per resource) */
    const char *rundir;     /* write a run directory here (created), or NULL */
    const char *jsonl;      /* write a JSONL history here, or NULL */
    int epochs;             /* each worker restarted epochs - 1 times, evenly: a crash
                             * record ends each epoch but the last, each epoch its own
                             * log (worker-NNN.eK.bin); 0 or 1: one log per worker */
};

/* What was planted. */
struct histgen_result {
    int64_t events;         /* events written (per form) */
    int64_t slots;          /* grants */
    int64_t stale, broken;  /* planted violations by class */
    int64_t plain_lost;     /* planted plain lost updates (= stale + broken) */
    int64_t logs;           /* epochs written over all workers (one log each in a run
                             * directory; fewer than workers x epochs when the slots
                             * per worker do not divide evenly) */
    struct json *expected;  /* array of the first 50 planted violations in time order:
                             * {resource, class, overlap_start_ns}; caller frees */
};

/* Generate. Returns 0, or -1 with a message on stderr. */
int histgen(const struct histgen_opts *o, struct histgen_result *out);

#endif
