/*
 * options.c: the options-table machinery (options as data: one table per section). One walker loads
 * a YAML mapping into a struct by its table, defaults included (the default
 * text goes through the very code that parses user input), and the same
 * tables print the resolved echo (YAML, JSON) and the markdown reference.
 * It knows types, ranges and choices, not what any key means: cross-field
 * rules and OPT_CUSTOM values belong to the table's owner (struct opt_hooks).
 */
#include "model/options.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/yamltree.h"
#include "util/err.h"
#include "util/json.h"
#include "util/rng.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define FIELD(base, d, type) ((type *)(void *)((char *)(base) + (d)->offset))
#define CFIELD(base, d, type) ((const type *)(const void *)((const char *)(base) + (d)->offset))

/* ---- small helpers ---------------------------------------------------- */

const char *opt_quote(const char *text, char *buf, size_t n)
{
    size_t j = 0, lim = 40;
    if (n == 0)
        return buf;
    for (size_t i = 0; text && text[i] && j + 4 < n; i++) {
        if (i >= lim) {
            memcpy(buf + j, "...", 3);
            j += 3;
            break;
        }
        unsigned char c = (unsigned char)text[i];
        buf[j++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    buf[j] = '\0';
    return buf;
}

int opt_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 1000;
    int d[65][65];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    }
    return d[la][lb];
}

const char *opt_nearest(const char *name, const char *const *names, int n)
{
    const char *best = NULL;
    int bestd = 1000;
    size_t len = strlen(name);
    for (int i = 0; i < n; i++) {
        int dd = opt_edit_distance(name, names[i]);
        size_t ln = strlen(names[i]);
        /* a prefix of at least 3 characters ("wait" for "wait_replicas") counts as close */
        if (len >= 3 && ln > len && strncmp(name, names[i], len) == 0 && dd > 2)
            dd = 2;
        if (dd < bestd) {
            bestd = dd;
            best = names[i];
        }
    }
    int limit = len <= 2 ? 1 : len <= 8 ? 2 : 3;
    return best && bestd <= limit && (size_t)bestd < len ? best : NULL;
}

static void join_path(char *buf, size_t n, const char *path, const char *name)
{
    if (path && *path)
        snprintf(buf, n, "%s.%s", path, name);
    else
        snprintf(buf, n, "%s", name);
}

static void choices_text(const char *const *choices, char *buf, size_t n)
{
    size_t j = 0;
    buf[0] = '\0';
    for (int i = 0; choices && choices[i]; i++) {
        int w = snprintf(buf + j, n - j, "%s%s", i ? ", " : "", choices[i]);
        if (w < 0 || (size_t)w >= n - j)
            break;
        j += (size_t)w;
    }
}

static int has_range(const struct opt_def *d)
{
    return !(d->min == 0 && d->max == 0);
}

static void fmt_dur(int64_t ns, char *buf, size_t n)
{
    ls_format_duration(ns, buf, n);
}

/* Shortest "%g" form that reads back as the same double (whole numbers
 * below 1e15 without an exponent). */
static void fmt_double(double v, char *buf, size_t n)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, n, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void range_text(const struct opt_def *d, char *buf, size_t n)
{
    char a[32], b[32];
    buf[0] = '\0';
    if (d->type == OPT_ENUM) {
        choices_text(d->choices, buf, n);
        return;
    }
    if (!has_range(d))
        return;
    if (d->type == OPT_DURATION || d->type == OPT_DIST) {
        fmt_dur((int64_t)d->min, a, sizeof(a));
        fmt_dur((int64_t)d->max, b, sizeof(b));
        if (d->type == OPT_DURATION && d->choices) {
            char words[128];
            choices_text(d->choices, words, sizeof(words));
            snprintf(buf, n, "%s..%s, or %s", a, b, words);
            return;
        }
    } else if (d->type == OPT_DOUBLE) {
        fmt_double(d->min, a, sizeof(a));
        fmt_double(d->max, b, sizeof(b));
    } else {
        snprintf(a, sizeof(a), "%lld", (long long)d->min);
        snprintf(b, sizeof(b), "%lld", (long long)d->max);
    }
    snprintf(buf, n, "%s..%s", a, b);
}

const char *opt_type_name(enum opt_type t)
{
    switch (t) {
    case OPT_INT: return "integer";
    case OPT_U64: return "unsigned integer";
    case OPT_DURATION: return "duration";
    case OPT_BOOL: return "boolean";
    case OPT_STRING: return "string";
    case OPT_ENUM: return "choice";
    case OPT_DIST: return "distribution";
    case OPT_SECTION: return "section";
    case OPT_CUSTOM: return "custom";
    case OPT_DOUBLE: return "number";
    }
    return "?";
}

/* "an integer" etc. for "expected X, got Y". */
static const char *type_expect(enum opt_type t)
{
    switch (t) {
    case OPT_INT: return "an integer";
    case OPT_U64: return "a non-negative integer";
    case OPT_DURATION: return "a duration";
    case OPT_BOOL: return "true or false";
    case OPT_STRING: return "a string";
    case OPT_ENUM: return "one of the choices";
    case OPT_DIST: return "a duration or a distribution mapping";
    case OPT_SECTION: return "a mapping";
    case OPT_CUSTOM: return "a value";
    case OPT_DOUBLE: return "a number";
    }
    return "a value";
}

/* ---- scalar parsing --------------------------------------------------- */

static int parse_i64(const char *s, int64_t *v)
{
    if (!*s || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))) /* util/timeutil.h grammar */
        return -1;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (*end || end == s)
        return -1;
    if (errno == ERANGE)
        return -2;
    *v = x;
    return 0;
}

static int parse_bool(const char *s, int *v)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcmp(s, yes[i]) == 0) {
            *v = 1;
            return 0;
        }
        if (strcmp(s, no[i]) == 0) {
            *v = 0;
            return 0;
        }
    }
    return -1;
}

int opt_parse_text(const struct opt_def *d, void *base, const char *text, char *why, size_t n)
{
    char q[64], a[32], b[32], c[32];
    opt_quote(text, q, sizeof(q));
    switch (d->type) {
    case OPT_INT: {
        int64_t v;
        int r = parse_i64(text, &v);
        if (r == -1) {
            snprintf(why, n, "expected an integer, got '%s'", q);
            return -1;
        }
        if (r == -2 || (has_range(d) && ((double)v < d->min || (double)v > d->max))) {
            range_text(d, a, sizeof(a));
            snprintf(why, n, "%s is out of range %s", q, has_range(d) ? a : "of a 64-bit integer");
            return -1;
        }
        *FIELD(base, d, int64_t) = v;
        return 0;
    }
    case OPT_U64: {
        if (!(text[0] >= '0' && text[0] <= '9')) {
            snprintf(why, n, "expected a non-negative integer, got '%s'", q);
            return -1;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        if (*end) {
            snprintf(why, n, "expected a non-negative integer, got '%s'", q);
            return -1;
        }
        if (errno == ERANGE) {
            snprintf(why, n, "%s is out of range 0..%" PRIu64, q, UINT64_MAX);
            return -1;
        }
        *FIELD(base, d, uint64_t) = (uint64_t)v;
        return 0;
    }
    case OPT_DURATION: {
        int64_t v;
        const char *reason;
        /* a word of d->choices (e.g. "never") is stored as -(index + 1) */
        for (int i = 0; d->choices && d->choices[i]; i++) {
            if (strcmp(d->choices[i], text) == 0) {
                *FIELD(base, d, int64_t) = -(int64_t)(i + 1);
                return 0;
            }
        }
        /* a table whose range goes below 0 takes signed durations (a clock jump: -2s) */
        int neg = d->min < 0 && !d->choices && text[0] == '-';
        int bad = ls_parse_duration(text + neg, &v, &reason) != 0;
        if (!bad && neg)
            v = -v;
        if (bad) {
            if (d->choices) {
                char words[128];
                choices_text(d->choices, words, sizeof(words));
                snprintf(why, n, "expected a duration or %s, got '%s'; %s", words, q, reason);
                return -1;
            }
            snprintf(why, n, "expected a duration, got '%s'; %s", q, reason);
            return -1;
        }
        if (has_range(d) && ((double)v < d->min || (double)v > d->max)) {
            fmt_dur(v, c, sizeof(c));
            fmt_dur((int64_t)d->min, a, sizeof(a));
            fmt_dur((int64_t)d->max, b, sizeof(b));
            snprintf(why, n, "%s is out of range %s..%s", c, a, b);
            return -1;
        }
        *FIELD(base, d, int64_t) = v;
        return 0;
    }
    case OPT_BOOL: {
        int v;
        if (parse_bool(text, &v) != 0) {
            snprintf(why, n, "expected true or false, got '%s'", q);
            return -1;
        }
        *FIELD(base, d, int) = v;
        return 0;
    }
    case OPT_STRING: {
        char **f = FIELD(base, d, char *);
        char *dup = strdup(text);
        if (!dup)
            abort();
        free(*f);
        *f = dup;
        return 0;
    }
    case OPT_ENUM: {
        int count = 0;
        for (int i = 0; d->choices && d->choices[i]; i++, count++) {
            if (strcmp(d->choices[i], text) == 0) {
                *FIELD(base, d, int) = i;
                return 0;
            }
        }
        char list[256];
        choices_text(d->choices, list, sizeof(list));
        const char *near = opt_nearest(text, d->choices, count);
        if (near)
            snprintf(why, n, "unknown value '%s'; did you mean '%s'? (one of: %s)", q, near, list);
        else
            snprintf(why, n, "unknown value '%s'; choose one of: %s", q, list);
        return -1;
    }
    case OPT_DOUBLE: {
        double v;
        size_t len = ls_scan_number(text, 0, &v);
        if (len == 0 || text[len]) {
            snprintf(why, n, "expected a number (e.g. 2, 0.5, -1, 1e-3), got '%s'", q);
            return -1;
        }
        if (has_range(d) && (v < d->min || v > d->max)) {
            range_text(d, a, sizeof(a));
            snprintf(why, n, "%s is out of range %s", q, a);
            return -1;
        }
        *FIELD(base, d, double) = v;
        return 0;
    }
    default:
        snprintf(why, n, "internal: key type %s is not a scalar", opt_type_name(d->type));
        return -1;
    }
}

/* ---- distributions ---------------------------------------------------- */

static const char *const dist_choices[] = {"fixed", "uniform", "exponential", "lognormal", NULL};

enum { DK_DIST, DK_VALUE, DK_MEAN, DK_SIGMA, DK_MIN, DK_MAX, DK_N };

static const struct opt_def dist_keys[] = {
    {"dist", OPT_ENUM, offsetof(struct dist, kind), "fixed", 0, 0, dist_choices, NULL,
     "the distribution's kind; may be left out when only value is given"},
    {"value", OPT_DURATION, offsetof(struct dist, value), NULL, 0, 0, NULL, NULL,
     "fixed: the value; lognormal: the median (> 0)"},
    {"mean", OPT_DURATION, offsetof(struct dist, mean), NULL, 0, 0, NULL, NULL,
     "exponential: the mean (> 0)"},
    {"sigma", OPT_DOUBLE, offsetof(struct dist, sigma), NULL, 0, 10, NULL, NULL,
     "lognormal: shape (0 < sigma <= 10)"},
    {"min", OPT_DURATION, offsetof(struct dist, min), NULL, 0, 0, NULL, NULL,
     "uniform: lower bound"},
    {"max", OPT_DURATION, offsetof(struct dist, max), NULL, 0, 0, NULL, NULL,
     "uniform: upper bound (>= min); exponential, lognormal: optional cap, 0 = none"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* Which keys each kind takes (bit per DK_*), which it needs. */
static const unsigned dist_takes[] = {
    1u << DK_VALUE,
    (1u << DK_MIN) | (1u << DK_MAX),
    (1u << DK_MEAN) | (1u << DK_MAX),
    (1u << DK_VALUE) | (1u << DK_SIGMA) | (1u << DK_MAX),
};
static const unsigned dist_needs[] = {
    1u << DK_VALUE,
    (1u << DK_MIN) | (1u << DK_MAX),
    1u << DK_MEAN,
    (1u << DK_VALUE) | (1u << DK_SIGMA),
};

static void takes_text(unsigned mask, char *buf, size_t n)
{
    size_t j = 0;
    buf[0] = '\0';
    for (int k = DK_VALUE; k < DK_N; k++) {
        if (!(mask & (1u << k)))
            continue;
        int w = snprintf(buf + j, n - j, "%s%s", j ? ", " : "", dist_keys[k].name);
        if (w < 0 || (size_t)w >= n - j)
            break;
        j += (size_t)w;
    }
}

static int parse_dist(const struct opt_def *d, struct dist *out, const struct ynode *v,
                      const char *path, struct ydiag *dg)
{
    char why[512], q[64], a[32], b[32];
    struct dist t;
    memset(&t, 0, sizeof(t));
    if (v->kind == YN_SCALAR && !ynode_is_null(v)) {
        struct opt_def dd = dist_keys[DK_VALUE];
        dd.min = d->min;
        dd.max = d->max;
        if (opt_parse_text(&dd, &t, v->text, why, sizeof(why)) != 0) {
            ydiag_at(dg, v, "%s: %s; or write a mapping like {dist: uniform, min: 20ms, max: 80ms}",
                     path, why);
            return -1;
        }
        t.kind = DIST_FIXED;
        *out = t;
        return 0;
    }
    if (v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a duration or a mapping like {dist: fixed, value: 5ms}, got %s",
                 path, ynode_kind_text(v));
        return -1;
    }
    unsigned present = 0;
    const struct ynode *at[DK_N] = {0};
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *k = v->keys[i], *val = v->vals[i];
        int idx = -1;
        for (int j = 0; j < DK_N; j++)
            if (strcmp(k->text, dist_keys[j].name) == 0)
                idx = j;
        if (idx < 0) {
            const char *names[DK_N];
            for (int j = 0; j < DK_N; j++)
                names[j] = dist_keys[j].name;
            const char *near = opt_nearest(k->text, names, DK_N);
            opt_quote(k->text, q, sizeof(q));
            if (near)
                ydiag_at(dg, k, "unknown key '%s' in %s; did you mean '%s'?", q, path, near);
            else
                ydiag_at(dg, k, "unknown key '%s' in %s; valid keys: dist, value, mean, sigma, min, max",
                         q, path);
            bad = 1;
            continue;
        }
        struct opt_def dd = dist_keys[idx];
        if (dd.type == OPT_DURATION) {
            dd.min = d->min;
            dd.max = d->max;
        }
        if (val->kind != YN_SCALAR || ynode_is_null(val)) {
            ydiag_at(dg, val, "%s.%s: expected %s, got %s", path, dd.name, type_expect(dd.type),
                     ynode_kind_text(val));
            bad = 1;
            continue;
        }
        if (opt_parse_text(&dd, &t, val->text, why, sizeof(why)) != 0) {
            ydiag_at(dg, val, "%s.%s: %s", path, dd.name, why);
            bad = 1;
            continue;
        }
        present |= 1u << idx;
        at[idx] = val;
    }
    if (bad)
        return -1;
    if (!(present & (1u << DK_DIST))) {
        if (present != (1u << DK_VALUE)) {
            ydiag_at(dg, v, "%s: missing 'dist' (one of: fixed, uniform, exponential, lognormal)", path);
            return -1;
        }
        t.kind = DIST_FIXED;
    }
    const char *kname = dist_choices[t.kind];
    unsigned extra = present & ~dist_takes[t.kind] & ~(1u << DK_DIST);
    unsigned missing = dist_needs[t.kind] & ~present;
    char takes[64];
    takes_text(dist_takes[t.kind], takes, sizeof(takes));
    for (int k = DK_VALUE; k < DK_N; k++) {
        if (extra & (1u << k)) {
            ydiag_at(dg, at[k], "%s: '%s' does not apply to dist %s (it takes: %s)", path,
                     dist_keys[k].name, kname, takes);
            bad = 1;
        }
    }
    if (missing) {
        char miss[64];
        takes_text(missing, miss, sizeof(miss));
        ydiag_at(dg, v, "%s: dist %s needs %s", path, kname, miss);
        return -1;
    }
    if (bad)
        return -1;
    switch (t.kind) {
    case DIST_UNIFORM:
        if (t.min > t.max) {
            fmt_dur(t.min, a, sizeof(a));
            fmt_dur(t.max, b, sizeof(b));
            ydiag_at(dg, at[DK_MIN], "%s: min %s is greater than max %s", path, a, b);
            return -1;
        }
        break;
    case DIST_EXPONENTIAL:
        if (t.mean <= 0) {
            ydiag_at(dg, at[DK_MEAN], "%s.mean: must be greater than 0", path);
            return -1;
        }
        if ((present & (1u << DK_MAX)) && t.max != 0 && t.max < t.mean) {
            ydiag_at(dg, at[DK_MAX], "%s.max: the cap must not be below the mean (or 0 for none)",
                     path);
            return -1;
        }
        break;
    case DIST_LOGNORMAL:
        if (t.value <= 0) {
            ydiag_at(dg, at[DK_VALUE], "%s.value: the median must be greater than 0", path);
            return -1;
        }
        if (t.sigma <= 0) {
            ydiag_at(dg, at[DK_SIGMA], "%s.sigma: must be greater than 0", path);
            return -1;
        }
        if ((present & (1u << DK_MAX)) && t.max != 0 && t.max < t.value) {
            ydiag_at(dg, at[DK_MAX], "%s.max: the cap must not be below the median (or 0 for none)",
                     path);
            return -1;
        }
        break;
    default:
        break;
    }
    *out = t;
    return 0;
}

static void dist_flow(const struct dist *t, struct strbuf *sb)
{
    char a[32];
    int k = t->kind >= 0 && t->kind <= DIST_LOGNORMAL ? t->kind : 0;
    sb_printf(sb, "{dist: %s", dist_choices[k]);
    for (int i = DK_VALUE; i < DK_N; i++) {
        if (!(dist_takes[k] & (1u << i)))
            continue;
        const struct opt_def *dk = &dist_keys[i];
        if (i == DK_MAX && k != DIST_UNIFORM && t->max == 0)
            continue; /* optional cap not set */
        if (dk->type == OPT_DOUBLE)
            fmt_double(*CFIELD(t, dk, double), a, sizeof(a));
        else
            fmt_dur(*CFIELD(t, dk, int64_t), a, sizeof(a));
        sb_printf(sb, ", %s: %s", dk->name, a);
    }
    sb_putc(sb, '}');
}

static struct json *dist_json(const struct dist *t)
{
    char a[32];
    int k = t->kind >= 0 && t->kind <= DIST_LOGNORMAL ? t->kind : 0;
    struct json *o = json_new_obj();
    json_obj_set_str(o, "dist", dist_choices[k]);
    for (int i = DK_VALUE; i < DK_N; i++) {
        if (!(dist_takes[k] & (1u << i)))
            continue;
        const struct opt_def *dk = &dist_keys[i];
        if (i == DK_MAX && k != DIST_UNIFORM && t->max == 0)
            continue;
        if (dk->type == OPT_DOUBLE) {
            json_obj_set_num(o, dk->name, *CFIELD(t, dk, double));
        } else {
            fmt_dur(*CFIELD(t, dk, int64_t), a, sizeof(a));
            json_obj_set_str(o, dk->name, a);
        }
    }
    return o;
}

void opt_dist_reference(struct strbuf *sb)
{
    opt_reference(dist_keys, "", 0, 1, NULL, sb);
    sb_puts(sb, "\nWhat each kind takes:\n\n");
    for (int k = 0; dist_choices[k]; k++) {
        char takes[64], needs[64];
        takes_text(dist_takes[k], takes, sizeof(takes));
        takes_text(dist_needs[k], needs, sizeof(needs));
        sb_printf(sb, "- `%s`: takes %s; needs %s\n", dist_choices[k], takes, needs);
    }
}

/* ---- loading ---------------------------------------------------------- */

int opt_parse_node(const struct opt_def *d, void *base, const struct ynode *v,
                   const struct ynode *where, const char *path, const struct opt_hooks *h,
                   struct ydiag *dg)
{
    char why[512];
    switch (d->type) {
    case OPT_SECTION: {
        struct opt_scope sc = {d->sub, (char *)base + d->offset};
        if (v && v->kind != YN_MAP && !ynode_is_null(v)) {
            ydiag_at(dg, v, "%s: expected a mapping, got %s", path, ynode_kind_text(v));
            dg->muted++; /* still fill the defaults so later checks see sane values */
            opt_load_map(&sc, 1, NULL, v, path, h, dg);
            dg->muted--;
            return -1;
        }
        int before = dg->count;
        opt_load_map(&sc, 1, ynode_is_null(v) ? NULL : v, v ? v : where, path, h, dg);
        return dg->count > before ? -1 : 0;
    }
    case OPT_DIST:
        return parse_dist(d, FIELD(base, d, struct dist), v, path, dg);
    case OPT_CUSTOM:
        if (!h || !h->parse) {
            ydiag_at(dg, v ? v : where, "%s: internal: no parser for this key", path);
            return -1;
        }
        return h->parse(h->ctx, d, base, v, where, path, dg);
    default:
        break;
    }
    if (!v) {
        ydiag_at(dg, where, "%s: internal: no value", path);
        return -1;
    }
    if (v->kind != YN_SCALAR) {
        if (d->type == OPT_ENUM) {
            char list[256];
            choices_text(d->choices, list, sizeof(list));
            ydiag_at(dg, v, "%s: expected one of %s, got %s", path, list, ynode_kind_text(v));
        } else {
            ydiag_at(dg, v, "%s: expected %s, got %s", path, type_expect(d->type), ynode_kind_text(v));
        }
        return -1;
    }
    if (ynode_is_null(v)) {
        if (d->type == OPT_STRING)
            return opt_parse_text(d, base, "", why, sizeof(why));
        ydiag_at(dg, v, "%s: expected %s, got nothing", path, type_expect(d->type));
        return -1;
    }
    if (opt_parse_text(d, base, v->text, why, sizeof(why)) != 0) {
        ydiag_at(dg, v, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

/* Give d its default: the default text goes through opt_parse_node like a
 * user's value would (as a plain scalar, or as YAML for distributions,
 * sections and custom values). Returns 0 or -1 (errors reported). */
static int apply_default(const struct opt_def *d, void *base, const struct ynode *where,
                         const char *path, const struct opt_hooks *h, struct ydiag *dg)
{
    if (d->type == OPT_SECTION)
        return opt_parse_node(d, base, NULL, where, path, h, dg);
    if (!d->def) {
        if (d->type == OPT_CUSTOM)
            return opt_parse_node(d, base, NULL, where, path, h, dg);
        return 0; /* required or derived: the owner's check hook decides */
    }
    struct ynode *v = NULL;
    int line = where ? where->line : 1, col = where ? where->col : 1;
    const char *origin = where ? where->origin : NULL;
    if (d->type == OPT_DIST || d->type == OPT_CUSTOM) {
        struct ydiag inner;
        ydiag_init(&inner, "<default>", NULL, NULL);
        if (ytree_parse(d->def, strlen(d->def), &v, &inner) != 0 || inner.count || !v) {
            ynode_free(v);
            ydiag_at(dg, where, "%s: internal: default '%s' does not parse", path, d->def);
            return -1;
        }
        ynode_relocate(v, line, col, origin);
    } else {
        v = ynode_scalar(d->def, strlen(d->def), 1, line, col, origin);
    }
    int rc = opt_parse_node(d, base, v, where, path, h, dg);
    ynode_free(v);
    return rc;
}

static const struct opt_def *scope_find(const struct opt_scope *scopes, int nscopes,
                                        const char *name)
{
    for (int s = 0; s < nscopes; s++)
        for (const struct opt_def *d = scopes[s].tab; d && d->name; d++)
            if (strcmp(d->name, name) == 0)
                return d;
    return NULL;
}

static void report_unknown(const struct opt_scope *scopes, int nscopes, const struct ynode *k,
                           const char *path, struct ydiag *dg)
{
    const char *names[128];
    int n = 0;
    char list[600], q[64], in[300];
    size_t j = 0;
    list[0] = '\0';
    for (int s = 0; s < nscopes; s++) {
        for (const struct opt_def *d = scopes[s].tab; d && d->name && n < 128; d++) {
            names[n++] = d->name;
            int w = snprintf(list + j, sizeof(list) - j, "%s%s", j ? ", " : "", d->name);
            if (w > 0 && (size_t)w < sizeof(list) - j)
                j += (size_t)w;
        }
    }
    opt_quote(k->text, q, sizeof(q));
    if (path && *path)
        snprintf(in, sizeof(in), "in %s", path);
    else
        snprintf(in, sizeof(in), "at top level");
    const char *near = opt_nearest(k->text, names, n);
    if (near)
        ydiag_at(dg, k, "unknown key '%s' %s; did you mean '%s'?", q, in, near);
    else if (n == 0)
        ydiag_at(dg, k, "unknown key '%s' %s; it takes no keys", q, in);
    else
        ydiag_at(dg, k, "unknown key '%s' %s; valid keys: %s", q, in, list);
}

void opt_load_map(const struct opt_scope *scopes, int nscopes, const struct ynode *map,
                  const struct ynode *where, const char *path, const struct opt_hooks *h,
                  struct ydiag *dg)
{
    char sub[512];
    if (map && map->kind != YN_MAP) {
        ydiag_at(dg, map, "%s: expected a mapping, got %s", path && *path ? path : "workload",
                 ynode_kind_text(map));
        map = NULL;
    }
    if (map) {
        for (size_t i = 0; i < map->n; i++)
            if (!scope_find(scopes, nscopes, map->keys[i]->text))
                report_unknown(scopes, nscopes, map->keys[i], path, dg);
        where = map;
    }
    for (int s = 0; s < nscopes; s++) {
        for (const struct opt_def *d = scopes[s].tab; d && d->name; d++) {
            void *base = scopes[s].base;
            const struct ynode *v = ymap_get(map, d->name);
            const struct ynode *at = where;
            if (map) {
                long ki = ymap_find(map, d->name);
                if (ki >= 0)
                    at = map->keys[ki];
            }
            join_path(sub, sizeof(sub), path, d->name);
            int rc;
            if (v) {
                rc = opt_parse_node(d, base, v, at, sub, h, dg);
                if (rc != 0 && d->type != OPT_SECTION && d->type != OPT_CUSTOM) {
                    /* keep a sane value so cross-field checks do not cascade */
                    dg->muted++;
                    apply_default(d, base, at, sub, h, dg);
                    dg->muted--;
                }
            } else {
                rc = apply_default(d, base, at, sub, h, dg);
            }
            if (rc == 0 && d->type != OPT_CUSTOM && d->type != OPT_SECTION && h && h->check)
                h->check(h->ctx, d, base, v, at, sub, dg);
        }
    }
}

int opt_fill_defaults(const struct opt_def *tab, void *base, struct ls_err *err)
{
    struct ydiag dg;
    ydiag_init(&dg, "<defaults>", NULL, err);
    struct opt_scope sc = {tab, base};
    opt_load_map(&sc, 1, NULL, NULL, "", NULL, &dg);
    return dg.count ? LS_EWORKLOAD : 0;
}

void opt_free(const struct opt_def *tab, void *base)
{
    if (!tab || !base)
        return;
    for (const struct opt_def *d = tab; d->name; d++) {
        if (d->type == OPT_STRING) {
            char **f = FIELD(base, d, char *);
            free(*f);
            *f = NULL;
        } else if (d->type == OPT_SECTION) {
            opt_free(d->sub, (char *)base + d->offset);
        }
    }
}

/* ---- echo ------------------------------------------------------------- */

/* Can s be written as a plain YAML scalar that every YAML reader takes for
 * the same string? (identifier-like, and not a null, boolean or number) */
static int plain_safe(const char *s)
{
    static const char *const special[] = {"null", "true", "false", "yes", "no", "on", "off",
                                          "y", "n", NULL};
    if (!((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    for (int i = 0; special[i]; i++)
        if (strcasecmp(s, special[i]) == 0)
            return 0;
    return strlen(s) <= 64;
}

/* Contract: an OPT_DURATION value as text in buf (a duration, or the word
 * of d->choices a negative value stands for). Returns buf. */
static const char *dur_text(const struct opt_def *d, int64_t v, char *buf, size_t n)
{
    if (v < 0 && d->choices) {
        int64_t k = 0;
        while (d->choices[k] && k < -v - 1)
            k++;
        snprintf(buf, n, "%s", d->choices[k] ? d->choices[k] : "?");
        return buf;
    }
    fmt_dur(v, buf, n);
    return buf;
}

void opt_format_value(const struct opt_def *d, const void *base, struct strbuf *sb)
{
    char buf[64];
    switch (d->type) {
    case OPT_INT:
        sb_printf(sb, "%lld", (long long)*CFIELD(base, d, int64_t));
        break;
    case OPT_U64:
        sb_printf(sb, "%" PRIu64, *CFIELD(base, d, uint64_t));
        break;
    case OPT_DURATION:
        sb_puts(sb, dur_text(d, *CFIELD(base, d, int64_t), buf, sizeof(buf)));
        break;
    case OPT_BOOL:
        sb_puts(sb, *CFIELD(base, d, int) ? "true" : "false");
        break;
    case OPT_STRING: {
        const char *s = *CFIELD(base, d, char *);
        if (s && plain_safe(s))
            sb_puts(sb, s);
        else
            sb_json_str(sb, s ? s : "", s ? strlen(s) : 0);
        break;
    }
    case OPT_ENUM: {
        int i = *CFIELD(base, d, int);
        sb_puts(sb, d->choices && i >= 0 ? d->choices[i] : "?");
        break;
    }
    case OPT_DOUBLE:
        fmt_double(*CFIELD(base, d, double), buf, sizeof(buf));
        sb_puts(sb, buf);
        break;
    case OPT_DIST:
        dist_flow(CFIELD(base, d, struct dist), sb);
        break;
    default:
        sb_puts(sb, "~");
        break;
    }
}

struct json *opt_value_json(const struct opt_def *d, const void *base)
{
    char buf[64];
    switch (d->type) {
    case OPT_INT:
        return json_new_int(*CFIELD(base, d, int64_t));
    case OPT_U64: {
        uint64_t v = *CFIELD(base, d, uint64_t);
        if (v <= (uint64_t)INT64_MAX)
            return json_new_int((int64_t)v);
        snprintf(buf, sizeof(buf), "%" PRIu64, v);
        return json_new_str(buf); /* beyond int64: exact as a string */
    }
    case OPT_DURATION:
        return json_new_str(dur_text(d, *CFIELD(base, d, int64_t), buf, sizeof(buf)));
    case OPT_BOOL:
        return json_new_bool(*CFIELD(base, d, int));
    case OPT_STRING: {
        const char *s = *CFIELD(base, d, char *);
        return json_new_str(s ? s : "");
    }
    case OPT_ENUM: {
        int i = *CFIELD(base, d, int);
        return json_new_str(d->choices && i >= 0 ? d->choices[i] : "?");
    }
    case OPT_DOUBLE:
        return json_new_num(*CFIELD(base, d, double));
    case OPT_DIST:
        return dist_json(CFIELD(base, d, struct dist));
    default:
        return json_new_null();
    }
}

void opt_to_yaml(const struct opt_def *tab, const void *base, int indent,
                 const struct opt_hooks *h, struct strbuf *sb)
{
    for (const struct opt_def *d = tab; d && d->name; d++) {
        sb_printf(sb, "%*s%s:", indent, "", d->name);
        if (d->type == OPT_SECTION) {
            sb_putc(sb, '\n');
            opt_to_yaml(d->sub, (const char *)base + d->offset, indent + 2, h, sb);
        } else if (d->type == OPT_CUSTOM) {
            if (h && h->yaml)
                h->yaml(h->ctx, d, base, indent, sb);
            else
                sb_puts(sb, " ~\n");
        } else {
            sb_putc(sb, ' ');
            opt_format_value(d, base, sb);
            sb_putc(sb, '\n');
        }
    }
}

struct json *opt_to_json(const struct opt_def *tab, const void *base, const struct opt_hooks *h)
{
    struct json *o = json_new_obj();
    for (const struct opt_def *d = tab; d && d->name; d++) {
        struct json *v;
        if (d->type == OPT_SECTION)
            v = opt_to_json(d->sub, (const char *)base + d->offset, h);
        else if (d->type == OPT_CUSTOM)
            v = h && h->json ? h->json(h->ctx, d, base) : json_new_null();
        else
            v = opt_value_json(d, base);
        json_obj_set(o, d->name, v);
    }
    return o;
}

/* Markdown table cell text: '|' escaped, newlines flattened. */
static void md_cell(struct strbuf *sb, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            sb_puts(sb, "\\|");
        else if (*s == '\n')
            sb_putc(sb, ' ');
        else
            sb_putc(sb, *s);
    }
}

void opt_reference(const struct opt_def *tab, const char *prefix, int flatten, int header,
                   const struct opt_hooks *h, struct strbuf *sb)
{
    char range[300];
    if (header)
        sb_puts(sb, "| key | type | default | range / choices | description |\n"
                    "|---|---|---|---|---|\n");
    for (const struct opt_def *d = tab; d && d->name; d++) {
        sb_printf(sb, "| `%s%s` | ", prefix ? prefix : "", d->name);
        if (d->type == OPT_CUSTOM && h && h->type_text)
            md_cell(sb, h->type_text(h->ctx, d));
        else
            md_cell(sb, opt_type_name(d->type));
        sb_puts(sb, " | ");
        if (d->type == OPT_SECTION) {
            sb_puts(sb, "(mapping)");
        } else if (d->def) {
            sb_puts(sb, "`");
            md_cell(sb, d->def[0] ? d->def : "\"\"");
            sb_puts(sb, "`");
        } else {
            sb_puts(sb, "(none)");
        }
        sb_puts(sb, " | ");
        range_text(d, range, sizeof(range));
        if (d->type == OPT_DIST && range[0])
            sb_puts(sb, "each duration ");
        md_cell(sb, range);
        sb_puts(sb, " | ");
        md_cell(sb, d->help);
        sb_puts(sb, " |\n");
        if (d->type == OPT_SECTION && flatten) {
            char p[256];
            snprintf(p, sizeof(p), "%s%s.", prefix ? prefix : "", d->name);
            opt_reference(d->sub, p, 1, 0, h, sb);
        }
    }
}
