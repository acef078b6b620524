/*
 * yamltree.h: a YAML document as a small tree of mappings, sequences and
 * scalars, each node marked with its 1-based line and column, built from
 * libyaml's event parser. It refuses what a workload file never needs and
 * what makes errors hard to place: aliases, anchors, tags, several
 * documents, duplicate keys, non-scalar keys, huge strings, deep nesting.
 * It also holds the diagnostic sink (struct ydiag) every workload error goes
 * through, so that all of them read "FILE:LINE:COL: what is wrong".
 */
#ifndef LS_YAMLTREE_H
#define LS_YAMLTREE_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"

#define YAML_MAX_FILE (1024 * 1024)  /* bytes; larger workload files are refused */
#define YAML_MAX_STRING 4096         /* bytes per scalar */
#define YAML_MAX_DEPTH 64            /* nested collections */

enum ynode_kind { YN_SCALAR, YN_MAP, YN_SEQ };

struct ynode {
    enum ynode_kind kind;
    char *text;            /* YN_SCALAR: NUL-terminated (owned) */
    size_t len;
    int plain;             /* YN_SCALAR: written unquoted (null words only count when plain) */
    int line, col;         /* 1-based position of the node's first character */
    const char *origin;    /* NULL: from the document; else the --set text it came from
                              (borrowed: must outlive the tree) */
    struct ynode **keys;   /* YN_MAP: key scalars, parallel to vals */
    struct ynode **vals;   /* YN_MAP: values; YN_SEQ: items */
    size_t n, cap;
};

/* Where errors go. The first error is kept in err (first wins), every line
 * (the first included) is written to log when log is not NULL, up to
 * YDIAG_MAX_SHOWN lines. */
#define YDIAG_MAX_SHOWN 20

struct ydiag {
    const char *file;      /* name used in messages (borrowed) */
    FILE *log;             /* may be NULL */
    struct ls_err *err;    /* may be NULL */
    int code;              /* code recorded with the first error (LS_EWORKLOAD by default) */
    int count;             /* errors reported (not counting muted ones) */
    int first_code;        /* code of the first error reported, 0 while none */
    int muted;             /* > 0: errors are dropped (re-parsing defaults after a failure) */
    const char *origin;    /* non-NULL while parsing a --set value: messages name it */
    const char *context;   /* NULL, or what is being loaded from overrides (a compare
                            * variant): messages about override values name it and the
                            * file instead of calling them --set (borrowed) */
};

void ydiag_init(struct ydiag *dg, const char *file, FILE *log, struct ls_err *err);
/* Report at a node: "FILE:LINE:COL: msg", or "--set 'k=v': msg" when the
 * node came from an override ("FILE: CONTEXT, from 'k=v': msg" with a
 * context); a NULL node reports at 1:1. */
void ydiag_at(struct ydiag *dg, const struct ynode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report at an explicit 1-based position. */
void ydiag_pos(struct ydiag *dg, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Report without a position ("FILE: msg") with its own code (LS_EIO for an
 * unreadable file). */
void ydiag_file(struct ydiag *dg, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Write the "N more errors not shown" line if any were suppressed. */
void ydiag_finish(struct ydiag *dg);

/* Parse one YAML document from text[0..len). Returns 0 and *out = the root
 * (NULL for a stream with no document, caller frees with ynode_free) when
 * libyaml could read the whole text; structural problems (duplicate keys,
 * aliases, tags) are reported to dg and leave the offending node out, so the
 * caller must also check dg->count. Returns LS_EWORKLOAD with *out = NULL
 * on malformed YAML (one error reported at libyaml's mark) and on any anchor
 * or alias (one error per document, at the first). */
int ytree_parse(const char *text, size_t len, struct ynode **out, struct ydiag *dg);

/* Apply one --set override "key.path=value" to the mapping root: the path
 * is dot-separated, list entries as faults[0] or faults.0; after a first key
 * named in opaque (NULL-terminated, may be NULL) the rest of the path is one
 * key ("expect.checks.mutex.violations"). The value is parsed as YAML when it
 * starts with { [ " or ', else taken as plain text (so ">= 100" needs no
 * quoting). Missing mappings are created, as is a list entry at index ==
 * length. New nodes carry origin = set (borrowed: set must outlive the
 * tree), so later errors about them name the override; unknown keys are
 * left for validation to report. Returns 0, or -1 after reporting. */
int ytree_apply_set(struct ynode *root, const char *set, const char *const *opaque,
                    struct ydiag *dg);

/* Node constructors; they abort on out-of-memory like strbuf. The caller
 * owns the result (ynode_free). */
struct ynode *ynode_new(enum ynode_kind kind, int line, int col, const char *origin);
struct ynode *ynode_scalar(const char *text, size_t len, int plain, int line, int col,
                           const char *origin);
/* Deep copy (caller frees). */
struct ynode *ynode_clone(const struct ynode *n);
void ynode_free(struct ynode *n);
/* Set origin/line/col on n and everything under it (defaults and --set
 * values take the position of what they stand for). */
void ynode_relocate(struct ynode *n, int line, int col, const char *origin);

/* Append key -> val to a mapping (takes ownership of both). */
void ymap_append(struct ynode *map, struct ynode *key, struct ynode *val);
/* Append an item to a sequence (takes ownership). */
void yseq_append(struct ynode *seq, struct ynode *item);
/* Index of key in map, or -1. */
long ymap_find(const struct ynode *map, const char *key);
/* Value of key in map (borrowed), or NULL when absent or map is not a map. */
struct ynode *ymap_get(const struct ynode *map, const char *key);

/* A plain empty, "~", "null", "Null" or "NULL" scalar. */
int ynode_is_null(const struct ynode *n);
/* "a scalar", "a mapping", "a list" for messages. */
const char *ynode_kind_text(const struct ynode *n);

#endif
