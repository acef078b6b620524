/*
 * matrix.h: the workload's `compare:` block (docs/compare.md): variants,
 * each a name, the overrides that make it (a `lock:` section, `cluster:`
 * keys, `set:` overrides) and its fault mapping (`faults:`: entries
 * overridden, or left out as n/a with a reason). `lockstorm run` runs the
 * workload once per variant into sibling run directories, then prints the
 * table of reports/compare.h. Loading, echo and the runs live here.
 */
#ifndef LS_MATRIX_H
#define LS_MATRIX_H

#include "harness/run.h"
#include "harness/workload.h"
#include "util/err.h"
#include "util/json.h"

struct ynode;
struct ydiag;
struct strbuf;

/* The loader's hook for the `compare` key (v: a list of variant mappings,
 * or null = none; root: the workload's top mapping after the --set
 * overrides, whose faults: list a variant's `faults:` mapping names).
 * Returns 0, or -1 after reporting to dg. */
int compare_parse(struct compare_spec *c, const struct ynode *v, const struct ynode *root,
                  const char *path, struct ydiag *dg);
void compare_free(struct compare_spec *c);
/* Echo: what follows "compare:" (" ~\n" or the list, indented), and JSON. */
void compare_echo_yaml(const struct compare_spec *c, int indent, struct strbuf *sb);
struct json *compare_echo_json(const struct compare_spec *c);

/* What a matrix run produced. */
struct matrix_result {
    char *parent;                /* the directory holding the runs (owned) */
    int n;                       /* variants run (< c->n when one failed or was interrupted) */
    char **dirs;                 /* their run directories (owned) */
    struct json **results;       /* their result models (owned; NULL when a run had none) */
    int interrupted;             /* a run was interrupted: the rest were not started */
    struct json *table;          /* the comparison (reports/compare.h), or NULL */
};

/* Run the variants of w (loaded from path with sets[0..nsets)): every
 * variant's workload is loaded first (path, then the variant's overrides,
 * then sets, then compare=~), so a bad variant stops the matrix before
 * anything runs (LS_EWORKLOAD, errors on errlog); then each runs with
 * run_workload into PARENT/<variant> (PARENT: o->out, else
 * runs/<name>-<UTC timestamp>); the comparison is built and written to
 * PARENT/compare.json and compare.txt. Returns 0 (out filled; free with
 * matrix_result_free) or a negative code with err set (out holds what ran). */
int matrix_run(const char *path, const char *const *sets, int nsets, const struct workload *w,
               const struct run_opts *o, FILE *errlog, struct matrix_result *out,
               struct ls_err *err);
/* Load every variant of w (as matrix_run does) without running anything:
 * `lockstorm validate`. Returns 0 or LS_EWORKLOAD (errors on errlog). */
int matrix_validate(const char *path, const char *const *sets, int nsets, const struct workload *w,
                    FILE *errlog, struct ls_err *err);
void matrix_result_free(struct matrix_result *m);

#endif
