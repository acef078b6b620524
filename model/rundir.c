/*
 * rundir.c: the resolved workload of a run directory as the checkers read
 * it (see rundir.h). Each key is parsed by the options machinery with the
 * type, range and default the loader's tables give it (harness/workload.c,
 * harness/jobs.c, harness/workload_faults.c, faults/nemesis.c), so a value
 * reads back as the run used it; keys this reader does not need are left
 * alone rather than checked.
 */
#include "model/rundir.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/jobs.h"
#include "model/options.h"
#include "model/yamltree.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define NS_MS 1e6
#define NS_S 1e9
#define NS_H 3600e9
#define RUNDIR_MAX_FILE (1 << 20)

#define WOFF(m) offsetof(struct workload, m)
static const char *const stuck_after_words[] = {"auto", NULL};
static const char *const worker_mode_choices[] = {"locks", "jobs", NULL};

/* The keys read, each with the loader's type, range and default. */
struct key {
    const char *section; /* NULL: top level */
    struct opt_def d;
};
static const struct key keys[] = {
    {NULL, {"duration", OPT_DURATION, WOFF(duration), "10s", 100 * NS_MS, 24 * NS_H, NULL, NULL,
            NULL}},
    {NULL, {"quiet_tail", OPT_DURATION, WOFF(quiet_tail), "0", 0, 24 * NS_H, NULL, NULL, NULL}},
    {"lock", {"ttl", OPT_DURATION, WOFF(lock.ttl), "1s", NS_MS, NS_H, NULL, NULL, NULL}},
    {"lock", {"fencing", OPT_BOOL, WOFF(lock.fencing), "true", 0, 0, NULL, NULL, NULL}},
    {"workers", {"count", OPT_INT, WOFF(workers.count), "6", 1, 1024, NULL, NULL, NULL}},
    {"workers", {"resources", OPT_INT, WOFF(workers.resources), "2", 1, 4096, NULL, NULL, NULL}},
    {"workers", {"hold", OPT_DIST, WOFF(workers.hold), "{dist: uniform, min: 20ms, max: 80ms}", 0,
                 NS_H, NULL, NULL, NULL}},
    {"workers", {"think", OPT_DIST, WOFF(workers.think), "{dist: fixed, value: 5ms}", 0, NS_H,
                 NULL, NULL, NULL}},
    {"workers", {"mode", OPT_ENUM, WOFF(workers.mode), "locks", 0, 0, worker_mode_choices, NULL,
                 NULL}},
    {"workers.jobs", {"interval", OPT_DURATION, WOFF(workers.jobs.interval), "50ms", NS_MS, NS_H,
                      NULL, NULL, NULL}},
    {"workers.jobs", {"count", OPT_INT, WOFF(workers.jobs.count), "0", 0, 200000, NULL, NULL,
                      NULL}},
    {"check", {"near_miss", OPT_DURATION, WOFF(check.near_miss), "1ms", 0, 10 * NS_S, NULL, NULL,
               NULL}},
    {"check", {"stuck_after", OPT_DURATION, WOFF(check.stuck_after), "auto", 0, NS_H,
               stuck_after_words, NULL, NULL}},
    {"check", {"stories", OPT_INT, WOFF(check.stories), "3", 0, 50, NULL, NULL, NULL}},
    {"check", {"max_commands_per_grant", OPT_DOUBLE, WOFF(check.max_commands_per_grant), "0", 0,
               1e9, NULL, NULL, NULL}},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* A fault entry's common keys (harness/workload_faults.c). */
#define FOFF(m) offsetof(struct rundir_fault, m)
static const struct opt_def fault_keys[] = {
    {"at", OPT_DURATION, FOFF(at), "1s", 0, 24 * NS_H, NULL, NULL, NULL},
    {"duration", OPT_DURATION, FOFF(duration), "1s", 1, 24 * NS_H, NULL, NULL, NULL},
    {"every", OPT_DURATION, FOFF(every), "0", 0, 24 * NS_H, NULL, NULL, NULL},
    {"count", OPT_INT, FOFF(count), "0", 0, 1000000000, NULL, NULL, NULL},
};

/* The nemesis keys (faults/nemesis.c). */
#define NOFF(m) offsetof(struct rundir_meta, nemesis.m)
static const struct opt_def nemesis_keys[] = {
    {"interval", OPT_DURATION, NOFF(interval), "2s", NS_MS, 24 * NS_H, NULL, NULL, NULL},
    {"start", OPT_DURATION, NOFF(start), "0", 0, 24 * NS_H, NULL, NULL, NULL},
};
static const struct opt_def nemesis_duration_keys[] = {
    {"min", OPT_DURATION, NOFF(dur_min), "200ms", 1, 24 * NS_H, NULL, NULL, NULL},
    {"max", OPT_DURATION, NOFF(dur_max), "1s", 1, 24 * NS_H, NULL, NULL, NULL},
};

/* Contract: workers.resources given as a list of names (the loader
 * checked them): m->res_names and the count. */
static void read_res_names(struct rundir_meta *m, const struct ynode *seq, struct ydiag *dg)
{
    if (seq->n < 1 || seq->n > 4096) {
        ydiag_at(dg, seq, "workers.resources: %zu names; expected 1..4096", seq->n);
        return;
    }
    m->res_names = xcalloc(seq->n, sizeof(*m->res_names));
    for (size_t i = 0; i < seq->n; i++) {
        const struct ynode *it = seq->vals[i];
        if (it->kind != YN_SCALAR || !it->len) {
            ydiag_at(dg, it, "workers.resources[%zu]: expected a name", i);
            return;
        }
        m->res_names[m->nres_names++] = xstrdup(it->text);
    }
    m->w.workers.resources = (int64_t)seq->n;
}

/* Contract: the mapping at a dotted path of sections ("workers.jobs"), or
 * NULL when one is absent or not a mapping. */
static const struct ynode *section_at(const struct ynode *root, const char *path)
{
    const struct ynode *n = root;
    char part[32];
    while (n && path && *path) {
        size_t k = strcspn(path, ".");
        if (k >= sizeof(part))
            return NULL;
        memcpy(part, path, k);
        part[k] = '\0';
        n = ymap_get(n, part);
        path += k + (path[k] == '.');
    }
    return n && n->kind == YN_MAP ? n : NULL;
}

/* Contract: parse key d of map (absent or null: its default) into base.
 * Returns 0, or -1 after reporting to dg. */
static int read_key(const struct opt_def *d, void *base, const struct ynode *map,
                    const char *path, struct ydiag *dg)
{
    const struct ynode *v = map ? ymap_get(map, d->name) : NULL;
    char full[96];
    snprintf(full, sizeof(full), "%s%s%s", path ? path : "", path && *path ? "." : "", d->name);
    if (v && !ynode_is_null(v))
        return opt_parse_node(d, base, v, v, full, NULL, dg);
    if (d->type == OPT_DIST) { /* a default distribution is a mapping: parse it as one */
        struct ynode *dv = NULL;
        struct ydiag quiet;
        ydiag_init(&quiet, "default", NULL, NULL);
        int rc = ytree_parse(d->def, strlen(d->def), &dv, &quiet) == 0 && dv
                     ? opt_parse_node(d, base, dv, dv, full, NULL, dg) : -1;
        ynode_free(dv);
        return rc;
    }
    char why[160];
    if (opt_parse_text(d, base, d->def, why, sizeof(why)) != 0) {
        ydiag_at(dg, map, "%s: %s", full, why);
        return -1;
    }
    return 0;
}

static void copy_text(char *dst, size_t n, const struct ynode *v)
{
    snprintf(dst, n, "%s", v && v->kind == YN_SCALAR ? v->text : "");
}

/* workers.jobs.layers: a list of layer names (harness/jobs.c checks them). */
static unsigned read_layers(const struct ynode *v)
{
    if (!v)
        return JOB_LAYER_LOCK; /* its default, [lock] */
    unsigned layers = 0;
    for (size_t i = 0; v->kind == YN_SEQ && i < v->n; i++)
        for (int k = 0; v->vals[i]->kind == YN_SCALAR && k < JOBS_NLAYERS; k++)
            if (strcmp(v->vals[i]->text, jobs_layers[k].name) == 0)
                layers |= jobs_layers[k].bit;
    return layers;
}

static void read_faults(struct rundir_meta *m, const struct ynode *seq, struct ydiag *dg)
{
    if (!seq || seq->kind != YN_SEQ || seq->n == 0)
        return;
    m->faults = xcalloc(seq->n, sizeof(*m->faults));
    for (size_t i = 0; i < seq->n; i++) {
        const struct ynode *f = seq->vals[i];
        struct rundir_fault *rf = &m->faults[m->nfaults++];
        char path[32];
        snprintf(path, sizeof(path), "faults[%zu]", i);
        copy_text(rf->kind, sizeof(rf->kind), f->kind == YN_MAP ? ymap_get(f, "kind") : NULL);
        copy_text(rf->target, sizeof(rf->target), f->kind == YN_MAP ? ymap_get(f, "target")
                                                                     : NULL);
        for (size_t k = 0; k < sizeof(fault_keys) / sizeof(fault_keys[0]); k++)
            read_key(&fault_keys[k], rf, f->kind == YN_MAP ? f : NULL, path, dg);
    }
}

static void read_nemesis(struct rundir_meta *m, const struct ynode *nem, struct ydiag *dg)
{
    if (!nem || nem->kind != YN_MAP)
        return;
    m->nemesis.enabled = 1;
    for (size_t k = 0; k < sizeof(nemesis_keys) / sizeof(nemesis_keys[0]); k++)
        read_key(&nemesis_keys[k], m, nem, "nemesis", dg);
    const struct ynode *dur = section_at(nem, "duration");
    for (size_t k = 0; k < 2; k++)
        read_key(&nemesis_duration_keys[k], m, dur, "nemesis.duration", dg);
    const struct ynode *kinds = ymap_get(nem, "kinds");
    const struct ynode *targets = section_at(nem, "targets");
    if (!kinds || kinds->kind != YN_SEQ || kinds->n == 0)
        return;
    m->nemesis.kinds = xcalloc(kinds->n, sizeof(*m->nemesis.kinds));
    for (size_t i = 0; i < kinds->n; i++) {
        struct rundir_nemesis_kind *k = &m->nemesis.kinds[m->nemesis.nkinds++];
        copy_text(k->kind, sizeof(k->kind), kinds->vals[i]);
        const struct ynode *list = targets && k->kind[0] ? ymap_get(targets, k->kind) : NULL;
        for (size_t j = 0; list && list->kind == YN_SEQ && j < list->n; j++) {
            const struct ynode *t = list->vals[j]->kind == YN_MAP
                                        ? ymap_get(list->vals[j], "target") : NULL;
            k->ntargets++;
            if (!t || (t->kind == YN_SCALAR && strcmp(t->text, "holder") == 0))
                k->holder_targets++;
        }
    }
}

int rundir_meta_parse(const char *name, const char *text, size_t len, struct rundir_meta **out,
                      struct ls_err *err)
{
    struct ydiag dg;
    struct ynode *root = NULL;
    ydiag_init(&dg, name ? name : "workload.yaml", NULL, err);
    *out = NULL;
    if (len > RUNDIR_MAX_FILE) {
        ydiag_file(&dg, LS_EWORKLOAD, "file is too large (over %d bytes)", RUNDIR_MAX_FILE);
    } else if (ytree_parse(text, len, &root, &dg) != 0) {
        if (!dg.count)
            ydiag_pos(&dg, 1, 1, "not a YAML document");
    } else if (!root || root->kind != YN_MAP) {
        ydiag_pos(&dg, 1, 1, "expected a mapping of workload keys at top level");
    }
    struct rundir_meta *m = NULL;
    if (!dg.count) {
        m = xcalloc(1, sizeof(*m));
        const struct ynode *wk = section_at(root, "workers");
        const struct ynode *rl = wk ? ymap_get(wk, "resources") : NULL;
        for (size_t i = 0; i < NKEYS; i++)
            if (!(rl && rl->kind == YN_SEQ && keys[i].d.offset == WOFF(workers.resources)))
                read_key(&keys[i].d, &m->w,
                         keys[i].section ? section_at(root, keys[i].section) : root,
                         keys[i].section, &dg);
        if (rl && rl->kind == YN_SEQ) /* named resources: the count is the list's length */
            read_res_names(m, rl, &dg);
        const struct ynode *jobs = section_at(root, "workers.jobs");
        m->w.workers.jobs.layers = read_layers(jobs ? ymap_get(jobs, "layers") : NULL);
        read_faults(m, ymap_get(root, "faults"), &dg);
        read_nemesis(m, ymap_get(root, "nemesis"), &dg);
    }
    ynode_free(root);
    ydiag_finish(&dg);
    if (dg.count) {
        rundir_meta_free(m);
        return dg.first_code ? dg.first_code : LS_EWORKLOAD;
    }
    *out = m;
    return 0;
}

int rundir_meta_read(const char *path, struct rundir_meta **out, struct ls_err *err)
{
    struct strbuf sb;
    sb_init(&sb);
    *out = NULL;
    int rc = sb_read_file(&sb, path);
    if (rc < 0) {
        sb_free(&sb);
        return ls_err_set(err, LS_EIO, "%s: cannot read: %s", path, strerror(-rc));
    }
    rc = rundir_meta_parse(path, sb.buf ? sb.buf : "", sb.len, out, err);
    sb_free(&sb);
    return rc;
}

void rundir_meta_free(struct rundir_meta *m)
{
    if (!m)
        return;
    free(m->faults);
    free(m->nemesis.kinds);
    for (int i = 0; i < m->nres_names; i++)
        free(m->res_names[i]);
    free(m->res_names);
    free(m);
}
