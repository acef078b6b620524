/*
 * matrix.c: the `compare:` block of a workload and the runs it makes (see
 * matrix.h). A variant becomes --set overrides on top of the workload file
 * (its `lock:` as flow YAML, its `cluster:`, `set:` and fault overrides as
 * keys) plus the faults[] entries it leaves out (`skip:`, n/a in the
 * table). Every variant is loaded before the first run; the runs are
 * sequential, in-process (run_workload), with SIGINT/SIGTERM held between
 * them so that an interrupt stops the matrix after the run it lands in.
 */
#include "harness/matrix.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model/options.h"
#include "model/yamltree.h"
#include "harness/childrun.h"
#include "harness/compare_model.h"
#include "reports/compare.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define MAX_VARIANTS 32
#define MAX_VARIANT_SETS 64

/* ---- YAML flow text of a node (the values of the overrides) ---- */

/* A plain scalar that reads back as itself inside flow YAML. */
static int flow_safe(const struct ynode *n)
{
    if (!n->plain || n->len == 0)
        return 0;
    if (strchr("-?:", n->text[0]) && (n->len == 1 || n->text[1] == ' '))
        return 0;
    for (size_t i = 0; i < n->len; i++) {
        char ch = n->text[i];
        if (strchr(",[]{}#&*!|>'\"%@`\n\t", ch))
            return 0;
        if (ch == ':' && (i + 1 == n->len || n->text[i + 1] == ' '))
            return 0;
    }
    return 1;
}

/* Contract: n as YAML flow text appended to sb (quoted scalars double-
 * quoted, so a value keeps its plain/quoted reading). */
static void flow(const struct ynode *n, struct strbuf *sb)
{
    if (!n) {
        sb_puts(sb, "~");
        return;
    }
    switch (n->kind) {
    case YN_SCALAR:
        if (flow_safe(n))
            sb_append(sb, n->text, n->len);
        else
            sb_json_str(sb, n->text, n->len); /* a JSON string is a YAML double-quoted one */
        return;
    case YN_MAP:
        sb_putc(sb, '{');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                sb_puts(sb, ", ");
            flow(n->keys[i], sb);
            sb_puts(sb, ": ");
            flow(n->vals[i], sb);
        }
        sb_putc(sb, '}');
        return;
    case YN_SEQ:
        sb_putc(sb, '[');
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                sb_puts(sb, ", ");
            flow(n->vals[i], sb);
        }
        sb_putc(sb, ']');
        return;
    }
}

/* "key=value" for --set: a plain scalar as it is, anything else as flow
 * YAML (ytree_apply_set parses a value starting with { [ " as YAML). */
static char *set_text(const char *key, const struct ynode *v)
{
    struct strbuf sb = STRBUF_INIT;
    sb_printf(&sb, "%s=", key);
    if (v && v->kind == YN_SCALAR && v->plain && v->len > 0 && !strchr("{[\"'", v->text[0]))
        sb_append(&sb, v->text, v->len);
    else
        flow(v, &sb);
    return sb_steal(&sb);
}

/* ---- loading ---- */

/* Append override s (taken over) to cv. */
static void add_set(struct compare_variant *cv, char *s)
{
    cv->sets = xrealloc(cv->sets, (size_t)(cv->nsets + 1) * sizeof(*cv->sets));
    cv->sets[cv->nsets++] = s;
}

static const char *const variant_keys[] = {"name", "lock", "cluster", "set", "faults"};
#define NVARIANT_KEYS 5

/* ---- a variant's fault mapping ---- */

/* The kind of faults[] entry e ("" when it has none). */
static const char *entry_kind(const struct ynode *e)
{
    const struct ynode *k = e && e->kind == YN_MAP ? ymap_get(e, "kind") : NULL;
    return k && k->kind == YN_SCALAR ? k->text : "";
}

/* Contract: the faults[] entries key names: a kind (every entry of it) or
 * an index N; into hit[0..list->n). Returns how many, 0 when none (with
 * the error reported at key). */
static int mapped_entries(const struct ynode *list, const struct ynode *key, const char *path,
                          unsigned char *hit, struct ydiag *dg)
{
    char q[64], kinds[256] = "";
    const char *names[64];
    int nnames = 0, n = 0;
    size_t nl = list ? list->n : 0;
    int digits = key->len > 0 && strspn(key->text, "0123456789") == key->len;
    for (size_t i = 0; i < nl; i++) {
        const char *k = entry_kind(list->vals[i]);
        int match = digits ? strtoul(key->text, NULL, 10) == i : strcmp(k, key->text) == 0;
        hit[i] = (unsigned char)match;
        n += match;
        int seen = !k[0];
        for (int j = 0; j < nnames && !seen; j++)
            seen = strcmp(names[j], k) == 0;
        if (!seen && nnames < 64) {
            size_t l = strlen(kinds);
            snprintf(kinds + l, sizeof(kinds) - l, "%s%s", nnames ? ", " : "", k);
            names[nnames++] = k;
        }
    }
    if (n > 0)
        return n;
    if (digits) {
        ydiag_at(dg, key, "%s: faults[%s] does not exist (the workload's faults: list has %zu "
                          "entr%s); name an entry by its index 0..%zu or by its kind",
                 path, opt_quote(key->text, q, sizeof(q)), nl, nl == 1 ? "y" : "ies",
                 nl ? nl - 1 : 0);
    } else {
        const char *near = opt_nearest(key->text, names, nnames);
        ydiag_at(dg, key, "%s: no faults[] entry has kind '%s';%s%s%s name a kind of the "
                          "workload's faults (%s) or an entry's index",
                 path, opt_quote(key->text, q, sizeof(q)), near ? " did you mean '" : "",
                 near ? near : "", near ? "'?" : "", kinds[0] ? kinds : "none");
    }
    return 0;
}

/* Contract: the variant's `faults:` mapping (fm) against the workload's
 * faults list: {skip: REASON} leaves the entries out (cv->skips, shown as
 * n/a), any other mapping overrides their keys (sets faults[i].key=value).
 * Returns 0 or -1 (reported). */
static int parse_fault_map(const struct ynode *root, const struct ynode *fm,
                           struct compare_variant *cv, const char *path, struct ydiag *dg)
{
    char sub[160];
    const struct ynode *list = root ? ymap_get(root, "faults") : NULL;
    if (list && list->kind != YN_SEQ)
        list = NULL; /* reported by the faults: parser */
    if (fm->kind != YN_MAP) {
        ydiag_at(dg, fm, "%s.faults: expected a mapping fault kind (or index) -> {skip: REASON} "
                         "or {key: value, ...}, got %s", path, ynode_kind_text(fm));
        return -1;
    }
    size_t nl = list ? list->n : 0;
    unsigned char *hit = xcalloc(nl ? nl : 1, 1), *done = xcalloc(nl ? nl : 1, 1);
    int bad = 0;
    for (size_t i = 0; i < fm->n; i++) {
        const struct ynode *key = fm->keys[i], *val = fm->vals[i];
        snprintf(sub, sizeof(sub), "%s.faults.%s", path, key->text);
        if (mapped_entries(list, key, sub, hit, dg) == 0) {
            bad = 1;
            continue;
        }
        if (val->kind != YN_MAP || val->n == 0) {
            ydiag_at(dg, val, "%s: expected {skip: REASON} (the fault does not apply: n/a) or a "
                              "mapping of fault keys to override, got %s",
                     sub, val->kind == YN_MAP ? "an empty mapping" : ynode_kind_text(val));
            bad = 1;
            continue;
        }
        const struct ynode *skip = ymap_get(val, "skip");
        if (skip && val->n > 1) {
            ydiag_at(dg, val, "%s: skip leaves the fault out; it takes no other keys", sub);
            bad = 1;
            continue;
        }
        if (skip && (skip->kind != YN_SCALAR || ynode_is_null(skip) || skip->len == 0)) {
            ydiag_at(dg, skip, "%s.skip: expected the reason the fault does not apply (shown "
                               "with n/a in the table), e.g. skip: \"no replica to promote\"",
                     sub);
            bad = 1;
            continue;
        }
        if (!skip && ymap_get(val, "kind")) {
            ydiag_at(dg, ymap_get(val, "kind"), "%s.kind: a variant cannot change a fault's "
                     "kind (the table has one column group per kind); skip it and give the "
                     "variant's own entry in set:", sub);
            bad = 1;
            continue;
        }
        for (size_t e = 0; e < nl; e++) {
            if (!hit[e])
                continue;
            if (done[e]) {
                ydiag_at(dg, key, "%s: faults[%zu] is already mapped by another key of %s.faults",
                         sub, e, path);
                bad = 1;
                continue;
            }
            done[e] = 1;
            if (skip) {
                cv->skips = xrealloc(cv->skips, (size_t)(cv->nskips + 1) * sizeof(*cv->skips));
                struct compare_skip *k = &cv->skips[cv->nskips++];
                k->index = (int)e;
                k->kind = xstrdup(entry_kind(list->vals[e]));
                k->reason = xstrdup(skip->text);
                continue;
            }
            for (size_t j = 0; j < val->n; j++) {
                char key2[200];
                snprintf(key2, sizeof(key2), "faults[%zu].%s", e, val->keys[j]->text);
                add_set(cv, set_text(key2, val->vals[j]));
            }
        }
    }
    free(hit);
    free(done);
    return bad ? -1 : 0;
}

/* Contract: one variant mapping into cv. Returns 0 or -1 (reported). */
static int parse_variant(const struct compare_spec *c, const struct ynode *root,
                         const struct ynode *item, struct compare_variant *cv, const char *path,
                         struct ydiag *dg)
{
    char q[64];
    int bad = 0;
    cv->line = item->line;
    cv->col = item->col;
    if (item->kind != YN_MAP) {
        ydiag_at(dg, item, "%s: expected a mapping like {name: redlock-3, lock: {impl: redlock}, "
                           "cluster: {nodes: 3}}, got %s", path, ynode_kind_text(item));
        return -1;
    }
    for (size_t i = 0; i < item->n; i++) {
        const char *k = item->keys[i]->text;
        int known = 0;
        for (size_t j = 0; j < sizeof(variant_keys) / sizeof(variant_keys[0]); j++)
            known |= strcmp(k, variant_keys[j]) == 0;
        if (!known) {
            const char *near = opt_nearest(k, variant_keys, NVARIANT_KEYS);
            ydiag_at(dg, item->keys[i], "%s: unknown key '%s';%s%s%s valid: name, lock, cluster, "
                                        "set, faults",
                     path, opt_quote(k, q, sizeof(q)), near ? " did you mean '" : "",
                     near ? near : "", near ? "'?" : "");
            bad = 1;
        }
    }
    const struct ynode *nm = ymap_get(item, "name");
    if (!nm || nm->kind != YN_SCALAR || ynode_is_null(nm) || !workload_valid_name(nm->text)) {
        ydiag_at(dg, nm ? nm : item, "%s.name: %s; 1-64 of A-Z a-z 0-9 . _ - not starting with "
                                     "'.' (it names the variant's run directory)",
                 path, nm ? "not a valid name" : "missing");
        return -1;
    }
    for (int i = 0; i < c->n; i++) {
        if (strcmp(c->v[i].name, nm->text) == 0) {
            ydiag_at(dg, nm, "%s.name: '%s' is already the name of compare[%d]", path, nm->text, i);
            return -1;
        }
    }
    cv->name = xstrdup(nm->text);
    const struct ynode *lk = ymap_get(item, "lock");
    if (lk) {
        if (lk->kind != YN_MAP) {
            ydiag_at(dg, lk, "%s.lock: expected a lock section mapping (it replaces the "
                             "workload's lock:), got %s", path, ynode_kind_text(lk));
            bad = 1;
        } else {
            add_set(cv, set_text("lock", lk));
        }
    }
    const struct ynode *cl = ymap_get(item, "cluster");
    if (cl) {
        if (cl->kind != YN_MAP) {
            ydiag_at(dg, cl, "%s.cluster: expected a mapping of cluster keys (each overrides "
                             "that key), got %s", path, ynode_kind_text(cl));
            bad = 1;
        }
        for (size_t i = 0; cl->kind == YN_MAP && i < cl->n; i++) {
            char key[160];
            snprintf(key, sizeof(key), "cluster.%s", cl->keys[i]->text);
            add_set(cv, set_text(key, cl->vals[i]));
        }
    }
    const struct ynode *st = ymap_get(item, "set");
    if (st && st->kind == YN_MAP) {
        for (size_t i = 0; i < st->n; i++)
            add_set(cv, set_text(st->keys[i]->text, st->vals[i]));
    } else if (st && st->kind == YN_SEQ) {
        for (size_t i = 0; i < st->n; i++) {
            const struct ynode *e = st->vals[i];
            if (e->kind != YN_SCALAR || !strchr(e->text, '=')) {
                ydiag_at(dg, e, "%s.set[%zu]: expected \"key.path=value\"", path, i);
                bad = 1;
                continue;
            }
            add_set(cv, xstrdup(e->text));
        }
    } else if (st && !ynode_is_null(st)) {
        ydiag_at(dg, st, "%s.set: expected a mapping key.path -> value (or a list of "
                         "\"key.path=value\"), got %s", path, ynode_kind_text(st));
        bad = 1;
    }
    const struct ynode *fm = ymap_get(item, "faults");
    if (fm && !ynode_is_null(fm) && parse_fault_map(root, fm, cv, path, dg) != 0)
        bad = 1;
    if (cv->nsets > MAX_VARIANT_SETS) {
        ydiag_at(dg, item, "%s: more than %d overrides", path, MAX_VARIANT_SETS);
        bad = 1;
    }
    return bad ? -1 : 0;
}

/* Free what variant cv owns (not cv itself). */
static void variant_free(struct compare_variant *cv)
{
    for (int k = 0; k < cv->nsets; k++)
        free(cv->sets[k]);
    free(cv->sets);
    for (int k = 0; k < cv->nskips; k++) {
        free(cv->skips[k].kind);
        free(cv->skips[k].reason);
    }
    free(cv->skips);
    free(cv->name);
}

void compare_free(struct compare_spec *c)
{
    for (int i = 0; c && i < c->n; i++)
        variant_free(&c->v[i]);
    if (c) {
        free(c->v);
        c->v = NULL;
        c->n = 0;
    }
}

int compare_parse(struct compare_spec *c, const struct ynode *v, const struct ynode *root,
                  const char *path, struct ydiag *dg)
{
    compare_free(c);
    if (!v || ynode_is_null(v))
        return 0;
    if (v->kind != YN_SEQ || v->n == 0) {
        ydiag_at(dg, v, "%s: expected a list of variants like [{name: single, lock: {impl: "
                        "redis-single}}, {name: redlock-3, lock: {impl: redlock}, cluster: "
                        "{nodes: 3}}], got %s", path,
                 v->kind == YN_SEQ ? "an empty list" : ynode_kind_text(v));
        return -1;
    }
    if (v->n > MAX_VARIANTS) {
        ydiag_at(dg, v, "%s: %zu variants; at most %d", path, v->n, MAX_VARIANTS);
        return -1;
    }
    c->v = xcalloc(v->n, sizeof(*c->v));
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        char sub[64];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        struct compare_variant cv;
        memset(&cv, 0, sizeof(cv));
        if (parse_variant(c, root, v->vals[i], &cv, sub, dg) != 0) {
            variant_free(&cv);
            bad = 1;
            continue;
        }
        c->v[c->n++] = cv;
    }
    return bad ? -1 : 0;
}

void compare_echo_yaml(const struct compare_spec *c, int indent, struct strbuf *sb)
{
    if (!c || c->n == 0) {
        sb_puts(sb, " ~\n");
        return;
    }
    sb_putc(sb, '\n');
    for (int i = 0; i < c->n; i++) {
        sb_printf(sb, "%*s- name: %s\n", indent + 2, "", c->v[i].name);
        sb_printf(sb, "%*sset: [", indent + 4, "");
        for (int k = 0; k < c->v[i].nsets; k++) {
            if (k)
                sb_puts(sb, ", ");
            sb_json_str(sb, c->v[i].sets[k], strlen(c->v[i].sets[k]));
        }
        sb_puts(sb, "]\n");
        if (c->v[i].nskips == 0)
            continue;
        sb_printf(sb, "%*sfaults:\n", indent + 4, "");
        for (int k = 0; k < c->v[i].nskips; k++) {
            sb_printf(sb, "%*s%d: {skip: ", indent + 6, "", c->v[i].skips[k].index);
            sb_json_str(sb, c->v[i].skips[k].reason, strlen(c->v[i].skips[k].reason));
            sb_puts(sb, "}\n");
        }
    }
}

struct json *compare_echo_json(const struct compare_spec *c)
{
    if (!c || c->n == 0)
        return json_new_null();
    struct json *a = json_new_arr();
    for (int i = 0; i < c->n; i++) {
        struct json *o = json_arr_push(a, json_new_obj());
        json_obj_set_str(o, "name", c->v[i].name);
        struct json *s = json_obj_set(o, "set", json_new_arr());
        for (int k = 0; k < c->v[i].nsets; k++)
            json_arr_push(s, json_new_str(c->v[i].sets[k]));
        if (c->v[i].nskips == 0)
            continue;
        struct json *fm = json_obj_set(o, "faults", json_new_obj());
        for (int k = 0; k < c->v[i].nskips; k++) {
            char key[16];
            snprintf(key, sizeof(key), "%d", c->v[i].skips[k].index);
            json_obj_set_str(json_obj_set(fm, key, json_new_obj()), "skip",
                             c->v[i].skips[k].reason);
        }
    }
    return a;
}

/* ---- running ---- */

/* Contract: load variant cv of the workload at path: its overrides, then
 * the command line's, then compare=~ (a variant is a plain workload).
 * Returns 0 with *out set or a loader error (reported on errlog). */
static int load_variant(const struct workload *base, const struct compare_variant *cv,
                        const char *const *sets, int nsets, FILE *errlog, struct workload **out,
                        struct ls_err *err)
{
    const char *all[MAX_VARIANT_SETS + 300];
    int n = 0;
    for (int i = 0; i < cv->nsets && n < MAX_VARIANT_SETS; i++)
        all[n++] = cv->sets[i];
    for (int i = 0; i < nsets && n < MAX_VARIANT_SETS + 290; i++)
        all[n++] = sets[i];
    all[n++] = "compare=~";
    size_t ndrop = 0;
    for (int k = 0; k < cv->nskips; k++)
        if ((size_t)cv->skips[k].index + 1 > ndrop)
            ndrop = (size_t)cv->skips[k].index + 1;
    unsigned char *drop = xcalloc(ndrop ? ndrop : 1, 1);
    for (int k = 0; k < cv->nskips; k++)
        drop[cv->skips[k].index] = 1;
    char context[160];
    snprintf(context, sizeof(context), "compare variant '%s' (line %d)", cv->name, cv->line);
    struct ls_err e = {0};
    int rc = workload_load_variant(base, all, n, drop, ndrop, context, out, errlog, &e);
    free(drop);
    if (rc < 0)
        ls_err_set(err, rc, "compare variant '%s': %s", cv->name, e.msg);
    return rc;
}

int matrix_validate(const char *path, const char *const *sets, int nsets, const struct workload *w,
                    FILE *errlog, struct ls_err *err)
{
    int rc = 0;
    for (int i = 0; i < w->compare.n; i++) {
        struct workload *wv = NULL;
        int r = load_variant(w, &w->compare.v[i], sets, nsets, errlog, &wv, err);
        if (r < 0 && rc == 0)
            rc = r;
        workload_free(wv);
    }
    return rc;
}

void matrix_result_free(struct matrix_result *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n; i++) {
        free(m->dirs[i]);
        json_free(m->results[i]);
    }
    free(m->dirs);
    free(m->results);
    free(m->parent);
    json_free(m->table);
    memset(m, 0, sizeof(*m));
}

/* Contract: create the parent directory (o->out, else runs/NAME-UTC,
 * numbered when taken); *out owned by the caller. */
static int make_parent(const struct workload *w, const struct run_opts *o, char **out,
                       struct ls_err *err)
{
    char dir[2048];
    if (o->out) {
        snprintf(dir, sizeof(dir), "%s", o->out);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
            return ls_err_errno(err, LS_EIO, errno, "create %s", dir);
    } else {
        if (mkdir("runs", 0755) < 0 && errno != EEXIST)
            return ls_err_errno(err, LS_EIO, errno, "create runs/ in the current directory");
        char ts[32];
        ls_format_utc(ls_realtime_ns(), 1, ts, sizeof(ts));
        int made = 0;
        for (int k = 1; k < 1000 && !made; k++) {
            if (k == 1)
                snprintf(dir, sizeof(dir), "runs/%s-%s", w->name, ts);
            else
                snprintf(dir, sizeof(dir), "runs/%s-%s-%d", w->name, ts, k);
            if (mkdir(dir, 0755) == 0)
                made = 1;
            else if (errno != EEXIST)
                return ls_err_errno(err, LS_EIO, errno, "create %s", dir);
        }
    }
    *out = xstrdup(dir);
    return 0;
}

int matrix_run(const char *path, const char *const *sets, int nsets, const struct workload *w,
               const struct run_opts *o, FILE *errlog, struct matrix_result *out,
               struct ls_err *err)
{
    memset(out, 0, sizeof(*out));
    int nv = w->compare.n;
    struct workload **wv = xcalloc((size_t)nv, sizeof(*wv));
    int rc = 0;
    for (int i = 0; i < nv; i++) { /* every variant loads, or nothing runs */
        int r = load_variant(w, &w->compare.v[i], sets, nsets, errlog, &wv[i], err);
        if (r < 0 && rc == 0)
            rc = r;
    }
    if (rc == 0)
        rc = make_parent(w, o, &out->parent, err);
    if (rc < 0)
        goto done;
    out->dirs = xcalloc((size_t)nv, sizeof(*out->dirs));
    out->results = xcalloc((size_t)nv, sizeof(*out->results));

    /* an interrupt between two runs stops the matrix (inside a run it
     * winds that run down, and the matrix stops after it) */
    sigset_t sigs, old;
    childrun_stop_signals(&sigs);
    sigprocmask(SIG_BLOCK, &sigs, &old);
    for (int i = 0; i < nv; i++) {
        struct timespec zero = {0, 0};
        if (sigtimedwait(&sigs, NULL, &zero) > 0) {
            out->interrupted = 1;
            break;
        }
        char dir[2200];
        snprintf(dir, sizeof(dir), "%s/%s", out->parent, w->compare.v[i].name);
        if (!o->quiet)
            fprintf(stderr, "lockstorm: compare %d/%d: %s -> %s\n", i + 1, nv,
                    w->compare.v[i].name, dir);
        struct run_opts ro = *o;
        ro.out = dir;
        ro.replay = NULL;
        char *rdir = NULL;
        struct json *res = NULL;
        int r = run_workload(wv[i], &ro, &res, &rdir, err);
        out->dirs[out->n] = rdir ? rdir : xstrdup(dir);
        out->results[out->n] = res;
        out->n++;
        if (r < 0) {
            rc = r;
            break;
        }
        const struct json *intr = json_obj_get(res, "interrupted");
        if (intr && intr->type == JSON_BOOL && intr->i) {
            out->interrupted = 1;
            break;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);

    if (out->n > 0) {
        struct ls_err e2 = {0};
        const char *labels[MAX_VARIANTS], *dirs[MAX_VARIANTS];
        struct compare_na *na = NULL;
        int ran = 0, nna = 0;
        for (int i = 0; i < out->n; i++) {
            if (!out->results[i])
                continue;
            const struct compare_variant *cv = &w->compare.v[i];
            for (int k = 0; k < cv->nskips; k++) { /* its left-out faults: n/a */
                na = xrealloc(na, (size_t)(nna + 1) * sizeof(*na));
                na[nna++] = (struct compare_na){ran, cv->skips[k].kind, cv->skips[k].reason};
            }
            dirs[ran] = out->dirs[i];
            labels[ran] = cv->name;
            ran++;
        }
        int built = ran > 0 && compare_build_na(dirs, ran, labels, na, nna, &out->table, &e2) == 0;
        free(na);
        if (built) {
            if (compare_write_files(out->parent, out->table, o->formats, &e2) < 0)
                fprintf(stderr, "lockstorm: warning: %s\n", e2.msg);
        } else if (ran > 0 && rc == 0) {
            rc = ls_err_set(err, e2.code, "%s", e2.msg);
        }
    }
done:
    for (int i = 0; i < nv; i++)
        workload_free(wv[i]);
    free(wv);
    return rc;
}
