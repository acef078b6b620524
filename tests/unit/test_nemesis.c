/*
 * test_nemesis.c: the random nemesis (harness/nemesis.c): the `nemesis:` and
 * `quiet_tail` keys of the loader (defaults, echo round trip, one test per
 * class of bad input), and the expansion: the same seed gives the same
 * schedule and another seed another one, every drawn start, kind, target
 * and duration lies within what the workload configured, and the file the
 * nemesis writes (nemesis.yaml) loads back to the same specs. Needs no Redis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults/fault.h"
#include "harness/nemesis.h"
#include "harness/workload.h"
#include "tests/unit/testing.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define MS LS_NS_PER_MS
#define SEC LS_NS_PER_S

static const char BASE[] = "name: nem\n"
                           "seed: 42\n"
                           "duration: 20s\n"
                           "quiet_tail: 3s\n"
                           "cluster: {nodes: 3}\n"
                           "workers: {count: 5, resources: 2}\n"
                           "nemesis:\n"
                           "  kinds: [pause]\n"
                           "  interval: 500ms\n"
                           "  duration: {min: 50ms, max: 400ms}\n"
                           "  start: 1s\n"
                           "  targets:\n"
                           "    pause: [holder, \"node:1\", {target: worker:4}]\n";

static struct workload *load(const char *yaml, const char *const *sets, int nsets)
{
    struct workload *w = NULL;
    struct ls_err err = {0};
    int rc = workload_load_string("t.yaml", yaml, sets, nsets, &w, NULL, &err);
    CHECKF(rc == 0, "load failed: %s", err.msg);
    return rc == 0 ? w : NULL;
}

static void expect_err(int line, const char *yaml, const char *phrase)
{
    struct workload *w = NULL;
    struct ls_err err = {0};
    int rc = workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err);
    CHECKF(rc == LS_EWORKLOAD, "line %d: rc %d, want a workload error", line, rc);
    CHECKF(strncmp(err.msg, "t.yaml:", 7) == 0, "line %d: no position in '%s'", line, err.msg);
    CHECKF(strstr(err.msg, phrase) != NULL, "line %d: '%s' lacks '%s'", line, err.msg, phrase);
    workload_free(w);
}

#define EXPECT_ERR(yaml, phrase) expect_err(__LINE__, yaml, phrase)

static struct fault_spec *expand(const struct workload *w, int *n)
{
    struct fault_spec *fs = NULL;
    struct ls_err err = {0};
    int rc = nemesis_expand(w, &fs, n, &err);
    CHECKF(rc == 0, "expand: %s", err.msg);
    return fs;
}

/* The specs as text (nemesis.yaml without its comment): equal text, equal
 * specs, kind options included. */
static char *specs_text(const struct fault_spec *fs, int n)
{
    struct strbuf sb = STRBUF_INIT;
    nemesis_to_yaml(fs, n, NULL, &sb);
    sb_cstr(&sb);
    return sb_steal(&sb);
}

static int same_specs(const struct fault_spec *a, int na, const struct fault_spec *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < na; i++)
        if (a[i].ops != b[i].ops || a[i].target != b[i].target ||
            a[i].target_index != b[i].target_index || a[i].resource != b[i].resource ||
            a[i].at != b[i].at || a[i].duration != b[i].duration || a[i].every != b[i].every ||
            a[i].count != b[i].count)
            return 0;
    char *ta = specs_text(a, na), *tb = specs_text(b, nb);
    int same = strcmp(ta, tb) == 0;
    free(ta);
    free(tb);
    return same;
}

static void test_defaults_and_echo(void)
{
    struct workload *w = load("duration: 5s\nnemesis: {kinds: [pause]}\n", NULL, 0);
    REQUIRE(w != NULL);
    CHECK(w->nemesis.enabled);
    CHECK_INT(w->quiet_tail, 0);
    CHECK_INT(w->nemesis.interval, 2 * SEC);
    CHECK_INT(w->nemesis.gaps, GAPS_EXPONENTIAL);
    CHECK_INT(w->nemesis.duration.min, 200 * MS);
    CHECK_INT(w->nemesis.duration.max, SEC);
    CHECK_INT(w->nemesis.start, 0);
    CHECK_INT(w->nemesis.overlap, 0);
    REQUIRE(w->nemesis.nkinds == 1);
    /* default targets of pause on one node: holder, random-worker, node:0 */
    CHECK_INT(w->nemesis.kinds[0].ntargets, 3);
    struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
    workload_to_yaml(w, &a);
    CHECKF(strstr(sb_cstr(&a), "pause: [{target: holder}, {target: random-worker}, "
                               "{target: \"node:0\"}]") != NULL,
           "echo: %s", sb_cstr(&a));
    struct workload *w2 = load(sb_cstr(&a), NULL, 0);
    REQUIRE(w2 != NULL);
    workload_to_yaml(w2, &b);
    CHECK_STR(sb_cstr(&a), sb_cstr(&b));
    struct json *j = workload_to_json(w2);
    const struct json *t = json_path(j, "nemesis.targets.pause.2.target");
    CHECKF(t && t->type == JSON_STR && strcmp(t->s, "node:0") == 0, "json echo of targets");
    json_free(j);
    sb_free(&a);
    sb_free(&b);
    workload_free(w);
    workload_free(w2);

    w = load("duration: 5s\n", NULL, 0);
    REQUIRE(w != NULL);
    CHECK(!w->nemesis.enabled);
    struct fault_spec *fs = (struct fault_spec *)1;
    int n = -1;
    struct ls_err err = {0};
    CHECK(nemesis_expand(w, &fs, &n, &err) == 0 && fs == NULL && n == 0);
    workload_free(w);
}

static void test_bad(void)
{
    EXPECT_ERR("duration: 2s\nquiet_tail: 2s\n", "quiet_tail: 2s is not shorter than the run");
    EXPECT_ERR("duration: 5s\nquiet_tail: 2s\nfaults: [{kind: pause, at: 3.5s}]\n",
               "inside the quiet tail");
    EXPECT_ERR("nemesis: {interval: 1s}\n", "nemesis.kinds: missing");
    EXPECT_ERR("nemesis: {kinds: [pase]}\n", "did you mean 'pause'?");
    EXPECT_ERR("nemesis: {kinds: [pause, pause]}\n", "listed twice");
    EXPECT_ERR("nemesis: {kinds: []}\n", "empty");
    EXPECT_ERR("nemesis: [pause]\n", "expected a mapping");
    EXPECT_ERR("nemesis: {kinds: [pause], duration: {min: 2s, max: 1s}}\n",
               "min 2s is longer than max 1s");
    EXPECT_ERR("nemesis: {kinds: [pause], interval: 0}\n", "nemesis.interval");
    EXPECT_ERR("nemesis: {kinds: [pause], gaps: poisson}\n", "nemesis.gaps");
    EXPECT_ERR("nemesis: {kinds: [pause], intervall: 1s}\n", "did you mean 'interval'?");
    EXPECT_ERR("nemesis: {kinds: [pause], targets: {kill: [holder]}}\n",
               "'kill' is not one of nemesis.kinds");
    EXPECT_ERR("nemesis: {kinds: [pause], targets: {pause: [worker:9]}}\n",
               "nemesis.targets.pause[0].target: worker 9 is out of range");
    EXPECT_ERR("nemesis: {kinds: [pause], targets: {pause: [elsewhere]}}\n", "unknown target");
    EXPECT_ERR("nemesis: {kinds: [pause], targets: {pause: [{target: holder, at: 1s}]}}\n",
               "'at' is drawn by the nemesis");
    EXPECT_ERR("nemesis: {kinds: [pause], targets: {pause: []}}\n", "empty");
    EXPECT_ERR("duration: 5s\nquiet_tail: 2s\nnemesis: {kinds: [pause], start: 3s}\n",
               "leaves no time for faults");
    EXPECT_ERR("duration: 24h\nnemesis: {kinds: [pause], interval: 1ms}\n", "would draw over");
    /* a position: the target's own line */
    struct workload *w = NULL;
    struct ls_err err = {0};
    int rc = workload_load_string("t.yaml",
                                  "nemesis:\n  kinds: [pause]\n  targets:\n    pause:\n"
                                  "      - holder\n      - node:7\n",
                                  NULL, 0, &w, NULL, &err);
    CHECK(rc == LS_EWORKLOAD);
    CHECKF(strncmp(err.msg, "t.yaml:6:", 9) == 0, "position: %s", err.msg);
    workload_free(w);
}

static void test_same_seed_same_schedule(void)
{
    struct workload *w1 = load(BASE, NULL, 0), *w2 = load(BASE, NULL, 0);
    const char *other[] = {"seed=43"};
    struct workload *w3 = load(BASE, other, 1);
    REQUIRE(w1 && w2 && w3);
    int n1, n2, n3;
    struct fault_spec *a = expand(w1, &n1), *b = expand(w2, &n2), *c = expand(w3, &n3);
    CHECKF(n1 > 10, "only %d faults drawn", n1);
    CHECK(same_specs(a, n1, b, n2));
    CHECK(!same_specs(a, n1, c, n3));
    /* and again from the same workload object */
    int n4;
    struct fault_spec *d = expand(w1, &n4);
    CHECK(same_specs(a, n1, d, n4));
    nemesis_specs_free(a, n1);
    nemesis_specs_free(b, n2);
    nemesis_specs_free(c, n3);
    nemesis_specs_free(d, n4);
    workload_free(w1);
    workload_free(w2);
    workload_free(w3);
}

static void test_within_ranges(void)
{
    const char *const seeds[] = {"seed=1", "seed=2", "seed=3", "seed=4", "seed=5"};
    int kinds_seen[3] = {0, 0, 0};
    for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
        struct workload *w = load(BASE, &seeds[s], 1);
        REQUIRE(w != NULL);
        int n;
        struct fault_spec *fs = expand(w, &n);
        int64_t tail = w->duration - w->quiet_tail, prev_end = 0;
        for (int i = 0; i < n; i++) {
            const struct fault_spec *f = &fs[i];
            CHECKF(f->at >= w->nemesis.start && f->at < tail, "at %lld outside [1s, 17s)",
                   (long long)f->at);
            CHECKF(f->at % MS == 0, "at %lld not whole ms", (long long)f->at);
            CHECKF(f->duration >= 50 * MS && f->duration <= 400 * MS, "duration %lld",
                   (long long)f->duration);
            CHECKF(f->at >= prev_end, "fault %d starts at %lld inside the previous (to %lld) with "
                   "overlap: false", i, (long long)f->at, (long long)prev_end);
            prev_end = f->at + f->duration;
            CHECK(f->ops == fault_find("pause"));
            CHECK(f->every == 0 && f->count == 0);
            int k = f->target == TARGET_HOLDER ? 0
                    : f->target == TARGET_NODE && f->target_index == 1 ? 1
                    : f->target == TARGET_WORKER && f->target_index == 4 ? 2 : -1;
            CHECKF(k >= 0, "target %d:%d not configured", f->target, f->target_index);
            if (k >= 0)
                kinds_seen[k]++;
        }
        nemesis_specs_free(fs, n);
        workload_free(w);
    }
    CHECKF(kinds_seen[0] && kinds_seen[1] && kinds_seen[2], "targets drawn %d %d %d",
           kinds_seen[0], kinds_seen[1], kinds_seen[2]);
}

static void test_gaps(void)
{
    const char *fixed[] = {"nemesis.gaps=fixed", "nemesis.start=0", "nemesis.overlap=true"};
    struct workload *w = load(BASE, fixed, 3);
    REQUIRE(w != NULL);
    int n;
    struct fault_spec *fs = expand(w, &n);
    CHECK_INT(n, 33); /* 500ms, 1s, ... 16.5s: every start before the 17s tail */
    for (int i = 0; i < n; i++)
        CHECKF(fs[i].at == (i + 1) * 500 * MS, "fixed gap: fault %d at %lld", i,
               (long long)fs[i].at);
    nemesis_specs_free(fs, n);
    workload_free(w);

    const char *uni[] = {"nemesis.gaps=uniform", "nemesis.overlap=true"};
    w = load(BASE, uni, 2);
    REQUIRE(w != NULL);
    fs = expand(w, &n);
    for (int i = 1; i < n; i++) {
        int64_t gap = fs[i].at - fs[i - 1].at;
        CHECKF(gap >= 249 * MS && gap <= 751 * MS, "uniform gap %lld", (long long)gap);
    }
    nemesis_specs_free(fs, n);
    workload_free(w);

    /* exponential: the mean gap is near the interval over many draws */
    /* 80 minutes: about 9,600 draws, under the schedule's bound (faults/fault.h) */
    const char *expo[] = {"duration=80m", "quiet_tail=0", "nemesis.overlap=true"};
    w = load(BASE, expo, 3);
    REQUIRE(w != NULL);
    fs = expand(w, &n);
    double mean = n > 1 ? (double)(fs[n - 1].at - fs[0].at) / (n - 1) / 1e6 : 0;
    CHECKF(mean > 480 && mean < 520, "exponential mean gap %.1f ms over %d", mean, n);
    nemesis_specs_free(fs, n);
    workload_free(w);
}

static void test_yaml_round_trip(void)
{
    struct workload *w = load(BASE, NULL, 0);
    REQUIRE(w != NULL);
    int n;
    struct fault_spec *fs = expand(w, &n);
    char *dir = t_tmpdir();
    struct ls_err err = {0};
    CHECK(nemesis_write(dir, w, NULL, fs, n, &err) == 0);
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, NEMESIS_FILE);
    struct fault_spec *back = NULL;
    int nb = 0;
    int rc = nemesis_load(w, path, &back, &nb, NULL, &err);
    CHECKF(rc == 0, "load back: %s", err.msg);
    CHECK(same_specs(fs, n, back, nb));
    nemesis_specs_free(back, nb);

    /* plan with --replay reads the same file; a run dir without it is refused */
    rc = nemesis_plan(w, dir, &back, &nb, NULL, &err);
    CHECK(rc == 0 && same_specs(fs, n, back, nb));
    nemesis_specs_free(back, nb);
    char empty[600];
    snprintf(empty, sizeof(empty), "%s/none", dir);
    ls_err_clear(&err);
    CHECK(nemesis_plan(w, empty, &back, &nb, NULL, &err) == LS_EUSAGE);
    CHECKF(strstr(err.msg, "nemesis.yaml is missing") != NULL, "%s", err.msg);

    /* the file is checked against the workload: a replay into fewer nodes fails */
    const char *fewer[] = {"cluster.nodes=1", "nemesis.targets.pause=[holder]"};
    struct workload *w1 = load(BASE, fewer, 2);
    REQUIRE(w1 != NULL);
    ls_err_clear(&err);
    rc = nemesis_load(w1, path, &back, &nb, NULL, &err);
    CHECKF(rc == LS_EWORKLOAD && strstr(err.msg, "node 1 is out of range"), "rc %d: %s", rc,
           err.msg);
    CHECKF(strncmp(err.msg, path, strlen(path)) == 0, "no file position: %s", err.msg);
    workload_free(w1);

    /* an empty schedule round-trips too */
    CHECK(nemesis_write(dir, w, NULL, NULL, 0, &err) == 0);
    back = (struct fault_spec *)1;
    CHECK(nemesis_load(w, path, &back, &nb, NULL, &err) == 0 && nb == 0);
    nemesis_specs_free(back, nb);
    nemesis_specs_free(fs, n);
    t_rmdir(dir);
    free(dir);
    workload_free(w);
}

int main(void)
{
    RUN(test_defaults_and_echo);
    RUN(test_bad);
    RUN(test_same_seed_same_schedule);
    RUN(test_within_ranges);
    RUN(test_gaps);
    RUN(test_yaml_round_trip);
    return t_finish();
}
