/*
 * nemesis.c: the random nemesis (see nemesis.h): its options table, the
 * loading and echo of the `nemesis:` section, and its expansion into fault
 * specs. A drawn occurrence is built as the YAML mapping a user would have
 * written ({kind, at, duration} plus one target entry) and goes through the
 * loader's own fault parser, so the nemesis works with every registered
 * kind and its targets, and the file it writes reads back to the same specs.
 * Nothing here starts a fault: faults/schedule.c does.
 */
#include "harness/nemesis.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "faults/fault.h"
#include "model/options.h"
#include "model/yamltree.h"
#include "util/rng.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define NS_MS 1e6
#define NS_H 3600e9

static const char *const gaps_choices[] = {"exponential", "uniform", "fixed", NULL};

#define NOFF(m) offsetof(struct nemesis_spec, m)
#define DOFF(m) (offsetof(struct nemesis_spec, duration.m) - offsetof(struct nemesis_spec, duration))

static const struct opt_def duration_tab[] = {
    {"min", OPT_DURATION, DOFF(min), "200ms", 1, 24 * NS_H, NULL, NULL, "shortest fault (> 0)"},
    {"max", OPT_DURATION, DOFF(max), "1s", 1, 24 * NS_H, NULL, NULL, "longest fault (>= min)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const struct opt_def nemesis_tab[] = {
    {"kinds", OPT_CUSTOM, 0, NULL, 0, 0, NULL, NULL,
     "required: the fault kinds to draw from, each equally likely (`lockstorm list faults`); "
     "each occurrence takes its kind's defaults for the kind's own options"},
    {"interval", OPT_DURATION, NOFF(interval), "2s", NS_MS, 24 * NS_H, NULL, NULL,
     "mean time between two fault starts"},
    {"gaps", OPT_ENUM, NOFF(gaps), "exponential", 0, 0, gaps_choices, NULL,
     "how the time between starts is drawn: exponential (mean interval, a Poisson process), "
     "uniform (0.5..1.5 x interval) or fixed (exactly interval)"},
    {"duration", OPT_SECTION, NOFF(duration), NULL, 0, 0, NULL, duration_tab,
     "how long each fault lasts: uniform in min..max (whole milliseconds when min is)"},
    {"start", OPT_DURATION, NOFF(start), "0", 0, 24 * NS_H, NULL, NULL,
     "no nemesis fault starts before this (a fault-free warm-up)"},
    {"overlap", OPT_BOOL, NOFF(overlap), "false", 0, 0, NULL, NULL,
     "let a nemesis fault start while another is active; false moves a drawn start inside the "
     "previous fault to its planned end, and at run time a start waits until the active nemesis "
     "fault has ended"},
    {"targets", OPT_CUSTOM, 0, "{}", 0, 0, NULL, NULL,
     "per kind, the targets to draw from (see below); default per kind: holder, random-worker "
     "and every node:N, as far as the kind accepts them"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

/* Default targets of kinds that act on links rather than on one process
 * (tried first; an entry the kind's parser refuses is dropped). */
static const struct {
    const char *kind;
    const char *targets[3];
} link_defaults[] = {
    {"latency", {"{nodes: minority}", "{nodes: majority}", NULL}},
    {"partition", {"{nodes: minority}", "{nodes: majority}", NULL}},
    {"bandwidth", {"{nodes: minority}", "{nodes: majority}", NULL}},
    {"slicer", {"{nodes: minority}", "{nodes: majority}", NULL}},
};

/* Keys the nemesis draws itself, refused inside a target entry. */
static const char *const drawn_keys[] = {"kind", "at", "duration", "every", "count", NULL};

/* ---- small YAML helpers ---------------------------------------------- */

static struct ynode *scalar_at(const char *text, const struct ynode *pos)
{
    return ynode_scalar(text, strlen(text), 1, pos ? pos->line : 1, pos ? pos->col : 1,
                        pos ? pos->origin : NULL);
}

static int scalar_safe(const struct ynode *n)
{
    if (!n->plain || n->len == 0 || n->len > 64)
        return 0;
    for (size_t i = 0; i < n->len; i++) {
        char c = n->text[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* Contract: append n as YAML flow text that parses back to the same tree
 * (scalars plain when that is unambiguous, else double-quoted). */
static void yflow(const struct ynode *n, struct strbuf *sb)
{
    if (!n) {
        sb_puts(sb, "~");
        return;
    }
    switch (n->kind) {
    case YN_SCALAR:
        if (ynode_is_null(n))
            sb_puts(sb, "~");
        else if (scalar_safe(n))
            sb_append(sb, n->text, n->len);
        else
            sb_json_str(sb, n->text, n->len);
        break;
    case YN_MAP:
        sb_putc(sb, '{');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                sb_puts(sb, ", ");
            yflow(n->keys[i], sb);
            sb_puts(sb, ": ");
            yflow(n->vals[i], sb);
        }
        sb_putc(sb, '}');
        break;
    case YN_SEQ:
        sb_putc(sb, '[');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                sb_puts(sb, ", ");
            yflow(n->vals[i], sb);
        }
        sb_putc(sb, ']');
        break;
    }
}

/* Contract: n as JSON (scalars as strings, null words as null; caller frees). */
static struct json *ynode_json(const struct ynode *n)
{
    if (!n || (n->kind == YN_SCALAR && ynode_is_null(n)))
        return json_new_null();
    if (n->kind == YN_SCALAR)
        return json_new_strn(n->text, n->len);
    struct json *o = n->kind == YN_MAP ? json_new_obj() : json_new_arr();
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == YN_MAP)
            json_obj_set(o, n->keys[i]->text, ynode_json(n->vals[i]));
        else
            json_arr_push(o, ynode_json(n->vals[i]));
    }
    return o;
}

/* Contract: a new faults[] item {kind, at, duration, <target entries>}
 * (caller frees with ynode_free); the scalars the nemesis adds take pos's
 * position, the target entries keep theirs. */
static struct ynode *make_item(const struct fault_ops *ops, const struct ynode *target, int64_t at,
                               int64_t duration, const struct ynode *pos)
{
    char buf[32];
    struct ynode *item = ynode_new(YN_MAP, pos ? pos->line : 1, pos ? pos->col : 1,
                                   pos ? pos->origin : NULL);
    ymap_append(item, scalar_at("kind", pos), scalar_at(ops->name, pos));
    ls_format_duration(at, buf, sizeof(buf));
    ymap_append(item, scalar_at("at", pos), scalar_at(buf, pos));
    ls_format_duration(duration, buf, sizeof(buf));
    ymap_append(item, scalar_at("duration", pos), scalar_at(buf, pos));
    for (size_t i = 0; target && i < target->n; i++)
        ymap_append(item, ynode_clone(target->keys[i]), ynode_clone(target->vals[i]));
    return item;
}

/* ---- loading ---------------------------------------------------------- */

static void free_kind(struct nemesis_kind *k)
{
    for (int i = 0; i < k->ntargets; i++)
        ynode_free(k->targets[i]);
    free(k->targets);
    k->targets = NULL;
    k->ntargets = 0;
}

void nemesis_free(struct nemesis_spec *n)
{
    if (!n)
        return;
    for (int i = 0; i < n->nkinds; i++)
        free_kind(&n->kinds[i]);
    free(n->kinds);
    memset(n, 0, sizeof(*n));
}

static void add_target(struct nemesis_kind *k, struct ynode *t)
{
    k->targets = xrealloc(k->targets, (size_t)(k->ntargets + 1) * sizeof(*k->targets));
    k->targets[k->ntargets++] = t;
}

/* Contract: does target (a mapping) load as a fault of kind ops against
 * w? Errors go to dg under path. Returns 0 or -1. */
static int try_target(const struct workload *w, const struct fault_ops *ops,
                      const struct ynode *target, const char *path, struct ydiag *dg)
{
    struct ynode *item = make_item(ops, target, 0, w->nemesis.duration.min, target);
    struct fault_spec fs;
    int rc = workload_parse_fault(w, item, &fs, path, dg);
    workload_fault_free(&fs);
    ynode_free(item);
    return rc;
}

static int parse_kinds(struct workload *w, const struct ynode *v, const struct ynode *where,
                       const char *path, struct ydiag *dg)
{
    struct nemesis_spec *N = &w->nemesis;
    char q[64], names[512];
    fault_names(names, sizeof(names));
    if (!v || ynode_is_null(v)) {
        ydiag_at(dg, where, "%s: missing; list the fault kinds to draw from, e.g. [pause] (one "
                 "of: %s)", path, names);
        return -1;
    }
    if (v->kind == YN_MAP) {
        ydiag_at(dg, v, "%s: expected a list of fault kinds like [pause], got a mapping", path);
        return -1;
    }
    size_t cnt = v->kind == YN_SEQ ? v->n : 1;
    if (cnt == 0) {
        ydiag_at(dg, v, "%s: empty; name at least one fault kind (one of: %s)", path, names);
        return -1;
    }
    N->kinds = xcalloc(cnt, sizeof(*N->kinds));
    int bad = 0;
    for (size_t i = 0; i < cnt; i++) {
        const struct ynode *kn = v->kind == YN_SEQ ? v->vals[i] : v;
        if (kn->kind != YN_SCALAR || ynode_is_null(kn)) {
            ydiag_at(dg, kn, "%s[%zu]: expected a fault kind name, got %s", path, i,
                     ynode_kind_text(kn));
            bad = 1;
            continue;
        }
        const struct fault_ops *ops = fault_find(kn->text);
        if (!ops) {
            const char *all[64];
            int n = 0;
            const struct fault_ops *const *fa = fault_all();
            for (int k = 0; fa && fa[k] && n < 64; k++)
                all[n++] = fa[k]->name;
            const char *near = opt_nearest(kn->text, all, n);
            char hint[96] = "";
            if (near)
                snprintf(hint, sizeof(hint), " did you mean '%s'?", near);
            ydiag_at(dg, kn, "%s[%zu]: unknown fault kind '%s';%s valid: %s", path, i,
                     opt_quote(kn->text, q, sizeof(q)), hint, names);
            bad = 1;
            continue;
        }
        if (ops->version != FAULT_OPS_VERSION) {
            ydiag_at(dg, kn, "%s[%zu]: '%s' implements fault ops version %d, expected %d", path,
                     i, ops->name, ops->version, FAULT_OPS_VERSION);
            bad = 1;
            continue;
        }
        int dup = 0;
        for (int k = 0; k < N->nkinds; k++)
            dup |= N->kinds[k].ops == ops;
        if (dup) {
            ydiag_at(dg, kn, "%s[%zu]: '%s' is listed twice", path, i, ops->name);
            bad = 1;
            continue;
        }
        N->kinds[N->nkinds++].ops = ops;
    }
    return bad ? -1 : 0;
}

/* Contract: the default targets of kind k (see the targets key's help and
 * link_defaults); each is checked against w. Reports to dg when none
 * applies. Returns 0 or -1. */
static int default_targets(struct workload *w, struct nemesis_kind *k, const struct ynode *where,
                           const char *path, struct ydiag *dg)
{
    char sub[128], buf[32];
    struct ydiag quiet;
    ydiag_init(&quiet, "<default>", NULL, NULL);
    for (size_t i = 0; i < sizeof(link_defaults) / sizeof(link_defaults[0]); i++) {
        if (strcmp(link_defaults[i].kind, k->ops->name) != 0)
            continue;
        for (int j = 0; link_defaults[i].targets[j]; j++) {
            const char *txt = link_defaults[i].targets[j];
            struct ynode *t = NULL;
            if (ytree_parse(txt, strlen(txt), &t, &quiet) != 0 || !t) {
                ynode_free(t);
                continue;
            }
            ynode_relocate(t, where ? where->line : 1, where ? where->col : 1,
                           where ? where->origin : NULL);
            int before = quiet.count;
            try_target(w, k->ops, t, path, &quiet);
            if (quiet.count == before)
                add_target(k, t);
            else
                ynode_free(t);
        }
    }
    if (k->ntargets > 0)
        return 0;
    unsigned m = k->ops->targets;
    for (int n = -2; n < (int)w->cluster.nodes; n++) {
        if (n == -2 && (m & (1u << TARGET_HOLDER)))
            snprintf(buf, sizeof(buf), "holder");
        else if (n == -1 && (m & (1u << TARGET_RANDOM_WORKER)))
            snprintf(buf, sizeof(buf), "random-worker");
        else if (n >= 0 && (m & (1u << TARGET_NODE)) && (w->cluster.caps & BACKEND_CAP_NODE_CONTROL))
            snprintf(buf, sizeof(buf), "node:%d", n); /* external: no control of the nodes */
        else
            continue;
        struct ynode *t = ynode_new(YN_MAP, where ? where->line : 1, where ? where->col : 1,
                                    where ? where->origin : NULL);
        ymap_append(t, scalar_at("target", where), scalar_at(buf, where));
        add_target(k, t);
    }
    if (k->ntargets == 0) /* the kind's own default target: an entry with no target keys */
        add_target(k, ynode_new(YN_MAP, where ? where->line : 1, where ? where->col : 1,
                                where ? where->origin : NULL));
    int bad = 0;
    for (int i = 0; i < k->ntargets; i++) {
        snprintf(sub, sizeof(sub), "%s (default for '%s'; set nemesis.targets.%s)", path,
                 k->ops->name, k->ops->name);
        bad |= try_target(w, k->ops, k->targets[i], sub, dg) != 0;
    }
    return bad ? -1 : 0;
}

/* Contract: one kind's target list v (a list, or a single entry) into k.
 * An entry is a target string (holder, node:0, ...: {target: STRING}) or a
 * mapping of the kind's target keys, optionally with its own options. */
static int parse_kind_targets(struct workload *w, struct nemesis_kind *k, const struct ynode *v,
                              const char *path, struct ydiag *dg)
{
    char sub[128], q[64];
    int bad = 0;
    size_t cnt = v->kind == YN_SEQ ? v->n : 1;
    if (cnt == 0) {
        ydiag_at(dg, v, "%s: empty; list at least one target, or leave the kind out for its "
                 "defaults", path);
        return -1;
    }
    for (size_t i = 0; i < cnt; i++) {
        const struct ynode *e = v->kind == YN_SEQ ? v->vals[i] : v;
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        struct ynode *t;
        if (e->kind == YN_SCALAR && !ynode_is_null(e)) {
            t = ynode_new(YN_MAP, e->line, e->col, e->origin);
            ymap_append(t, scalar_at("target", e), ynode_clone(e));
        } else if (e->kind == YN_MAP) {
            t = ynode_clone(e);
        } else {
            ydiag_at(dg, e, "%s: expected a target like holder or node:0, or a mapping of the "
                     "kind's target keys, got %s", sub, ynode_kind_text(e));
            bad = 1;
            continue;
        }
        int refused = 0;
        for (size_t j = 0; j < t->n; j++)
            for (int d = 0; drawn_keys[d]; d++)
                if (strcmp(t->keys[j]->text, drawn_keys[d]) == 0) {
                    ydiag_at(dg, t->keys[j], "%s: '%s' is drawn by the nemesis and cannot be set "
                             "in a target", sub, opt_quote(drawn_keys[d], q, sizeof(q)));
                    refused = 1;
                }
        if (refused || try_target(w, k->ops, t, sub, dg) != 0) {
            ynode_free(t);
            bad = 1;
            continue;
        }
        add_target(k, t);
    }
    return bad ? -1 : 0;
}

static int parse_targets(struct workload *w, const struct ynode *v, const struct ynode *where,
                         const char *path, struct ydiag *dg)
{
    struct nemesis_spec *N = &w->nemesis;
    char sub[128], q[64], kinds[256];
    int bad = 0;
    if (v && !ynode_is_null(v) && v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a mapping kind -> list of targets, e.g. {pause: [holder, "
                 "node:0]}, got %s", path, ynode_kind_text(v));
        return -1;
    }
    size_t j = 0;
    kinds[0] = '\0';
    for (int i = 0; i < N->nkinds && j < sizeof(kinds); i++)
        j += (size_t)snprintf(kinds + j, sizeof(kinds) - j, "%s%s", i ? ", " : "",
                              N->kinds[i].ops->name);
    for (size_t i = 0; v && v->kind == YN_MAP && i < v->n; i++) {
        const char *name = v->keys[i]->text;
        struct nemesis_kind *k = NULL;
        for (int n = 0; n < N->nkinds; n++)
            if (strcmp(N->kinds[n].ops->name, name) == 0)
                k = &N->kinds[n];
        if (!k) {
            ydiag_at(dg, v->keys[i], "%s: '%s' is not one of nemesis.kinds (%s)", path,
                     opt_quote(name, q, sizeof(q)), kinds);
            bad = 1;
            continue;
        }
        snprintf(sub, sizeof(sub), "%s.%s", path, name);
        if (parse_kind_targets(w, k, v->vals[i], sub, dg) != 0)
            bad = 1;
    }
    for (int n = 0; n < N->nkinds; n++) {
        if (N->kinds[n].ntargets > 0)
            continue;
        snprintf(sub, sizeof(sub), "%s.%s", path, N->kinds[n].ops->name);
        if (default_targets(w, &N->kinds[n], v ? v : where, sub, dg) != 0)
            bad = 1;
    }
    return bad ? -1 : 0;
}

static int nem_parse_custom(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                            const struct ynode *where, const char *path, struct ydiag *dg)
{
    struct workload *w = ctx;
    (void)base;
    if (strcmp(d->name, "kinds") == 0)
        return parse_kinds(w, v, where, path, dg);
    if (w->nemesis.nkinds == 0)
        return 0; /* kinds failed: targets cannot be judged */
    return parse_targets(w, v, where, path, dg);
}

int nemesis_parse(struct workload *w, const struct ynode *v, const struct ynode *where,
                  const char *path, struct ydiag *dg)
{
    struct nemesis_spec *N = &w->nemesis;
    char a[32], b[32];
    nemesis_free(N);
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_MAP) {
        ydiag_at(dg, v, "%s: expected a mapping like {kinds: [pause], interval: 2s}, or ~ for "
                 "none, got %s", path, ynode_kind_text(v));
        return -1;
    }
    N->enabled = 1;
    struct opt_hooks h = {w, nem_parse_custom, NULL, NULL, NULL, NULL};
    struct opt_scope sc = {nemesis_tab, N};
    int before = dg->count;
    opt_load_map(&sc, 1, v, v, path, &h, dg);
    if (dg->count > before)
        return -1;
    int bad = 0;
    if (N->duration.min > N->duration.max) {
        const struct ynode *dn = ymap_get(v, "duration");
        ls_format_duration(N->duration.min, a, sizeof(a));
        ls_format_duration(N->duration.max, b, sizeof(b));
        ydiag_at(dg, dn ? dn : v, "%s.duration: min %s is longer than max %s", path, a, b);
        bad = 1;
    }
    if (w->quiet_tail < w->duration) {
        int64_t tail = w->duration - w->quiet_tail;
        const struct ynode *sn = ymap_get(v, "start");
        if (N->start >= tail) {
            ls_format_duration(N->start, a, sizeof(a));
            ls_format_duration(tail, b, sizeof(b));
            ydiag_at(dg, sn ? sn : v, "%s.start: %s leaves no time for faults (none may start "
                     "after %s: duration minus quiet_tail)", path, a, b);
            bad = 1;
        } else if ((tail - N->start) / N->interval > FAULT_MAX_OCCURRENCES) {
            const struct ynode *in = ymap_get(v, "interval");
            ls_format_duration(N->interval, a, sizeof(a));
            ydiag_at(dg, in ? in : v, "%s.interval: %s would draw over %d faults; use a longer "
                     "interval", path, a, FAULT_MAX_OCCURRENCES);
            bad = 1;
        }
    }
    return bad ? -1 : 0;
}

/* ---- echo and reference ----------------------------------------------- */

static void nem_echo_yaml(void *ctx, const struct opt_def *d, const void *base, int indent,
                          struct strbuf *sb)
{
    const struct nemesis_spec *N = base;
    (void)ctx;
    if (strcmp(d->name, "kinds") == 0) {
        sb_puts(sb, " [");
        for (int i = 0; i < N->nkinds; i++)
            sb_printf(sb, "%s%s", i ? ", " : "", N->kinds[i].ops->name);
        sb_puts(sb, "]\n");
        return;
    }
    if (N->nkinds == 0) {
        sb_puts(sb, " {}\n");
        return;
    }
    sb_putc(sb, '\n');
    for (int i = 0; i < N->nkinds; i++) {
        const struct nemesis_kind *k = &N->kinds[i];
        sb_printf(sb, "%*s%s: [", indent + 2, "", k->ops->name);
        for (int t = 0; t < k->ntargets; t++) {
            if (t)
                sb_puts(sb, ", ");
            yflow(k->targets[t], sb);
        }
        sb_puts(sb, "]\n");
    }
}

static struct json *nem_echo_json(void *ctx, const struct opt_def *d, const void *base)
{
    const struct nemesis_spec *N = base;
    (void)ctx;
    if (strcmp(d->name, "kinds") == 0) {
        struct json *a = json_new_arr();
        for (int i = 0; i < N->nkinds; i++)
            json_arr_push(a, json_new_str(N->kinds[i].ops->name));
        return a;
    }
    struct json *o = json_new_obj();
    for (int i = 0; i < N->nkinds; i++) {
        struct json *a = json_obj_set(o, N->kinds[i].ops->name, json_new_arr());
        for (int t = 0; t < N->kinds[i].ntargets; t++)
            json_arr_push(a, ynode_json(N->kinds[i].targets[t]));
    }
    return o;
}

void nemesis_echo_yaml(const struct nemesis_spec *n, int indent, struct strbuf *sb)
{
    if (!n->enabled) {
        sb_puts(sb, " ~\n");
        return;
    }
    struct opt_hooks h = {NULL, NULL, NULL, nem_echo_yaml, nem_echo_json, NULL};
    sb_putc(sb, '\n');
    opt_to_yaml(nemesis_tab, n, indent + 2, &h, sb);
}

struct json *nemesis_echo_json(const struct nemesis_spec *n)
{
    if (!n->enabled)
        return json_new_null();
    struct opt_hooks h = {NULL, NULL, NULL, nem_echo_yaml, nem_echo_json, NULL};
    return opt_to_json(nemesis_tab, n, &h);
}

static const char *nem_type_text(void *ctx, const struct opt_def *d)
{
    (void)ctx;
    return strcmp(d->name, "kinds") == 0 ? "list of fault kinds" : "mapping kind -> list";
}

void nemesis_reference(struct strbuf *sb)
{
    struct opt_hooks h = {NULL, NULL, NULL, NULL, NULL, nem_type_text};
    sb_puts(sb, "\n## nemesis\n\n"
                "Random faults, drawn before the run from the workload seed alone (so the same\n"
                "seed gives the same schedule), in addition to `faults:`. The drawn schedule is\n"
                "written to the run directory as `nemesis.yaml`, a `faults:` list that\n"
                "`lockstorm run --replay RUN_DIR` replays under any seed. Keys:\n\n");
    opt_reference(nemesis_tab, "nemesis.", 1, 1, &h, sb);
    sb_puts(sb, "\nTargets: `targets: {pause: [holder, node:0]}`. An entry is a target string, as\n"
                "in `faults[].target`, or a mapping of the kind's target keys (it may also set\n"
                "the kind's own options, e.g. `{target: node:0, delay: 50ms}`); `kind`, `at`,\n"
                "`duration`, `every` and `count` are drawn and cannot be set. Each occurrence\n"
                "draws its kind, then one of that kind's targets, each uniformly. Starts are\n"
                "whole milliseconds; none falls in `quiet_tail`.\n");
}

/* ---- expansion -------------------------------------------------------- */

static int64_t draw_gap(const struct nemesis_spec *N, struct rng *r)
{
    switch (N->gaps) {
    case GAPS_UNIFORM:
        return N->interval / 2 + rng_range(r, 0, N->interval);
    case GAPS_FIXED:
        return N->interval;
    default: {
        double u = rng_double(r); /* [0, 1): -log(1 - u) is finite, at most ~37 */
        return (int64_t)(-log(1.0 - u) * (double)N->interval);
    }
    }
}

static int64_t draw_duration(const struct nemesis_spec *N, struct rng *r)
{
    int64_t lo = N->duration.min, hi = N->duration.max;
    if (hi - lo >= LS_NS_PER_MS && lo % LS_NS_PER_MS == 0)
        return lo + rng_range(r, 0, (hi - lo) / LS_NS_PER_MS) * LS_NS_PER_MS;
    return rng_range(r, lo, hi);
}

void nemesis_specs_free(struct fault_spec *fs, int n)
{
    for (int i = 0; fs && i < n; i++)
        workload_fault_free(&fs[i]);
    free(fs);
}

int nemesis_expand(const struct workload *w, struct fault_spec **out, int *n, struct ls_err *err)
{
    const struct nemesis_spec *N = &w->nemesis;
    *out = NULL;
    *n = 0;
    if (!N->enabled || N->nkinds == 0 || w->quiet_tail >= w->duration)
        return 0;
    struct rng rng;
    rng_seed(&rng, w->seed, NEMESIS_STREAM);
    int64_t tail = w->duration - w->quiet_tail;
    int64_t t = N->start, prev_end = INT64_MIN;
    struct fault_spec *fs = NULL;
    int cnt = 0, cap = 0;
    struct ydiag dg;
    ydiag_init(&dg, "<nemesis>", NULL, err);
    char path[32];
    int64_t room = FAULT_MAX_OCCURRENCES - workload_explicit_occurrences(w);
    while (cnt < room) { /* the schedule's bound: faults/fault.h */
        t += draw_gap(N, &rng);
        if (!N->overlap && t < prev_end)
            t = prev_end;
        t = (t + LS_NS_PER_MS - 1) / LS_NS_PER_MS * LS_NS_PER_MS;
        if (t >= tail)
            break;
        const struct nemesis_kind *k = &N->kinds[rng_below(&rng, (uint64_t)N->nkinds)];
        const struct ynode *target = k->targets[rng_below(&rng, (uint64_t)k->ntargets)];
        int64_t dur = draw_duration(N, &rng);
        if (cnt == cap) {
            cap = cap ? cap * 2 : 16;
            fs = xrealloc(fs, (size_t)cap * sizeof(*fs));
        }
        struct ynode *item = make_item(k->ops, target, t, dur, target);
        snprintf(path, sizeof(path), "nemesis[%d]", cnt);
        int rc = workload_parse_fault(w, item, &fs[cnt], path, &dg);
        ynode_free(item);
        cnt++;
        if (rc != 0) {
            nemesis_specs_free(fs, cnt);
            return ls_err_set(err, LS_EWORKLOAD, "nemesis: a drawn fault does not load");
        }
        prev_end = t + dur;
    }
    *out = fs;
    *n = cnt;
    return 0;
}

void nemesis_to_yaml(const struct fault_spec *fs, int n, const char *comment, struct strbuf *sb)
{
    for (const char *p = comment; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        sb_puts(sb, "# ");
        sb_append(sb, p, len);
        sb_putc(sb, '\n');
        p += len + (nl ? 1 : 0);
    }
    if (n == 0) {
        sb_puts(sb, "faults: []\n");
        return;
    }
    sb_puts(sb, "faults:\n");
    workload_faults_to_yaml(fs, n, 2, sb);
}

/* Contract: read path whole into *buf (NUL-terminated, caller frees).
 * Returns 0 or -errno (-EFBIG past YAML_MAX_FILE). */
static int read_file(const char *path, char **buf, size_t *len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    struct strbuf sb = STRBUF_INIT;
    char chunk[8192];
    size_t got;
    int rc = 0;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        sb_append(&sb, chunk, got);
        if (sb.len > YAML_MAX_FILE) {
            rc = -EFBIG;
            break;
        }
    }
    if (rc == 0 && ferror(f))
        rc = -EIO;
    fclose(f);
    if (rc) {
        sb_free(&sb);
        return rc;
    }
    *len = sb.len;
    sb_cstr(&sb);
    *buf = sb_steal(&sb);
    return 0;
}

int nemesis_load(const struct workload *w, const char *path, struct fault_spec **out, int *n,
                 FILE *errlog, struct ls_err *err)
{
    struct ydiag dg;
    struct ynode *root = NULL;
    struct fault_spec *fs = NULL;
    char *text = NULL;
    size_t len = 0;
    int cnt = 0;
    *out = NULL;
    *n = 0;
    ydiag_init(&dg, path, errlog, err);
    int rc = read_file(path, &text, &len);
    if (rc < 0) {
        ydiag_file(&dg, LS_EIO, "cannot read: %s", strerror(-rc));
        return LS_EIO;
    }
    if (ytree_parse(text, len, &root, &dg) != 0 || dg.count)
        goto done;
    if (!root || root->kind != YN_MAP) {
        ydiag_at(&dg, root, "expected a mapping with a 'faults' list");
        goto done;
    }
    for (size_t i = 0; i < root->n; i++)
        if (strcmp(root->keys[i]->text, "faults") != 0)
            ydiag_at(&dg, root->keys[i], "unknown key '%s'; this file holds only 'faults'",
                     root->keys[i]->text);
    const struct ynode *list = ymap_get(root, "faults");
    if (!list || ynode_is_null(list))
        goto done;
    if (list->kind != YN_SEQ) {
        ydiag_at(&dg, list, "faults: expected a list of fault mappings, got %s",
                 ynode_kind_text(list));
        goto done;
    }
    fs = xcalloc(list->n ? list->n : 1, sizeof(*fs));
    for (size_t i = 0; i < list->n; i++) {
        char sub[32];
        snprintf(sub, sizeof(sub), "faults[%zu]", i);
        workload_parse_fault(w, list->vals[i], &fs[cnt++], sub, &dg);
    }
done:
    ynode_free(root);
    free(text);
    ydiag_finish(&dg);
    if (dg.count) {
        nemesis_specs_free(fs, cnt);
        return dg.first_code ? dg.first_code : LS_EWORKLOAD;
    }
    *out = fs;
    *n = cnt;
    return 0;
}

int nemesis_plan(const struct workload *w, const char *replay_dir, struct fault_spec **out,
                 int *n, FILE *errlog, struct ls_err *err)
{
    *out = NULL;
    *n = 0;
    if (!replay_dir)
        return nemesis_expand(w, out, n, err);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", replay_dir, NEMESIS_FILE);
    if (access(path, F_OK) != 0) {
        if (!w->nemesis.enabled)
            return 0; /* the run had no nemesis: replay its explicit schedule alone */
        return ls_err_set(err, LS_EUSAGE, "--replay %s: %s is missing; it is written by runs "
                          "with a nemesis", replay_dir, path);
    }
    return nemesis_load(w, path, out, n, errlog, err);
}

int nemesis_write(const char *rundir, const struct workload *w, const char *replay_dir,
                  const struct fault_spec *fs, int n, struct ls_err *err)
{
    if (!w->nemesis.enabled && !replay_dir && n == 0)
        return 0;
    char note[4600], path[4200];
    if (replay_dir)
        snprintf(note, sizeof(note),
                 "nemesis schedule replayed from %s/%s (lockstorm run --replay)\n"
                 "%d fault(s); targets such as holder were resolved again at run time",
                 replay_dir, NEMESIS_FILE, n);
    else
        snprintf(note, sizeof(note),
                 "nemesis schedule drawn from seed %llu (stream 0x%llx): %d fault(s)\n"
                 "replay it under any seed: lockstorm run --replay RUN_DIR",
                 (unsigned long long)w->seed, (unsigned long long)NEMESIS_STREAM, n);
    struct strbuf sb = STRBUF_INIT;
    nemesis_to_yaml(fs, n, note, &sb);
    snprintf(path, sizeof(path), "%s/%s", rundir, NEMESIS_FILE);
    int rc = sb_write_file(&sb, path);
    sb_free(&sb);
    if (rc < 0)
        return ls_err_errno(err, LS_EIO, -rc, "write %s", path);
    return 0;
}
