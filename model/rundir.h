/*
 * rundir.h: a run directory's resolved workload as the checkers read it.
 * The harness writes workload.yaml with every default filled in; this
 * reader takes back the keys that judging a run needs (duration and quiet
 * tail, lock ttl and fencing, workers and their hold/think distributions,
 * the jobs stream, check.*, the holder pauses of the faults and nemesis,
 * the resource names when workers.resources lists them)
 * through the YAML tree and the options machinery of model/, without the
 * workload loader and its lock and fault registries. A key that is absent
 * gets the loader's default.
 */
#ifndef LS_MODEL_RUNDIR_H
#define LS_MODEL_RUNDIR_H

#include <stddef.h>
#include <stdint.h>

#include "model/workload.h"
#include "util/err.h"

/* One `faults:` entry, as its kind and target are written. */
struct rundir_fault {
    char kind[32];
    char target[32];              /* "holder", "worker:1", ...; "" when not given */
    int64_t at, duration, every, count;
};

/* One kind of the random nemesis and the target entries it draws from. */
struct rundir_nemesis_kind {
    char kind[32];
    int ntargets;                 /* entries of nemesis.targets.<kind>; 0 = its default */
    int holder_targets;           /* of those, the entries whose target is holder (or absent) */
};

struct rundir_meta {
    /* duration, quiet_tail, lock.ttl, lock.fencing, workers.count,
     * resources, hold, think, mode, jobs.{interval, count, layers},
     * check.{near_miss, stuck_after, stories}: filled; every other field
     * zero (this is not a loaded workload: nothing owns memory in it). */
    struct workload w;
    int nfaults;
    struct rundir_fault *faults;  /* owned */
    struct {
        int enabled;              /* a nemesis: mapping was given */
        int nkinds;
        struct rundir_nemesis_kind *kinds; /* owned */
        int64_t interval, start;
        int64_t dur_min, dur_max;
    } nemesis;
    char **res_names;             /* workers.resources given as names (owned), nres_names of
                                   * them; NULL: a count, the names are r0..rN-1 */
    int nres_names;
};

/* Contract: read the resolved workload text[0..len) (name for messages).
 * Returns 0 and *out (caller frees with rundir_meta_free), or an error
 * code with err set ("FILE:LINE:COL: path: what is wrong", as the loader
 * words it) and *out NULL. */
int rundir_meta_parse(const char *name, const char *text, size_t len, struct rundir_meta **out,
                      struct ls_err *err);
/* Contract: the same from a file (a run directory's workload.yaml). */
int rundir_meta_read(const char *path, struct rundir_meta **out, struct ls_err *err);
void rundir_meta_free(struct rundir_meta *m);

#endif
