/*
 * jlshape_int.h: lines of a JSONL history read by their shape (the table
 * of shapes and the read itself; the idea and how shapes are learned:
 * checkers/jlshape.c), inline for the loader's line loop
 * (checkers/histjsonl.c), which reads most lines through jl_parse_shaped.
 * Not for checkers.
 */
#ifndef LS_JLSHAPE_INT_H
#define LS_JLSHAPE_INT_H

#include "checkers/jlparse_int.h"

#define JL_SHAPES 32

struct jl_shape {
    int nf;                          /* fields */
    int lit_len;                     /* bytes of lit */
    int type_f;                      /* the field that holds the type, -1 none */
    int pre;                         /* the text up to the type's value (with type_f): two
                                        shapes have the same number when they have the
                                        same such text, -1 without a type */
    unsigned char key[JL_SHAPE_F];   /* field f's key (K_*, never K_OTHER) */
    unsigned char kind[JL_SHAPE_F];  /* its value's kind: V_INT, V_STR, V_BOOL, V_NULL */
    unsigned char at[JL_SHAPE_F + 1]; /* the text before field f's value: LIT[at[f - 1],
                                        at[f]) (from 0 for f = 0; a string's quotes
                                        are text); after the last: LIT[at[nf - 1], lit_len) */
    char text[16 + JL_SHAPE_LIT + 16]; /* LIT, with 16 bytes before and after it: read 16
                                          at a time, forward or back (text_eq) */
    struct jl_op {                   /* field f as jl_tok_shape reads it (from the above) */
        unsigned char t0, tn;        /* its text: LIT[t0, t0 + tn) */
        unsigned char key, op;       /* its key; how its value is read (OP_*) */
        uint32_t mask;               /* tn <= 16: the low tn bits */
    } op[JL_SHAPE_F + 1];            /* op[nf]: the text after the last value */
};

/* How a value is read: a type and an err are strings read on. */
enum { OP_INT, OP_STR, OP_TYPE, OP_ERR, OP_BOOL, OP_NULL };

#define LIT(sh) ((sh)->text + 16)

struct jl_shapes {
    struct jl_shape s[JL_SHAPES];
    int n, next;                     /* shapes kept; the one to replace next when full */
    int npre;                        /* numbers given to the texts before a type (pre; all
                                        32 shapes forgotten before it could wrap) */
    int last;                        /* the shape of the last line read, -1 none */
    signed char by_type[256];        /* the shape last seen with each type, -1 none */
};

/* Contract: s[i, i + n) == lit[0, n) (s has len bytes; lit has 16 bytes
 * readable before it and past n). 16 bytes compared at once: those from i
 * on, or near the line's end those that end at i + n. */
static inline int text_eq(const char *s, size_t len, size_t i, const char *lit, size_t n)
{
    if (i + n > len)
        return 0;
#if defined(__SSE2__)
    if (n <= 16 && i + 16 <= len) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)lit);
        uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
        return (~eq & ((1u << n) - 1)) == 0;
    }
    if (n <= 16 && i + n >= 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i + n - 16));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(lit + n - 16));
        uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
        return (~eq & (0xffffu << (16 - n)) & 0xffffu) == 0;
    }
#endif
    return memcmp(s + i, lit, n) == 0;
}

/* Contract: the end of the string whose first byte is s[i] (the index of
 * its closing quote), or len when it has a backslash or a control byte
 * first (or no end). */
static inline size_t str_end(const char *s, size_t len, size_t i)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    for (; i + 16 <= len; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bs)),
            _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl)));
        if (m) {
            i += (size_t)__builtin_ctz(m);
            return s[i] == '"' ? i : len;
        }
    }
#endif
    while (i < len && jl_plain[(unsigned char)s[i]])
        i++;
    return i < len && s[i] == '"' ? i : len;
}

/* Contract: text_eq(s, len, i, lit, n), where mask has the low n bits set
 * when n <= 16: the one compare most texts take, without the checks. With
 * roomy (a constant where it is called), 16 bytes from i may be read
 * whatever len is (the caller refuses a line whose text goes past len). */
static inline int text_is(const char *s, size_t len, size_t i, const char *lit, size_t n,
                          uint32_t mask, int roomy)
{
#if defined(__SSE2__)
    if (__builtin_expect((roomy || i + 16 <= len) && n <= 16, 1)) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)lit);
        return (~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b)) & mask) == 0;
    }
#endif
    (void)mask;
    (void)roomy;
    return text_eq(s, len, i, lit, n);
}

/* Contract: the start of field f's text in sh. */
static inline size_t text_at(const struct jl_shape *sh, int f)
{
    return f ? sh->at[f - 1] : 0;
}

/* Bytes past len a roomy read may look at: each of up to JL_SHAPE_F
 * values moves i at most 16 bytes past where it began (a string past len
 * is refused), the texts of two shapes at most 2 * JL_SHAPE_LIT, and the
 * last read goes 17 bytes on (an integer's '-' and 16 digits' bytes): 529,
 * rounded up. */
#define JL_SHAPE_ROOM 1024

/* Contract: jl_tok_shape (jlparse_int.h), made part of its callers
 * (jl_parse_shaped: a line of the bench's is read in 760 instructions,
 * and the call cost 2% of a JSONL check's). With roomy (a constant where
 * it is called; only with open), s has JL_SHAPE_ROOM bytes readable past
 * len: the texts and integers are read without checking len first (a line
 * that goes past it is refused at its end, as without roomy). */
static inline __attribute__((always_inline)) size_t tok_shape(struct jl_parser *p, const char *s,
                                                              size_t len, int open,
                                                              struct slots *sl, int *type,
                                                              int roomy)
{
    struct jl_shapes *S = p->shapes;
    if (S->last < 0)
        return 0;
    int cur = S->last;
    const struct jl_shape *sh = &S->s[cur];
    memset(sl->kind, V_ABSENT, sizeof(sl->kind));
    size_t i = 0;
    *type = 0;
    for (int f = 0; f < sh->nf; f++) {
        const struct jl_op *o = &sh->op[f];
        if (!text_is(s, len, i, LIT(sh) + o->t0, o->tn, o->mask, roomy))
            return 0;
        i += o->tn;
        struct slot *v = &sl->v[o->key];
        unsigned char *kind = &sl->kind[o->key];
        switch (o->op) {
        case OP_INT: /* the text after it begins with ',' or '}' (the separator after
                        a value of the line it was learned from): no fraction to check */
            if ((!roomy && i >= len) || int_at(s, len, &i, &v->i, 1, roomy) < 0)
                return 0;
            *kind = V_INT;
            break;
        case OP_STR:
        case OP_TYPE:
        case OP_ERR: {
            size_t e = str_end(s, len, i); /* the quote after it begins the next text */
            if (e >= len)
                return 0;
            *kind = V_STR;
            v->s = s + i;
            v->n = e - i;
            i = e;
            if (o->op == OP_ERR) { /* ev_err_from_name takes a C string */
                char *eb = p->scratch + JL_MAX_LINE + 1;
                memcpy(eb, v->s, v->n);
                eb[v->n] = '\0';
                v->s = eb;
            } else if (o->op == OP_TYPE) {
                int t = type_of_at(v->s, v->n, roomy ? 16 : len - (size_t)(v->s - s));
                int c = t ? S->by_type[t] : -1;
                *type = t;
                /* the same text up to here (so the same keys: each is in the
                 * text, and no key has a quote): the rest as this type's
                 * shape reads it (the kinds before do not matter to the rest) */
                if (c >= 0 && c != cur && S->s[c].pre == sh->pre) {
                    cur = c;
                    sh = &S->s[c];
                }
            }
            break;
        }
        case OP_BOOL:
            if ((roomy || i + 4 <= len) && memcmp(s + i, "true", 4) == 0) {
                v->i = 1;
                i += 4;
            } else if ((roomy || i + 5 <= len) && memcmp(s + i, "false", 5) == 0) {
                v->i = 0;
                i += 5;
            } else {
                return 0;
            }
            *kind = V_BOOL;
            break;
        default: /* OP_NULL */
            if ((!roomy && i + 4 > len) || memcmp(s + i, "null", 4) != 0)
                return 0;
            *kind = V_NULL;
            i += 4;
            break;
        }
    }
    const struct jl_op *o = &sh->op[sh->nf];
    size_t end = i + o->tn;
    if (!text_is(s, len, i, LIT(sh) + o->t0, o->tn, o->mask, roomy) ||
        (open ? end >= len || s[end] != '\n' : end != len))
        return 0;
    S->last = cur;
    return end;
}

/* Contract: when the bytes at s (avail of them) begin with a line of the
 * shape of the last line read, ended by a '\n' within avail and at most
 * JL_MAX_LINE bytes, that the flat parser takes: its record in *r (seq 0)
 * and *wid, and the line's length (without the '\n') returned: its end is
 * found by reading it, not searched for first. Else 0, and the line is to
 * be read as any other (its end found, then jl_parse_line). Inline: the
 * JSONL loader's line loop (checkers/histjsonl.c lines_in) reads most
 * lines through it, and as a call it cost 3-4% of a JSONL check's CPU
 * time. */
static inline __attribute__((always_inline)) size_t jl_parse_shaped(struct jl_parser *p,
                                                                     const char *s, size_t avail,
                                                                     struct ev_rec *r, int *wid)
{
    struct slots sl;
    int stype = 0;
    size_t lim = JL_MAX_LINE + 1, n;
    if (avail >= lim + JL_SHAPE_ROOM) /* most lines: room to read on without checks */
        n = tok_shape(p, s, lim, 1, &sl, &stype, 1);
    else
        n = tok_shape(p, s, avail < lim ? avail : lim, 1, &sl, &stype, 0);
    p->no_shape = 0;
    if (n && flat_rec(p, &sl, 1, 1, stype, r, wid))
        return n;
    p->no_shape = 1; /* the same line read again is not of the shape either */
    return 0;
}

#endif
