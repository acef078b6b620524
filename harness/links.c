/*
 * links.c: the link target of link faults (see links.h). The keys:
 *   workers: all | [0, 1]                       (default all)
 *   nodes:   all | minority | majority | [1, 2] (default all)
 *   isolate: node:N                             (every worker cut from N)
 *   split:   [[[workers], [nodes]], ...]        (asymmetric partitions)
 * A fault's links are workers x nodes, or isolate's, or the union of the
 * split pairs. Not here: the rules a fault puts on its links (faults/link.c).
 */
#include "harness/links.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "faults/link_target.h"
#include "model/yamltree.h"
#include "util/strbuf.h"

const struct opt_def link_target_tab[] = {
    {"workers", OPT_CUSTOM, 0, "all", 0, 0, NULL, NULL,
     "target links: `all` or a list of worker numbers; with `nodes`, the links workers x nodes"},
    {"nodes", OPT_CUSTOM, 0, "all", 0, 0, NULL, NULL,
     "target links: `all`, `minority` ((N-1)/2 nodes, N >= 3), `majority` (N/2+1 nodes) "
     "drawn at each start from the seed, or a list of node numbers"},
    {"isolate", OPT_CUSTOM, 0, NULL, 0, 0, NULL, NULL,
     "target links: `node:N` cuts every worker from node N (not with workers, nodes, split)"},
    {"split", OPT_CUSTOM, 0, NULL, 0, 0, NULL, NULL,
     "target links: list of [[workers], [nodes]] pairs, each worker cut from the nodes of its "
     "pair, for asymmetric partitions (not with workers, nodes, isolate)"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static void set_bit(uint64_t *bits, int i)
{
    bits[i / 64] |= 1ull << (i % 64);
}

static int has_bit(const uint64_t *bits, int i)
{
    return (bits[i / 64] >> (i % 64)) & 1;
}

/* One non-negative integer scalar below limit into *out. Returns 0 or -1
 * (reported at the item as "path[i]: ..."). */
static int parse_index(const struct ynode *v, const char *path, size_t i, const char *what,
                       long limit, const char *limit_key, struct ydiag *dg, int *out)
{
    char q[64];
    if (v->kind != YN_SCALAR || ynode_is_null(v)) {
        ydiag_at(dg, v, "%s[%zu]: expected a %s number, got %s", path, i, what,
                 ynode_kind_text(v));
        return -1;
    }
    char *end;
    errno = 0;
    long n = (v->text[0] >= '0' && v->text[0] <= '9') ? strtol(v->text, &end, 10) : -1;
    if (n < 0 || *end || errno) {
        ydiag_at(dg, v, "%s[%zu]: expected a %s number, got '%s'", path, i, what,
                 opt_quote(v->text, q, sizeof(q)));
        return -1;
    }
    if (n >= limit) {
        ydiag_at(dg, v, "%s[%zu]: %s %ld is out of range 0..%ld (%s is %ld)", path, i, what, n,
                 limit - 1, limit_key, limit);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* A list of worker numbers into bits. Returns 0 or -1 (reported). */
static int parse_workers(const struct workload *w, const struct ynode *v, const char *path,
                         struct ydiag *dg, uint64_t *bits)
{
    long limit = (long)w->workers.count < LINK_MAX_WORKERS ? (long)w->workers.count
                                                           : LINK_MAX_WORKERS;
    if (v->kind != YN_SEQ || v->n == 0) {
        ydiag_at(dg, v, "%s: expected a non-empty list of worker numbers like [0, 1], got %s",
                 path, v->kind == YN_SEQ ? "an empty list" : ynode_kind_text(v));
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        int k;
        if (parse_index(v->vals[i], path, i, "worker", limit, "workers.count", dg, &k) != 0)
            bad = 1;
        else
            set_bit(bits, k);
    }
    return bad ? -1 : 0;
}

/* A list of node numbers into *mask. Returns 0 or -1 (reported). */
static int parse_nodes(const struct workload *w, const struct ynode *v, const char *path,
                       struct ydiag *dg, uint32_t *mask)
{
    long limit = (long)w->cluster.nodes < 32 ? (long)w->cluster.nodes : 32;
    if (v->kind != YN_SEQ || v->n == 0) {
        ydiag_at(dg, v, "%s: expected a non-empty list of node numbers like [1, 2], got %s", path,
                 v->kind == YN_SEQ ? "an empty list" : ynode_kind_text(v));
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        int k;
        if (parse_index(v->vals[i], path, i, "node", limit, "cluster.nodes", dg, &k) != 0)
            bad = 1;
        else
            *mask |= 1u << k;
    }
    return bad ? -1 : 0;
}

static int is_word(const struct ynode *v, const char *word)
{
    return v && v->kind == YN_SCALAR && strcmp(v->text, word) == 0;
}

static int parse_split(const struct workload *w, const struct ynode *v, const char *path,
                       struct ydiag *dg, struct link_target *lt)
{
    char sub[300];
    if (v->kind != YN_SEQ || v->n == 0 || v->n > LINK_MAX_GROUPS) {
        ydiag_at(dg, v,
                 "%s: expected a list of 1..%d pairs [[workers...], [nodes...]], e.g. "
                 "[[[0], [3, 4]], [[1], [0, 1]]]; got %s",
                 path, LINK_MAX_GROUPS,
                 v->kind == YN_SEQ ? (v->n ? "too many pairs" : "an empty list")
                                   : ynode_kind_text(v));
        return -1;
    }
    int bad = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct ynode *pair = v->vals[i];
        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
        struct link_group *g = &lt->groups[i];
        memset(g, 0, sizeof(*g));
        if (pair->kind != YN_SEQ || pair->n != 2) {
            ydiag_at(dg, pair, "%s: expected a pair [[workers...], [nodes...]], got %s", sub,
                     pair->kind == YN_SEQ ? "a list that is not a pair" : ynode_kind_text(pair));
            bad = 1;
            continue;
        }
        char wsub[320], nsub[320];
        snprintf(wsub, sizeof(wsub), "%s[0]", sub);
        snprintf(nsub, sizeof(nsub), "%s[1]", sub);
        if (parse_workers(w, pair->vals[0], wsub, dg, g->workers) != 0)
            bad = 1;
        if (parse_nodes(w, pair->vals[1], nsub, dg, &g->nodes) != 0)
            bad = 1;
    }
    lt->ngroups = bad ? 0 : (int)v->n;
    return bad ? -1 : 0;
}

/* opt_hooks.parse for link_target_tab; ctx is the workload being loaded. */
static int link_parse(void *ctx, const struct opt_def *d, void *base, const struct ynode *v,
                      const struct ynode *where, const char *path, struct ydiag *dg)
{
    const struct workload *w = ctx;
    struct link_target *lt = base;
    char q[64];
    (void)where;
    if (strcmp(d->name, "workers") == 0) {
        memset(lt->grid.workers, 0, sizeof(lt->grid.workers));
        lt->some_workers = 0;
        if (!v || is_word(v, "all"))
            return 0;
        if (v->kind == YN_SCALAR) {
            ydiag_at(dg, v, "%s: expected `all` or a list of worker numbers like [0, 1], got '%s'",
                     path, opt_quote(v->text, q, sizeof(q)));
            return -1;
        }
        lt->some_workers = 1;
        return parse_workers(w, v, path, dg, lt->grid.workers);
    }
    if (strcmp(d->name, "nodes") == 0) {
        lt->grid.nodes = 0;
        lt->nodes_sel = LINK_NODES_ALL;
        if (!v || is_word(v, "all"))
            return 0;
        if (is_word(v, "minority") || is_word(v, "majority")) {
            int minority = is_word(v, "minority");
            if (minority && w->cluster.nodes < 3) {
                ydiag_at(dg, v,
                         "%s: minority needs cluster.nodes >= 3 (a minority of %lld node%s is no "
                         "node); use a list of nodes",
                         path, (long long)w->cluster.nodes, w->cluster.nodes == 1 ? "" : "s");
                return -1;
            }
            lt->nodes_sel = minority ? LINK_NODES_MINORITY : LINK_NODES_MAJORITY;
            return 0;
        }
        if (v->kind == YN_SCALAR) {
            ydiag_at(dg, v,
                     "%s: expected all, minority, majority or a list of node numbers like [1, 2], "
                     "got '%s'",
                     path, opt_quote(v->text, q, sizeof(q)));
            return -1;
        }
        lt->nodes_sel = LINK_NODES_LIST;
        return parse_nodes(w, v, path, dg, &lt->grid.nodes);
    }
    if (strcmp(d->name, "isolate") == 0) {
        lt->isolating = 0;
        lt->isolate_node = 0;
        if (!v)
            return 0;
        const char *t = v->kind == YN_SCALAR ? v->text : "";
        char *end;
        errno = 0;
        long n = (strncmp(t, "node:", 5) == 0 && t[5] >= '0' && t[5] <= '9')
                     ? strtol(t + 5, &end, 10)
                     : -1;
        if (n < 0 || *end || errno) {
            ydiag_at(dg, v, "%s: expected node:N, got %s%s%s", path,
                     v->kind == YN_SCALAR ? "'" : "",
                     v->kind == YN_SCALAR ? opt_quote(t, q, sizeof(q)) : ynode_kind_text(v),
                     v->kind == YN_SCALAR ? "'" : "");
            return -1;
        }
        if (n >= w->cluster.nodes || n >= 32) {
            ydiag_at(dg, v, "%s: node %ld is out of range 0..%lld (cluster.nodes is %lld)", path, n,
                     (long long)w->cluster.nodes - 1, (long long)w->cluster.nodes);
            return -1;
        }
        lt->isolating = 1;
        lt->isolate_node = (int)n;
        return 0;
    }
    if (strcmp(d->name, "split") == 0) {
        lt->ngroups = 0;
        if (!v)
            return 0;
        return parse_split(w, v, path, dg, lt);
    }
    ydiag_at(dg, v ? v : where, "%s: internal: no parser for this key", path);
    return -1;
}

static const char *link_type(void *ctx, const struct opt_def *d)
{
    (void)ctx;
    if (strcmp(d->name, "workers") == 0)
        return "all or list of int";
    if (strcmp(d->name, "nodes") == 0)
        return "all, minority, majority or list of int";
    if (strcmp(d->name, "isolate") == 0)
        return "node:N";
    return "list of [[int...], [int...]]";
}

void link_target_hooks(struct opt_hooks *h, const struct workload *w)
{
    memset(h, 0, sizeof(*h));
    h->ctx = (void *)w;
    h->parse = link_parse;
    h->type_text = link_type;
}

int link_target_check(int target, const struct ynode *item, const char *path, struct ydiag *dg)
{
    const struct ynode *wk = ymap_get(item, "workers"), *nd = ymap_get(item, "nodes");
    const struct ynode *iso = ymap_get(item, "isolate"), *sp = ymap_get(item, "split");
    const struct ynode *any = wk ? wk : nd ? nd : iso ? iso : sp;
    if (any && target != TARGET_LINKS) {
        ydiag_at(dg, any,
                 "%s: workers, nodes, isolate and split name links and need target links (the "
                 "default); drop the target key or these keys",
                 path);
        return -1;
    }
    if (iso && (wk || nd || sp)) {
        ydiag_at(dg, iso, "%s.isolate: cannot be combined with %s (isolate: node:N already means "
                 "every worker x node N)", path, wk ? "workers" : nd ? "nodes" : "split");
        return -1;
    }
    if (sp && (wk || nd)) {
        ydiag_at(dg, sp, "%s.split: cannot be combined with %s (each pair names its own workers "
                 "and nodes)", path, wk ? "workers" : "nodes");
        return -1;
    }
    return 0;
}

/* "[0, 1, 2]" of the set bits below limit. */
static void bits_flow(struct strbuf *sb, const uint64_t *bits, int limit)
{
    int first = 1;
    sb_putc(sb, '[');
    for (int i = 0; i < limit; i++) {
        if (has_bit(bits, i)) {
            sb_printf(sb, "%s%d", first ? "" : ", ", i);
            first = 0;
        }
    }
    sb_putc(sb, ']');
}

static void nodes_flow(struct strbuf *sb, uint32_t mask)
{
    uint64_t bits[1] = {mask};
    bits_flow(sb, bits, 32);
}

void link_target_yaml(const struct link_target *lt, int indent, struct strbuf *sb)
{
    if (lt->isolating) {
        sb_printf(sb, "%*sisolate: node:%d\n", indent, "", lt->isolate_node);
        return;
    }
    if (lt->ngroups) {
        sb_printf(sb, "%*ssplit: [", indent, "");
        for (int i = 0; i < lt->ngroups; i++) {
            sb_puts(sb, i ? ", [" : "[");
            bits_flow(sb, lt->groups[i].workers, LINK_MAX_WORKERS);
            sb_puts(sb, ", ");
            nodes_flow(sb, lt->groups[i].nodes);
            sb_putc(sb, ']');
        }
        sb_puts(sb, "]\n");
        return;
    }
    sb_printf(sb, "%*sworkers: ", indent, "");
    if (lt->some_workers)
        bits_flow(sb, lt->grid.workers, LINK_MAX_WORKERS);
    else
        sb_puts(sb, "all");
    sb_printf(sb, "\n%*snodes: ", indent, "");
    if (lt->nodes_sel == LINK_NODES_LIST)
        nodes_flow(sb, lt->grid.nodes);
    else
        sb_puts(sb, link_nodes_word(lt->nodes_sel));
    sb_putc(sb, '\n');
}

static struct json *bits_json(const uint64_t *bits, int limit)
{
    struct json *a = json_new_arr();
    for (int i = 0; i < limit; i++)
        if (has_bit(bits, i))
            json_arr_push(a, json_new_int(i));
    return a;
}

static struct json *nodes_json(uint32_t mask)
{
    uint64_t bits[1] = {mask};
    return bits_json(bits, 32);
}

void link_target_json(const struct link_target *lt, struct json *obj)
{
    char t[32];
    if (lt->isolating) {
        snprintf(t, sizeof(t), "node:%d", lt->isolate_node);
        json_obj_set_str(obj, "isolate", t);
        return;
    }
    if (lt->ngroups) {
        struct json *s = json_obj_set(obj, "split", json_new_arr());
        for (int i = 0; i < lt->ngroups; i++) {
            struct json *p = json_arr_push(s, json_new_arr());
            json_arr_push(p, bits_json(lt->groups[i].workers, LINK_MAX_WORKERS));
            json_arr_push(p, nodes_json(lt->groups[i].nodes));
        }
        return;
    }
    json_obj_set(obj, "workers",
                 lt->some_workers ? bits_json(lt->grid.workers, LINK_MAX_WORKERS)
                                  : json_new_str("all"));
    json_obj_set(obj, "nodes", lt->nodes_sel == LINK_NODES_LIST
                                   ? nodes_json(lt->grid.nodes)
                                   : json_new_str(link_nodes_word(lt->nodes_sel)));
}
