/*
 * compare_model.h: the side-by-side comparison of several runs (`lockstorm
 * compare RUN_DIR...`; docs/compare.md): one row per run
 * (implementation), read from each run directory's result.json: what the
 * checkers found (clean / violations / unknown and why), grants/s,
 * acquire p99, mutex violations by class, plain and fenced lost updates,
 * fence regressions, unknown outcomes; and one column group per fault
 * kind, from result.json's fault_windows and the violations' faults; and
 * the conclusion: one line per fault kind and one for the whole run, in
 * words made from those counts alone (docs/compare.md "Conclusion"). The
 * comparison is a JSON document (format "lockstorm-compare"); the
 * renderers (reports/compare.h: text, Markdown, HTML) only format it.
 */
#ifndef LS_COMPARE_MODEL_H
#define LS_COMPARE_MODEL_H

#include "util/err.h"
#include "util/json.h"
#include "util/strbuf.h"

#define COMPARE_FORMAT "lockstorm-compare"
#define COMPARE_VERSION 1

/* Build the comparison of the runs dirs[0..n) (each a run directory with a
 * result.json, or a result.json file). labels[i] (may be NULL, or an entry
 * NULL) names row i; the default is the directory's base name. Returns 0
 * with *out the document (caller frees with json_free), or a negative code
 * with err set (LS_EINPUT: a directory without a readable result.json). */
int compare_build(const char *const *dirs, int n, const char *const *labels, struct json **out,
                  struct ls_err *err);

/* A fault kind that did not apply to row `row` (a compare: variant left
 * it out with `skip:`): its column group shows n/a and the reason. */
struct compare_na {
    int row;
    const char *kind;
    const char *reason;
};

/* compare_build, with na[0..nna) marked: by_fault.{kind} of that row is
 * {"not_applicable": reason}, the kind has a column group, and the faults
 * of the n/a kinds do not count against same_schedule. */
int compare_build_na(const char *const *dirs, int n, const char *const *labels,
                     const struct compare_na *na, int nna, struct json **out,
                     struct ls_err *err);

/* The exit status of `lockstorm compare` for a built comparison: 0 when
 * every run was judged (its checkers found violations or none: a
 * comparison reports, it is not a gate), 4 when some run's findings are
 * unknown (docs/compare.md "Exit status"). */
int compare_exit_code(const struct json *cmp);

#endif
