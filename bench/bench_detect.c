/*
 * bench_detect.c: benchmark 4, time to detect. For each bug scenario (a
 * bundled workload) and seeds 1..10, run it (shortened) and take the run
 * time of the first violation (the earliest overlap start in result.json);
 * report the median over the seeds as a multiple of (TTL + fault period).
 * For a fault that happens once, its period is its start time (`at`); for
 * a scenario without faults it is 0. Scenarios whose workload does not
 * exist yet are listed as absent. Target: median <= 1.5.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/common.h"
#include "util/timeutil.h"

struct scenario {
    const char *name;
    const char *workload;   /* under $LS_SOURCE_DIR/workloads/ */
    double ttl_ms;          /* the workload's lock.ttl */
    double period_ms;       /* its fault period (every), or the one fault's start */
    int duration_ms;        /* how long each seed runs (>= 2 x (ttl + period)) */
    const char *sets[4];    /* extra --set overrides */
};

static const struct scenario scenarios[] = {
    {"naive-del under holder pauses", "naive-del.yaml", 200, 1000, 3000, {NULL}},
    {"redis-single restart without persistence", "restart-no-persistence.yaml", 1500, 1500, 4000,
     {NULL}},
    {"busted (no faults)", "busted.yaml", 500, 0, 1500, {NULL}},
    {"replicated failover lost write", "scenarios/failover-lost-write.yaml", 600, 2000, 5000,
     {NULL}},
    {"redlock clock jump K1", "scenarios/k1-redlock-clock-jump.yaml", 1000, 1500, 5000, {NULL}},
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

/* Contract: run scenario s with seed into dir; the earliest violation's
 * overlap start in ms, or -1 when the run found none, -2 when it failed,
 * -3 when the loader refused the workload (exit 2). */
static double one_seed(const struct bench_opts *o, const char *wl, const struct scenario *s,
                       int seed, int dur_ms, const char *dir)
{
    char seedstr[16], dset[64], log[700];
    snprintf(seedstr, sizeof(seedstr), "%d", seed);
    snprintf(dset, sizeof(dset), "duration=%dms", dur_ms);
    snprintf(log, sizeof(log), "%s.log", dir);
    char *argv[24];
    int n = 0;
    argv[n++] = (char *)o->lockstorm;
    argv[n++] = "run";
    argv[n++] = (char *)wl;
    argv[n++] = "--out";
    argv[n++] = (char *)dir;
    argv[n++] = "--seed";
    argv[n++] = seedstr;
    argv[n++] = "--quiet";
    argv[n++] = "--format";
    argv[n++] = "json";
    argv[n++] = "--set";
    argv[n++] = dset;
    for (int k = 0; k < 4 && s->sets[k]; k++) {
        argv[n++] = "--set";
        argv[n++] = (char *)s->sets[k];
    }
    argv[n] = NULL;
    int code = bench_run(argv, log, (int64_t)dur_ms * LS_NS_PER_MS + 120 * LS_NS_PER_S);
    char rpath[700];
    snprintf(rpath, sizeof(rpath), "%s/result.json", dir);
    struct json *res = bench_read_json(rpath);
    if (!res && code == 2)
        return -3; /* the loader refuses the workload: not supported by this build */
    if (!res) {
        fprintf(stderr, "bench_detect: %s seed %d: no result (exit %d, see %s)\n", s->name, seed,
                code, log);
        return -2;
    }
    double first = -1;
    const struct json *v = json_obj_get(res, "violations");
    for (size_t i = 0; v && v->type == JSON_ARR && i < v->n; i++) {
        double t = json_get_num(v->kids[i], "overlap_start_ms", -1);
        if (t >= 0 && (first < 0 || t < first))
            first = t;
    }
    json_free(res);
    if (!o->keep) {
        char *rm[] = {"rm", "-rf", (char *)dir, log, NULL};
        bench_run(rm, NULL, 60 * LS_NS_PER_S);
    }
    return first;
}

int main(int argc, char **argv)
{
    static const char *const extra[] = {"--seeds", "--workloads", NULL};
    const char *val[2];
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, extra, val) < 0 || bench_tmp(&o) < 0)
        return 2;
    int64_t nseeds64 = o.smoke ? 1 : 10;
    if (val[0] && bench_count("--seeds", val[0], 1, 100, &nseeds64) < 0)
        return 2;
    int nseeds = (int)nseeds64;
    const char *src = getenv("LS_SOURCE_DIR");
    char wdir[600];
    snprintf(wdir, sizeof(wdir), "%s", val[1] ? val[1] : src ? src : ".");
    if (!val[1])
        snprintf(wdir + strlen(wdir), sizeof(wdir) - strlen(wdir), "/workloads");

    struct json *sec = json_new_obj();
    json_obj_set_str(sec, "method",
                     "each scenario's bundled workload run shortened (--set duration) with seeds "
                     "1..N, --format json; detection time = earliest violations[].overlap_start_ms; "
                     "unit = lock TTL + fault period (a one-shot fault: its start time)");
    json_obj_set_int(sec, "seeds", nseeds);
    struct json *rows = json_obj_set(sec, "scenarios", json_new_arr());
    struct json *targets = json_obj_set(sec, "targets", json_new_arr());
    int failures = 0;
    fprintf(stderr, "time to detect (median over %d seeds)\n", nseeds);
    for (size_t i = 0; i < NSCEN; i++) {
        const struct scenario *s = &scenarios[i];
        if (o.smoke && i != 2)
            continue; /* smoke: busted only (the fastest) */
        char wl[700];
        snprintf(wl, sizeof(wl), "%s/%s", wdir, s->workload);
        struct json *row = json_arr_push(rows, json_new_obj());
        json_obj_set_str(row, "scenario", s->name);
        json_obj_set_str(row, "workload", s->workload);
        struct stat st;
        if (stat(wl, &st) != 0 || s->duration_ms == 0) {
            json_obj_set_bool(row, "available", 0);
            fprintf(stderr, "  %-42s  absent (workloads/%s does not exist yet)\n", s->name,
                    s->workload);
            continue;
        }
        json_obj_set_bool(row, "available", 1);
        double unit = s->ttl_ms + s->period_ms;
        double *mult = calloc((size_t)nseeds, sizeof(double));
        struct json *times = json_obj_set(row, "detect_ms", json_new_arr());
        int found = 0, refused = 0;
        for (int seed = 1; seed <= nseeds; seed++) {
            char dir[700];
            snprintf(dir, sizeof(dir), "%s/detect-%zu-%d", o.tmp, i, seed);
            double t = one_seed(&o, wl, s, seed, s->duration_ms, dir);
            if (t == -3) {
                refused = 1;
                break;
            }
            if (t == -2)
                failures++;
            /* not found: counts as the whole run (a lower bound) */
            double tt = t >= 0 ? t : s->duration_ms;
            json_arr_push(times, t >= 0 ? json_new_num(t) : json_new_null());
            mult[seed - 1] = tt / unit;
            found += t >= 0;
        }
        double med = bench_median(mult, nseeds);
        free(mult);
        if (refused) {
            json_obj_set_bool(row, "available", 0);
            json_obj_set_str(row, "why", "lockstorm refuses the workload (exit 2)");
            fprintf(stderr, "  %-42s  not available: lockstorm refuses workloads/%s\n", s->name,
                    s->workload);
            continue;
        }
        json_obj_set_num(row, "unit_ms", unit);
        json_obj_set_num(row, "ttl_ms", s->ttl_ms);
        json_obj_set_num(row, "fault_period_ms", s->period_ms);
        json_obj_set_int(row, "found_in", found);
        json_obj_set_num(row, "median_x_unit", med);
        char name[160];
        snprintf(name, sizeof(name), "time to detect: %s (x (TTL + fault period))", s->name);
        bench_target(targets, name, med, "<=", 1.5, "x");
        fprintf(stderr, "  %-42s  median %.2f x (TTL %.0f ms + period %.0f ms), found in %d/%d\n",
                s->name, med, s->ttl_ms, s->period_ms, found, nseeds);
    }
    bench_print(sec);
    json_free(sec);
    bench_cleanup(&o);
    return failures ? 1 : 0;
}
