/*
 * options.h: the options-table machinery (STYLE.md rule 2). One table per
 * workload section (and one per lock implementation and fault kind for their
 * own options) names each key with its type, where it is stored, its default
 * as text (parsed by the same code as user input), its range or choices and a
 * one-line help. The same tables drive YAML loading, --set, `lockstorm list`,
 * the generated workload reference and the resolved-workload echo.
 */
#ifndef LS_OPTIONS_H
#define LS_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum opt_type {
    OPT_INT,       /* int64_t; range min..max */
    OPT_U64,       /* uint64_t (seeds) */
    OPT_DURATION,  /* int64_t ns; range min..max in ns */
    OPT_BOOL,      /* int 0/1 */
    OPT_STRING,    /* char * (owned by the struct; freed by opt_free) */
    OPT_ENUM,      /* int index into choices */
    OPT_DIST,      /* struct dist (mapping {dist: ..., ...} or a bare duration = fixed) */
    OPT_SECTION,   /* nested mapping described by sub (stored inline at offset) */
    OPT_CUSTOM,    /* parsed by the owning module (e.g. lock.renew, faults, expect) */
};

struct opt_def {
    const char *name;
    enum opt_type type;
    size_t offset;
    const char *def;               /* default as text; NULL = required / none */
    double min, max;               /* OPT_INT / OPT_DURATION (ns) range; min == max == 0: none */
    const char *const *choices;    /* OPT_ENUM: NULL-terminated */
    const struct opt_def *sub;     /* OPT_SECTION: NULL-name-terminated table */
    const char *help;
};

#endif
