/*
 * jlparse.c: a JSONL history line into an event record (see jlparse.h).
 * The flat parser walks the line once, keeping each known field's value
 * (kind, integer, or the decoded string) in a slot, then applies exactly
 * the tree parser's rules to the slots. Whatever it is not sure of goes to
 * the tree parser, which owns every message.
 */
#include "checkers/jlparse_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

unsigned char jl_plain[256];

/* ---- resources ---- */

static void resmap_rehash(struct jl_parser *p, size_t cap)
{
    free(p->slot);
    p->cap = cap;
    p->slot = xmalloc(cap * sizeof(int));
    for (size_t i = 0; i < cap; i++)
        p->slot[i] = -1;
    const struct history *h = p->h;
    for (int r = 0; r < h->nres; r++) {
        size_t j = hash_bytes(h->res_names[r], strlen(h->res_names[r])) & (cap - 1);
        while (p->slot[j] >= 0)
            j = (j + 1) & (cap - 1);
        p->slot[j] = r;
    }
}

__attribute__((noinline)) int jl_resmap_find(struct jl_parser *p, const char *name, size_t len)
{
    struct history *h = p->h;
    if (p->cap == 0)
        resmap_rehash(p, 64);
    size_t j = hash_bytes(name, len) & (p->cap - 1);
    while (p->slot[j] >= 0) {
        const char *s = h->res_names[p->slot[j]];
        if (strncmp(s, name, len) == 0 && s[len] == '\0') {
            p->last = p->slot[j];
            p->last_len = len;
            return p->last;
        }
        j = (j + 1) & (p->cap - 1);
    }
    if (h->nres >= JL_MAX_RES)
        return -1;
    int idx = h->nres++;
    h->res_names = xrealloc(h->res_names, (size_t)h->nres * sizeof(*h->res_names));
    char *copy = xmalloc(len + 1);
    memcpy(copy, name, len);
    copy[len] = '\0';
    h->res_names[idx] = copy;
    p->slot[j] = idx;
    p->last = idx;
    p->last_len = len;
    if ((size_t)h->nres * 2 > p->cap)
        resmap_rehash(p, p->cap * 2);
    return idx;
}

static void type_table(void);

/* Contract: jl_plain[] and the type tables filled (once, by whichever
 * parser is made first: parsers on several threads read them). */
static void fill_tables(void)
{
    for (int c = 0; c < 256; c++)
        jl_plain[c] = c >= 0x20 && c != '"' && c != '\\';
    type_table();
}

void jl_parser_init(struct jl_parser *p, struct history *h, const char *file, struct ls_err *err)
{
    memset(p, 0, sizeof(*p));
    p->h = h;
    p->file = file;
    p->err = err;
    p->scratch = xmalloc(2 * (JL_MAX_LINE + 1));
    p->shapes = jl_shapes_new();
    p->last = -1;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_tables);
}

void jl_parser_free(struct jl_parser *p)
{
    free(p->slot);
    free(p->scratch);
    free(p->shapes);
    p->shapes = NULL;
    p->slot = NULL;
    p->scratch = NULL;
    p->cap = 0;
}

/* ---- the tree parser (owns every message) ---- */

static int jl_err(struct jl_parser *c, size_t lineno, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int jl_err(struct jl_parser *c, size_t lineno, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return ls_err_set(c->err, LS_EINPUT, "%s:%zu: %s; one event object per line, see "
                      "\"JSONL histories\" in docs/checkers.md", c->file, lineno, what);
}

int jl_line_too_long(struct jl_parser *p, size_t len, size_t lineno)
{
    return jl_err(p, lineno, "line is %zu bytes, over the %d-byte limit", len, JL_MAX_LINE);
}

/* Optional integer field: 0 absent/null, 1 present (*v set), -1 wrong type. */
static int opt_int(const struct json *o, const char *key, int64_t *v)
{
    const struct json *f = json_obj_get(o, key);
    if (!f || f->type == JSON_NULL)
        return 0;
    if (f->type != JSON_NUM || !f->is_int)
        return -1;
    *v = f->i;
    return 1;
}

/* Optional bool field: 0 absent/false, 1 true, -1 wrong type. */
static int opt_bool(const struct json *o, const char *key)
{
    const struct json *f = json_obj_get(o, key);
    if (!f || f->type == JSON_NULL)
        return 0;
    if (f->type != JSON_BOOL)
        return -1;
    return f->i ? 1 : 0;
}

int jl_parse_tree(struct jl_parser *c, const char *line, size_t len, size_t lineno,
                  struct ev_rec *r, int *wid)
{
    struct json *o = NULL;
    char why[256];
    memset(r, 0, sizeof(*r));
    *wid = -1;
    c->tree++;
    if (len > JL_MAX_LINE)
        return jl_line_too_long(c, len, lineno);
    if (json_parse(line, len, &o, why, sizeof(why)) != 0)
        return jl_err(c, lineno, "bad JSON: %s", why);
    int rc = 0;
    int64_t v;
    if (o->type != JSON_OBJ) {
        rc = jl_err(c, lineno, "not a JSON object");
        goto out;
    }
    if (opt_int(o, "t", &r->t) != 1 || r->t < -JL_MAX_TIME || r->t > JL_MAX_TIME) {
        rc = jl_err(c, lineno, "\"t\" missing or not an integer (ns since run start, |t| <= "
                    "1e18)");
        goto out;
    }
    if (opt_int(o, "w", &v) != 1 || v < 0 || v > 1000000) {
        rc = jl_err(c, lineno, "\"w\" missing or not a worker id (integer 0..1000000)");
        goto out;
    }
    *wid = (int)v;
    const char *type = json_get_str(o, "type", NULL);
    int ty = type ? ev_type_from_name(type) : 0;
    if (!ty) {
        char names[400];
        size_t k = 0;
        names[0] = '\0';
        for (int t = 1; t < EV__MAX && k < sizeof(names); t++) {
            int wr = snprintf(names + k, sizeof(names) - k, "%s%s", t > 1 ? " " : "",
                              ev_type_name(t));
            if (wr < 0)
                break;
            k += (size_t)wr;
        }
        char shown[48];
        size_t j = 0;
        for (const char *q = type ? type : "(missing)"; *q && j + 1 < sizeof(shown); q++)
            shown[j++] = (*q >= 0x20 && *q < 0x7f) ? *q : '?'; /* one line, printable */
        shown[j] = '\0';
        rc = jl_err(c, lineno, "unknown event type '%s' (one of: %s)", shown, names);
        goto out;
    }
    r->type = (uint8_t)ty;
    const struct json *res = json_obj_get(o, "res");
    if (res && res->type == JSON_STR) {
        int idx = resmap_get(c, res->s, strlen(res->s));
        if (idx < 0) {
            rc = jl_err(c, lineno, "more than %d resources", JL_MAX_RES);
            goto out;
        }
        r->res = (uint16_t)idx;
    } else if (res && res->type != JSON_NULL) {
        rc = jl_err(c, lineno, "\"res\" must be a string");
        goto out;
    } else if (ty != EV_CRASH) {
        rc = jl_err(c, lineno, "\"res\" missing for %s", type);
        goto out;
    }
    const struct json *tok = json_obj_get(o, "token");
    if (tok && tok->type == JSON_STR)
        put_token(r, tok->s, tok->n);
    int f = opt_int(o, "fence", &v);
    if (f < 0 || (f == 1 && v < 0)) {
        rc = jl_err(c, lineno, "\"fence\" must be a non-negative integer or null");
        goto out;
    }
    if (f == 1) {
        r->flags |= EVF_FENCE;
        r->fence = (uint64_t)v;
    }
    if (ty == EV_ACQUIRE_OK || ty == EV_RENEW_OK) {
        f = opt_int(o, "valid_until", &r->valid_until);
        if (f < 0 || r->valid_until < -JL_MAX_TIME || r->valid_until > JL_MAX_TIME) {
            rc = jl_err(c, lineno, "\"valid_until\" must be an integer (ns) or null");
            goto out;
        }
        if (f == 0)
            r->flags |= EVF_NO_LEASE;
        int au = ty == EV_RENEW_OK ? opt_bool(o, "auto") : 0;
        if (au < 0) {
            rc = jl_err(c, lineno, "\"auto\" must be a boolean");
            goto out;
        }
        if (au == 1)
            r->flags |= EVF_AUTO;
    }
    if (ty == EV_ACQUIRE_INVOKE) {
        f = opt_int(o, "attempt", &v);
        if (f < 0 || v < 0 || v > UINT32_MAX) {
            rc = jl_err(c, lineno, "\"attempt\" must be a non-negative integer");
            goto out;
        }
        r->aux = f == 1 ? (uint32_t)v : 0;
    }
    const char *es = json_get_str(o, "err", NULL);
    if (es)
        r->aux = (uint32_t)ev_err_from_name(es);
    if (ty == EV_STORE_READ || ty == EV_STORE_WRITE) {
        int fenced = opt_bool(o, "fenced"), acc = opt_bool(o, "accepted"),
            failed = opt_bool(o, "failed");
        if (fenced < 0 || acc < 0 || failed < 0) {
            rc = jl_err(c, lineno, "\"fenced\", \"accepted\", \"failed\" must be booleans");
            goto out;
        }
        if (opt_int(o, "counter", &r->value) < 0) {
            rc = jl_err(c, lineno, "\"counter\" must be an integer");
            goto out;
        }
        r->flags |= (fenced ? EVF_FENCED : 0) | (acc ? EVF_ACCEPTED : 0) |
                    (failed ? EVF_FAILED : 0);
    }
out:
    json_free(o);
    return rc;
}

/* ---- the flat parser ---- */

/* Contract: the known key k[0..n) (no escapes), or K_OTHER. */
static int key_of(const char *k, size_t n)
{
#define IS(lit) (memcmp(k, lit, sizeof(lit) - 1) == 0)
    switch (n) {
    case 1: return k[0] == 't' ? K_T : k[0] == 'w' ? K_W : K_OTHER;
    case 3:
        if (IS("res")) return K_RES;
        if (IS("err")) return K_ERR;
        return K_OTHER;
    case 4:
        if (IS("type")) return K_TYPE;
        if (IS("auto")) return K_AUTO;
        return K_OTHER;
    case 5: return IS("token") ? K_TOKEN : IS("fence") ? K_FENCE : K_OTHER;
    case 6: return IS("fenced") ? K_FENCED : IS("failed") ? K_FAILED : K_OTHER;
    case 7:
        if (IS("attempt")) return K_ATTEMPT;
        if (IS("counter")) return K_COUNTER;
        return K_OTHER;
    case 8: return IS("accepted") ? K_ACCEPTED : K_OTHER;
    case 11: return IS("valid_until") ? K_VALID_UNTIL : K_OTHER;
    default: return K_OTHER;
    }
#undef IS
}

/* The event types' tables (jlparse_int.h), filled once by fill_tables. */
const char *jl_type_name[EV__MAX];
size_t jl_type_len[EV__MAX];
char jl_type_pad[EV__MAX][32];
unsigned char jl_type_at[128];
int jl_type_hash_ok;

static void type_table(void)
{
    int ok = 1;
    for (int t = 1; t < EV__MAX; t++) {
        jl_type_name[t] = ev_type_name(t);
        jl_type_len[t] = strlen(jl_type_name[t]);
        memcpy(jl_type_pad[t], jl_type_name[t], jl_type_len[t] < 31 ? jl_type_len[t] : 31);
        unsigned hv = type_hash(jl_type_name[t], jl_type_len[t]);
        if (jl_type_at[hv])
            ok = 0;
        jl_type_at[hv] = (unsigned char)t;
    }
    jl_type_hash_ok = ok;
}

/* Bytes that may stand as they are inside a JSON string: not a quote, a
 * backslash or a control byte (one table look-up per byte instead of three
 * comparisons). */
static int is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Contract: the string whose opening quote is at s[*pos-1], decoded into
 * out (room for the line) as NUL-terminated *n bytes; *pos after its
 * closing quote. 0, or -1 for anything the flat parser leaves to the tree
 * parser (a control byte, a bad escape, a \u escape outside 1..0x7f). */
static int flat_string(const char *s, size_t len, size_t *pos, char *out, size_t *n)
{
    size_t i = *pos, k = 0;
    for (;;) {
        size_t start = i;
        while (i < len && jl_plain[(unsigned char)s[i]])
            i++;
        memcpy(out + k, s + start, i - start);
        k += i - start;
        if (i >= len || (unsigned char)s[i] < 0x20)
            return -1;
        if (s[i] == '"')
            break;
        if (i + 1 >= len)
            return -1;
        char e = s[i + 1];
        i += 2;
        switch (e) {
        case '"': out[k++] = '"'; break;
        case '\\': out[k++] = '\\'; break;
        case '/': out[k++] = '/'; break;
        case 'b': out[k++] = '\b'; break;
        case 'f': out[k++] = '\f'; break;
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'u': {
            if (i + 4 > len)
                return -1;
            int cp = 0;
            for (int j = 0; j < 4; j++) {
                int h = hexval(s[i + (size_t)j]);
                if (h < 0)
                    return -1;
                cp = cp * 16 + h;
            }
            if (cp < 1 || cp > 0x7f)
                return -1;
            out[k++] = (char)cp;
            i += 4;
            break;
        }
        default:
            return -1;
        }
    }
    out[k] = '\0';
    *n = k;
    *pos = i + 1;
    return 0;
}

/* Contract: one value at s[*pos] into *sl (strings decoded into buf);
 * -1 to leave the line to the tree parser. */
static int flat_value(const char *s, size_t len, size_t *pos, struct slot *sl,
                      unsigned char *kind, char *buf)
{
    size_t i = *pos;
    char c = s[i];
    if (c == '"') {
        *pos = i + 1;
        *kind = V_STR;
        sl->s = buf;
        return flat_string(s, len, pos, buf, &sl->n);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        *kind = V_INT;
        return flat_int(s, len, pos, &sl->i);
    }
    if (c == 't' && i + 4 <= len && memcmp(s + i, "true", 4) == 0) {
        *kind = V_BOOL;
        sl->i = 1;
        *pos = i + 4;
        return 0;
    }
    if (c == 'f' && i + 5 <= len && memcmp(s + i, "false", 5) == 0) {
        *kind = V_BOOL;
        sl->i = 0;
        *pos = i + 5;
        return 0;
    }
    if (c == 'n' && i + 4 <= len && memcmp(s + i, "null", 4) == 0) {
        *kind = V_NULL;
        *pos = i + 4;
        return 0;
    }
    return -1; /* objects, arrays, anything else */
}

/* Contract: the keys and values of any flat line into *sl
 * (strings decoded into p->scratch, NUL-terminated); 1, or 0 to leave the
 * line to the tree parser. */
static int tok_general(struct jl_parser *p, const char *s, size_t len, struct slots *sl)
{
    memset(sl->kind, V_ABSENT, sizeof(sl->kind));
    char *sbuf[2] = {p->scratch, p->scratch + JL_MAX_LINE + 1}; /* res, then token/err/type */
    char *other = sbuf[1];
    size_t used = 0; /* of other: strings other than res are decoded one after another */
    struct { const char *k; size_t n; } other_keys[JL_MAX_OTHER]; /* unknown keys so far */
    int others = 0;
    size_t i = 0;
    while (i < len && is_ws(s[i]))
        i++;
    if (i >= len || s[i] != '{')
        return 0;
    i++;
    for (;;) {
        while (i < len && is_ws(s[i]))
            i++;
        if (i >= len || s[i] != '"')
            return 0; /* an empty object too: the tree parser says what is missing */
        size_t k0 = ++i;
        while (i < len && jl_plain[(unsigned char)s[i]])
            i++;
        if (i >= len || s[i] != '"')
            return 0;
        size_t kn = i - k0; /* the key's length, before the spaces and ':' after it */
        int key = key_of(s + k0, kn);
        i++;
        while (i < len && is_ws(s[i]))
            i++;
        if (i >= len || s[i] != ':')
            return 0;
        i++;
        while (i < len && is_ws(s[i]))
            i++;
        if (i >= len)
            return 0;
        if (key != K_OTHER && sl->kind[key] != V_ABSENT)
            return 0; /* a duplicate key: the tree parser decides which counts */
        if (key == K_OTHER) { /* a repeated unknown key: the tree parser refuses it */
            if (others == JL_MAX_OTHER)
                return 0; /* too many to compare: the tree parser sees to them */
            for (int j = 0; j < others; j++)
                if (other_keys[j].n == kn && memcmp(other_keys[j].k, s + k0, kn) == 0)
                    return 0;
            other_keys[others].k = s + k0;
            other_keys[others++].n = kn;
        }
        char *buf = key == K_RES ? sbuf[0] : other + used;
        if (flat_value(s, len, &i, &sl->v[key], &sl->kind[key], buf) < 0)
            return 0;
        if (sl->kind[key] == V_STR && key != K_RES)
            used += sl->v[key].n + 1;
        while (i < len && is_ws(s[i]))
            i++;
        if (i >= len)
            return 0;
        if (s[i] == ',') {
            i++;
            continue;
        }
        if (s[i] != '}')
            return 0;
        i++;
        break;
    }
    while (i < len && is_ws(s[i]))
        i++;
    return i == len;
}

/* ---- compact lines: found by masks, not byte loops ---- */

#define JL_COMPACT_MAX 256 /* bytes; a longer line goes to tok_general */

/* Contract: for j < len (16 <= len <= JL_COMPACT_MAX; nothing past
 * s[len - 1] is read), bit j of q[j / 64] set where s[j] is a quote, of
 * sep[j / 64] where s[j] is a ',' or a '}' outside every string (the
 * quotes taken as they come: right when no string has an escape); returns
 * nonzero when some s[j] is a backslash or a control byte. */
static int line_masks(const char *s, size_t len, uint64_t q[JL_COMPACT_MAX / 64],
                      uint64_t sep[JL_COMPACT_MAX / 64])
{
    for (int b = 0; b < JL_COMPACT_MAX / 64; b++)
        q[b] = sep[b] = 0;
    size_t nv = len / 16, r = len % 16;
    uint32_t bad = 0;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1f), comma = _mm_set1_epi8(','),
                  close = _mm_set1_epi8('}');
#define LS_MASKS(at, mq, ms, mb)                                                              \
    do {                                                                                      \
        __m128i v_ = _mm_loadu_si128((const __m128i *)(const void *)(s + (at)));              \
        mq = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v_, quote));                          \
        ms = (uint32_t)_mm_movemask_epi8(                                                     \
            _mm_or_si128(_mm_cmpeq_epi8(v_, comma), _mm_cmpeq_epi8(v_, close)));             \
        mb = (uint32_t)_mm_movemask_epi8(_mm_or_si128(                                        \
            _mm_cmpeq_epi8(v_, bs), _mm_cmpeq_epi8(_mm_max_epu8(v_, ctl), ctl)));             \
    } while (0)
#else
#define LS_MASKS(at, mq, ms, mb)                                                              \
    do {                                                                                      \
        mq = ms = mb = 0;                                                                     \
        for (int j_ = 0; j_ < 16; j_++) {                                                     \
            unsigned char c_ = (unsigned char)s[(at) + (size_t)j_];                           \
            mq |= (uint32_t)(c_ == '"') << j_;                                                \
            ms |= (uint32_t)(c_ == ',' || c_ == '}') << j_;                                   \
            mb |= (uint32_t)(c_ == '\\' || c_ < 0x20) << j_;                                  \
        }                                                                                     \
    } while (0)
#endif
    for (size_t k = 0; k < nv; k++) {
        uint32_t mq, ms, mb;
        LS_MASKS(16 * k, mq, ms, mb);
        q[k / 4] |= (uint64_t)mq << (16 * (k % 4));
        sep[k / 4] |= (uint64_t)ms << (16 * (k % 4));
        bad |= mb;
    }
    if (r) { /* the last r bytes: the 16 that end the line, the first 16 - r dropped */
        uint32_t mq, ms, mb;
        LS_MASKS(len - 16, mq, ms, mb);
        q[nv / 4] |= (uint64_t)(mq >> (16 - r)) << (16 * (nv % 4));
        sep[nv / 4] |= (uint64_t)(ms >> (16 - r)) << (16 * (nv % 4));
        bad |= mb;
    }
#undef LS_MASKS
    uint64_t odd = 0; /* all ones when the words before end inside a string */
    for (size_t b = 0; b < (len + 63) / 64; b++) {
        uint64_t in = q[b]; /* bit j: an odd number of quotes at or before j */
        in ^= in << 1;
        in ^= in << 2;
        in ^= in << 4;
        in ^= in << 8;
        in ^= in << 16;
        in ^= in << 32;
        in ^= odd;
        sep[b] &= ~in;
        odd = (uint64_t)0 - (in >> 63);
    }
    return bad != 0;
}

/* Contract: the first quote at or after j (< len), or len when none. */
static size_t next_quote(const uint64_t *q, size_t j, size_t len)
{
    if (j >= len)
        return len;
    size_t b = j / 64;
    uint64_t m = q[b] & (~(uint64_t)0 << (j % 64));
    while (!m) {
        if (++b >= (len + 63) / 64)
            return len;
        m = q[b];
    }
    return b * 64 + (size_t)__builtin_ctzll(m);
}

/* Contract: the integer that is all of s[0..n) (flat_int's rules: at most
 * 18 digits, no '-0', no leading zero) into *v; -1 for anything else. The
 * bytes up to s + 16 may be read when more is set (they are the line's). */
static inline __attribute__((always_inline)) int exact_int(const char *s, size_t n, int more,
                                                           int64_t *v)
{
    int neg = s[0] == '-';
    const char *d = s + neg;
    size_t nd = n - (size_t)neg;
    if (nd == 0 || nd > 18 || (d[0] == '0' && (nd > 1 || neg)))
        return -1;
    uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w1, w2;
    if (more && nd <= 8) {
        if (digits8(d, &w1) < nd)
            return -1;
        x = value8(w1, (unsigned)nd);
    } else if (more && nd <= 15 && !neg) {
        if (digits8(d, &w1) < 8 || digits8(d + 8, &w2) < nd - 8)
            return -1;
        x = value8(w1, 8) * pow10_8[nd - 8] + value8(w2, (unsigned)(nd - 8));
    } else
#endif
    {
        for (size_t k = 0; k < nd; k++) {
            if (d[k] < '0' || d[k] > '9')
                return -1;
            x = x * 10 + (uint64_t)(d[k] - '0');
        }
    }
    *v = neg ? -(int64_t)x : (int64_t)x;
    return 0;
}

/* Contract: tok_general's answer for a compact line (no byte outside a
 * string is a space, no string has an escape, no control byte anywhere),
 * its strings left where they are in s (err's copied, NUL-terminated), and
 * in fp[0..*nfp) where its fields are (*nfp -1: a key it does not know,
 * or more than JL_SHAPE_F fields); 0 for any other line, which tok_general
 * reads then. Each field is found
 * between two separators (line_masks), so the fields' work does not wait
 * on one another's byte scans. */
static int tok_compact(struct jl_parser *p, const char *s, size_t len, struct slots *sl,
                       struct fpos *fp, int *nfp)
{
    *nfp = -1;
    if (len < 16 || len > JL_COMPACT_MAX || s[0] != '{')
        return 0;
    int nf = 0; /* fields recorded in fp; -1 once the line has no shape to learn */
    uint64_t q[JL_COMPACT_MAX / 64], sep[JL_COMPACT_MAX / 64];
    if (line_masks(s, len, q, sep))
        return 0;
    memset(sl->kind, V_ABSENT, sizeof(sl->kind));
    struct { const char *k; size_t n; } other_keys[JL_MAX_OTHER];
    int others = 0;
    size_t nw = (len + 63) / 64, wb = 0;
    uint64_t m = sep[0];
    size_t a = 1; /* the field [a, e): "key":value */
    for (;;) {
        while (!m) {
            if (++wb >= nw)
                return 0;
            m = sep[wb];
        }
        size_t e = wb * 64 + (size_t)__builtin_ctzll(m);
        m &= m - 1;
        if (s[a] != '"') /* a < e: a field of at least one byte before its separator */
            return 0;
        size_t ke = next_quote(q, a + 1, len);
        if (ke + 2 >= e || s[ke + 1] != ':')
            return 0;
        int key = key_of(s + a + 1, ke - a - 1);
        if (key != K_OTHER && sl->kind[key] != V_ABSENT)
            return 0;
        if (key == K_OTHER) {
            if (others == JL_MAX_OTHER)
                return 0;
            for (int j = 0; j < others; j++)
                if (other_keys[j].n == ke - a - 1 &&
                    memcmp(other_keys[j].k, s + a + 1, ke - a - 1) == 0)
                    return 0;
            other_keys[others].k = s + a + 1;
            other_keys[others++].n = ke - a - 1;
        }
        size_t vs = ke + 2, vn = e - vs; /* the value: s[vs .. e), vn >= 1 */
        struct slot *v = &sl->v[key];
        unsigned char *kind = &sl->kind[key];
        char c = s[vs];
        if (c == '"') {
            if (vn < 2 || next_quote(q, vs + 1, len) != e - 1)
                return 0;
            *kind = V_STR;
            v->s = s + vs + 1;
            v->n = vn - 2;
            if (key == K_ERR) { /* ev_err_from_name takes a C string */
                char *eb = p->scratch + JL_MAX_LINE + 1;
                memcpy(eb, v->s, v->n);
                eb[v->n] = '\0';
                v->s = eb;
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            *kind = V_INT;
            if (exact_int(s + vs, vn, vs + 17 <= len, &v->i) < 0)
                return 0;
        } else if (vn == 4 && memcmp(s + vs, "true", 4) == 0) {
            *kind = V_BOOL;
            v->i = 1;
        } else if (vn == 5 && memcmp(s + vs, "false", 5) == 0) {
            *kind = V_BOOL;
            v->i = 0;
        } else if (vn == 4 && memcmp(s + vs, "null", 4) == 0) {
            *kind = V_NULL;
        } else {
            return 0; /* objects, arrays, anything else: tok_general, then the tree parser */
        }
        if (nf >= 0 && key != K_OTHER && nf < JL_SHAPE_F)
            fp[nf++] = (struct fpos){(unsigned char)key, *kind, vs, e};
        else
            nf = -1;
        if (s[e] == '}') {
            *nfp = nf;
            return e + 1 == len;
        }
        a = e + 1;
    }
}

int jl_parse_flat(struct jl_parser *p, const char *s, size_t len, struct ev_rec *r, int *wid)
{
    if (len > JL_MAX_LINE)
        return 0;
    struct slots sl;
    struct fpos fp[JL_SHAPE_F];
    int nfp = -1;
    int stype = 0;
    int shaped = !p->no_shape && jl_tok_shape(p, s, len, 0, &sl, &stype) > 0;
    p->no_shape = 0;
    /* then no string holds a NUL byte */
    int compact = shaped || tok_compact(p, s, len, &sl, fp, &nfp);
    if (!compact && !tok_general(p, s, len, &sl))
        return 0;
    int type = flat_rec(p, &sl, compact, shaped, stype, r, wid);
    if (type && nfp > 0)
        jl_learn_shape(p, s, len, fp, nfp, type);
    return type != 0;
}

int jl_parse_line(struct jl_parser *p, const char *line, size_t len, size_t lineno,
                  struct ev_rec *r, int *w)
{
    if (jl_parse_flat(p, line, len, r, w))
        return 0;
    return jl_parse_tree(p, line, len, lineno, r, w);
}
