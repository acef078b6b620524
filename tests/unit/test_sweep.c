/*
 * test_sweep.c: the sweep file (harness/sweep.h) without running anything:
 * keys and defaults, the axes expanded into cells (order, names, seeds),
 * each cell's --set texts (mappings as flow YAML the loader reads back),
 * every cell validated through the workload loader (a bad value stops the
 * sweep with FILE:LINE:COL or the --set it came from), the base workload
 * resolved next to the sweep file, sweep files told from workloads, and
 * the parallelism rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness/sweep.h"
#include "harness/workload.h"
#include "tests/unit/testing.h"

static char dir[256];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

static const char BASE[] = "name: base\nseed: 41\nduration: 2s\n"
                           "lock: {ttl: 300ms}\n"
                           "workers: {count: 3, hold: {dist: uniform, min: 20ms, max: 80ms}}\n"
                           "faults:\n  - {kind: pause, target: holder, at: 500ms, duration: 100ms}\n";

/* Load sweep text (as DIR/s.yaml); the error log lands in *log. */
static int load(const char *text, struct sweep **s, char **log)
{
    write_file("s.yaml", text);
    char path[512];
    snprintf(path, sizeof(path), "%s/s.yaml", dir);
    size_t n = 0;
    FILE *f = open_memstream(log, &n);
    struct ls_err err = {0};
    int rc = sweep_load(path, NULL, s, f, &err);
    fclose(f);
    return rc;
}

static void test_expand(void)
{
    struct sweep *s = NULL;
    char *log = NULL;
    int rc = load("sweep: t1\nworkload: base.yaml\nrepeats: 2\n"
                  "set:\n  duration: 1s\n"
                  "  faults[1]: {kind: kill, target: holder, at: 800ms, restart: 100ms}\n"
                  "axes:\n  lock.ttl: [100ms, 400ms]\n"
                  "  workers.hold: [50ms, {dist: uniform, min: 10ms, max: 30ms}]\n",
                  &s, &log);
    CHECKF(rc == 0, "load: %d %s", rc, log ? log : "");
    free(log);
    if (rc != 0)
        return;
    CHECK_STR(s->name, "t1");
    CHECK_INT(s->repeats, 2);
    CHECK_INT(s->seed, 41); /* the base's seed */
    CHECK_STR(s->formats, "json,text,junit");
    CHECK_INT(s->naxes, 2);
    CHECK_INT(s->ncells, 8);
    CHECK_STR(s->axes[1].values[1], "{dist: uniform, min: 10ms, max: 30ms}");
    CHECK_STR(s->axes[1].full[1], "workers.hold={dist: uniform, min: 10ms, max: 30ms}");
    CHECK_INT(s->nsets, 2);
    CHECK_STR(s->sets[1], "faults[1]={kind: kill, target: holder, at: 800ms, restart: 100ms}");
    /* first axis slowest, repeats fastest */
    CHECK_STR(s->cells[0].name, "000-100ms_50ms-r0");
    CHECK_STR(s->cells[1].name, "001-100ms_50ms-r1");
    CHECK_STR(s->cells[3].name, "003-100ms_dist-uniform-min-10ms-max-30ms-r1");
    CHECK_STR(s->cells[4].name, "004-400ms_50ms-r0");
    CHECK_INT(s->cells[5].seed, 42);
    CHECK_INT(s->cells[7].vi[0], 1);
    CHECK_INT(s->cells[7].vi[1], 1);
    CHECK_INT(s->cells[0].planned_ns, 1000000000LL); /* set: duration applied */

    /* the cell's --set texts load back into the workload they describe */
    const char *sets[32];
    char seed[64];
    int n = sweep_cell_sets(s, &s->cells[7], sets, 32, seed, sizeof(seed));
    CHECK_INT(n, 5);
    CHECK_STR(sets[4], "seed=42");
    struct workload *w = NULL;
    struct ls_err err = {0};
    REQUIRE(workload_load(s->base, sets, n, &w, NULL, &err) == 0);
    CHECK_INT(w->lock.ttl, 400000000LL);
    CHECK_INT(w->workers.hold.kind, DIST_UNIFORM);
    CHECK_INT(w->workers.hold.max, 30000000LL);
    CHECK_INT(w->nfaults, 2);
    CHECK_INT(w->seed, 42);
    workload_free(w);
    sweep_free(s);
}

static void test_quoting(void)
{
    struct sweep *s = NULL;
    char *log = NULL;
    /* values that need quotes on the way through --set stay what they were */
    int rc = load("sweep: q\nworkload: base.yaml\nseed: 5\n"
                  "axes:\n  description: ['a, b: c', \"null\", '#x']\n", &s, &log);
    CHECKF(rc == 0, "load: %s", log ? log : "");
    free(log);
    if (rc != 0)
        return;
    CHECK_STR(s->axes[0].values[0], "\"a, b: c\"");
    CHECK_STR(s->axes[0].values[1], "\"null\"");
    CHECK_STR(s->axes[0].values[2], "\"#x\"");
    CHECK_INT(s->cells[0].seed, 5);
    const char *sets[8];
    char seed[64];
    int n = sweep_cell_sets(s, &s->cells[1], sets, 8, seed, sizeof(seed));
    struct workload *w = NULL;
    struct ls_err err = {0};
    REQUIRE(workload_load(s->base, sets, n, &w, NULL, &err) == 0);
    CHECK_STR(w->description, "null");
    workload_free(w);
    sweep_free(s);
}

static void test_errors(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"workload: base.yaml\naxes: {lock.ttl: [1s]}\n", "s.yaml:1:1: a sweep file needs 'sweep: NAME'"},
        {"sweep: x\naxes: {lock.ttl: [1s]}\n", "needs 'workload: BASE'"},
        {"sweep: x\nworkload: base.yaml\n", "axes: a sweep needs axes"},
        {"sweep: x\nworkload: base.yaml\naxis: {lock.ttl: [1s]}\n",
         "s.yaml:3:1: unknown key 'axis' at top level; did you mean 'axes'?"},
        {"sweep: x\nworkload: base.yaml\naxes: {lock.ttl: 1s}\n",
         "s.yaml:3:18: axes.lock.ttl: expected a non-empty list of values"},
        {"sweep: x\nworkload: base.yaml\naxes: {lock.ttl: [1s, 1s]}\n", "listed twice"},
        {"sweep: x\nworkload: base.yaml\nrepeats: 101\naxes: {lock.ttl: [1s]}\n",
         "s.yaml:3:10: repeats: 101 is out of range 1..100"},
        {"sweep: 'a b'\nworkload: base.yaml\naxes: {lock.ttl: [1s]}\n", "is not a valid name"},
        {"sweep: x\nworkload: base.yaml\nformats: json,pdf\naxes: {lock.ttl: [1s]}\n",
         "unknown format 'pdf'"},
        /* a value the workload refuses: named by its --set */
        {"sweep: x\nworkload: base.yaml\naxes: {lock.ttl: [1s, soon]}\n",
         "--set 'lock.ttl=soon': lock.ttl: "},
        {"sweep: x\nworkload: base.yaml\naxes: {lock.tll: [1s]}\n", "did you mean 'ttl'?"},
        {"sweep: x\nworkload: nosuch.yaml\naxes: {lock.ttl: [1s]}\n", "nosuch.yaml: cannot read"},
        {"sweep: x\nworkload: base.yaml\nrepeats: 3\naxes: {a: [1,2,3,4,5,6,7,8,9,10], "
         "b: [1,2,3,4,5,6,7,8,9,10], c: [1,2,3,4,5,6,7,8,9,10]}\n",
         "3000 cells (values multiplied, times repeats); at most 2000"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct sweep *s = NULL;
        char *log = NULL;
        int rc = load(cases[i].text, &s, &log);
        CHECKF(rc < 0 && s == NULL, "case %zu loaded", i);
        CHECKF(log && strstr(log, cases[i].want), "case %zu: want '%s' in: %s", i, cases[i].want,
               log ? log : "");
        free(log);
        sweep_free(s);
    }
}

static void test_is_sweep_and_parallelism(void)
{
    char path[512], desc[64];
    write_file("sw.yaml", "sweep: a\ndescription: the one\nworkload: base.yaml\naxes: {}\n");
    snprintf(path, sizeof(path), "%s/sw.yaml", dir);
    CHECK(sweep_file_is_sweep(path, desc, sizeof(desc)) == 1);
    CHECK_STR(desc, "the one");
    snprintf(path, sizeof(path), "%s/base.yaml", dir);
    CHECK(sweep_file_is_sweep(path, NULL, 0) == 0);
    snprintf(path, sizeof(path), "%s/missing.yaml", dir);
    CHECK(sweep_file_is_sweep(path, NULL, 0) == 0);

    int cores = sweep_parallelism(1 << 20, 0); /* an explicit wish is capped at the cores */
    CHECK(cores >= 1);
    CHECK_INT(sweep_parallelism(0, 0), cores / 2 > 1 ? cores / 2 : 1);
    CHECK_INT(sweep_parallelism(1, 10), 1);
    CHECK_INT(sweep_parallelism(0, 1), 1); /* never more than the cells */
    CHECK(sweep_parallelism(3, 100) <= cores);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "%s/lssweep-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    write_file("base.yaml", BASE);
    RUN(test_expand);
    RUN(test_quoting);
    RUN(test_errors);
    RUN(test_is_sweep_and_parallelism);
    static const char *const files[] = {"base.yaml", "s.yaml", "sw.yaml"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char p[512];
        snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    return t_finish();
}
