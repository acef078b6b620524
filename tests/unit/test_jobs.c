/*
 * test_jobs.c: the keys of issue 10's workloads (workers.mode jobs and
 * workers.jobs, lock.renew.mode / slice, workers.hold_cpu, lock.retry
 * backoff): defaults, errors with their FILE:LINE:COL, the resolved echo
 * round trip; the job stream's length; the jobs checker over a hand-made
 * jobs.jsonl (duplicates, missed, claimed but not done, a short dump).
 * Needs no Redis: the end-to-end runs are tests/e2e/test_jobs.sh and
 * test_renew_modes.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkers/check.h"
#include "checkers/history.h"
#include "harness/jobs.h"
#include "harness/workload.h"
#include "model/rundir.h"
#include "tests/unit/testing.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define MS LS_NS_PER_MS

static struct workload *load(const char *yaml, const char *set, struct ls_err *err)
{
    struct workload *w = NULL;
    const char *sets[] = {set};
    ls_err_clear(err);
    if (workload_load_string("t.yaml", yaml, sets, set ? 1 : 0, &w, NULL, err) != 0)
        return NULL;
    return w;
}

static void test_defaults(void)
{
    struct ls_err err;
    struct workload *w = load("name: t\n", NULL, &err);
    REQUIRE(w);
    CHECK_INT(w->workers.mode, WMODE_LOCKS);
    CHECK_INT(w->workers.hold_cpu, 0);
    CHECK_INT(w->workers.jobs.interval, 50 * MS);
    CHECK_INT(w->workers.jobs.count, 0);
    CHECK_INT(w->workers.jobs.layers, JOB_LAYER_LOCK);
    CHECK_INT(w->lock.renew_every, 0);
    CHECK_INT(w->lock.renew_mode, RENEW_THREAD);
    CHECKF(w->lock.retry.backoff == 1.0, "backoff %g", w->lock.retry.backoff);
    CHECK_INT(w->lock.retry.max_delay, 1000 * MS);
    workload_free(w);
}

static void test_keys_and_echo(void)
{
    struct ls_err err;
    const char *yaml = "name: t\nduration: 2s\n"
                       "lock: {ttl: 200ms, renew: {every: 60ms, mode: inline, slice: 300ms},\n"
                       "       retry: {backoff: 2, max_delay: 400ms}}\n"
                       "workers: {mode: jobs, hold_cpu: true,\n"
                       "          jobs: {interval: 100ms, layers: [constraint, lock]}}\n";
    struct workload *w = load(yaml, NULL, &err);
    REQUIRE(w);
    CHECK_INT(w->lock.renew_mode, RENEW_INLINE);
    CHECK_INT(w->lock.renew_slice, 300 * MS);
    CHECK_INT(w->workers.jobs.layers, JOB_LAYER_LOCK | JOB_LAYER_CONSTRAINT);
    CHECK_INT(w->workers.hold_cpu, 1);
    CHECK_INT(w->lock.retry.max_delay, 400 * MS);
    CHECK_INT(jobs_total(w), 20); /* k * 100ms < 2s */
    char buf[64];
    CHECK_STR(jobs_layers_text(w->workers.jobs.layers, buf, sizeof(buf)), "lock+constraint");

    /* the resolved echo loads back to the same workload */
    struct strbuf sb = STRBUF_INIT;
    workload_to_yaml(w, &sb);
    CHECKF(strstr(sb_cstr(&sb), "renew: {every: 60ms, mode: inline, slice: 300ms}") != NULL,
           "%s", sb_cstr(&sb));
    CHECKF(strstr(sb_cstr(&sb), "layers: [lock, constraint]") != NULL, "%s", sb_cstr(&sb));
    struct workload *w2 = NULL;
    int rc = workload_load_string("echo.yaml", sb_cstr(&sb), NULL, 0, &w2, NULL, &err);
    CHECKF(rc == 0, "echo does not load: %s", err.msg);
    if (w2) {
        CHECK_INT(w2->lock.renew_mode, RENEW_INLINE);
        CHECK_INT(w2->lock.renew_slice, 300 * MS);
        CHECK_INT(w2->workers.jobs.layers, w->workers.jobs.layers);
        CHECK_INT(w2->workers.mode, WMODE_JOBS);
        CHECKF(w2->lock.retry.backoff == 2.0, "backoff %g", w2->lock.retry.backoff);
    }
    struct json *j = workload_to_json(w);
    const struct json *l = json_path(j, "workers.jobs.layers");
    CHECK(l && l->type == JSON_ARR && l->n == 2);
    CHECK_STR(json_get_str(json_path(j, "lock.renew"), "mode", "?"), "inline");
    json_free(j);
    sb_free(&sb);
    workload_free(w2);
    workload_free(w);

    /* slice defaults to every; an empty list is no defence at all */
    w = load("lock: {ttl: 200ms, renew: {every: 50ms, mode: inline}}\n",
             "workers.jobs.layers=[]", &err);
    REQUIRE(w);
    CHECK_INT(w->lock.renew_slice, 50 * MS);
    CHECK_INT(w->workers.jobs.layers, 0);
    CHECK_STR(jobs_layers_text(0, buf, sizeof(buf)), "none");
    workload_free(w);
}

static void expect_error(const char *yaml, const char *set, const char *prefix, const char *phrase)
{
    struct ls_err err;
    struct workload *w = load(yaml, set, &err);
    CHECKF(w == NULL, "loaded: %s", yaml);
    workload_free(w);
    CHECKF(strncmp(err.msg, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'",
           err.msg, prefix);
    CHECKF(strstr(err.msg, phrase) != NULL, "'%s' lacks '%s'", err.msg, phrase);
}

static void test_errors(void)
{
    expect_error("workers:\n  jobs: {layers: [lock, lok]}\n", NULL, "t.yaml:2:25: ",
                 "unknown layer 'lok'; did you mean 'lock'?");
    expect_error("workers:\n  jobs: {layers: [lock, lock]}\n", NULL, "t.yaml:2:25: ",
                 "listed twice");
    expect_error("workers:\n  jobs: {layers: lock}\n", NULL, "t.yaml:2:18: ",
                 "expected a list of lock, idempotency, constraint");
    expect_error("workers: {mode: job}\n", NULL, "t.yaml:1:17: ", "jobs");
    expect_error("lock: {ttl: 200ms, renew: {every: 50ms, mode: loop}}\n", NULL, "t.yaml:1:",
                 "thread");
    expect_error("lock: {retry: {backoff: 0.5}}\n", NULL, "t.yaml:1:25: ", "out of range");
    expect_error("duration: 1h\nworkers: {mode: jobs, jobs: {interval: 1ms}}\n", NULL, "t.yaml:",
                 "at most");
}

static void test_steps(void)
{
    CHECK_STR(job_step_name(JOBS_EFFECT), "effect");
    CHECK_STR(job_step_name(99), "?");
    CHECK_INT(job_step_from_name("refused"), JOBS_REFUSED);
    CHECK_INT(job_step_from_name("nope"), 0);
}

/* The jobs checker over dir/jobs.jsonl = text, for a jobs workload of n
 * jobs. Returns the checks.jobs section (caller frees *res). */
static const struct json *check_dump(const char *dir, const char *text, int n, int *verdict,
                                     struct json **res)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/jobs.jsonl", dir);
    if (text) {
        FILE *f = fopen(path, "w");
        fputs(text, f);
        fclose(f);
    } else {
        unlink(path);
    }
    char yaml[96];
    snprintf(yaml, sizeof(yaml), "workers: {mode: jobs, jobs: {count: %d}}\n", n);
    struct ls_err err;
    struct history h;
    memset(&h, 0, sizeof(h));
    if (rundir_meta_parse("t.yaml", yaml, strlen(yaml), &h.meta, &err) != 0)
        fprintf(stderr, "  meta: %s\n", err.msg);
    h.source = (char *)dir;
    h.from_rundir = 1;
    *res = json_new_obj();
    json_obj_set(*res, "checks", json_new_obj());
    struct check_params p;
    check_params_from(&h, &p);
    *verdict = check_jobs(&h, &p, *res);
    rundir_meta_free(h.meta);
    return json_path(*res, "checks.jobs");
}

static void test_checker(void)
{
    char dir[] = "/tmp/lstestjobs-XXXXXX";
    REQUIRE(mkdtemp(dir));
    struct json *res;
    int v;
    const struct json *j = check_dump(dir,
                                      "{\"job\":0,\"effects\":[1],\"refused\":0,\"done\":1}\n"
                                      "{\"job\":1,\"effects\":[2,0],\"refused\":0,\"done\":0}\n"
                                      "{\"job\":2,\"effects\":[],\"refused\":0,\"done\":3}\n"
                                      "{\"job\":3,\"effects\":[3],\"refused\":2,\"done\":3}\n",
                                      4, &v, &res);
    CHECK_INT(v, VERDICT_INVALID);
    CHECK_INT(json_get_int(j, "jobs", -1), 4);
    CHECK_INT(json_get_int(j, "duplicates", -1), 1);
    CHECK_INT(json_get_int(j, "extra_effects", -1), 1);
    CHECK_INT(json_get_int(j, "missed", -1), 1);
    CHECK_INT(json_get_int(j, "claimed_not_done", -1), 1);
    CHECK_INT(json_get_int(j, "refused", -1), 2);
    CHECK_INT(json_get_int(json_path(j, "duplicate_jobs.0"), "job", -1), 1);
    json_free(res);

    /* exactly once everywhere: valid */
    j = check_dump(dir, "{\"job\":0,\"effects\":[1],\"refused\":3,\"done\":1}\n", 1, &v, &res);
    CHECK_INT(v, VERDICT_VALID);
    CHECK_STR(json_get_str(j, "verdict", "?"), "valid");
    json_free(res);

    /* a dump shorter than the stream cannot vouch for the rest */
    j = check_dump(dir, "{\"job\":0,\"effects\":[1],\"refused\":0,\"done\":1}\n", 3, &v, &res);
    CHECK_INT(v, VERDICT_UNKNOWN);
    json_free(res);

    /* no dump: unknown, never valid */
    j = check_dump(dir, NULL, 3, &v, &res);
    CHECK_INT(v, VERDICT_UNKNOWN);
    const struct json *av = json_obj_get(j, "available");
    CHECK(av && av->type == JSON_BOOL && av->i == 0);
    json_free(res);
    rmdir(dir);
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_keys_and_echo);
    RUN(test_errors);
    RUN(test_steps);
    RUN(test_checker);
    return t_finish();
}
