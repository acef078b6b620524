/*
 * jlparse.h: one line of a JSONL history (docs/checkers.md "JSONL
 * histories") into an event record. A flat parser reads the usual lines:
 * no object tree, no allocation, keys dispatched by length and bytes (or,
 * for a line of a shape read before, not looked up at all: jlshape.c),
 * resources interned. A line it does not take on (nested values, floats,
 * \u escapes past ASCII, duplicate keys (unknown ones too), more than 8
 * unknown keys, a field of the wrong kind, bad JSON) is read again by the
 * tree parser (util/json.h), which gives the same record or the same
 * FILE:LINE message as always: the flat parser only ever answers where
 * both agree.
 */
#ifndef LS_JLPARSE_H
#define LS_JLPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "checkers/history.h"

#define JL_MAX_LINE 65536          /* bytes; an event line is ~120 */
#define JL_MAX_RES 65536           /* resources (ev_rec.res is 16 bits) */

struct jl_shapes;

/* A line parser: resources are interned into h->res_names. */
struct jl_parser {
    struct history *h;
    const char *file;           /* for messages */
    struct ls_err *err;
    int *slot;                  /* resource name map: -1 empty, else index (owned) */
    size_t cap;                 /* power of two, 0 before the first name */
    int last;                   /* the resource the last name found was, -1 none */
    size_t last_len;            /* its name's length */
    char *scratch;              /* decoded strings (owned, 2 x (JL_MAX_LINE + 1)) */
    uint64_t flat, tree;        /* lines each parser took, for tests and the bench */
    uint64_t compact;           /* of flat: lines read by the compact path (tests) */
    uint64_t shaped;            /* of compact: lines read by a shape seen before (tests) */
    struct jl_shapes *shapes;   /* the shapes of compact lines seen (jlparse.c; owned) */
    int no_shape;               /* the next line is not of the last shape (jl_parse_shaped
                                   tried it): the flat parser does not try it again */
};

/* Contract: p ready to parse lines of file into h; free with jl_parser_free. */
void jl_parser_init(struct jl_parser *p, struct history *h, const char *file,
                    struct ls_err *err);
void jl_parser_free(struct jl_parser *p);

/* Contract: one non-blank line (without its '\n') into *r (seq 0) and *w
 * (the worker id). Returns 0, or LS_EINPUT with "FILE:LINE: what" on
 * p->err. */
int jl_parse_line(struct jl_parser *p, const char *line, size_t len, size_t lineno,
                  struct ev_rec *r, int *w);

/* jl_parse_shaped, the loader's way to the lines of a shape read before,
 * is inline: checkers/jlshape_int.h. */

/* Contract: the message for a line of len bytes past JL_MAX_LINE (the line
 * itself is not read). Returns LS_EINPUT with "FILE:LINE: line is N bytes,
 * over the ...-byte limit" on p->err. */
int jl_line_too_long(struct jl_parser *p, size_t len, size_t lineno);

/* The two parsers alone (tests). jl_parse_flat: 1 with *r, *w set, or 0
 * when the line is for the tree parser (nothing interned then). */
int jl_parse_flat(struct jl_parser *p, const char *line, size_t len, struct ev_rec *r, int *w);
int jl_parse_tree(struct jl_parser *p, const char *line, size_t len, size_t lineno,
                  struct ev_rec *r, int *w);

#endif
