/*
 * json.c: document model, strict RFC 8259 parser, writer. See json.h.
 */
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- the arena (json.h) ---- */

#define ARENA_BLOCK ((size_t)64 << 10)  /* a block's size, but for a larger string's */
#define ARENA_MAX ((size_t)64 << 20)    /* bytes an arena takes before it lets the heap */

struct jblock {
    struct jblock *next;
    max_align_t data[];
};

struct json_arena {
    char *p, *end;          /* the current block's unused part */
    struct jblock *blocks;  /* every block, the current one first */
    size_t taken;           /* bytes of blocks so far */
};

static _Thread_local struct json_arena *cur_arena;

struct json_arena *json_arena_begin(void)
{
    if (cur_arena)
        return NULL;
    cur_arena = xcalloc(1, sizeof(*cur_arena));
    return cur_arena;
}

void json_arena_end(struct json_arena *a)
{
    if (!a)
        return;
    if (cur_arena == a)
        cur_arena = NULL;
    for (struct jblock *b = a->blocks, *nx; b; b = nx) {
        nx = b->next;
        free(b);
    }
    free(a);
}

/* Contract: n bytes of the thread's arena, aligned as malloc's, not
 * zeroed; NULL when there is no arena, or it has taken ARENA_MAX and not
 * `always` (a new node: made on the heap then; the memory of a node made
 * in the arena always comes from it). */
static void *arena_take(size_t n, int always)
{
    struct json_arena *a = cur_arena;
    if (!a)
        return NULL;
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if ((size_t)(a->end - a->p) < n) {
        size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
        if (a->taken + size > ARENA_MAX && !always)
            return NULL;
        struct jblock *b = xmalloc(sizeof(*b) + size);
        a->taken += size;
        if (size != ARENA_BLOCK && a->blocks) { /* a large one of its own */
            b->next = a->blocks->next;
            a->blocks->next = b;
            return b->data;
        }
        b->next = a->blocks;
        a->blocks = b;
        a->p = (char *)b->data;
        a->end = a->p + size;
    }
    void *r = a->p;
    a->p += n;
    return r;
}

static struct json *json_alloc(enum json_type t)
{
    struct json *v = arena_take(sizeof(*v), 0);
    if (v) {
        memset(v, 0, sizeof(*v));
        v->arena = 1;
    } else {
        v = xcalloc(1, sizeof(*v));
    }
    v->type = t;
    return v;
}

/* Contract: n bytes for node v's string, not zeroed: from the arena when
 * v was made in one (by this thread, as it is being made), else the heap. */
static void *node_mem(const struct json *v, size_t n)
{
    return v->arena ? arena_take(n, 1) : xmalloc(n);
}

/* Contract: do v's keys and kids come from this thread's arena? Not when
 * v is a heap node, or this thread is outside the arena (a helper of the
 * pass adding to the result): then its keys and kids move to the heap for
 * good, where json_free will free them. */
static int arrays_in_arena(struct json *v)
{
    if (!v->arena || v->heap_arrays)
        return 0;
    if (cur_arena)
        return 1;
    v->heap_arrays = 1;
    if (v->cap) {
        struct json **kids = xmalloc(v->cap * sizeof(*kids));
        memcpy(kids, v->kids, v->n * sizeof(*kids));
        v->kids = kids;
        if (v->keys) {
            char **keys = xmalloc(v->cap * sizeof(*keys));
            for (size_t i = 0; i < v->n; i++)
                keys[i] = xstrdup(v->keys[i]);
            v->keys = keys;
        }
    }
    return 0;
}

struct json *json_new_null(void) { return json_alloc(JSON_NULL); }
struct json *json_new_arr(void) { return json_alloc(JSON_ARR); }
struct json *json_new_obj(void) { return json_alloc(JSON_OBJ); }

struct json *json_new_bool(int b)
{
    struct json *v = json_alloc(JSON_BOOL);
    v->i = b ? 1 : 0;
    return v;
}

struct json *json_new_int(int64_t x)
{
    struct json *v = json_alloc(JSON_NUM);
    v->is_int = 1;
    v->i = x;
    v->d = (double)x;
    return v;
}

struct json *json_new_num(double x)
{
    if (!isfinite(x))
        return json_new_null();
    struct json *v = json_alloc(JSON_NUM);
    v->d = x;
    if (x == floor(x) && fabs(x) < 9.0e15) {
        v->is_int = 1;
        v->i = (int64_t)x;
    }
    return v;
}

struct json *json_new_strn(const char *s, size_t n)
{
    struct json *v = json_alloc(JSON_STR);
    v->s = node_mem(v, n + 1);
    memcpy(v->s, s, n);
    v->s[n] = '\0';
    v->n = n;
    return v;
}

struct json *json_new_str(const char *s)
{
    return json_new_strn(s ? s : "", s ? strlen(s) : 0);
}

void json_free(struct json *v)
{
    if (!v)
        return;
    if (v->type == JSON_ARR || v->type == JSON_OBJ) {
        int heap = !v->arena || v->heap_arrays; /* else: the arena frees them */
        for (size_t i = 0; i < v->n; i++) {
            json_free(v->kids[i]);
            if (v->keys && heap)
                free(v->keys[i]);
        }
        if (heap) {
            free(v->kids);
            free(v->keys);
        }
    }
    if (v->arena)
        return; /* it and its string: freed with the arena */
    free(v->s);
    free(v);
}

struct json *json_clone(const struct json *v)
{
    if (!v)
        return NULL;
    struct json *c;
    switch (v->type) {
    case JSON_STR:
        return json_new_strn(v->s, v->n);
    case JSON_ARR:
        c = json_new_arr();
        for (size_t i = 0; i < v->n; i++)
            json_arr_push(c, json_clone(v->kids[i]));
        return c;
    case JSON_OBJ:
        c = json_new_obj();
        for (size_t i = 0; i < v->n; i++)
            json_obj_set(c, v->keys[i], json_clone(v->kids[i]));
        return c;
    default:
        c = json_alloc(v->type);
        c->is_int = v->is_int;
        c->i = v->i;
        c->d = v->d;
        return c;
    }
}

static void grow(struct json *v, int with_keys)
{
    if (v->n < v->cap)
        return;
    size_t cap = v->cap ? v->cap * 2 : 4;
    if (arrays_in_arena(v)) { /* the old arrays are left to the arena */
        struct json **kids = arena_take(cap * sizeof(*kids), 1);
        if (v->n)
            memcpy(kids, v->kids, v->n * sizeof(*kids));
        v->kids = kids;
        if (with_keys) {
            char **keys = arena_take(cap * sizeof(*keys), 1);
            if (v->n)
                memcpy(keys, v->keys, v->n * sizeof(*keys));
            v->keys = keys;
        }
    } else {
        v->kids = xrealloc(v->kids, cap * sizeof(*v->kids));
        if (with_keys)
            v->keys = xrealloc(v->keys, cap * sizeof(*v->keys));
    }
    v->cap = cap;
}

struct json *json_obj_set(struct json *obj, const char *key, struct json *val)
{
    for (size_t i = 0; i < obj->n; i++) {
        if (strcmp(obj->keys[i], key) == 0) {
            json_free(obj->kids[i]);
            obj->kids[i] = val;
            return val;
        }
    }
    grow(obj, 1);
    size_t kn = strlen(key) + 1;
    obj->keys[obj->n] = arrays_in_arena(obj) ? memcpy(arena_take(kn, 1), key, kn) : xstrdup(key);
    obj->kids[obj->n++] = val;
    return val;
}

struct json *json_obj_set_int(struct json *o, const char *k, int64_t v) { return json_obj_set(o, k, json_new_int(v)); }
struct json *json_obj_set_num(struct json *o, const char *k, double v) { return json_obj_set(o, k, json_new_num(v)); }
struct json *json_obj_set_str(struct json *o, const char *k, const char *s) { return json_obj_set(o, k, json_new_str(s)); }
struct json *json_obj_set_bool(struct json *o, const char *k, int b) { return json_obj_set(o, k, json_new_bool(b)); }

struct json *json_arr_push(struct json *arr, struct json *val)
{
    grow(arr, 0);
    arr->kids[arr->n++] = val;
    return val;
}

struct json *json_obj_child(struct json *obj, const char *key)
{
    struct json *c = json_obj_get(obj, key);
    if (c && c->type == JSON_OBJ)
        return c;
    return json_obj_set(obj, key, json_new_obj());
}

struct json *json_obj_get(const struct json *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->kids[i];
    return NULL;
}

struct json *json_arr_get(const struct json *arr, size_t i)
{
    if (!arr || arr->type != JSON_ARR || i >= arr->n)
        return NULL;
    return arr->kids[i];
}

struct json *json_path(const struct json *root, const char *path)
{
    const struct json *cur = root;
    const char *p = path;
    char seg[256];
    while (cur && *p) {
        size_t k = 0;
        int is_index = 0;
        if (*p == '[') {
            p++;
            while (*p && *p != ']' && k + 1 < sizeof(seg))
                seg[k++] = *p++;
            if (*p != ']')
                return NULL;
            p++;
            is_index = 1;
        } else {
            while (*p && *p != '.' && *p != '[' && k + 1 < sizeof(seg))
                seg[k++] = *p++;
        }
        seg[k] = '\0';
        if (*p == '.')
            p++;
        if (k == 0)
            return NULL;
        if (cur->type == JSON_ARR) {
            char *end;
            errno = 0;
            unsigned long long idx = strtoull(seg, &end, 10);
            if (*end || errno)
                return NULL;
            cur = json_arr_get(cur, (size_t)idx);
        } else if (!is_index) {
            cur = json_obj_get(cur, seg);
        } else {
            return NULL;
        }
    }
    return (struct json *)cur;
}

int64_t json_get_int(const struct json *obj, const char *key, int64_t dflt)
{
    const struct json *v = json_obj_get(obj, key);
    if (!v || v->type != JSON_NUM)
        return dflt;
    return v->is_int ? v->i : (int64_t)v->d;
}

double json_get_num(const struct json *obj, const char *key, double dflt)
{
    const struct json *v = json_obj_get(obj, key);
    return (v && v->type == JSON_NUM) ? v->d : dflt;
}

const char *json_get_str(const struct json *obj, const char *key, const char *dflt)
{
    const struct json *v = json_obj_get(obj, key);
    return (v && v->type == JSON_STR) ? v->s : dflt;
}

/* ---- parser ---- */

struct parser {
    const char *s;
    size_t n, pos;
    int depth;
    char *errbuf;
    size_t errlen;
    int failed;
};

static void perr(struct parser *p, const char *what)
{
    if (!p->failed && p->errbuf && p->errlen)
        snprintf(p->errbuf, p->errlen, "offset %zu: %s", p->pos, what);
    p->failed = 1;
}

static void skip_ws(struct parser *p)
{
    while (p->pos < p->n) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

static struct json *parse_value(struct parser *p);

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int parse_hex4(struct parser *p, unsigned *out)
{
    if (p->pos + 4 > p->n) {
        perr(p, "truncated \\u escape");
        return -1;
    }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[p->pos + (size_t)i]);
        if (h < 0) {
            perr(p, "bad \\u escape");
            return -1;
        }
        v = v * 16 + (unsigned)h;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

static void put_utf8(struct strbuf *sb, unsigned cp)
{
    if (cp < 0x80) {
        sb_putc(sb, (char)cp);
    } else if (cp < 0x800) {
        sb_putc(sb, (char)(0xC0 | (cp >> 6)));
        sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        sb_putc(sb, (char)(0xE0 | (cp >> 12)));
        sb_putc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
        sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
    } else {
        sb_putc(sb, (char)(0xF0 | (cp >> 18)));
        sb_putc(sb, (char)(0x80 | ((cp >> 12) & 0x3F)));
        sb_putc(sb, (char)(0x80 | ((cp >> 6) & 0x3F)));
        sb_putc(sb, (char)(0x80 | (cp & 0x3F)));
    }
}

/* Parses a string literal at p->pos (which is at '"'); returns 0 and fills sb. */
static int parse_string_raw(struct parser *p, struct strbuf *sb)
{
    p->pos++; /* opening quote */
    for (;;) {
        if (p->pos >= p->n) {
            perr(p, "unterminated string");
            return -1;
        }
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            sb_cstr(sb);
            return 0;
        }
        if (c < 0x20) {
            perr(p, "control character in string");
            return -1;
        }
        if (c != '\\') {
            /* fast path: copy a run of plain bytes */
            size_t start = p->pos;
            while (p->pos < p->n) {
                unsigned char d = (unsigned char)p->s[p->pos];
                if (d == '"' || d == '\\' || d < 0x20)
                    break;
                p->pos++;
            }
            sb_append(sb, p->s + start, p->pos - start);
            continue;
        }
        p->pos++;
        if (p->pos >= p->n) {
            perr(p, "unterminated escape");
            return -1;
        }
        char e = p->s[p->pos++];
        switch (e) {
        case '"': sb_putc(sb, '"'); break;
        case '\\': sb_putc(sb, '\\'); break;
        case '/': sb_putc(sb, '/'); break;
        case 'b': sb_putc(sb, '\b'); break;
        case 'f': sb_putc(sb, '\f'); break;
        case 'n': sb_putc(sb, '\n'); break;
        case 'r': sb_putc(sb, '\r'); break;
        case 't': sb_putc(sb, '\t'); break;
        case 'u': {
            unsigned cp;
            if (parse_hex4(p, &cp) < 0)
                return -1;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned lo;
                if (p->pos + 2 <= p->n && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u') {
                    p->pos += 2;
                    if (parse_hex4(p, &lo) < 0)
                        return -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        perr(p, "bad surrogate pair");
                        return -1;
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else {
                    perr(p, "lone surrogate");
                    return -1;
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                perr(p, "lone surrogate");
                return -1;
            }
            put_utf8(sb, cp);
            break;
        }
        default:
            perr(p, "bad escape");
            return -1;
        }
    }
}

static struct json *parse_number(struct parser *p)
{
    size_t start = p->pos;
    int is_int = 1;
    if (p->s[p->pos] == '-')
        p->pos++;
    if (p->pos >= p->n) {
        perr(p, "bad number");
        return NULL;
    }
    if (p->s[p->pos] == '0') {
        p->pos++;
    } else if (p->s[p->pos] >= '1' && p->s[p->pos] <= '9') {
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    } else {
        perr(p, "bad number");
        return NULL;
    }
    if (p->pos < p->n && p->s[p->pos] == '.') {
        is_int = 0;
        p->pos++;
        size_t d = p->pos;
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (d == p->pos) {
            perr(p, "bad number");
            return NULL;
        }
    }
    if (p->pos < p->n && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        is_int = 0;
        p->pos++;
        if (p->pos < p->n && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        size_t d = p->pos;
        while (p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
        if (d == p->pos) {
            perr(p, "bad number");
            return NULL;
        }
    }
    char tmp[64];
    size_t len = p->pos - start;
    if (len >= sizeof(tmp)) {
        perr(p, "number too long");
        return NULL;
    }
    memcpy(tmp, p->s + start, len);
    tmp[len] = '\0';
    if (is_int) {
        errno = 0;
        char *end;
        long long v = strtoll(tmp, &end, 10);
        if (errno == 0 && *end == '\0')
            return json_new_int((int64_t)v);
    }
    errno = 0;
    char *end;
    double d = strtod(tmp, &end);
    if (*end != '\0' || !isfinite(d)) {
        perr(p, "number out of range");
        return NULL;
    }
    struct json *v = json_alloc(JSON_NUM);
    v->d = d;
    return v;
}

static int match_lit(struct parser *p, const char *lit)
{
    size_t n = strlen(lit);
    if (p->pos + n <= p->n && memcmp(p->s + p->pos, lit, n) == 0) {
        p->pos += n;
        return 1;
    }
    return 0;
}

static struct json *parse_value(struct parser *p)
{
    skip_ws(p);
    if (p->pos >= p->n) {
        perr(p, "unexpected end of input");
        return NULL;
    }
    char c = p->s[p->pos];
    if (c == '{' || c == '[') {
        if (++p->depth > 256) {
            perr(p, "nesting too deep");
            return NULL;
        }
        int is_obj = c == '{';
        struct json *v = is_obj ? json_new_obj() : json_new_arr();
        p->pos++;
        skip_ws(p);
        if (p->pos < p->n && p->s[p->pos] == (is_obj ? '}' : ']')) {
            p->pos++;
            p->depth--;
            return v;
        }
        struct strbuf key = STRBUF_INIT;
        for (;;) {
            if (is_obj) {
                skip_ws(p);
                if (p->pos >= p->n || p->s[p->pos] != '"') {
                    perr(p, "expected object key");
                    goto fail;
                }
                sb_reset(&key);
                if (parse_string_raw(p, &key) < 0)
                    goto fail;
                if (memchr(key.buf, '\0', key.len)) {
                    perr(p, "NUL in object key");
                    goto fail;
                }
                skip_ws(p);
                if (p->pos >= p->n || p->s[p->pos] != ':') {
                    perr(p, "expected ':'");
                    goto fail;
                }
                p->pos++;
            }
            struct json *kid = parse_value(p);
            if (!kid)
                goto fail;
            if (is_obj) {
                if (json_obj_get(v, sb_cstr(&key))) {
                    json_free(kid);
                    perr(p, "duplicate object key");
                    goto fail;
                }
                json_obj_set(v, sb_cstr(&key), kid);
            } else {
                json_arr_push(v, kid);
            }
            skip_ws(p);
            if (p->pos < p->n && p->s[p->pos] == ',') {
                p->pos++;
                continue;
            }
            if (p->pos < p->n && p->s[p->pos] == (is_obj ? '}' : ']')) {
                p->pos++;
                break;
            }
            perr(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
            goto fail;
        }
        sb_free(&key);
        p->depth--;
        return v;
fail:
        sb_free(&key);
        json_free(v);
        return NULL;
    }
    if (c == '"') {
        struct strbuf sb = STRBUF_INIT;
        if (parse_string_raw(p, &sb) < 0) {
            sb_free(&sb);
            return NULL;
        }
        struct json *v = json_alloc(JSON_STR); /* on the heap: json_parse */
        v->n = sb.len;
        v->s = sb_steal(&sb);
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(p);
    if (match_lit(p, "true"))
        return json_new_bool(1);
    if (match_lit(p, "false"))
        return json_new_bool(0);
    if (match_lit(p, "null"))
        return json_new_null();
    perr(p, "unexpected character");
    return NULL;
}

int json_parse(const char *s, size_t n, struct json **out, char *errbuf, size_t errlen)
{
    struct parser p = {s, n, 0, 0, errbuf, errlen, 0};
    *out = NULL;
    /* on the heap, in an arena too: a parse there is of a file read and
     * let go (jobs.jsonl a line at a time: 600,000 lines kept 64 MB in the
     * arena until its end) */
    struct json_arena *a = cur_arena;
    cur_arena = NULL;
    struct json *v = parse_value(&p);
    cur_arena = a;
    if (!v)
        return LS_EINPUT;
    skip_ws(&p);
    if (p.pos != p.n) {
        perr(&p, "trailing characters after value");
        json_free(v);
        return LS_EINPUT;
    }
    *out = v;
    return 0;
}

/* ---- writer ---- */

static void newline(struct strbuf *sb, int indent, int level)
{
    if (indent < 0)
        return;
    sb_putc(sb, '\n');
    for (int i = 0; i < indent * level; i++)
        sb_putc(sb, ' ');
}

/* Contract: the decimal digits of v (with '-') into buf (>= 21 bytes), no
 * NUL; returns their count. */
static size_t fmt_i64(char *buf, int64_t v)
{
    char tmp[21];
    size_t n = 0, k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0)
        buf[k++] = '-';
    while (n)
        buf[k++] = tmp[--n];
    return k;
}

/* Contract: d written as %.15g would write it, for the common values
 * (integers and values of at most 4 decimals, under 10^15 in magnitude, at
 * least 10^-4: what %.15g prints without an exponent), into buf (>= 32
 * bytes, no NUL); returns the length, or 0 when d is not such a value.
 * d is such a value when d == k / 10^s exactly as the nearest double, and
 * then %.15g's 15 significant digits are k's digits: the same text.
 * (result.json of 10^6 events spent 21 M instructions in snprintf of
 * doubles, the largest part of the checker's fixed cost; this is ~10x
 * cheaper per number.) */
static size_t fmt_fixed(char *buf, double d)
{
    static const double pow10[] = {1, 10, 100, 1000, 10000};
    double a = fabs(d);
    if (!(a >= 1e-4 && a < 1e15))
        return 0;
    for (int s = 0; s <= 4; s++) {
        double scaled = a * pow10[s];
        if (scaled >= 1e15)
            return 0;
        int64_t k = (int64_t)(scaled + 0.5);
        if ((double)k / pow10[s] != a)
            continue; /* more decimals than s */
        /* k / 10^s: the integer part, a point, s decimals (the smallest s
         * that fits, so the last one is never 0) */
        char digits[24];
        size_t nd = fmt_i64(digits, k), n = 0;
        if (d < 0)
            buf[n++] = '-';
        size_t ip = nd > (size_t)s ? nd - (size_t)s : 0; /* digits before the point */
        if (ip == 0)
            buf[n++] = '0';
        memcpy(buf + n, digits, ip);
        n += ip;
        if (s == 0)
            return n;
        buf[n++] = '.';
        for (size_t i = ip + (size_t)s; i > nd; i--) /* zeros after the point: 0.05 */
            buf[n++] = '0';
        memcpy(buf + n, digits + ip, nd - ip);
        return n + nd - ip;
    }
    return 0;
}

static void write_value(struct strbuf *sb, const struct json *v, int indent, int level)
{
    switch (v->type) {
    case JSON_NULL: sb_puts(sb, "null"); break;
    case JSON_BOOL: sb_puts(sb, v->i ? "true" : "false"); break;
    case JSON_NUM:
        if (v->is_int) {
            char tmp[24];
            sb_append(sb, tmp, fmt_i64(tmp, v->i));
        } else if (v->d == 0)
            sb_putc(sb, '0'); /* -0 too: "-0" would read back as the integer 0 */
        else {
            /* shortest of %.15g / %.17g that round-trips */
            char tmp[40];
            size_t n = fmt_fixed(tmp, v->d);
            if (n) {
                sb_append(sb, tmp, n);
                break;
            }
            snprintf(tmp, sizeof(tmp), "%.15g", v->d);
            if (strtod(tmp, NULL) != v->d)
                snprintf(tmp, sizeof(tmp), "%.17g", v->d);
            sb_puts(sb, tmp);
        }
        break;
    case JSON_STR: sb_json_str(sb, v->s, v->n); break;
    case JSON_ARR:
    case JSON_OBJ: {
        int obj = v->type == JSON_OBJ;
        sb_putc(sb, obj ? '{' : '[');
        if (v->n == 0) {
            sb_putc(sb, obj ? '}' : ']');
            break;
        }
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                sb_putc(sb, ',');
            newline(sb, indent, level + 1);
            if (obj) {
                sb_json_str(sb, v->keys[i], strlen(v->keys[i]));
                sb_puts(sb, indent < 0 ? ":" : ": ");
            }
            write_value(sb, v->kids[i], indent, level + 1);
        }
        newline(sb, indent, level);
        sb_putc(sb, obj ? '}' : ']');
        break;
    }
    }
}

void json_write(struct strbuf *sb, const struct json *v, int indent)
{
    write_value(sb, v, indent, 0);
}

int json_load_file(const char *path, struct json **out, char *errbuf, size_t errlen)
{
    struct strbuf sb = STRBUF_INIT;
    *out = NULL;
    int rc = sb_read_file(&sb, path);
    if (rc < 0) {
        sb_free(&sb);
        snprintf(errbuf, errlen, "%s", strerror(-rc));
        errno = -rc;
        return -1;
    }
    rc = json_parse(sb.buf ? sb.buf : "", sb.len, out, errbuf, errlen);
    sb_free(&sb);
    return rc != 0 ? -2 : 0;
}
