/*
 * jlparse_int.h: what the flat parser's files share (checkers/jlparse.c,
 * checkers/jlshape.c and checkers/jlshape_int.h: lines read by their
 * shape, the latter inline in the loader, checkers/histjsonl.c, and in the
 * tests that read lines as it does). Not for checkers.
 */
#ifndef LS_JLPARSE_INT_H
#define LS_JLPARSE_INT_H

#include <stdint.h>
#include <string.h>

#include "checkers/jlparse.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Bytes that may stand as they are inside a JSON string: not a quote, a
 * backslash or a control byte (one look-up per byte instead of three
 * comparisons). Filled once (jlparse.c fill_tables). */
extern unsigned char jl_plain[256];

enum { K_T, K_W, K_TYPE, K_RES, K_TOKEN, K_FENCE, K_VALID_UNTIL, K_AUTO, K_ATTEMPT, K_ERR,
       K_FENCED, K_ACCEPTED, K_FAILED, K_COUNTER, K__N, K_OTHER = K__N };

enum { V_ABSENT, V_NULL, V_INT, V_BOOL, V_STR };

#define JL_MAX_OTHER 8 /* unknown keys on a line the flat parser takes */

/* A line's values by key: the kinds apart (V_*; all V_ABSENT in one
 * 16-byte store when a line starts), then the values. */
struct slot {
    int64_t i;                  /* V_INT, V_BOOL */
    const char *s;              /* V_STR: decoded, NUL-terminated */
    size_t n;
};
struct slots {
    unsigned char kind[16];     /* K_* -> V_* */
    struct slot v[K__N + 1];
};
_Static_assert(K__N + 1 <= 16, "a kind a key");

/* Where a field of a compact line is: its key (never K_OTHER), its
 * value's kind, and the value at s[vs, e) (a string with its quotes). */
struct fpos {
    unsigned char key, kind;
    size_t vs, e;
};

/* A line's shape: a shape has at most this many fields (known keys, each
 * once), this many bytes of text between its values. */
#define JL_SHAPE_F 12
#define JL_SHAPE_LIT 160

/* Contract: 1 when a[0..n) == b[0..n). For the short names of event types
 * and resources, inline: a call to memcmp costs more than the compare. */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (a[k] != b[k])
            return 0;
    return 1;
}

/* Event type names and their lengths, and a table from a hash of a name's
 * length, first and last bytes to its type (filled once: jlparse.c fill_tables). No
 * two names share a hash (jl_type_hash_ok; a
 * test reads every name through type_of), else the names are compared one
 * by one. */
extern const char *jl_type_name[EV__MAX];
extern size_t jl_type_len[EV__MAX];
extern char jl_type_pad[EV__MAX][32]; /* each name, then 0 bytes: compared 16 at a time */
extern unsigned char jl_type_at[128];
extern int jl_type_hash_ok;

static inline unsigned type_hash(const char *s, size_t n)
{
    return (unsigned)(n * 5 + (unsigned char)s[0] * 3 + (unsigned char)s[n - 1]) & 127;
}

/* Contract: the type named s[0..n), or 0; type_table has been filled
 * (jl_parser_init). */
static inline int type_of(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    if (jl_type_hash_ok) {
        int t = jl_type_at[type_hash(s, n)];
        return t && jl_type_len[t] == n && same_bytes(s, jl_type_name[t], n) ? t : 0;
    }
    for (int t = 1; t < EV__MAX; t++)
        if (jl_type_len[t] == n && same_bytes(s, jl_type_name[t], n))
            return t;
    return 0;
}

/* Contract: type_of(s, n), where room >= n bytes may be read at s: a
 * name of up to 16 bytes compared in one 16-byte step when room allows. */
static inline int type_of_at(const char *s, size_t n, size_t room)
{
#if defined(__SSE2__)
    if (jl_type_hash_ok && n && n <= 16 && room >= 16) {
        int t = jl_type_at[type_hash(s, n)];
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)s);
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)jl_type_pad[t]);
        uint32_t eq = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, b));
        return t && jl_type_len[t] == n && (~eq & ((1u << n) - 1)) == 0 ? t : 0;
    }
#endif
    (void)room;
    return type_of(s, n);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Contract: how many of the 8 bytes at s are digits before the first that
 * is not (0..8). No branch on the bytes: a number's length varies from
 * line to line, and a byte loop's exit is mispredicted as often. */
static inline unsigned digits8(const char *s, uint64_t *w)
{
    memcpy(w, s, 8);
    uint64_t x = *w ^ 0x3030303030303030ull; /* a digit's byte becomes 0..9 */
    uint64_t not_digit = (((x & 0x7f7f7f7f7f7f7f7full) + 0x7676767676767676ull) | x) &
                         0x8080808080808080ull; /* bit 7 of a byte: > 9, or >= 0x80 */
    return not_digit ? (unsigned)__builtin_ctzll(not_digit) / 8 : 8;
}

static const uint64_t pow10_8[8] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000};

/* Contract: the value of the n digits (1..8) that begin w (as digits8 read
 * them). */
static inline uint64_t value8(uint64_t w, unsigned n)
{
    uint64_t x = (w ^ 0x3030303030303030ull) << (8 * (8 - n)); /* leading zeros */
    x = ((x & 0x0f0f0f0f0f0f0f0full) * 2561) >> 8;         /* pairs of digits */
    x = ((x & 0x00ff00ff00ff00ffull) * 6553601) >> 16;     /* fours */
    return ((x & 0x0000ffff0000ffffull) * 42949672960001ull) >> 32;
}
#endif

/* Contract: a plain JSON integer at s[*pos] (at most 18 digits, no '-0',
 * no fraction or exponent) into *v, *pos after it; -1 for anything else.
 * With ends_known, whether a '.', 'e' or 'E' follows is not looked at:
 * the caller compares what follows with text that begins otherwise (a
 * shape: ',' or '}'). With roomy (a constant where it is called), 17
 * bytes from *pos may be read whatever len is (a '-', then 16): the
 * digits are not bounded by len then (*pos may end past it, by 16 at
 * most; the caller refuses such a line). */
static inline __attribute__((always_inline)) int int_at(const char *s, size_t len, size_t *pos,
                                                         int64_t *v, int ends_known, int roomy)
{
    size_t i = *pos;
    int neg = s[i] == '-';
    i += (size_t)neg;
    size_t d0 = i;
    uint64_t x = 0; /* unsigned: a 19th digit may wrap, and is refused below */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w1, w2;
    unsigned n1, n2;
    if ((roomy || i + 16 <= len) && (n1 = digits8(s + i, &w1)) < 8) { /* up to 7 digits */
        x = n1 ? value8(w1, n1) : 0;
        i += n1;
    } else if ((roomy || i + 16 <= len) && (n2 = digits8(s + i + 8, &w2)) < 8) { /* 8 to 15 */
        x = value8(w1, 8) * pow10_8[n2] + (n2 ? value8(w2, n2) : 0);
        i += 8 + n2;
    } else
#endif
    {
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            x = x * 10 + (uint64_t)(s[i] - '0');
            i++;
        }
    }
    size_t nd = i - d0;
    if (nd == 0 || nd > 18 || (s[d0] == '0' && (nd > 1 || neg)))
        return -1;
    if (!ends_known && i < len && (s[i] == '.' || s[i] == 'e' || s[i] == 'E'))
        return -1;
    *v = neg ? -(int64_t)x : (int64_t)x;
    *pos = i;
    return 0;
}

static inline __attribute__((always_inline)) int flat_int(const char *s, size_t len,
                                                           size_t *pos, int64_t *v)
{
    return int_at(s, len, pos, v, 0, 0);
}

/* ---- what a line's slots make a record of (jlparse.c's parsers, and
 * jlshape_int.h's lines read by their shape: the shaped path in one
 * header, so that reading a line and making its record are one function,
 * inline in the loader's loop) ---- */

#define JL_MAX_TIME 1000000000000000000LL /* |t|, |valid_until| <= 1e18 ns (31 years) */

/* Contract: FNV-1a of s[0..n). */
static inline uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t x = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        x ^= (unsigned char)s[i];
        x *= 0x100000001b3ull;
    }
    return x;
}

/* Contract: resmap_get, for a name not the last one found (jlparse.c). */
int jl_resmap_find(struct jl_parser *p, const char *name, size_t len);

/* Contract: index of name[0..len) (no NUL inside), adding it to
 * h->res_names when new; -1 past JL_MAX_RES resources. */
static inline __attribute__((always_inline)) int resmap_get(struct jl_parser *p,
                                                             const char *name, size_t len)
{
    if (p->last >= 0 && len == p->last_len && same_bytes(p->h->res_names[p->last], name, len))
        return p->last; /* lines of one resource tend to come together */
    return jl_resmap_find(p, name, len);
}

/* A token longer than the record's 16 bytes is kept as 16 hex digits of
 * its hash: equal tokens stay equal. */
static inline void put_token(struct ev_rec *r, const char *s, size_t n)
{
    memset(r->token, 0, sizeof(r->token));
    if (n <= EVLOG_TOKEN_LEN) {
        memcpy(r->token, s, n);
        return;
    }
    static const char hex[] = "0123456789abcdef";
    uint64_t x = hash_bytes(s, n);
    for (int i = 0; i < EVLOG_TOKEN_LEN; i++)
        r->token[i] = hex[(x >> (60 - 4 * i)) & 15];
}

/* Contract: opt_bool's answer for a slot: 0 absent/null/false, 1 true, -1
 * wrong kind. */
static inline int slot_bool(const struct slots *sl, int k)
{
    if (sl->kind[k] == V_ABSENT || sl->kind[k] == V_NULL)
        return 0;
    return sl->kind[k] == V_BOOL ? (int)sl->v[k].i : -1;
}

/* Contract: the record of a line's slots sl (compact: read by the compact
 * path or a shape, so no string holds a NUL byte; shaped: by a shape, which
 * gave its type stype) under the tree parser's rules into *r and *wid: 1,
 * or 0 when the tree parser must read the line (nothing interned then). */
static inline __attribute__((always_inline)) int flat_rec(struct jl_parser *p,
                                                           const struct slots *sl, int compact,
                                                           int shaped, int stype,
                                                           struct ev_rec *r, int *wid)
{
    memset(r, 0, sizeof(*r));
    const unsigned char *kind = sl->kind;
    const struct slot *t = &sl->v[K_T], *w = &sl->v[K_W], *ty = &sl->v[K_TYPE];
    if (kind[K_T] != V_INT || t->i < -JL_MAX_TIME || t->i > JL_MAX_TIME)
        return 0;
    if (kind[K_W] != V_INT || w->i < 0 || w->i > 1000000)
        return 0;
    int type = shaped ? stype : kind[K_TYPE] == V_STR ? type_of(ty->s, ty->n) : 0;
    if (!type)
        return 0;
    r->t = t->i;
    r->type = (uint8_t)type;
    const struct slot *res = &sl->v[K_RES];
    if (kind[K_RES] == V_STR) {
        if (!compact && memchr(res->s, '\0', res->n))
            return 0;
    } else if (kind[K_RES] != V_NULL && kind[K_RES] != V_ABSENT) {
        return 0;
    } else if (type != EV_CRASH) {
        return 0;
    }
    if (kind[K_TOKEN] == V_STR)
        put_token(r, sl->v[K_TOKEN].s, sl->v[K_TOKEN].n);
    int64_t v = w->i; /* the tree parser's v: w, then fence, then attempt */
    const struct slot *fe = &sl->v[K_FENCE];
    if (kind[K_FENCE] == V_INT) {
        if (fe->i < 0)
            return 0;
        r->flags |= EVF_FENCE;
        r->fence = (uint64_t)fe->i;
        v = fe->i;
    } else if (kind[K_FENCE] != V_ABSENT && kind[K_FENCE] != V_NULL) {
        return 0;
    }
    if (type == EV_ACQUIRE_OK || type == EV_RENEW_OK) {
        const struct slot *vu = &sl->v[K_VALID_UNTIL];
        if (kind[K_VALID_UNTIL] == V_INT) {
            if (vu->i < -JL_MAX_TIME || vu->i > JL_MAX_TIME)
                return 0;
            r->valid_until = vu->i;
        } else if (kind[K_VALID_UNTIL] == V_ABSENT || kind[K_VALID_UNTIL] == V_NULL) {
            r->flags |= EVF_NO_LEASE;
        } else {
            return 0;
        }
        int au = type == EV_RENEW_OK ? slot_bool(sl, K_AUTO) : 0;
        if (au < 0)
            return 0;
        if (au == 1)
            r->flags |= EVF_AUTO;
    }
    if (type == EV_ACQUIRE_INVOKE) {
        const struct slot *at = &sl->v[K_ATTEMPT];
        if (kind[K_ATTEMPT] == V_INT)
            v = at->i;
        else if (kind[K_ATTEMPT] != V_ABSENT && kind[K_ATTEMPT] != V_NULL)
            return 0;
        if (v < 0 || v > UINT32_MAX)
            return 0;
        r->aux = kind[K_ATTEMPT] == V_INT ? (uint32_t)v : 0;
    }
    if (kind[K_ERR] == V_STR) {
        if (memchr(sl->v[K_ERR].s, '\0', sl->v[K_ERR].n))
            return 0;
        r->aux = (uint32_t)ev_err_from_name(sl->v[K_ERR].s);
    }
    if (type == EV_STORE_READ || type == EV_STORE_WRITE) {
        int fenced = slot_bool(sl, K_FENCED), acc = slot_bool(sl, K_ACCEPTED),
            failed = slot_bool(sl, K_FAILED);
        if (fenced < 0 || acc < 0 || failed < 0)
            return 0;
        const struct slot *co = &sl->v[K_COUNTER];
        if (kind[K_COUNTER] == V_INT)
            r->value = co->i;
        else if (kind[K_COUNTER] != V_ABSENT && kind[K_COUNTER] != V_NULL)
            return 0;
        r->flags |= (fenced ? EVF_FENCED : 0) | (acc ? EVF_ACCEPTED : 0) |
                    (failed ? EVF_FAILED : 0);
    }
    if (kind[K_RES] == V_STR) {
        int idx = resmap_get(p, res->s, res->n);
        if (idx < 0)
            return 0; /* the tree parser says there are too many */
        r->res = (uint16_t)idx;
    }
    *wid = (int)w->i;
    p->flat++;
    p->compact += (uint64_t)compact;
    p->shaped += (uint64_t)shaped;
    return type;
}

/* ---- shapes (jlshape.c) ---- */

/* Contract: an empty table of shapes (freed with free). */
struct jl_shapes *jl_shapes_new(void);

/* Contract: the slots of a line of the last line's shape (strings left in
 * s, err's copied, NUL-terminated), as tok_compact would make them, and
 * *type the type its "type" names (0: none, or not a type); returns the
 * line's length, or 0 when the line is not of that shape (or of the shape
 * its type had last). The line is s[0, len), or with open the bytes of s
 * up to a '\n' before len (a line of a shape has no '\n' in it: its text
 * is a line's, its strings end at a control byte, its values have none). */
size_t jl_tok_shape(struct jl_parser *p, const char *s, size_t len, int open, struct slots *sl,
                    int *type);

/* Contract: the shape of a compact line (s, its fields fp[0..nf)) kept
 * (unless too long to keep) as the last line's and its type's. */
void jl_learn_shape(struct jl_parser *p, const char *s, size_t len, const struct fpos *fp, int nf,
                    int type);

#endif
