/*
 * progress.h: the live progress line of `lockstorm run` on stderr (animated on a
 * terminal only; docs/faq.md): elapsed /
 * planned time, grants and the recent grant rate, busy and unknown acquire
 * outcomes so far, faults active. It reads the progress counters the
 * workers keep in shared memory (harness/shm.h); it is not the record of
 * the run and nothing reads what it prints.
 */
#ifndef LS_PROGRESS_H
#define LS_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include "harness/shm.h"

enum progress_mode {
    PROGRESS_AUTO = 0,  /* a live line when stderr is a terminal, else nothing */
    PROGRESS_PLAIN,     /* one line per second, terminal or not (CI logs) */
    PROGRESS_OFF        /* nothing (--quiet, --progress off) */
};

struct progress {
    int style;            /* 0 nothing, 1 live line, 2 plain lines */
    FILE *out;
    int64_t total_ns;     /* planned duration */
    int64_t last_print;   /* elapsed ns of the last plain line */
    int64_t win_t;        /* start of the rate window (elapsed ns) */
    uint64_t win_grants;  /* grants at win_t */
    double rate;          /* grants/s over the last completed window */
    int drawn;            /* a live line is on the screen */
};

/* "auto", "plain" or "off" -> *mode. Returns 0, or -1 for anything else. */
int progress_parse(const char *s, int *mode);

/* Resolve mode against quiet and whether out is a terminal. */
void progress_init(struct progress *p, int mode, int quiet, int64_t total_ns, FILE *out);

/* Show the state at elapsed_ns (call it often; it prints at most every
 * 250 ms live, every second plain). final ends the live line with a
 * newline and prints a last plain line. shm may be NULL (nothing yet). */
void progress_tick(struct progress *p, const struct shm *shm, int64_t elapsed_ns,
                   int faults_active, int final);

#endif
