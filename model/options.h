/*
 * options.h: the options-table machinery (options as data). One table per
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
    OPT_DOUBLE,    /* double; range min..max (e.g. redlock drift_factor, lognormal sigma) */
};

struct opt_def {
    const char *name;
    enum opt_type type;
    size_t offset;
    const char *def;               /* default as text; NULL = required / none */
    double min, max;               /* OPT_INT / OPT_DURATION (ns) range; min == max == 0: none */
    const char *const *choices;    /* OPT_ENUM: NULL-terminated; OPT_DURATION: words accepted
                                    * besides durations (e.g. "never"), stored as -1, -2, ... */
    const struct opt_def *sub;     /* OPT_SECTION: NULL-name-terminated table */
    const char *help;
};

/*
 * The machinery (options.c). A table's fields live in a struct `base`
 * points at. Errors go through a struct ydiag (model/yamltree.h) and read
 * "FILE:LINE:COL: path: what is wrong"; `path` names the key in messages
 * ("lock.retry", "faults[0]", "" for the top level).
 */
struct ls_err;
struct ynode;
struct ydiag;
struct strbuf;
struct json;

/* How the owner of a table handles its OPT_CUSTOM entries and checks values
 * that need more than a range (cross-field rules). Every hook may be NULL. */
struct opt_hooks {
    void *ctx;
    /* Parse an OPT_CUSTOM value v (the user's node, or the default text
     * parsed as YAML; NULL when absent and def is NULL). where: the node to
     * blame when v is NULL. Returns 0, or -1 after reporting to dg. */
    int (*parse)(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                 const struct ynode *where, const char *path, struct ydiag *dg);
    /* Called after a non-custom entry got its value (v = the user's node, or
     * NULL when the default was used; where as above). */
    void (*check)(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                  const struct ynode *where, const char *path, struct ydiag *dg);
    /* Echo an OPT_CUSTOM value: write what follows "key:" (" value\n", or
     * "\n" and nested lines indented by indent + 2). */
    void (*yaml)(void *ctx, const struct opt_def *d, const void *base, int indent,
                 struct strbuf *sb);
    /* Echo an OPT_CUSTOM value as JSON (caller owns the result). */
    struct json *(*json)(void *ctx, const struct opt_def *d, const void *base);
    /* Reference doc: the type column of an OPT_CUSTOM entry. */
    const char *(*type_text)(void *ctx, const struct opt_def *d);
};

/* One table applied to one struct; several scopes can share one mapping
 * (a fault's common keys plus its kind's own keys). */
struct opt_scope {
    const struct opt_def *tab;
    void *base;
};

/* Load mapping map (NULL or a YAML null = all defaults) into the scopes, in
 * table order: each present key is parsed, each absent key gets its default
 * (parsed by the same code), unknown keys are errors naming the nearest
 * valid key. A value that fails to parse falls back to its default so later
 * cross-field checks do not cascade. Errors go to dg (check dg->count). */
void opt_load_map(const struct opt_scope *scopes, int nscopes, const struct ynode *map,
                  const struct ynode *where, const char *path, const struct opt_hooks *h,
                  struct ydiag *dg);
/* Parse one value node into d's field (no default handling). Returns 0 or
 * -1 after reporting "path: what is wrong" to dg. */
int opt_parse_node(const struct opt_def *d, void *base, const struct ynode *v,
                   const struct ynode *where, const char *path, const struct opt_hooks *h,
                   struct ydiag *dg);
/* Parse a scalar's text into d's field (OPT_INT, OPT_U64, OPT_DURATION,
 * OPT_BOOL, OPT_STRING, OPT_ENUM, OPT_DOUBLE), range included. Returns 0, or
 * -1 with "expected an integer, got 'six'" / "0 is out of range 1..1024" in
 * why. */
int opt_parse_text(const struct opt_def *d, void *base, const char *text, char *why, size_t n);
/* Fill every field of tab with its default (a fresh calloc'd options
 * struct for a lock implementation or fault kind). Returns 0, or
 * LS_EWORKLOAD with err set when a default does not parse (a table bug). */
int opt_fill_defaults(const struct opt_def *tab, void *base, struct ls_err *err);
/* Free what the fields of tab own (OPT_STRING) in base, recursing into
 * sections; the struct itself is the caller's. NULL tab/base is a no-op. */
void opt_free(const struct opt_def *tab, void *base);

/* Echo: append tab's fields as YAML block lines indented by indent spaces,
 * or build a JSON object (durations as strings like "300ms"; caller frees). */
void opt_to_yaml(const struct opt_def *tab, const void *base, int indent,
                 const struct opt_hooks *h, struct strbuf *sb);
struct json *opt_to_json(const struct opt_def *tab, const void *base, const struct opt_hooks *h);
/* One field's value as YAML flow text (strings double-quoted) / as JSON. */
void opt_format_value(const struct opt_def *d, const void *base, struct strbuf *sb);
struct json *opt_value_json(const struct opt_def *d, const void *base);

/* Markdown reference: the rows "| key | type | default | range | description |"
 * of tab (keys prefixed by prefix; with flatten, the rows of nested sections
 * follow their section's row, else a section is one row). Writes the header
 * row too when header is set. */
void opt_reference(const struct opt_def *tab, const char *prefix, int flatten, int header,
                   const struct opt_hooks *h, struct strbuf *sb);
const char *opt_type_name(enum opt_type t);
/* Markdown: the keys of a distribution mapping (OPT_DIST) and what each
 * kind takes. */
void opt_dist_reference(struct strbuf *sb);

/* Levenshtein distance (with adjacent transpositions) between a and b. */
int opt_edit_distance(const char *a, const char *b);
/* The nearest of names[0..n) to name, or NULL when none is close. */
const char *opt_nearest(const char *name, const char *const *names, int n);
/* Quote a user's text for a message: at most ~40 characters, control
 * characters shown as '?'. Returns buf. */
const char *opt_quote(const char *text, char *buf, size_t n);

#endif
