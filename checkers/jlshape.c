/*
 * jlshape.c: lines of a JSONL history read by their shape (see below and
 * docs/performance.md section 3, "A packed spill, and lines read by their
 * shape"), the flat parser's fast path in front of its compact one
 * (checkers/jlparse.c): how shapes are learned and kept. The table of
 * shapes and the read of a line by one (tok_shape, and jl_parse_shaped,
 * the loader's way in to it: the line read and its record made in one
 * function) are in checkers/jlshape_int.h, inline in the loader's loop.
 */
#include "checkers/jlshape_int.h"

#include <stdlib.h>

#include "util/xalloc.h"

/* ---- shapes: a compact line read as one seen before ----
 *
 * The lines of a history come in few shapes: the same keys in the same
 * order, the same kind of value for each, the same text between the
 * values (`{"t":`, `,"w":`, `,"type":"` ...). A compact line the compact
 * path took (its keys all known) leaves its shape here; a later line is
 * first read against the shape of the line before: the text between
 * values compared 16 bytes at a time, each value read by the kind the
 * shape says, no key looked up. Once the line's type is read, the
 * shape last seen with that type takes over when it has the same text up
 * to there (the shapes of a history's lines usually part after the type).
 * A line that differs anywhere from its shape is read by the compact path
 * (and its shape learned): a shape only ever answers for a line whose
 * keys, order and kinds are those of a line the compact path read, so the
 * slots are what the compact path would have made of it. */

struct jl_shapes *jl_shapes_new(void)
{
    struct jl_shapes *S = xcalloc(1, sizeof(*S));
    S->last = -1;
    memset(S->by_type, -1, sizeof(S->by_type));
    return S;
}

size_t jl_tok_shape(struct jl_parser *p, const char *s, size_t len, int open, struct slots *sl,
                    int *type)
{
    return tok_shape(p, s, len, open, sl, type, 0);
}
void jl_learn_shape(struct jl_parser *p, const char *s, size_t len, const struct fpos *fp, int nf,
                    int type)
{
    struct jl_shape sh;
    memset(&sh, 0, sizeof(sh));
    sh.nf = nf;
    size_t from = 0, n = 0;
    for (int f = 0; f <= nf; f++) {
        size_t to = f < nf ? fp[f].vs + (fp[f].kind == V_STR) : len; /* a string's quote too */
        if (n + (to - from) > JL_SHAPE_LIT)
            return;
        memcpy(LIT(&sh) + n, s + from, to - from);
        n += to - from;
        if (f < nf) {
            sh.at[f] = (unsigned char)n;
            sh.key[f] = fp[f].key;
            sh.kind[f] = fp[f].kind;
            from = fp[f].kind == V_STR ? fp[f].e - 1 : fp[f].e; /* its closing quote is text */
        }
    }
    sh.lit_len = (int)n;
    for (int f = 0; f <= nf; f++) {
        struct jl_op *o = &sh.op[f];
        o->t0 = (unsigned char)text_at(&sh, f);
        o->tn = (unsigned char)((f < nf ? sh.at[f] : n) - o->t0);
        o->mask = o->tn <= 16 ? (1u << o->tn) - 1 : 0;
        if (f < nf) {
            o->key = sh.key[f];
            o->op = sh.kind[f] == V_INT    ? OP_INT
                    : sh.kind[f] == V_BOOL ? OP_BOOL
                    : sh.kind[f] == V_NULL ? OP_NULL
                    : sh.key[f] == K_TYPE  ? OP_TYPE
                    : sh.key[f] == K_ERR   ? OP_ERR
                                           : OP_STR;
        }
    }
    struct jl_shapes *S = p->shapes;
    sh.type_f = -1;
    sh.pre = -1;
    for (int f = 0; f < nf; f++)
        if (sh.key[f] == K_TYPE)
            sh.type_f = f;
    if (sh.type_f >= 0) { /* the number of a shape kept with the same text up to the type */
        size_t tn = sh.at[sh.type_f];
        for (int k = 0; k < S->n && sh.pre < 0; k++)
            if (S->s[k].type_f >= 0 && S->s[k].at[S->s[k].type_f] == tn &&
                memcmp(LIT(&S->s[k]), LIT(&sh), tn) == 0)
                sh.pre = S->s[k].pre;
        if (sh.pre < 0 && S->npre == INT32_MAX) { /* start the numbers again */
            memset(S, 0, sizeof(*S));
            S->last = -1;
            memset(S->by_type, -1, sizeof(S->by_type));
        }
        if (sh.pre < 0)
            sh.pre = S->npre++;
    }
    int k = 0;
    while (k < S->n && memcmp(&S->s[k], &sh, sizeof(sh)) != 0)
        k++;
    if (k == S->n) {
        if (S->n < JL_SHAPES) {
            k = S->n++;
        } else {
            k = S->next;
            S->next = (S->next + 1) % JL_SHAPES;
            for (int t = 0; t < 256; t++)
                if (S->by_type[t] == k)
                    S->by_type[t] = -1;
        }
        S->s[k] = sh;
    }
    S->last = k;
    S->by_type[type] = (signed char)k;
}

