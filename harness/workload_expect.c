/*
 * workload_expect.c: the expect: block of a workload (split out of
 * workload.c): result.json path -> condition ("> 0", "<= 2.5", a duration
 * for a time path), checked against result_path_valid at load; its YAML
 * and JSON echo and its part of the generated reference. The conditions
 * are evaluated after the run by reports/ (expect_spec in workload.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "harness/workload_int.h"
#include "model/resultpath.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

void wl_clear_expects(struct workload *w)
{
    for (int i = 0; i < w->nexpects; i++) {
        free(w->expects[i].path);
        free(w->expects[i].want);
    }
    free(w->expects);
    w->expects = NULL;
    w->nexpects = 0;
}

/* Does path name a time in milliseconds (1000: "*_ms") or seconds (1: "*_s")?
 * Returns that many units per second, or 0 when path is not a time. */
static double time_path_units(const char *path)
{
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, "_ms") == 0)
        return 1000.0;
    if (n > 2 && strcmp(path + n - 2, "_s") == 0)
        return 1.0;
    return 0;
}

/* Does s (what follows a number) begin a duration's unit (ns us ms s m h,
 * then nothing but spaces), or an exponent that a duration may not have? */
static int duration_unit_follows(const char *s)
{
    static const char *const units[] = {"ns", "us", "ms", "s", "m", "h"};
    if ((s[0] == 'e' || s[0] == 'E') && s[1] && strchr("+-0123456789", s[1]))
        return 1; /* ls_parse_duration says why not */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i]);
        if (strncmp(s, units[i], n) == 0 && strspn(s + n, " ") == strlen(s + n))
            return 1;
    }
    return 0;
}

/* "> 0", ">=100", "0", "!= 2.5" -> op and value. A duration ("< 500ms",
 * ">= 1.5s") is taken when path names a time and converted to that path's
 * unit (*_ms: milliseconds, *_s: seconds). Returns 0, or -1 with *why set
 * when a duration was given for a path that is not a time (else NULL). */
static int parse_condition(const char *s, const char *path, int *op, double *value,
                           const char **why)
{
    static const struct {
        const char *text;
        int op;
    } ops[] = {{"==", EXPECT_EQ}, {"!=", EXPECT_NE}, {"<=", EXPECT_LE},
               {">=", EXPECT_GE}, {"<", EXPECT_LT},  {">", EXPECT_GT}};
    while (*s == ' ')
        s++;
    *op = EXPECT_EQ;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        size_t n = strlen(ops[i].text);
        if (strncmp(s, ops[i].text, n) == 0) {
            *op = ops[i].op;
            s += n;
            break;
        }
    }
    while (*s == ' ')
        s++;
    double v;
    size_t len = ls_scan_number(s, 0, &v); /* the one number grammar: util/timeutil.h */
    if (len == 0)
        return -1;
    const char *end = s + len;
    if ((*end >= 'a' && *end <= 'z') || (*end >= 'A' && *end <= 'Z')) { /* a duration? */
        double per_s = time_path_units(path);
        if (per_s == 0) {
            if (duration_unit_follows(end))
                *why = "a duration compares only with a time (a path ending in _ms or _s)";
            return -1;
        }
        char num[64];
        size_t n = strlen(s);
        while (n > 0 && s[n - 1] == ' ')
            n--;
        int64_t ns;
        if (n >= sizeof(num))
            return -1;
        memcpy(num, s, n);
        num[n] = '\0';
        if (ls_parse_duration(num, &ns, why) < 0)
            return -1;
        *value = (double)ns * per_s / 1e9;
        return 0;
    }
    while (*end == ' ')
        end++;
    if (*end)
        return -1;
    *value = v;
    return 0;
}

static char *trim_dup(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    char *d = xcalloc(1, n + 1);
    memcpy(d, s, n);
    return d;
}

int wl_parse_expect(struct loader *L, const struct ynode *v, const char *path,
                        struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[64], q2[64];
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a mapping of result path -> condition, got %s", path,
                 ynode_kind_text(v));
        return -1;
    }
    wl_clear_expects(w);
    w->expects = xcalloc(v->n, sizeof(*w->expects));
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *k = v->keys[i], *val = v->vals[i];
        opt_quote(k->text, q, sizeof(q));
        if (!result_path_valid(k->text)) {
            ydiag_at(dg, k, "unknown result path '%s'; see docs/result-format.md", q);
            bad = 1;
            continue;
        }
        int op;
        double num;
        if (val->kind != YN_SCALAR || ynode_is_null(val)) {
            ydiag_at(dg, val, "expect '%s': expected a number or a condition like \"> 0\", got %s",
                     q, ynode_kind_text(val));
            bad = 1;
            continue;
        }
        const char *why = NULL;
        if (parse_condition(val->text, k->text, &op, &num, &why) != 0) {
            ydiag_at(dg, val,
                     "expect '%s': bad condition '%s'; %s%swrite a number or \"OP NUMBER\" with OP "
                     "one of == != < <= > >= (a duration such as 500ms for a *_ms or *_s path)",
                     q, opt_quote(val->text, q2, sizeof(q2)), why ? why : "", why ? "; " : "");
            bad = 1;
            continue;
        }
        struct expect_spec *e = &w->expects[w->nexpects++];
        e->path = xstrdup(k->text);
        e->op = op;
        e->value = num;
        e->want = trim_dup(val->text);
        e->line = k->line;
        e->col = k->col;
    }
    return bad ? -1 : 0;
}


/* ---- echo and reference ---- */

void wl_expects_yaml(const struct workload *w, int indent, struct strbuf *sb)
{
    if (w->nexpects == 0) {
        sb_puts(sb, " {}\n");
        return;
    }
    sb_putc(sb, '\n');
    for (int i = 0; i < w->nexpects; i++) {
        const struct expect_spec *e = &w->expects[i];
        sb_printf(sb, "%*s", indent + 2, "");
        sb_json_str(sb, e->path, strlen(e->path));
        sb_puts(sb, ": ");
        sb_json_str(sb, e->want, strlen(e->want));
        sb_putc(sb, '\n');
    }
}

struct json *wl_expects_json(const struct workload *w)
{
    struct json *o = json_new_obj();
    for (int i = 0; i < w->nexpects; i++)
        json_obj_set_str(o, w->expects[i].path, w->expects[i].want);
    return o;
}

void wl_expect_reference(struct strbuf *sb)
{
    sb_puts(sb, "\n## expect\n\n"
                "A mapping from a result.json path (see [result-format.md](result-format.md)) to a\n"
                "condition: a number (meaning `==`) or a string `\"OP NUMBER\"` with OP one of\n"
                "`==` `!=` `<` `<=` `>` `>=`; quote it, since YAML reads a leading `>` or `!` as\n"
                "syntax. Example: `checks.mutex.violations: \"> 0\"`. A path that is a time\n"
                "(its name ends in `_ms` or `_s`) also takes a duration, converted to the path's\n"
                "unit: `checks.liveness.crash_to_next_grant_ms: \"< 1.5s\"` compares with 1500.\n"
                "Per-class violation counts are paths too:\n"
                "`checks.mutex.by_class.stale_holder`, `checks.mutex.by_class.lock_broken`.\n"
                "Each line becomes one JUnit test case.\n");
}
