/*
 * suite.h: `lockstorm run DIR`: every workload file of a directory (its
 * *.yaml, in name order), one run each, one line per scenario on stdout
 * (verdict, time, each expectation's measured value) and a closing
 * summary. workloads/stories/ is the suite of the reference articles'
 * stories (docs/stories.md). Each run is an ordinary run: its directory is
 * OUT/NAME with --out OUT, else runs/NAME-UTC like any run.
 */
#ifndef LS_SUITE_H
#define LS_SUITE_H

#include <stdio.h>

struct suite_opts {
    const char *const *sets;   /* --set overrides applied to every workload */
    int nsets;
    const char *seed;          /* --seed, or NULL */
    const char *out;           /* --out: base directory of the runs, or NULL */
    unsigned formats;          /* reports written into each run directory (0 = all) */
};

/* Is path a directory? */
int suite_is_dir(const char *path);

/* Run the suite in dir. Returns the exit status for main(): 0 when every
 * scenario passed, else the worst of 1 (a scenario failed), 4 (unknown),
 * 3 (a run could not start), 2 (a workload did not load, or the directory
 * has none). An interrupt (SIGINT/SIGTERM) ends the suite after the
 * current scenario. */
int suite_run(const char *dir, const struct suite_opts *o, FILE *out);

#endif
