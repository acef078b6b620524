/*
 * stress_reduce.c: the reduction of `lockstorm stress` (docs/stress.md "How
 * reduction decides"): greedy, QuickCheck-style. Each round lists the
 * candidates one change smaller than the current workload, runs each up to
 * x->tries times and accepts the first that shows the class once. Changes
 * go through the loader (--set, or a fault left out as compare variants
 * do) and each candidate is the loaded workload written back, so what a
 * candidate ran is exactly what reduced.yaml holds.
 */
#include "harness/stress_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "faults/fault.h"
#include "harness/workload.h"
#include "util/strbuf.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define MAX_CANDS 64
#define MAX_TRIED 4096

struct cand {
    char set[200];      /* one --set override, or "" */
    int drop;           /* the faults[] entry left out, or -1 */
    char change[200];   /* what it changes, for people */
};

struct reducer {
    struct stress_ctx *x;
    struct workload *cur;   /* the smallest workload that reproduced so far (owned) */
    char cur_yaml[64];      /* its file, relative to the stress directory */
    uint64_t cur_seed;      /* the seed it reproduced at */
    uint64_t tried[MAX_TRIED];  /* hashes of every candidate text run (no repeats) */
    int ntried;
    int accepted;
    int last_accepted;      /* step index of the last accepted candidate, -1 */
};

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

static struct sstep *new_step(struct stress_ctx *x)
{
    if (x->nsteps == x->capstep) {
        x->capstep = x->capstep ? 2 * x->capstep : 16;
        x->steps = xrealloc(x->steps, (size_t)x->capstep * sizeof(*x->steps));
    }
    struct sstep *s = &x->steps[x->nsteps++];
    memset(s, 0, sizeof(*s));
    return s;
}

static void add_int_cands(struct cand *c, int *n, int max, const char *key, int64_t cur,
                          int64_t floor)
{
    int64_t vals[3] = {floor, cur / 2, cur - 1};
    int64_t last = -1;
    for (int i = 0; i < 3 && *n < max; i++) {
        int64_t v = vals[i];
        if (v < floor || v >= cur || v == last)
            continue;
        last = v;
        struct cand *k = &c[(*n)++];
        snprintf(k->set, sizeof(k->set), "%s=%lld", key, (long long)v);
        k->drop = -1;
        snprintf(k->change, sizeof(k->change), "%s %lld -> %lld", key, (long long)cur,
                 (long long)v);
    }
}

/* Contract: the candidates one change smaller than w into c (at most
 * max), boldest first within each kind; the kinds in the order shorter
 * duration (every later run is cheaper), faults left out, fewer workers,
 * fewer resources, fewer occurrences of a repeating fault. Returns the
 * count. */
static int candidates(const struct stress_ctx *x, const struct workload *w, struct cand *c,
                      int max)
{
    int n = 0;
    char a[32], b[32];
    int64_t half = w->duration / 2 / LS_NS_PER_MS * LS_NS_PER_MS;
    if (half < x->min_duration)
        half = x->min_duration;
    if (half < w->duration && n < max) {
        ls_format_duration(w->duration, a, sizeof(a));
        ls_format_duration(half, b, sizeof(b));
        snprintf(c[n].set, sizeof(c[n].set), "duration=%s", b);
        c[n].drop = -1;
        snprintf(c[n].change, sizeof(c[n].change), "duration %s -> %s", a, b);
        n++;
    }
    for (int i = 0; i < w->nfaults && n < max; i++) {
        c[n].set[0] = '\0';
        c[n].drop = i;
        snprintf(c[n].change, sizeof(c[n].change), "faults[%d] (%s) left out", i,
                 w->faults[i].ops ? w->faults[i].ops->name : "?");
        n++;
    }
    if (w->nemesis.enabled && n < max) {
        snprintf(c[n].set, sizeof(c[n].set), "nemesis=~");
        c[n].drop = -1;
        snprintf(c[n].change, sizeof(c[n].change), "nemesis left out");
        n++;
    }
    int floor = stress_class_min_workers(x->cls[0] ? x->cls : "fail");
    add_int_cands(c, &n, max, "workers.count", w->workers.count, floor);
    add_int_cands(c, &n, max, "workers.resources", w->workers.resources, 1);
    for (int i = 0; i < w->nfaults && n < max; i++) {
        int64_t occ = workload_fault_occurrences(w, &w->faults[i]);
        if (occ <= 1)
            continue;
        char key[40];
        snprintf(key, sizeof(key), "faults[%d].count", i);
        int m = n;
        add_int_cands(c, &n, max, key, occ, 1);
        for (int k = m; k < n; k++) /* the change says what count was written */
            if (w->faults[i].count == 0)
                snprintf(c[k].change, sizeof(c[k].change), "%s 0 (%lld occurrences) -> %s",
                         key, (long long)occ, strchr(c[k].set, '=') + 1);
    }
    return n;
}

/* Contract: load candidate k of r->cur into *out (NULL and a reason in
 * why on failure). */
static int load_cand(const struct reducer *r, const struct cand *k, struct workload **out,
                     char *why, size_t n)
{
    const char *sets[1] = {k->set};
    unsigned char drop[256];
    size_t nd = 0;
    if (k->drop >= 0) {
        nd = (size_t)r->cur->nfaults < sizeof(drop) ? (size_t)r->cur->nfaults : sizeof(drop);
        memset(drop, 0, nd);
        if ((size_t)k->drop < nd)
            drop[k->drop] = 1;
    }
    struct ls_err err = {0};
    int rc = workload_load_variant(r->cur, sets, k->set[0] ? 1 : 0, nd ? drop : NULL, nd, NULL,
                                   out, NULL, &err);
    if (rc < 0)
        snprintf(why, n, "does not load: %s", err.msg);
    return rc;
}

/* Contract: write text into the stress directory as rel; 0 or -errno. */
static int write_rel(const struct stress_ctx *x, const char *rel, const struct strbuf *text)
{
    char path[PATH_MAX + 100];
    snprintf(path, sizeof(path), "%s/%s", x->dir, rel);
    return sb_write_file(text, path);
}

static int load_rel(const struct stress_ctx *x, const char *rel, struct workload **w,
                    struct ls_err *err)
{
    char path[PATH_MAX + 100];
    snprintf(path, sizeof(path), "%s/%s", x->dir, rel);
    return workload_load(path, NULL, 0, w, NULL, err);
}

static int tried_before(struct reducer *r, const struct strbuf *text)
{
    uint64_t h = fnv1a(text->buf, text->len);
    for (int i = 0; i < r->ntried; i++)
        if (r->tried[i] == h)
            return 1;
    if (r->ntried < MAX_TRIED)
        r->tried[r->ntried++] = h;
    return 0;
}

/* Contract: try candidate k; 1 when it reproduced (r->cur is then the
 * candidate), 0 when not, -1 when the reduction must stop (a signal, a
 * run that could not run, the budget). */
static int try_cand(struct reducer *r, const struct cand *k)
{
    struct stress_ctx *x = r->x;
    struct workload *w = NULL;
    char why[320];
    if (stress_poll_signal(x))
        return -1;
    if (load_cand(r, k, &w, why, sizeof(why)) < 0) {
        struct sstep *s = new_step(x);
        s->cand = -1;
        snprintf(s->change, sizeof(s->change), "%s", k->change);
        snprintf(s->why, sizeof(s->why), "%s", why);
        return 0;
    }
    struct strbuf text = STRBUF_INIT;
    workload_to_yaml(w, &text);
    int64_t planned = w->duration;
    workload_free(w);
    if (tried_before(r, &text)) {
        sb_free(&text);
        return 0;
    }
    if (stress_budget_spent(x)) {
        sb_free(&text);
        return -1;
    }
    struct sstep *s = new_step(x);
    int si = x->nsteps - 1;
    s->cand = ++x->ncand;
    snprintf(s->change, sizeof(s->change), "%s", k->change);
    snprintf(s->yaml, sizeof(s->yaml), "reduce/c%03d.yaml", s->cand);
    int rc = write_rel(x, s->yaml, &text);
    sb_free(&text);
    if (rc < 0) {
        snprintf(x->error, sizeof(x->error), "write %s/%s: %s", x->dir, s->yaml, strerror(-rc));
        return -1;
    }
    if (!x->quiet)
        fprintf(stderr, "lockstorm: reduce: candidate c%03d: %s\n", s->cand, k->change);
    char path[PATH_MAX + 100];
    snprintf(path, sizeof(path), "%s/%s", x->dir, s->yaml);
    struct sbatch b = {.phase = PHASE_REDUCE, .cand = s->cand, .yaml = path, .planned = planned,
                       .seed0 = r->cur_seed, .count = x->tries, .stop_on_hit = 1,
                       .budgeted = 1};
    stress_batch_run(x, &b);
    s = &x->steps[si]; /* the batch may not move steps, but stay safe */
    s->tries = b.started;
    s->hits = b.hits;
    if (b.first_error >= 0) {
        snprintf(x->error, sizeof(x->error), "%s could not run: %s", x->runs[b.first_error]->dir,
                 x->runs[b.first_error]->why);
        return -1;
    }
    if (b.first_hit < 0)
        return x->signal ? -1 : 0;
    s->accepted = 1;
    s->hit_seed = x->runs[b.first_hit]->seed;
    struct workload *nw = NULL;
    struct ls_err err = {0};
    if (load_rel(x, s->yaml, &nw, &err) < 0) { /* what it ran must load back */
        snprintf(x->error, sizeof(x->error), "candidate %s does not load back: %s", s->yaml,
                 err.msg);
        s->accepted = 0;
        return -1;
    }
    workload_free(r->cur);
    r->cur = nw;
    snprintf(r->cur_yaml, sizeof(r->cur_yaml), "%s", s->yaml);
    r->cur_seed = s->hit_seed;
    r->accepted++;
    r->last_accepted = si;
    return 1;
}

/* What a hit is, for people: "lock_broken" / "a FAIL verdict with lock_broken". */
static void hit_text(const struct stress_ctx *x, char *buf, size_t n)
{
    if (x->need_fail && x->cls[0])
        snprintf(buf, n, "a FAIL verdict with %s", x->cls);
    else if (x->need_fail)
        snprintf(buf, n, "a FAIL verdict");
    else
        snprintf(buf, n, "%s", x->cls);
}

/* Contract: the header of reduced.yaml into sb: what it was reduced from,
 * the class, the changes, the evidence and the rule. */
static void header(const struct reducer *r, struct strbuf *sb)
{
    const struct stress_ctx *x = r->x;
    const struct srun *f = x->runs[x->found];
    char what[120];
    hit_text(x, what, sizeof(what));
    sb_printf(sb, "# reduced.yaml: written by `lockstorm stress` (docs/stress.md); run it with\n"
                  "#   lockstorm run %s/reduced.yaml\n", x->dir);
    sb_printf(sb, "# Reduced from: %s (workload %s)", x->file, x->base->name);
    for (int i = 0; i < x->nsets; i++)
        sb_printf(sb, " --set %s", x->sets[i]);
    sb_printf(sb, ", which showed %s at seed %llu (%s).\n", what, (unsigned long long)f->seed,
              f->dir);
    sb_printf(sb, "# Class: %s.\n", what);
    int ntried = 0;
    for (int i = 0; i < x->nsteps; i++)
        ntried += x->steps[i].cand > 0;
    sb_printf(sb, "# Changes accepted (%d of %d candidates run, %d runs):%s\n", r->accepted,
              ntried, x->reduce_runs, r->accepted ? "" : " none");
    for (int i = 0; i < x->nsteps; i++)
        if (x->steps[i].accepted)
            sb_printf(sb, "#   %s (c%03d: in %d of %d tries, first at seed %llu)\n",
                      x->steps[i].change, x->steps[i].cand, x->steps[i].hits, x->steps[i].tries,
                      (unsigned long long)x->steps[i].hit_seed);
    sb_printf(sb, "# Rule: a candidate is accepted when %s appears in at least 1 of up to %d "
                  "runs (the last reproducing seed, then the next ones); tries stop at the "
                  "first that shows it.\n", what, x->tries);
    sb_printf(sb, "# Stopped: %s.\n", x->stopped_why);
    if (x->confirm_runs)
        sb_printf(sb, "# Evidence: this file showed %s in %d of %d confirmation runs (seeds "
                      "%llu..%llu, confirm/).\n", what, x->confirm_hits, x->confirm_runs,
                  (unsigned long long)r->cur_seed,
                  (unsigned long long)(r->cur_seed + (uint64_t)x->confirm_runs - 1));
    else
        sb_printf(sb, "# Evidence: %s; no confirmation runs of this file (--confirm 0 or "
                      "stopped).\n", r->last_accepted >= 0
                      ? "see the accepted changes above" : "the failing run above");
}

/* Contract: reduced.yaml from r->cur with seed r->cur_seed and the name
 * NAME-reduced, behind header(); 0 or -1 (x->error says why). */
static int write_reduced(struct reducer *r)
{
    struct stress_ctx *x = r->x;
    char seedset[48], nameset[96];
    snprintf(seedset, sizeof(seedset), "seed=%llu", (unsigned long long)r->cur_seed);
    snprintf(nameset, sizeof(nameset), "name=%.54s-reduced", x->base->name);
    const char *sets[2] = {seedset, nameset};
    struct workload *w = NULL;
    struct ls_err err = {0};
    if (workload_load_variant(r->cur, sets, 2, NULL, 0, NULL, &w, NULL, &err) < 0) {
        snprintf(x->error, sizeof(x->error), "reduced workload does not load: %s", err.msg);
        return -1;
    }
    struct strbuf sb = STRBUF_INIT;
    header(r, &sb);
    workload_to_yaml(w, &sb);
    workload_free(w);
    int rc = write_rel(x, "reduced.yaml", &sb);
    sb_free(&sb);
    if (rc < 0) {
        snprintf(x->error, sizeof(x->error), "write %s/reduced.yaml: %s", x->dir, strerror(-rc));
        return -1;
    }
    snprintf(x->reduced, sizeof(x->reduced), "%s/reduced.yaml", x->dir);
    x->reduced_seed = r->cur_seed;
    snprintf(x->reduced_from, sizeof(x->reduced_from), "%s", r->cur_yaml);
    return 0;
}

void stress_reduce(struct stress_ctx *x)
{
    struct reducer *r = xcalloc(1, sizeof(*r));
    r->x = x;
    r->last_accepted = -1;
    r->cur_seed = x->runs[x->found]->seed;
    x->reduce_t0 = ls_now_ns();
    char rd[PATH_MAX + 16];
    snprintf(rd, sizeof(rd), "%s/reduce", x->dir);
    struct strbuf text = STRBUF_INIT;
    workload_to_yaml(x->base, &text);
    snprintf(r->cur_yaml, sizeof(r->cur_yaml), "reduce/c000.yaml");
    struct ls_err err = {0};
    int rc = mkdir(rd, 0755) < 0 && errno != EEXIST ? -errno : write_rel(x, r->cur_yaml, &text);
    tried_before(r, &text);
    sb_free(&text);
    if (rc < 0) {
        snprintf(x->error, sizeof(x->error), "write %s/%s: %s", x->dir, r->cur_yaml,
                 strerror(-rc));
        snprintf(x->stopped_why, sizeof(x->stopped_why), "the stress directory is not writable");
        free(r);
        return;
    }
    if (load_rel(x, r->cur_yaml, &r->cur, &err) < 0) {
        snprintf(x->stopped_why, sizeof(x->stopped_why), "the failing workload as written "
                 "does not load back (%.120s)", err.msg);
        free(r);
        return;
    }
    struct cand c[MAX_CANDS];
    for (;;) {
        int n = candidates(x, r->cur, c, MAX_CANDS), got = 0, i;
        for (i = 0; i < n && !got; i++)
            got = try_cand(r, &c[i]);
        if (got < 0 || x->signal) {
            snprintf(x->stopped_why, sizeof(x->stopped_why), "%s",
                     x->signal ? "interrupted"
                     : x->error[0] ? "a run could not run (stress.json has its error)"
                     : x->reduce_runs >= x->max_runs ? "the run budget is spent (--max-runs); "
                                                       "smaller may still reproduce"
                                                     : "the time budget is spent "
                                                       "(--reduce-time); smaller may still "
                                                       "reproduce");
            break;
        }
        if (!got) {
            snprintf(x->stopped_why, sizeof(x->stopped_why),
                     "no candidate one change smaller reproduces (%d tried in the last round)",
                     n);
            break;
        }
    }
    if (write_reduced(r) == 0 && x->confirm > 0 && !x->signal && !x->error[0]) {
        struct sbatch b = {.phase = PHASE_CONFIRM, .cand = -1, .yaml = x->reduced,
                           .planned = r->cur->duration, .seed0 = r->cur_seed,
                           .count = x->confirm};
        stress_batch_run(x, &b);
        x->confirm_runs = b.started - b.errors;
        x->confirm_hits = b.hits;
        if (b.first_error >= 0)
            snprintf(x->error, sizeof(x->error), "%s could not run: %s",
                     x->runs[b.first_error]->dir, x->runs[b.first_error]->why);
        else if (x->signal)
            x->confirm_runs = 0;
        write_reduced(r); /* the header gains the evidence; the workload is the same */
    }
    workload_free(r->cur);
    free(r);
}
