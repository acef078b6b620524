/*
 * bench_startup.c: benchmark 5, start-up and teardown (docs/performance.md).
 * `lockstorm run` of 1 s of load on 1 node, 5 nodes (redlock) and the
 * replicated topology, 6 and 32 workers: from exec to the first grant (the
 * event logs, in the run's CLOCK_MONOTONIC) and from the planned end of the
 * load to the process's exit (--format json: the checkers run; charts and
 * HTML are benchmark 6). Median of 3 runs each.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/common.h"
#include "model/evlog.h"
#include "util/timeutil.h"

struct topo {
    const char *name;
    const char *cluster;    /* YAML flow mapping */
    const char *impl;
    int workers;
};

static const struct topo topos[] = {
    {"1 node, 6 workers", "{nodes: 1}", "redis-single", 6},
    {"1 node, 32 workers", "{nodes: 1}", "redis-single", 32},
    {"5 nodes (redlock), 6 workers", "{nodes: 5}", "redlock", 6},
    {"5 nodes (redlock), 32 workers", "{nodes: 5}", "redlock", 32},
    {"replicated: 2 replicas + 3 sentinels, 32 workers",
     "{topology: replicated, replicas: 2, sentinels: 3}", "redis-single", 32},
};
#define NTOPO (sizeof(topos) / sizeof(topos[0]))
#define DURATION_MS 1000

/* Contract: the run-relative time of the first record of type in the
 * event logs of dir (INT64_MAX when none). */
static int64_t first_event(const char *dir, int type)
{
    char edir[700];
    snprintf(edir, sizeof(edir), "%s/events", dir);
    DIR *d = opendir(edir);
    if (!d)
        return INT64_MAX;
    int64_t best = INT64_MAX;
    struct dirent *de;
    while ((de = readdir(d))) {
        int w;
        uint32_t ep;
        if (evlog_parse_name(de->d_name, &w, &ep) < 0)
            continue;
        char path[1000];
        snprintf(path, sizeof(path), "%s/%s", edir, de->d_name);
        struct evlog_file f;
        struct ls_err err = {0};
        if (evlog_read(path, &f, &err) < 0)
            continue;
        for (size_t i = 0; i < f.n; i++)
            if (f.recs[i].type == type) {
                if (f.recs[i].t < best)
                    best = f.recs[i].t;
                break;
            }
        evlog_unmap(&f);
    }
    closedir(d);
    return best;
}

/* Contract: one run of t; *up and *down in seconds. 0, 1 when the
 * topology is refused by the loader (exit 2), -1 on failure. */
static int one(const struct bench_opts *o, const struct topo *t, int k, double *up, double *down)
{
    char dir[600], wl[700], log[700], yaml[1024];
    snprintf(dir, sizeof(dir), "%s/startup-%d", o->tmp, k);
    snprintf(wl, sizeof(wl), "%s.yaml", dir);
    snprintf(log, sizeof(log), "%s.log", dir);
    snprintf(yaml, sizeof(yaml),
             "name: startup\nseed: 1\nduration: %dms\ncluster: %s\n"
             "lock: {impl: %s, ttl: 1s, retry: {attempts: 1000, delay: 1ms, jitter: 1ms}}\n"
             "workers: {count: %d, resources: 4, hold: 10ms, think: 1ms}\n",
             DURATION_MS, t->cluster, t->impl, t->workers);
    if (bench_write_file(wl, yaml) < 0)
        return -1;
    char *argv[] = {(char *)o->lockstorm, "run", wl, "--out", dir, "--quiet", "--format", "json",
                    NULL};
    int64_t launch = ls_now_ns();
    int code = bench_run(argv, log, 120 * LS_NS_PER_S);
    int64_t exited = ls_now_ns();
    if (code == 2)
        return 1;
    char rpath[700];
    snprintf(rpath, sizeof(rpath), "%s/run.json", dir);
    struct json *run = bench_read_json(rpath);
    int64_t start = run ? json_get_int(run, "start_mono_ns", 0) : 0;
    json_free(run);
    int64_t grant = first_event(dir, EV_ACQUIRE_OK);
    int64_t invoke = first_event(dir, EV_ACQUIRE_INVOKE);
    if (!start || grant == INT64_MAX || invoke == INT64_MAX) {
        fprintf(stderr, "bench_startup: %s: no grant (exit %d, see %s)\n", t->name, code, log);
        return -1;
    }
    *up = (double)(start + grant - launch) / 1e9;
    *down = (double)(exited - (start + invoke + (int64_t)DURATION_MS * LS_NS_PER_MS)) / 1e9;
    if (!o->keep) {
        char *rm[] = {"rm", "-rf", dir, NULL};
        bench_run(rm, NULL, 60 * LS_NS_PER_S);
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, NULL, NULL) < 0 || bench_tmp(&o) < 0)
        return 2;
    int reps = o.smoke ? 1 : 3;
    struct json *sec = json_new_obj();
    json_obj_set_str(sec, "method",
                     "lockstorm run, 1 s of load (hold 10ms), --format json; up = exec to the "
                     "first acquire_ok (event logs); down = first acquire_invoke + duration to "
                     "process exit (heal, stop workers, stop nodes, checkers, result.json); "
                     "median of runs");
    struct json *rows = json_obj_set(sec, "topologies", json_new_arr());
    struct json *targets = json_obj_set(sec, "targets", json_new_arr());
    int failures = 0, k = 0;
    fprintf(stderr, "start-up and teardown (median of %d)\n", reps);
    for (size_t i = 0; i < NTOPO; i++) {
        const struct topo *t = &topos[i];
        if (o.smoke && i != 0)
            continue;
        double ups[8], downs[8];
        int n = 0, refused = 0;
        for (int r = 0; r < reps; r++) {
            int rc = one(&o, t, k++, &ups[n], &downs[n]);
            if (rc == 1) {
                refused = 1;
                break;
            }
            if (rc < 0)
                failures++;
            else
                n++;
        }
        struct json *row = json_arr_push(rows, json_new_obj());
        json_obj_set_str(row, "topology", t->name);
        if (refused) {
            json_obj_set_bool(row, "available", 0);
            fprintf(stderr, "  %-50s  not available yet (the loader refuses it)\n", t->name);
            continue;
        }
        json_obj_set_bool(row, "available", 1);
        if (n == 0)
            continue;
        double up = bench_median(ups, n), down = bench_median(downs, n);
        json_obj_set_num(row, "first_grant_s", up);
        json_obj_set_num(row, "clean_exit_s", down);
        char name[160];
        snprintf(name, sizeof(name), "start-up to first grant: %s", t->name);
        bench_target(targets, name, up, "<=", 1, "s");
        snprintf(name, sizeof(name), "teardown to clean exit: %s", t->name);
        bench_target(targets, name, down, "<=", 1, "s");
        fprintf(stderr, "  %-50s  first grant %.3f s, clean exit %.3f s\n", t->name, up, down);
    }
    bench_print(sec);
    json_free(sec);
    bench_cleanup(&o);
    return failures ? 1 : 0;
}
