/*
 * limits.h: the process limits a run needs, checked before anything starts.
 * A thousand workers through the proxy need thousands of descriptors in
 * one process; a low `ulimit -n` would otherwise show up minutes later as
 * refused connections or a proxy that cannot accept. limits_check works out
 * what the workload needs (descriptors per process, processes and threads
 * for the user, file size for the event logs), raises a soft limit up to
 * its hard limit when that is enough, and otherwise fails with one line
 * naming the limit, the number needed and what to do.
 */
#ifndef LS_LIMITS_H
#define LS_LIMITS_H

#include <stdint.h>

#include "util/err.h"

struct workload;

struct limits_need {
    int64_t nofile;      /* descriptors the busiest process (proxy or a node) needs */
    const char *nofile_who;  /* "the proxy", "each lock node" */
    int64_t nproc;       /* processes and threads the run adds for this user */
    int64_t fsize;       /* bytes one event log may need (RLIMIT_FSIZE) */
};

/* What w needs (pure: for tests and the message). */
void limits_need_of(const struct workload *w, struct limits_need *n);

/* Check (and where the hard limit allows, raise) RLIMIT_NOFILE, RLIMIT_NPROC
 * (not for root, which the kernel does not hold to it) and RLIMIT_FSIZE for
 * w. Returns 0, or LS_EENV with err saying which limit, how much is needed
 * and how to raise it. Changes only this process's soft limits (children
 * inherit them). */
int limits_check(const struct workload *w, struct ls_err *err);

#endif
