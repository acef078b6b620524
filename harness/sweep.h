/*
 * sweep.h: `lockstorm sweep SWEEP.yaml` (docs/sweep.md): a matrix of runs
 * of one base workload, each cell a set of --set overrides (one value per
 * axis, e.g. lock.ttl x faults[0].duration) run `repeats` times. Every cell
 * is validated by the workload loader before anything starts, then run as
 * its own `lockstorm run` child process (the binary itself, argv, no shell)
 * into its own run directory under the sweep directory, several at once
 * when cores allow. The TTL-tuning report is assembled afterwards from the
 * cells' run directories (reports/sweep.h). This module does not measure
 * or render anything itself.
 */
#ifndef LS_SWEEP_H
#define LS_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#include "util/err.h"
#include "util/json.h"

/* One axis: a workload key and the values it takes (each as --set text). */
struct sweep_axis {
    char *key;          /* "lock.ttl", "faults[0].duration" */
    char **full;        /* "lock.ttl=200ms": the --set text of each value (owned) */
    char **values;      /* "200ms", "{dist: uniform, min: 20ms, max: 80ms}": each points
                           into full[j], past the '=' */
    int nvalues;
};

struct sweep_cell {
    int index;          /* 0-based, in expansion order (first axis slowest, repeat fastest) */
    int repeat;         /* 0-based */
    uint64_t seed;
    int *vi;            /* value index per axis (owned) */
    char name[160];     /* directory name under cells/ */
    int64_t planned_ns; /* the cell workload's duration */
    /* runtime */
    int state;          /* enum sweep_cell_state */
    int pid;
    int exit_code;      /* of the child (0..255), -1 when not exited normally */
    int64_t t_start, t_end;  /* ns since the sweep started */
    int64_t stale_holder, lock_broken;  /* read from its result.json when done */
    char why[256];      /* error / timeout text */
};

enum sweep_cell_state { CELL_PENDING, CELL_RUNNING, CELL_DONE, CELL_ERROR, CELL_INTERRUPTED };

struct sweep {
    char *file;         /* the sweep file as given */
    char *name;
    char *description;
    char *workload;     /* the base workload as written */
    char *base;         /* its resolved path */
    uint64_t seed;      /* first repeat's seed (base workload's seed when not given) */
    int seed_given;
    int64_t repeats;
    int64_t parallel;   /* 0 = auto */
    char *formats;      /* report formats of each cell (always includes json) */
    char **sets;        /* fixed overrides "key=value" for every cell */
    int nsets;
    struct sweep_axis *axes;
    int naxes;
    struct sweep_cell *cells;
    int ncells;
};

/* Resolves a workload argument (path or bundled name) into buf; returns
 * the path to load (main.c's resolver). */
typedef const char *(*sweep_resolver)(const char *arg, char *buf, size_t n);

/* Load the sweep file path: its keys, the base workload (a path relative
 * to the sweep file, a path, or a bundled name), the axes; expand the
 * cells and load every cell's workload through workload_load (the --set
 * overrides of its values), so a bad value stops the sweep before any run.
 * Errors are "FILE:LINE:COL: ..." (the first in err, all in errlog when
 * not NULL). Returns 0 with *out set (sweep_free), or LS_EWORKLOAD /
 * LS_EIO. */
int sweep_load(const char *path, sweep_resolver resolve, struct sweep **out, FILE *errlog,
               struct ls_err *err);
void sweep_free(struct sweep *s);

/* The --set arguments of cell c (seed included) into sets[0..max): returns
 * how many; the strings are owned by s (valid until sweep_free) except
 * the seed, written into seedbuf. */
int sweep_cell_sets(const struct sweep *s, const struct sweep_cell *c, const char **sets,
                    int max, char *seedbuf, size_t seedlen);

/* Cells run at once: want when > 0 (capped at the cores), else
 * max(1, cores / 2); never more than ncells. */
int sweep_parallelism(int want, int ncells);

/* Is path a sweep file (a YAML mapping with a top-level `sweep:` key)?
 * For `lockstorm list workloads`, which loads every other .yaml as a
 * workload. On 1, desc (when not NULL) gets its description. */
int sweep_file_is_sweep(const char *path, char *desc, size_t desclen);
/* The same test on a file's text already read (len bytes): a caller that
 * reads the file once (workload_read) asks this, never sweep_file_is_sweep,
 * so a pipe is not consumed before the workload is loaded from it. */
int sweep_text_is_sweep(const char *text, size_t len, char *desc, size_t desclen);

/* `lockstorm sweep SWEEP [--out DIR] [--jobs N] [--progress MODE]
 * [--quiet] [--json]` and `lockstorm sweep --report SWEEP_DIR`: argv
 * after "sweep". Returns the exit status main() returns: 0 every cell ran
 * (violations in cells are the sweep's data, not a failure), 2 usage or
 * sweep file error, 3 a cell could not run, 4 interrupted. */
int sweep_command(int argc, char **argv, sweep_resolver resolve);

#endif
