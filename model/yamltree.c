/*
 * yamltree.c: libyaml events -> struct ynode tree, --set overrides applied
 * to that tree, and the diagnostic sink. The tree keeps positions so that
 * every later error (unknown key, bad value, cross-field conflict) can name
 * FILE:LINE:COL, or the override a node came from. This file knows YAML, not
 * the workload schema: what the keys mean lives in workload.c and the
 * options tables.
 */
#include "model/yamltree.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "util/xalloc.h"

/* ---- diagnostics ------------------------------------------------------ */

void ydiag_init(struct ydiag *dg, const char *file, FILE *log, struct ls_err *err)
{
    memset(dg, 0, sizeof(*dg));
    dg->file = file;
    dg->log = log;
    dg->err = err;
    dg->code = LS_EWORKLOAD;
}

/* Record one finished line: first one into err, every one to the log. */
static void ydiag_emit(struct ydiag *dg, int code, const char *line)
{
    if (dg->muted > 0)
        return;
    dg->count++;
    if (!dg->first_code)
        dg->first_code = code;
    if (dg->err)
        ls_err_set(dg->err, code, "%s", line);
    if (dg->log && dg->count <= YDIAG_MAX_SHOWN) {
        fputs(line, dg->log);
        fputc('\n', dg->log);
    }
}

/* Format prefix + message into one line. */
__attribute__((format(printf, 4, 0)))
static void ydiag_vemit(struct ydiag *dg, int code, const char *prefix, const char *fmt,
                        va_list ap)
{
    char msg[900], line[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    snprintf(line, sizeof(line), "%s%s", prefix, msg);
    ydiag_emit(dg, code, line);
}

static void origin_prefix(const struct ydiag *dg, const char *origin, char *buf, size_t n)
{
    if (dg->context)
        snprintf(buf, n, "%.100s: %.100s, from '%.100s': ", dg->file, dg->context, origin);
    else
        snprintf(buf, n, "--set '%.200s': ", origin);
}

void ydiag_at(struct ydiag *dg, const struct ynode *n, const char *fmt, ...)
{
    char prefix[320];
    const char *origin = n ? n->origin : dg->origin;
    if (origin)
        origin_prefix(dg, origin, prefix, sizeof(prefix));
    else
        snprintf(prefix, sizeof(prefix), "%.250s:%d:%d: ", dg->file, n ? n->line : 1,
                 n ? n->col : 1);
    va_list ap;
    va_start(ap, fmt);
    ydiag_vemit(dg, dg->code, prefix, fmt, ap);
    va_end(ap);
}

void ydiag_pos(struct ydiag *dg, int line, int col, const char *fmt, ...)
{
    char prefix[320];
    if (dg->origin)
        origin_prefix(dg, dg->origin, prefix, sizeof(prefix));
    else
        snprintf(prefix, sizeof(prefix), "%.250s:%d:%d: ", dg->file, line, col);
    va_list ap;
    va_start(ap, fmt);
    ydiag_vemit(dg, dg->code, prefix, fmt, ap);
    va_end(ap);
}

void ydiag_file(struct ydiag *dg, int code, const char *fmt, ...)
{
    char prefix[320];
    snprintf(prefix, sizeof(prefix), "%.250s: ", dg->file);
    va_list ap;
    va_start(ap, fmt);
    ydiag_vemit(dg, code, prefix, fmt, ap);
    va_end(ap);
}

void ydiag_finish(struct ydiag *dg)
{
    if (dg->log && dg->count > YDIAG_MAX_SHOWN)
        fprintf(dg->log, "%s: %d more errors not shown\n", dg->file,
                dg->count - YDIAG_MAX_SHOWN);
}

/* ---- nodes ------------------------------------------------------------ */

struct ynode *ynode_new(enum ynode_kind kind, int line, int col, const char *origin)
{
    struct ynode *n = xrealloc(NULL, sizeof(*n));
    memset(n, 0, sizeof(*n));
    n->kind = kind;
    n->line = line;
    n->col = col;
    n->origin = origin;
    return n;
}

struct ynode *ynode_scalar(const char *text, size_t len, int plain, int line, int col,
                           const char *origin)
{
    struct ynode *n = ynode_new(YN_SCALAR, line, col, origin);
    n->text = xrealloc(NULL, len + 1);
    if (len)
        memcpy(n->text, text, len);
    n->text[len] = '\0';
    n->len = len;
    n->plain = plain;
    return n;
}

void ynode_free(struct ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        if (n->keys)
            ynode_free(n->keys[i]);
        ynode_free(n->vals[i]);
    }
    free(n->keys);
    free(n->vals);
    free(n->text);
    free(n);
}

struct ynode *ynode_clone(const struct ynode *n)
{
    if (!n)
        return NULL;
    if (n->kind == YN_SCALAR)
        return ynode_scalar(n->text, n->len, n->plain, n->line, n->col, n->origin);
    struct ynode *c = ynode_new(n->kind, n->line, n->col, n->origin);
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == YN_MAP)
            ymap_append(c, ynode_clone(n->keys[i]), ynode_clone(n->vals[i]));
        else
            yseq_append(c, ynode_clone(n->vals[i]));
    }
    return c;
}

void ynode_relocate(struct ynode *n, int line, int col, const char *origin)
{
    if (!n)
        return;
    n->line = line;
    n->col = col;
    n->origin = origin;
    for (size_t i = 0; i < n->n; i++) {
        if (n->keys)
            ynode_relocate(n->keys[i], line, col, origin);
        ynode_relocate(n->vals[i], line, col, origin);
    }
}

static void ynode_grow(struct ynode *c)
{
    if (c->n < c->cap)
        return;
    c->cap = c->cap ? c->cap * 2 : 4;
    c->vals = xrealloc(c->vals, c->cap * sizeof(*c->vals));
    if (c->kind == YN_MAP)
        c->keys = xrealloc(c->keys, c->cap * sizeof(*c->keys));
}

void ymap_append(struct ynode *map, struct ynode *key, struct ynode *val)
{
    ynode_grow(map);
    map->keys[map->n] = key;
    map->vals[map->n] = val;
    map->n++;
}

void yseq_append(struct ynode *seq, struct ynode *item)
{
    ynode_grow(seq);
    seq->vals[seq->n++] = item;
}

long ymap_find(const struct ynode *map, const char *key)
{
    if (!map || map->kind != YN_MAP)
        return -1;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return (long)i;
    return -1;
}

struct ynode *ymap_get(const struct ynode *map, const char *key)
{
    long i = ymap_find(map, key);
    return i < 0 ? NULL : map->vals[i];
}

int ynode_is_null(const struct ynode *n)
{
    if (!n || n->kind != YN_SCALAR || !n->plain)
        return 0;
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++)
        if (strcmp(n->text, nulls[i]) == 0)
            return 1;
    return 0;
}

const char *ynode_kind_text(const struct ynode *n)
{
    if (!n)
        return "nothing";
    switch (n->kind) {
    case YN_SCALAR: return ynode_is_null(n) ? "nothing" : "a scalar";
    case YN_MAP: return "a mapping";
    case YN_SEQ: return "a list";
    }
    return "?";
}

/* ---- parser ----------------------------------------------------------- */

struct frame {
    struct ynode *node;     /* open collection */
    struct ynode *key;      /* YN_MAP: key waiting for its value */
    int drop_value;         /* YN_MAP: the pending key was refused; drop its value */
};

struct builder {
    struct frame stack[YAML_MAX_DEPTH];
    int depth;
    struct ynode *root;
    struct ydiag *dg;
    int alias_seen;         /* an anchor or alias was reported (once per document) */
};

/* Attach a finished node to the innermost open collection (or make it the
 * root). Takes ownership of n. */
static void attach(struct builder *b, struct ynode *n)
{
    if (b->depth == 0) {
        if (b->root)
            ynode_free(b->root);
        b->root = n;
        return;
    }
    struct frame *f = &b->stack[b->depth - 1];
    if (f->node->kind == YN_SEQ) {
        yseq_append(f->node, n);
        return;
    }
    if (!f->key) {
        f->drop_value = 0;
        if (n->kind != YN_SCALAR) {
            ydiag_at(b->dg, n, "mapping keys must be plain strings, not %s",
                     ynode_kind_text(n));
            f->drop_value = 1;
        } else {
            long prev = ymap_find(f->node, n->text);
            if (prev >= 0) {
                ydiag_at(b->dg, n, "duplicate key '%.100s' (first at line %d)", n->text,
                         f->node->keys[prev]->line);
                f->drop_value = 1;
            }
        }
        f->key = n;
        return;
    }
    if (f->drop_value) {
        ynode_free(f->key);
        ynode_free(n);
    } else {
        ymap_append(f->node, f->key, n);
    }
    f->key = NULL;
    f->drop_value = 0;
}

/* Refuse anchors and explicit tags on a node's start event. Anchors and
 * aliases are reported once per document: an alias bomb is one mistake,
 * not a thousand lines, and the parse then fails (the values the author
 * meant are not in the tree, so validating it would only report fallout). */
static void refuse_alias(struct builder *b, int line, int col, const char *what, char sigil,
                         const yaml_char_t *name)
{
    if (!b->alias_seen)
        ydiag_pos(b->dg, line, col,
                  "YAML aliases are not supported (%s '%c%.60s'); write the value out in full",
                  what, sigil, (const char *)name);
    b->alias_seen = 1;
}

static void check_props(struct builder *b, const yaml_char_t *anchor, const yaml_char_t *tag,
                        const yaml_mark_t *m)
{
    if (anchor)
        refuse_alias(b, (int)m->line + 1, (int)m->column + 1, "anchor", '&', anchor);
    if (tag) {
        const char *t = (const char *)tag;
        if (t[0] == '!' && (t[1] == '=' || t[1] == '\0'))
            ydiag_pos(b->dg, (int)m->line + 1, (int)m->column + 1,
                      "YAML tags are not supported (found '%.60s'); quote a value that starts "
                      "with '!', e.g. \"!= 0\"", t);
        else
            ydiag_pos(b->dg, (int)m->line + 1, (int)m->column + 1,
                      "YAML tags are not supported (found '%.60s'); remove the tag", t);
    }
}

/* 1-based line and column of a byte offset (columns count characters). */
static void offset_pos(const char *text, size_t len, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\n') {
            (*line)++;
            *col = 1;
        } else if ((c & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

/* One line for libyaml's failure. */
static void report_parser_error(struct builder *b, const yaml_parser_t *p, const char *text,
                                size_t len)
{
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->error == YAML_MEMORY_ERROR) {
        ydiag_pos(b->dg, 1, 1, "out of memory while parsing YAML");
        return;
    }
    if (p->error == YAML_READER_ERROR) {
        int line, col;
        offset_pos(text, len, p->problem_offset, &line, &col);
        if (p->problem_value >= 0)
            ydiag_pos(b->dg, line, col,
                      "not valid UTF-8 text: %s (#%X); save the file as UTF-8", problem,
                      (unsigned)p->problem_value);
        else
            ydiag_pos(b->dg, line, col, "not valid UTF-8 text: %s; save the file as UTF-8",
                      problem);
        return;
    }
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    const char *hint = "";
    if (p->context && strstr(p->context, "block scalar"))
        hint = "; quote values that start with '>' or '|', e.g. \"> 0\"";
    else if (p->context && strstr(p->context, "simple key"))
        hint = "; write 'key: value' with the ': ' on the key's line (keys are at most 1024 "
               "characters)";
    else if (strstr(problem, "cannot start any token"))
        hint = "; indent with spaces, not tabs, and quote values that start with '@', '`' or '%'";
    if (p->context)
        ydiag_pos(b->dg, line, col, "malformed YAML: %s (%s started at line %d)%s", problem,
                  p->context, (int)p->context_mark.line + 1, hint);
    else
        ydiag_pos(b->dg, line, col, "malformed YAML: %s%s", problem, hint);
}

int ytree_parse(const char *text, size_t len, struct ynode **out, struct ydiag *dg)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    struct builder b;
    int rc = 0, docs = 0, done = 0;

    memset(&b, 0, sizeof(b));
    b.dg = dg;
    *out = NULL;
    if (!yaml_parser_initialize(&parser)) {
        ydiag_pos(dg, 1, 1, "out of memory while parsing YAML");
        return LS_EWORKLOAD;
    }
    /* One encoding: UTF-8 (a UTF-8 byte-order mark is skipped). libyaml
     * would read UTF-16 after its mark; a workload is refused instead, as
     * every other text that is not UTF-8 is. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (len >= 2 && (((unsigned char)text[0] == 0xFF && (unsigned char)text[1] == 0xFE) ||
                     ((unsigned char)text[0] == 0xFE && (unsigned char)text[1] == 0xFF))) {
        ydiag_pos(dg, 1, 1, "not valid UTF-8 text: the file is UTF-16 (it starts with a "
                            "UTF-16 byte-order mark); save the file as UTF-8");
        yaml_parser_delete(&parser);
        return LS_EWORKLOAD;
    }
    yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);

    while (!done) {
        if (!yaml_parser_parse(&parser, &ev)) {
            report_parser_error(&b, &parser, text, len);
            rc = LS_EWORKLOAD;
            break;
        }
        const yaml_mark_t *m = &ev.start_mark;
        int line = (int)m->line + 1, col = (int)m->column + 1;
        switch (ev.type) {
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                ydiag_pos(dg, line, col,
                          "only one YAML document is allowed per workload file; remove the "
                          "second '---'");
                done = 1;
            }
            break;
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_SCALAR_EVENT: {
            const char *s = (const char *)ev.data.scalar.value;
            size_t n = ev.data.scalar.length;
            check_props(&b, ev.data.scalar.anchor, ev.data.scalar.tag, m);
            if (n > YAML_MAX_STRING)
                ydiag_pos(dg, line, col, "string is too long (%zu bytes; the limit is %d)", n,
                          YAML_MAX_STRING);
            else if (memchr(s, '\0', n))
                ydiag_pos(dg, line, col, "strings may not contain NUL characters");
            int plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
            attach(&b, ynode_scalar(s, n, plain, line, col, dg->origin));
            break;
        }
        case YAML_ALIAS_EVENT:
            refuse_alias(&b, line, col, "alias", '*', ev.data.alias.anchor);
            attach(&b, ynode_scalar("", 0, 1, line, col, dg->origin));
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT: {
            int is_map = ev.type == YAML_MAPPING_START_EVENT;
            if (is_map)
                check_props(&b, ev.data.mapping_start.anchor, ev.data.mapping_start.tag, m);
            else
                check_props(&b, ev.data.sequence_start.anchor, ev.data.sequence_start.tag, m);
            if (b.depth >= YAML_MAX_DEPTH) {
                ydiag_pos(dg, line, col, "nesting is too deep (more than %d levels)",
                          YAML_MAX_DEPTH);
                rc = LS_EWORKLOAD;
                done = 1;
                break;
            }
            struct frame *f = &b.stack[b.depth++];
            memset(f, 0, sizeof(*f));
            f->node = ynode_new(is_map ? YN_MAP : YN_SEQ, line, col, dg->origin);
            break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT: {
            struct frame *f = &b.stack[--b.depth];
            struct ynode *n = f->node;
            ynode_free(f->key); /* only set when a key had no value, which libyaml prevents */
            attach(&b, n);
            break;
        }
        default:
            break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);

    /* unwind collections left open by an error */
    while (b.depth > 0) {
        struct frame *f = &b.stack[--b.depth];
        ynode_free(f->key);
        ynode_free(f->node);
    }
    if (b.alias_seen)
        rc = LS_EWORKLOAD;
    if (rc) {
        ynode_free(b.root);
        return rc;
    }
    *out = b.root;
    return 0;
}

/* ---- --set overrides ------------------------------------------------ */

struct seg {
    char text[256];
    int bracketed;  /* written as [N] */
};

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* Split "faults[0].duration" / "faults.0.duration" into segments; after a
 * first segment named in opaque ("expect.checks.x.y") the rest is one key.
 * Returns the count, or -1 with why set. */
static int split_path(const char *key, size_t klen, const char *const *opaque, struct seg *segs,
                      int max, const char **why)
{
    int n = 0;
    size_t i = 0;
    for (int o = 0; opaque && opaque[o]; o++) {
        size_t ol = strlen(opaque[o]);
        if (klen <= ol + 1 || strncmp(key, opaque[o], ol) != 0 || key[ol] != '.')
            continue;
        if (klen - ol - 1 >= sizeof(segs[0].text) || ol >= sizeof(segs[0].text)) {
            *why = "key path is too long";
            return -1;
        }
        memcpy(segs[0].text, key, ol);
        segs[0].text[ol] = '\0';
        segs[0].bracketed = 0;
        memcpy(segs[1].text, key + ol + 1, klen - ol - 1);
        segs[1].text[klen - ol - 1] = '\0';
        segs[1].bracketed = 0;
        return 2;
    }
    while (i < klen) {
        if (n >= max) {
            *why = "key path is too deep";
            return -1;
        }
        struct seg *s = &segs[n];
        size_t j = 0;
        s->bracketed = 0;
        if (key[i] == '[') {
            s->bracketed = 1;
            i++;
            while (i < klen && key[i] != ']' && j + 1 < sizeof(s->text))
                s->text[j++] = key[i++];
            if (i >= klen || key[i] != ']') {
                *why = "missing ']' in key path";
                return -1;
            }
            i++;
            s->text[j] = '\0';
            if (!all_digits(s->text)) {
                *why = "expected a number inside [ ]";
                return -1;
            }
        } else {
            while (i < klen && key[i] != '.' && key[i] != '[' && j + 1 < sizeof(s->text))
                s->text[j++] = key[i++];
            s->text[j] = '\0';
            if (!j) {
                *why = "empty key in key path";
                return -1;
            }
        }
        n++;
        if (i < klen && key[i] == '.') {
            i++;
            if (i >= klen) {
                *why = "key path ends with '.'";
                return -1;
            }
        } else if (i < klen && key[i] != '[') {
            *why = "key path is too long";
            return -1;
        }
    }
    if (n == 0) {
        *why = "empty key path";
        return -1;
    }
    return n;
}

/* The value of a --set: YAML for flow collections and quoted strings, the
 * raw text (trimmed) otherwise, so ">= 100" or "host:1" need no quoting.
 * Returns a new node with origin set, or NULL (errors reported). */
static struct ynode *set_value(const char *set, const char *text, struct ydiag *dg)
{
    while (*text == ' ' || *text == '\t')
        text++;
    size_t n = strlen(text);
    while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
        n--;
    if (n > YAML_MAX_STRING) {
        ydiag_at(dg, NULL, "value is too long (%zu bytes; the limit is %d)", n, YAML_MAX_STRING);
        return NULL;
    }
    if (n && strchr("{[\"'", text[0])) {
        struct ynode *v = NULL;
        int before = dg->count;
        if (ytree_parse(text, n, &v, dg) != 0 || dg->count > before) {
            ynode_free(v);
            return NULL;
        }
        if (!v)
            v = ynode_scalar("", 0, 1, 1, 1, set);
        ynode_relocate(v, 1, 1, set);
        return v;
    }
    return ynode_scalar(text, n, 1, 1, 1, set);
}

static void path_upto(const struct seg *segs, int k, char *buf, size_t n)
{
    size_t j = 0;
    buf[0] = '\0';
    for (int i = 0; i < k && j < n; i++) {
        int w = segs[i].bracketed ? snprintf(buf + j, n - j, "[%s]", segs[i].text)
                                  : snprintf(buf + j, n - j, "%s%s", i ? "." : "", segs[i].text);
        if (w < 0 || (size_t)w >= n - j)
            break;
        j += (size_t)w;
    }
}

int ytree_apply_set(struct ynode *root, const char *set, const char *const *opaque,
                    struct ydiag *dg)
{
    struct seg segs[16];
    const char *why = NULL;
    char where[300];
    int rc = -1;
    dg->origin = set;
    const char *eq = strchr(set, '=');
    const char *key = set;
    size_t klen = eq ? (size_t)(eq - set) : 0;
    while (klen > 0 && (*key == ' ' || *key == '\t')) {
        key++;
        klen--;
    }
    while (klen > 0 && (key[klen - 1] == ' ' || key[klen - 1] == '\t'))
        klen--;
    int n = eq ? split_path(key, klen, opaque, segs, 16, &why) : -1;
    if (n < 0) {
        ydiag_at(dg, NULL, "expected key.path=value%s%s", why ? "; " : "", why ? why : "");
        goto done;
    }
    struct ynode *val = set_value(set, eq + 1, dg);
    if (!val)
        goto done;
    struct ynode *cur = root;
    for (int i = 0; i < n; i++) {
        const struct seg *s = &segs[i];
        int last = i == n - 1;
        struct ynode **slot = NULL;
        path_upto(segs, i, where, sizeof(where));
        if (cur->kind == YN_SEQ) {
            if (!all_digits(s->text)) {
                ydiag_at(dg, NULL, "%s is a list; write %s[N]", where, where);
                ynode_free(val);
                goto done;
            }
            unsigned long idx = strtoul(s->text, NULL, 10);
            if (idx > cur->n) {
                ydiag_at(dg, NULL, "%s has %zu entries; index %lu is out of range (%zu appends one)",
                         where, cur->n, idx, cur->n);
                ynode_free(val);
                goto done;
            }
            if (idx == cur->n)
                yseq_append(cur, ynode_scalar("", 0, 1, 1, 1, set));
            slot = &cur->vals[idx];
        } else {
            if (s->bracketed) {
                ydiag_at(dg, NULL, "%s is not a list", where[0] ? where : "the top level");
                ynode_free(val);
                goto done;
            }
            long ki = ymap_find(cur, s->text);
            if (ki < 0) {
                ymap_append(cur, ynode_scalar(s->text, strlen(s->text), 1, 1, 1, set),
                            ynode_scalar("", 0, 1, 1, 1, set));
                ki = (long)cur->n - 1;
            }
            slot = &cur->vals[ki];
        }
        if (last) {
            ynode_free(*slot);
            *slot = val;
            break;
        }
        if (ynode_is_null(*slot)) {
            int seq = segs[i + 1].bracketed || all_digits(segs[i + 1].text);
            ynode_free(*slot);
            *slot = ynode_new(seq ? YN_SEQ : YN_MAP, 1, 1, set);
        } else if ((*slot)->kind == YN_SCALAR) {
            path_upto(segs, i + 1, where, sizeof(where));
            ydiag_at(dg, NULL, "%s is a single value, so it has no '%s'; set %s itself", where,
                     segs[i + 1].text, where);
            ynode_free(val);
            goto done;
        }
        cur = *slot;
    }
    rc = 0;
done:
    dg->origin = NULL;
    return rc;
}
