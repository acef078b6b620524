/*
 * workload_faults.c: the faults: list of a workload (split out of
 * workload.c): the common keys of an entry (fault_tab), its target forms,
 * the cross-field rules every entry must meet, the kind's own options and
 * validate hook, the quiet_tail rule, the YAML/JSON echo of the list and
 * its part of the generated reference. Reads text only; starts nothing.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "faults/fault.h"
#include "harness/links.h"
#include "harness/workload_int.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

/* Common keys of one faults[] entry; the kind's own keys follow them. */
struct fault_common {
    char *kind;
    char *target;
    int64_t resource, at, duration, every, count;
};

static const struct opt_def fault_tab[] = {
    {"kind", OPT_STRING, offsetof(struct fault_common, kind), NULL, 0, 0, NULL, NULL,
     "required: the fault kind (`lockstorm list faults`)"},
    {"target", OPT_STRING, offsetof(struct fault_common, target), NULL, 0, 0, NULL, NULL,
     "holder, acquirer, worker:N, random-worker, all-workers or node:N, as the kind allows; "
     "default: the "
     "first target the kind allows"},
    {"resource", OPT_INT, offsetof(struct fault_common, resource), "-1", -1, 4095, NULL, NULL,
     "target holder or acquirer only: workers holding (acquiring) this resource (< "
     "workers.resources); -1 = any"},
    {"at", OPT_DURATION, offsetof(struct fault_common, at), "1s", 0, 24 * NS_H, NULL, NULL,
     "first start after the run starts; must be before the end of the run"},
    {"duration", OPT_DURATION, offsetof(struct fault_common, duration), "1s", 1, 24 * NS_H, NULL,
     NULL, "how long each occurrence lasts (> 0)"},
    {"every", OPT_DURATION, offsetof(struct fault_common, every), "0", 0, 24 * NS_H, NULL, NULL,
     "repeat period; 0 = once; when > 0 it must be >= duration and >= the kind's shortest "
     "period (1ms; kill and stop 50ms; failover 1s)"},
    {"count", OPT_INT, offsetof(struct fault_common, count), "0", 0, 1000000000, NULL, NULL,
     "occurrences; 0 = once when every is 0, else until the run ends"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static const char *const target_names[] = {"holder", "worker:N", "random-worker", "all-workers",
                                           "node:N", "acquirer", "links", "primary"};
#define NTARGETS 8

/* "worker:3" -> TARGET_WORKER, 3. Returns 0 or -1 (unknown form), -2 (bad N). */
static int parse_target(const char *s, int *target, int *index)
{
    static const struct {
        const char *name;
        int target;
        int indexed;
    } forms[] = {{"holder", TARGET_HOLDER, 0},           {"random-worker", TARGET_RANDOM_WORKER, 0},
                 {"all-workers", TARGET_ALL_WORKERS, 0}, {"worker:", TARGET_WORKER, 1},
                 {"node:", TARGET_NODE, 1},              {"acquirer", TARGET_ACQUIRER, 0},
                 {"links", TARGET_LINKS, 0},             {"primary", TARGET_PRIMARY, 0}};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        size_t n = strlen(forms[i].name);
        if (!forms[i].indexed) {
            if (strcmp(s, forms[i].name) == 0) {
                *target = forms[i].target;
                *index = -1;
                return 0;
            }
            continue;
        }
        if (strncmp(s, forms[i].name, n) != 0)
            continue;
        *target = forms[i].target;
        const char *p = s + n;
        char *end;
        errno = 0;
        long v = (*p >= '0' && *p <= '9') ? strtol(p, &end, 10) : -1;
        if (v < 0 || *end || errno || v > 100000)
            return -2;
        *index = (int)v;
        return 0;
    }
    return -1;
}

static void targets_text(unsigned mask, char *buf, size_t n)
{
    size_t j = 0;
    buf[0] = '\0';
    for (int t = 0; t < NTARGETS; t++) {
        if (!(mask & (1u << t)))
            continue;
        int wr = snprintf(buf + j, n - j, "%s%s", j ? ", " : "", target_names[t]);
        if (wr < 0 || (size_t)wr >= n - j)
            break;
        j += (size_t)wr;
    }
}

/* Cross-field rules of one parsed fault entry. Returns 0 or -1. */
int workload_fault_needs_control(const struct fault_ops *ops, int target)
{
    if (ops && (ops->flags & FAULT_PROXY_ONLY))
        return 0; /* link faults act in the proxy, between the workers and any node */
    switch (target) {
    case TARGET_HOLDER:
    case TARGET_ACQUIRER:
    case TARGET_WORKER:
    case TARGET_RANDOM_WORKER:
    case TARGET_ALL_WORKERS:
        return 0; /* the workers are the harness's own processes */
    default:
        return 1; /* node:N, and any target a later kind adds that is not a worker */
    }
}

static int check_fault(struct loader *L, const struct fault_ops *ops, struct fault_common *c,
                       struct fault_spec *fs, const struct ynode *item, const char *path,
                       struct ydiag *dg)
{
    struct workload *w = L->w;
    char q[64], a[32], b[32], allowed[128];
    int bad = 0;
    const struct ynode *tn = ymap_get(item, "target");
    unsigned mask = ops->targets ? ops->targets : 1u << TARGET_HOLDER;
    targets_text(mask, allowed, sizeof(allowed));
    if (!c->target) {
        for (int t = 0; t < NTARGETS; t++) {
            if (mask & (1u << t)) {
                fs->target = t;
                break;
            }
        }
        if (mask & (1u << TARGET_LINKS))
            fs->target = TARGET_LINKS; /* link faults: the links their keys name */
        fs->target_index = (fs->target == TARGET_WORKER || fs->target == TARGET_NODE) ? 0 : -1;
    } else {
        int r = parse_target(c->target, &fs->target, &fs->target_index);
        if (r == -1) {
            ydiag_at(dg, tn, "%s.target: unknown target '%s'; one of: %s", path,
                     opt_quote(c->target, q, sizeof(q)), allowed);
            return -1;
        }
        if (r == -2) {
            ydiag_at(dg, tn, "%s.target: expected %s:N with N a number, got '%s'", path,
                     fs->target == TARGET_NODE ? "node" : "worker",
                     opt_quote(c->target, q, sizeof(q)));
            return -1;
        }
        if (!(mask & (1u << fs->target))) {
            ydiag_at(dg, tn, "%s.target: fault kind '%s' cannot target %s (it takes: %s)", path,
                     ops->name, target_names[fs->target], allowed);
            return -1;
        }
    }
    if ((mask & (1u << TARGET_LINKS)) && !w->cluster.proxy) {
        ydiag_at(dg, item, "%s: fault kind '%s' acts on proxy links; it needs cluster.proxy: true or auto",
                 path, ops->name);
        bad = 1;
    }
    if (!(w->cluster.backend->caps & BACKEND_CAP_NODE_CONTROL) &&
        workload_fault_needs_control(ops, fs->target)) {
        ydiag_at(dg, tn ? tn : item,
                 "%s: fault kind '%s' needs cluster control; not available with topology %s "
                 "(lockstorm did not start those servers; target workers, or use a link fault)",
                 path, ops->name, w->cluster.backend->name);
        bad = 1;
    }
    if (fs->target == TARGET_WORKER && fs->target_index >= w->workers.count) {
        ydiag_at(dg, tn ? tn : item, "%s.target: worker %d is out of range 0..%lld (workers.count is %lld)",
                 path, fs->target_index, (long long)w->workers.count - 1,
                 (long long)w->workers.count);
        bad = 1;
    }
    if (fs->target == TARGET_NODE && fs->target_index >= w->cluster.nodes) {
        ydiag_at(dg, tn ? tn : item, "%s.target: node %d is out of range 0..%lld (cluster.nodes is %lld)",
                 path, fs->target_index, (long long)w->cluster.nodes - 1,
                 (long long)w->cluster.nodes);
        bad = 1;
    }
    const struct ynode *rn = ymap_get(item, "resource");
    if (c->resource != -1 && fs->target != TARGET_HOLDER && fs->target != TARGET_ACQUIRER) {
        ydiag_at(dg, rn ? rn : item, "%s.resource: only applies with target holder or acquirer",
                 path);
        bad = 1;
    } else if (c->resource >= w->workers.resources) {
        ydiag_at(dg, rn ? rn : item, "%s.resource: %lld is out of range -1..%lld (workers.resources is %lld)",
                 path, (long long)c->resource, (long long)w->workers.resources - 1,
                 (long long)w->workers.resources);
        bad = 1;
    }
    const struct ynode *atn = ymap_get(item, "at");
    if (c->at >= w->duration) {
        ls_format_duration(c->at, a, sizeof(a));
        ls_format_duration(w->duration, b, sizeof(b));
        ydiag_at(dg, atn ? atn : item, "%s.at: %s%s is not before the end of the run (duration %s)",
                 path, a, atn ? "" : " (the default)", b);
        bad = 1;
    }
    const struct ynode *evn = ymap_get(item, "every");
    if (c->every > 0 && c->every < c->duration) {
        ls_format_duration(c->every, a, sizeof(a));
        ls_format_duration(c->duration, b, sizeof(b));
        ydiag_at(dg, evn ? evn : item,
                 "%s.every: %s is shorter than the fault's duration %s; occurrences would overlap",
                 path, a, b);
        bad = 1;
    }
    int64_t min_every = ops->min_every > 0 ? ops->min_every : FAULT_MIN_EVERY;
    if (c->every > 0 && c->every < min_every) {
        ls_format_duration(c->every, a, sizeof(a));
        ls_format_duration(min_every, b, sizeof(b));
        ydiag_at(dg, evn ? evn : item,
                 "%s.every: %s is shorter than %s, the shortest period of a %s fault (what one "
                 "occurrence costs to start)", path, a, b, ops->name);
        bad = 1;
    }
    const struct ynode *cn = ymap_get(item, "count");
    if (c->count > 1 && c->every == 0) {
        ydiag_at(dg, cn ? cn : item, "%s.count: %lld occurrences need 'every' > 0", path,
                 (long long)c->count);
        bad = 1;
    }
    fs->resource = (int)c->resource;
    fs->at = c->at;
    fs->duration = c->duration;
    fs->every = c->every;
    fs->count = c->count;
    return bad ? -1 : 0;
}

static void free_fault_params(struct fault_spec *fs)
{
    if (fs->ops)
        opt_free(fs->ops->options, fs->params);
    free(fs->params);
    fs->params = NULL;
}

/* One faults[] entry into fs. Returns 0 or -1 (errors reported). */
static int parse_fault(struct loader *L, const struct ynode *item, struct fault_spec *fs,
                       const char *path, struct ydiag *dg)
{
    char q[64], names[512];
    memset(fs, 0, sizeof(*fs));
    fs->line = item->line;
    fs->col = item->col;
    fs->target_index = -1;
    fs->resource = -1;
    if (item->kind != YN_MAP) {
        ydiag_at(dg, item, "%s: expected a mapping like {kind: pause, at: 1s, duration: 500ms}, got %s",
                 path, ynode_kind_text(item));
        return -1;
    }
    fault_names(names, sizeof(names));
    const struct ynode *kn = ymap_get(item, "kind");
    if (!kn || kn->kind != YN_SCALAR || ynode_is_null(kn)) {
        ydiag_at(dg, kn ? kn : item, "%s: missing 'kind'; one of: %s", path, names);
        return -1;
    }
    const struct fault_ops *ops = fault_find(kn->text);
    if (!ops) {
        const char *all[64];
        int n = 0;
        const struct fault_ops *const *fa = fault_all();
        for (int i = 0; fa && fa[i] && n < 64; i++)
            all[n++] = fa[i]->name;
        const char *near = opt_nearest(kn->text, all, n);
        char hint[96] = "";
        if (near)
            snprintf(hint, sizeof(hint), " did you mean '%s'?", near);
        ydiag_at(dg, kn, "%s.kind: unknown fault kind '%s';%s valid: %s", path,
                 opt_quote(kn->text, q, sizeof(q)), hint, names);
        return -1;
    }
    if (ops->version != FAULT_OPS_VERSION) {
        ydiag_at(dg, kn, "%s.kind: '%s' implements fault ops version %d, expected %d", path,
                 ops->name, ops->version, FAULT_OPS_VERSION);
        return -1;
    }
    fs->ops = ops;
    if (ops->options)
        fs->params = xcalloc(1, ops->options_size);
    struct fault_common c;
    memset(&c, 0, sizeof(c));
    struct opt_scope sc[3] = {{fault_tab, &c}, {ops->options, fs->params}, {NULL, NULL}};
    int nsc = ops->options ? 2 : 1;
    struct opt_hooks lh, *hp = NULL;
    if (ops->targets & (1u << TARGET_LINKS)) {
        /* link faults also take workers / nodes / isolate / split (harness/links.c) */
        sc[nsc++] = (struct opt_scope){link_target_tab, &fs->links};
        link_target_hooks(&lh, L->w);
        hp = &lh;
    }
    int before = dg->count;
    opt_load_map(sc, nsc, item, item, path, hp, dg);
    int rc = dg->count > before ? -1 : check_fault(L, ops, &c, fs, item, path, dg);
    if (rc == 0 && link_target_check(fs->target, item, path, dg) != 0)
        rc = -1;
    char why[256];
    const char *bad_key = rc == 0 && ops->check_keys ? ops->check_keys(fs, why, sizeof(why)) : NULL;
    if (bad_key) {
        /* the kind's own keys (command: the command, sha, key and error forms) */
        const struct ynode *kn2 = ymap_get(item, bad_key);
        ydiag_at(dg, kn2 ? kn2 : item, "%s.%s: %s", path, bad_key, why);
        rc = -1;
    }
    if (rc == 0 && ops->validate && ops->validate(L->w, fs, why, sizeof(why)) < 0) {
        /* the kind's own cross-key rules (and what the host must offer) */
        if (L->context)
            ydiag_at(dg, item, "%s: %s; in %s, map it: faults: {%s: {skip: REASON}} leaves it "
                               "out (n/a in the table), {key: value} overrides its keys",
                     path, why, L->context, ops->name);
        else
            ydiag_at(dg, item, "%s: %s", path, why);
        rc = -1;
    }
    opt_free(fault_tab, &c);
    return rc;
}

void wl_clear_faults(struct workload *w)
{
    for (int i = 0; i < w->nfaults; i++)
        free_fault_params(&w->faults[i]);
    free(w->faults);
    w->faults = NULL;
    w->nfaults = 0;
}

int wl_parse_faults(struct loader *L, const struct ynode *v, const char *path,
                        struct ydiag *dg)
{
    struct workload *w = L->w;
    char sub[64];
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_SEQ) {
        ydiag_at(dg, v, "%s: expected a list of fault mappings, got %s", path, ynode_kind_text(v));
        return -1;
    }
    wl_clear_faults(w);
    w->faults = xcalloc(v->n, sizeof(*w->faults));
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (i < L->ndrop && L->drop[i])
            continue; /* a compare variant's n/a fault: left out, not parsed */
        snprintf(sub, sizeof(sub), "faults[%zu]", i);
        struct fault_spec *fs = &w->faults[w->nfaults++];
        if (parse_fault(L, v->vals[i], fs, sub, dg) != 0)
            bad = 1;
    }
    return bad ? -1 : 0;
}

int workload_parse_fault(const struct workload *w, const struct ynode *item, struct fault_spec *fs,
                         const char *path, struct ydiag *dg)
{
    /* parse_fault only reads the workload (ranges for targets and times) */
    struct loader L = {(struct workload *)w, NULL, NULL, 0, NULL};
    return parse_fault(&L, item, fs, path, dg);
}

void workload_fault_free(struct fault_spec *fs)
{
    if (fs)
        free_fault_params(fs);
}

/* Cross-field rules of quiet_tail, once everything is loaded: shorter than
 * the run, and no explicit fault's first start inside it (later
 * occurrences of a repeating fault that fall inside it are simply not
 * started). */
void wl_check_quiet_tail(struct loader *L, struct ydiag *dg)
{
    const struct workload *w = L->w;
    char a[32], b[32], c[32];
    if (w->quiet_tail <= 0)
        return;
    const struct ynode *qn = ymap_get(L->root, "quiet_tail");
    ls_format_duration(w->quiet_tail, a, sizeof(a));
    ls_format_duration(w->duration, b, sizeof(b));
    if (w->quiet_tail >= w->duration) {
        ydiag_at(dg, qn ? qn : L->root, "quiet_tail: %s is not shorter than the run (duration %s)", a,
                 b);
        return;
    }
    int64_t tail = w->duration - w->quiet_tail;
    ls_format_duration(tail, c, sizeof(c));
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        if (fs->at < tail)
            continue;
        char at[32];
        ls_format_duration(fs->at, at, sizeof(at));
        ydiag_pos(dg, fs->line, fs->col,
                  "faults[%d].at: %s is inside the quiet tail (quiet_tail %s of a %s run: no fault "
                  "starts after %s)", i, at, a, b, c);
    }
}

int64_t workload_fault_occurrences(const struct workload *w, const struct fault_spec *fs)
{
    int64_t end = w->quiet_tail > 0 && w->quiet_tail < w->duration ? w->duration - w->quiet_tail
                                                                     : w->duration;
    if (fs->at >= end)
        return 0;
    if (fs->every <= 0)
        return 1;
    int64_t n = (end - 1 - fs->at) / fs->every + 1; /* starts at + k * every < end */
    return fs->count > 0 && fs->count < n ? fs->count : n;
}

int64_t workload_explicit_occurrences(const struct workload *w)
{
    int64_t n = 0;
    for (int i = 0; i < w->nfaults; i++)
        n += workload_fault_occurrences(w, &w->faults[i]);
    return n;
}

/* The schedule's bound (faults/fault.h FAULT_MAX_OCCURRENCES), once
 * everything is loaded: the explicit faults' occurrences, counted exactly,
 * plus the nemesis's expected draws. The first fault that crosses the
 * bound is blamed, or the nemesis's interval. */
void wl_check_fault_budget(struct loader *L, struct ydiag *dg)
{
    const struct workload *w = L->w;
    int64_t total = 0;
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        int64_t n = workload_fault_occurrences(w, fs);
        total += n;
        if (total <= FAULT_MAX_OCCURRENCES)
            continue;
        char e[32], d[32];
        ls_format_duration(fs->every, e, sizeof(e));
        ls_format_duration(w->duration, d, sizeof(d));
        char before[64] = "";
        if (total > n)
            snprintf(before, sizeof(before), ", %lld with the faults before it", (long long)total);
        ydiag_pos(dg, fs->line, fs->col,
                  "faults[%d]: every %s in a %s run starts %lld occurrences%s; a run starts at "
                  "most %d (lengthen every, or set count)", i, e, d, (long long)n, before,
                  FAULT_MAX_OCCURRENCES);
        return;
    }
    const struct nemesis_spec *N = &w->nemesis;
    int64_t tail = w->duration - (w->quiet_tail > 0 ? w->quiet_tail : 0);
    if (N->enabled && N->nkinds > 0 && N->interval > 0 && N->start < tail &&
        total + (tail - N->start) / N->interval > FAULT_MAX_OCCURRENCES) {
        const struct ynode *nn = ymap_get(L->root, "nemesis");
        const struct ynode *in = nn ? ymap_get(nn, "interval") : NULL;
        char a[32];
        ls_format_duration(N->interval, a, sizeof(a));
        ydiag_at(dg, in ? in : nn ? nn : L->root,
                 "nemesis.interval: %s would draw about %lld faults besides the %lld of faults:; "
                 "a run starts at most %d (use a longer interval)", a,
                 (long long)((tail - N->start) / N->interval), (long long)total,
                 FAULT_MAX_OCCURRENCES);
    }
}

/* ---- echo ---- */

/* The common keys of a parsed fault, as the fault_common struct the table
 * describes (strings owned by the caller: opt_free(fault_tab, c)). */
static void fault_common_of(const struct fault_spec *fs, struct fault_common *c)
{
    char t[32];
    memset(c, 0, sizeof(*c));
    c->kind = xstrdup(fs->ops ? fs->ops->name : "?");
    if (fs->target == TARGET_WORKER)
        snprintf(t, sizeof(t), "worker:%d", fs->target_index);
    else if (fs->target == TARGET_NODE)
        snprintf(t, sizeof(t), "node:%d", fs->target_index);
    else
        snprintf(t, sizeof(t), "%s", fs->target >= 0 && fs->target < NTARGETS ? target_names[fs->target] : "?");
    c->target = xstrdup(t);
    c->resource = fs->resource;
    c->at = fs->at;
    c->duration = fs->duration;
    c->every = fs->every;
    c->count = fs->count;
}


void workload_faults_to_yaml(const struct fault_spec *fs, int n, int indent, struct strbuf *sb)
{
    for (int i = 0; i < n; i++) {
        struct fault_common c;
        struct strbuf item = STRBUF_INIT;
        fault_common_of(&fs[i], &c);
        opt_to_yaml(fault_tab, &c, indent + 2, NULL, &item);
        if (fs[i].ops && fs[i].params)
            opt_to_yaml(fs[i].ops->options, fs[i].params, indent + 2, NULL, &item);
        if (fs[i].target == TARGET_LINKS)
            link_target_yaml(&fs[i].links, indent + 2, &item);
        opt_free(fault_tab, &c);
        /* "    kind: ..." -> "  - kind: ..." */
        sb_printf(sb, "%*s- ", indent, "");
        sb_puts(sb, sb_cstr(&item) + indent + 2);
        sb_free(&item);
    }
}

struct json *wl_faults_json(const struct workload *w)
{
    struct json *arr = json_new_arr();
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        struct fault_common c;
        fault_common_of(fs, &c);
        struct json *o = opt_to_json(fault_tab, &c, NULL);
        opt_free(fault_tab, &c);
        if (fs->ops && fs->params) {
            struct json *p = opt_to_json(fs->ops->options, fs->params, NULL);
            for (size_t k = 0; k < p->n; k++)
                json_obj_set(o, p->keys[k], json_clone(p->kids[k]));
            json_free(p);
        }
        if (fs->target == TARGET_LINKS)
            link_target_json(&fs->links, o);
        json_arr_push(arr, o);
    }
    return arr;
}

/* ---- reference ---- */

void wl_faults_reference(struct strbuf *sb)
{
    char buf[256];
    sb_puts(sb, "\n## faults\n\n"
                "A list of mappings, each one fault in the schedule. Common keys:\n\n");
    opt_reference(fault_tab, "faults[].", 1, 1, NULL, sb);
    sb_puts(sb, "\nTargets: `holder` (a worker holding a lock at that instant), `acquirer` (the\n"
                "worker that has been inside an acquire call the longest at that instant, e.g.\n"
                "between the two commands of naive-setnx-expire), `worker:N` (N < workers.count),\n"
                "`random-worker`, `all-workers`, `node:N` (N < cluster.nodes), `primary` (the\n"
                "node that is the primary of a replicated set at that instant: kind failover).\n");
    {
        struct opt_hooks lh;
        link_target_hooks(&lh, NULL);
        sb_puts(sb, "\nLink faults (latency, partition, bandwidth, slicer, command; docs/faults.md)\n"
                    "act on proxy links, one per (worker, node) pair. Their default target `links` takes\n"
                    "these keys; `node:N` means every worker's link to node N, and a worker target\n"
                    "means that worker's links to every node:\n\n");
        opt_reference(link_target_tab, "faults[].", 1, 1, &lh, sb);
    }
    const struct fault_ops *const *faults = fault_all();
    for (int i = 0; faults && faults[i]; i++) {
        const struct fault_ops *ops = faults[i];
        targets_text(ops->targets, buf, sizeof(buf));
        sb_printf(sb, "\n### kind `%s`\n\n%s\n\nTargets: %s\n\n", ops->name, ops->help ? ops->help : "",
                  buf[0] ? buf : "holder");
        if (wl_table_empty(ops->options))
            sb_puts(sb, "No kind-specific keys.\n");
        else
            opt_reference(ops->options, "faults[].", 1, 1, NULL, sb);
    }
}
