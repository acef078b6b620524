/*
 * test_rundir.c: model/rundir.h reads back, from a resolved workload.yaml,
 * exactly what the workload loader loaded: for every bundled workload the
 * loader's struct workload is echoed (as a run directory's workload.yaml
 * is written) and the reader's view of the echo is compared key by key,
 * faults and nemesis included. Also: defaults for absent keys, and errors.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults/fault.h"
#include "harness/workload.h"
#include "model/rundir.h"
#include "model/yamltree.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"

static int compared;

static int same_dist(const struct dist *a, const struct dist *b)
{
    return a->kind == b->kind && a->value == b->value && a->min == b->min && a->max == b->max &&
           a->mean == b->mean && a->sigma == b->sigma;
}

/* Contract: m agrees with the loaded w on every key the checkers read. */
static void compare(const char *what, const struct workload *w, const struct rundir_meta *m)
{
    const struct workload *r = &m->w;
    CHECKF(r->duration == w->duration && r->quiet_tail == w->quiet_tail, "%s: duration", what);
    CHECKF(r->lock.ttl == w->lock.ttl && r->lock.fencing == w->lock.fencing, "%s: lock", what);
    CHECKF(r->workers.count == w->workers.count && r->workers.resources == w->workers.resources,
           "%s: workers", what);
    CHECKF(same_dist(&r->workers.hold, &w->workers.hold), "%s: hold", what);
    CHECKF(same_dist(&r->workers.think, &w->workers.think), "%s: think", what);
    CHECKF(r->workers.mode == w->workers.mode, "%s: mode", what);
    CHECKF(r->workers.jobs.interval == w->workers.jobs.interval &&
               r->workers.jobs.count == w->workers.jobs.count &&
               r->workers.jobs.layers == w->workers.jobs.layers,
           "%s: jobs", what);
    CHECKF(r->check.near_miss == w->check.near_miss &&
               r->check.stuck_after == w->check.stuck_after &&
               r->check.stories == w->check.stories,
           "%s: check", what);
    CHECKF(m->nfaults == w->nfaults, "%s: %d faults, loaded %d", what, m->nfaults, w->nfaults);
    for (int i = 0; i < m->nfaults && i < w->nfaults; i++) {
        const struct rundir_fault *a = &m->faults[i];
        const struct fault_spec *b = &w->faults[i];
        CHECKF(b->ops && strcmp(a->kind, b->ops->name) == 0, "%s: faults[%d].kind %s", what, i,
               a->kind);
        CHECKF((strcmp(a->target, "holder") == 0) == (b->target == TARGET_HOLDER),
               "%s: faults[%d].target %s", what, i, a->target);
        CHECKF(a->at == b->at && a->duration == b->duration && a->every == b->every &&
                   a->count == b->count,
               "%s: faults[%d] schedule", what, i);
    }
    const struct nemesis_spec *N = &w->nemesis;
    CHECKF(m->nemesis.enabled == N->enabled, "%s: nemesis", what);
    if (!N->enabled)
        return;
    CHECKF(m->nemesis.interval == N->interval && m->nemesis.start == N->start &&
               m->nemesis.dur_min == N->duration.min && m->nemesis.dur_max == N->duration.max,
           "%s: nemesis keys", what);
    CHECKF(m->nemesis.nkinds == N->nkinds, "%s: nemesis kinds", what);
    for (int i = 0; i < m->nemesis.nkinds && i < N->nkinds; i++) {
        const struct rundir_nemesis_kind *a = &m->nemesis.kinds[i];
        const struct nemesis_kind *b = &N->kinds[i];
        int holders = 0;
        for (int j = 0; j < b->ntargets; j++) {
            const struct ynode *t = ymap_get(b->targets[j], "target");
            holders += !t || (t->kind == YN_SCALAR && strcmp(t->text, "holder") == 0);
        }
        CHECKF(b->ops && strcmp(a->kind, b->ops->name) == 0, "%s: nemesis kind %s", what,
               a->kind);
        CHECKF(a->ntargets == b->ntargets && a->holder_targets == holders,
               "%s: nemesis %s targets %d/%d, loaded %d/%d", what, a->kind, a->holder_targets,
               a->ntargets, holders, b->ntargets);
    }
}

/* Load path, echo it, read the echo back, compare. */
static void check_file(const char *path)
{
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    if (workload_load(path, NULL, 0, &w, NULL, &err) != 0)
        return; /* a deliberately broken example: no run directory has it */
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w, &sb);
    struct rundir_meta *m = NULL;
    int rc = rundir_meta_parse(path, sb_cstr(&sb), sb.len, &m, &err);
    CHECKF(rc == 0, "%s: %s", path, err.msg);
    if (rc == 0) {
        compare(path, w, m);
        compared++;
    }
    rundir_meta_free(m);
    sb_free(&sb);
    workload_free(w);
}

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0)
            check_file(path);
        else if (e->d_type == DT_DIR)
            walk(path);
    }
    closedir(d);
}

static void test_bundled_workloads(void)
{
    const char *src = getenv("LS_SOURCE_DIR");
    if (!src)
        src = LS_SOURCE_DIR;
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s/workloads", src);
    walk(dir);
    CHECKF(compared >= 40, "only %d workloads compared", compared);
}

/* Absent keys read as the loader's defaults. */
static void test_defaults(void)
{
    const char *yaml = "name: t\n";
    struct workload *w = NULL;
    struct ls_err err = {0, ""};
    REQUIRE(workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err) == 0);
    struct rundir_meta *m = NULL;
    REQUIRE(rundir_meta_parse("t.yaml", yaml, strlen(yaml), &m, &err) == 0);
    compare("defaults", w, m);
    CHECK_INT(m->w.check.stuck_after, -1); /* auto */
    rundir_meta_free(m);
    workload_free(w);
}

static void test_errors(void)
{
    struct rundir_meta *m = NULL;
    struct ls_err err = {0, ""};
    const char *bad[] = {"garbage: [\n", "- a list\n", "lock: {ttl: soon}\n",
                         "workers: {hold: {dist: nope}}\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        m = NULL;
        CHECKF(rundir_meta_parse("w.yaml", bad[i], strlen(bad[i]), &m, &err) != 0 && !m,
               "accepted: %s", bad[i]);
        CHECKF(strncmp(err.msg, "w.yaml", 6) == 0, "message: %s", err.msg);
    }
    CHECK(rundir_meta_read("/nonexistent/workload.yaml", &m, &err) != 0 && !m);
}

int main(void)
{
    RUN(test_bundled_workloads);
    RUN(test_defaults);
    RUN(test_errors);
    return t_finish();
}
