/*
 * cli_compare.h: the command-line side of comparisons (docs/compare.md):
 * `lockstorm compare RUN_DIR... [--json]` prints the side-by-side table of
 * existing runs (reports/compare.h); `lockstorm run` of a workload with a
 * `compare:` block runs its variants (harness/matrix.h) and prints the
 * table of what they did. Both return the process exit status.
 */
#ifndef LS_CLI_COMPARE_H
#define LS_CLI_COMPARE_H

#include "harness/run.h"
#include "harness/workload.h"

/* `lockstorm compare RUN_DIR... [--json]`; argv are the arguments after
 * "compare". Returns 0, or 2 (usage; a directory without a readable
 * result.json). */
int cli_compare_main(int argc, char **argv);

/* `lockstorm run WORKLOAD` when w has a compare: block: path is the file w
 * was loaded from, sets the command line's overrides (seed included). The
 * table goes to stdout (the comparison document with as_json). Returns 0
 * when every variant ran (with an expect: block: the worst of the runs'
 * statuses, 1 fail or 4 unknown), 1 interrupted, 2 a variant does not
 * load, 3 an environment error. */
int cli_run_compare(const char *path, const char *const *sets, int nsets,
                    const struct workload *w, const struct run_opts *o, int as_json);

/* `lockstorm validate` of such a workload: loads every variant. Returns 0
 * or 2 (errors on stderr). */
int cli_validate_compare(const char *path, const char *const *sets, int nsets,
                         const struct workload *w);

#endif
