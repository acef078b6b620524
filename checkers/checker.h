/*
 * checker.h: the registry of checkers. Each checker is one const ops entry:
 * its name, the result sections it writes, when check_run finishes it, and
 * how it reads the history (a consumer of the one merged pass, pass.h, or
 * a reader of its own after the pass). check_run (check.c) iterates the
 * registry and names no checker. Adding a checker = its file + one line in
 * checker.c's table + docs/checkers.md + tests (docs/checkers.md "Adding a
 * checker").
 */
#ifndef LS_CHECKER_H
#define LS_CHECKER_H

#include "checkers/check.h"
#include "checkers/pass.h"

#define CHECKER_OPS_VERSION 1

/* When check_run finishes a checker: in registry order within a phase. */
enum checker_phase {
    CHECKER_JUDGE = 0,        /* before the stories narrate the violations */
    CHECKER_AFTER_STORIES = 1 /* after them (reads what the stories left, e.g. marks) */
};

struct checker_ops {
    int version;              /* CHECKER_OPS_VERSION */
    const char *name;         /* "mutex": also its key under "checks" when it has one */
    const char *sections;     /* the result sections it writes, for docs and readers:
                               * "checks.mutex, violations" */
    /* What the renderers show of its section is described by name in
     * model/checkschema.c (they read result.json, which may come from
     * another build, so they look the description up by the section's
     * name, not through this table); a checker without a description is
     * shown by its verdict and note. */
    int placeholder;          /* 1: check_run puts an empty "checks.<name>" in place
                               * first (fixes the member order) */
    int phase;                /* enum checker_phase */
    /* Exactly one of pass and run: */
    const struct checker_def *pass;  /* a consumer of check_run's one pass */
    /* Reads the history itself (after the pass); adds its section(s) to res
     * and returns its verdict. */
    int (*run)(struct history *h, const struct check_params *p, struct json *res);
};

/* Contract: every registered checker, in check_run's order; *n gets their
 * number. The array is static. */
const struct checker_ops *const *checker_all(int *n);
/* Contract: the checker called name, or NULL. */
const struct checker_ops *checker_find(const char *name);

#endif
