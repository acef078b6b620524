/*
 * bench_hammer.c: benchmark 1, hammer throughput (docs/performance.md).
 * redis-single, hold 0, think 0, W = 1, 2, 8, 32 on 1 and W resources, with
 * and without the fault proxy and the store ops; commands/s served by the
 * lock node from INFO commandstats deltas over a steady window, against
 * redis-benchmark sending the same EVALSHA commands on W connections,
 * measured the same way; best of 3 interleaved repetitions on both sides.
 * Not a load generator of its own: it runs `lockstorm run` as users do.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/common.h"
#include "backends/cluster.h"
#include "util/proc.h"
#include "locks/redis_conn.h"
#include "util/timeutil.h"

#define TTL_MS "1000"

struct window {
    double cmds_per_s;     /* EVALSHA + EVAL served per second */
    double all_per_s;      /* every command, Lua's inner calls included */
    double acquires, releases; /* SET / GET calls in the window (inside the scripts) */
    double grants_win;     /* INCR calls in the window (fencing: one per grant) */
    double secs;
};

/* Contract: wait until the node at port serves EVALSHA (the load began),
 * then measure over [begin + warm, begin + warm + len]; w filled. Returns 0,
 * or -1 when the load never started within 20 s or INFO failed. alive: a
 * pid that must keep running (the load), polled while waiting. */
static int measure(int port, pid_t alive, int64_t warm, int64_t len, struct window *w)
{
    memset(w, 0, sizeof(*w));
    struct cmdstats s0, s1;
    int64_t give_up = ls_now_ns() + 20 * LS_NS_PER_S, begin = 0;
    uint64_t base = 0; /* the reference node counts on across loads */
    if (bench_cmdstats(port, &s0) == 0)
        base = bench_calls(&s0, "evalsha") + bench_calls(&s0, "eval");
    for (;;) {
        if (bench_cmdstats(port, &s0) == 0 &&
            bench_calls(&s0, "evalsha") + bench_calls(&s0, "eval") > base) {
            begin = s0.t;
            break;
        }
        if (ls_now_ns() > give_up || proc_wait(alive, 0, NULL) == 1)
            return -1;
        ls_sleep_ns(5 * LS_NS_PER_MS);
    }
    ls_sleep_until(begin + warm);
    if (bench_cmdstats(port, &s0) < 0)
        return -1;
    ls_sleep_until(begin + warm + len);
    if (bench_cmdstats(port, &s1) < 0)
        return -1;
    double dt = (double)(s1.t - s0.t) / 1e9;
    w->secs = dt;
    double cmds = (double)(bench_calls(&s1, "evalsha") + bench_calls(&s1, "eval")) -
                  (double)(bench_calls(&s0, "evalsha") + bench_calls(&s0, "eval"));
    w->cmds_per_s = cmds / dt;
    w->all_per_s = ((double)bench_calls_all(&s1) - (double)bench_calls_all(&s0)) / dt;
    w->acquires = (double)bench_calls(&s1, "set") - (double)bench_calls(&s0, "set");
    w->releases = (double)bench_calls(&s1, "get") - (double)bench_calls(&s0, "get");
    w->grants_win = (double)bench_calls(&s1, "incr") - (double)bench_calls(&s0, "incr");
    return 0;
}

/* Contract: the port of node 0 from dir/run.json once the harness wrote
 * it (polled up to 20 s while pid runs); -1 if never. */
static int node_port(const char *dir, pid_t pid)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    int64_t give_up = ls_now_ns() + 20 * LS_NS_PER_S;
    while (ls_now_ns() < give_up) {
        struct json *j = bench_read_json(path);
        const struct json *p = j ? json_path(j, "nodes.0.port") : NULL;
        int port = p && p->type == JSON_NUM ? (int)p->i : -1;
        json_free(j);
        if (port > 0)
            return port;
        if (proc_wait(pid, 0, NULL) == 1)
            return -1;
        ls_sleep_ns(5 * LS_NS_PER_MS);
    }
    return -1;
}

struct config {
    int w, r, proxy, store;
};

/* Contract: one lockstorm run of cfg; its row (with the window and
 * result.json figures) appended to rows and returned (borrowed), or NULL. */
static struct json *run_lockstorm(struct bench_opts *o, const struct config *cfg, int dur_ms,
                                  int64_t warm, int64_t len, struct window *win, struct json *rows)
{
    char dir[600], wl[700], log[700], yaml[1024];
    snprintf(dir, sizeof(dir), "%s/hammer-%d", o->tmp, o->seq++);
    snprintf(wl, sizeof(wl), "%s.yaml", dir);
    snprintf(log, sizeof(log), "%s.log", dir);
    snprintf(yaml, sizeof(yaml),
             "name: hammer\nseed: 1\nduration: %dms\n"
             /* no password: INFO is read here without AUTH, and the reference
              * redis-benchmark node has none either */
             "cluster: {nodes: 1, proxy: %s, password: none}\n"
             "lock: {impl: redis-single, ttl: " TTL_MS "ms, fencing: true,\n"
             "       retry: {attempts: 1, delay: 0, jitter: 0}}\n"
             "workers: {count: %d, resources: %d, hold: 0, think: 0, store: %s}\n",
             dur_ms, cfg->proxy ? "true" : "false", cfg->w, cfg->r, cfg->store ? "true" : "false");
    if (bench_write_file(wl, yaml) < 0)
        return NULL;
    char *argv[] = {(char *)o->lockstorm, "run", wl, "--out", dir, "--quiet", "--format", "json",
                    NULL};
    pid_t pid = bench_start(argv, log);
    if (pid < 0)
        return NULL;
    int port = node_port(dir, pid);
    int ok = port > 0 && measure(port, pid, warm, len, win) == 0;
    int code = bench_finish(pid, (int64_t)dur_ms * LS_NS_PER_MS + 120 * LS_NS_PER_S);
    char rpath[700];
    snprintf(rpath, sizeof(rpath), "%s/result.json", dir);
    struct json *res = bench_read_json(rpath);
    if (!ok || !res) {
        fprintf(stderr, "bench_hammer: run W=%d R=%d proxy=%d store=%d failed (exit %d, see %s)\n",
                cfg->w, cfg->r, cfg->proxy, cfg->store, code, log);
        json_free(res);
        return NULL;
    }
    struct json *row = json_arr_push(rows, json_new_obj());
    json_obj_set_int(row, "workers", cfg->w);
    json_obj_set_int(row, "resources", cfg->r);
    json_obj_set_bool(row, "proxy", cfg->proxy);
    json_obj_set_bool(row, "store", cfg->store);
    json_obj_set_num(row, "grants_per_s", json_get_num(json_obj_get(res, "throughput"),
                                                       "grants_per_s", 0));
    json_obj_set_num(row, "attempts_per_s", json_get_num(json_obj_get(res, "throughput"),
                                                         "attempts_per_s", 0));
    json_obj_set_num(row, "node_commands_per_s", win->cmds_per_s);
    json_obj_set_num(row, "node_all_commands_per_s", win->all_per_s);
    json_obj_set_num(row, "window_grants_per_s", win->grants_win / win->secs);
    json_obj_set_num(row, "window_attempts_per_s", win->acquires / win->secs);
    json_obj_set_str(row, "verdict", json_get_str(res, "verdict", "?"));
    json_free(res);
    if (!o->keep) {
        char *rm[] = {"rm", "-rf", dir, NULL};
        bench_run(rm, NULL, 60 * LS_NS_PER_S);
    }
    return row;
}

/* Contract: redis-benchmark with c connections sending argv words (the
 * EVALSHA command) to port, measured like a run; commands/s, or -1. */
static double run_reference(const struct bench_opts *o, int port, int c, int r, char **cmd,
                            int ncmd, int64_t warm, int64_t len)
{
    char portstr[16], cstr[16], rstr[16], log[600];
    snprintf(portstr, sizeof(portstr), "%d", port);
    snprintf(cstr, sizeof(cstr), "%d", c);
    snprintf(rstr, sizeof(rstr), "%d", r);
    snprintf(log, sizeof(log), "%s/redis-benchmark.log", o->tmp);
    char *argv[32];
    int n = 0;
    argv[n++] = "redis-benchmark";
    argv[n++] = "-h";
    argv[n++] = "127.0.0.1";
    argv[n++] = "-p";
    argv[n++] = portstr;
    argv[n++] = "-c";
    argv[n++] = cstr;
    argv[n++] = "-n";
    argv[n++] = "2000000000";
    if (r > 1) {
        argv[n++] = "-r";
        argv[n++] = rstr;
    }
    argv[n++] = "-q";
    for (int i = 0; i < ncmd; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    pid_t pid = bench_start(argv, log);
    if (pid < 0)
        return -1;
    struct window win;
    int rc = measure(port, pid, warm, len, &win);
    proc_stop(pid, SIGTERM, 2 * LS_NS_PER_S);
    return rc == 0 ? win.cmds_per_s : -1;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    /* --workers W: only that W (a quick side-by-side while optimizing) */
    static const char *const extra[] = {"--workers", NULL};
    const char *extra_val[1];
    if (bench_parse(argc, argv, &o, extra, extra_val) < 0 || bench_tmp(&o) < 0)
        return 2;
    signal(SIGPIPE, SIG_IGN);
    static const int ws_full[] = {1, 2, 8, 32}, ws_smoke[] = {2};
    const int *ws = o.smoke ? ws_smoke : ws_full;
    int nws = o.smoke ? 1 : 4;
    int64_t only_w = 0;
    int one_w[1];
    if (extra_val[0]) {
        if (bench_count("--workers", extra_val[0], 1, 1024, &only_w) < 0)
            return 2;
        one_w[0] = (int)only_w;
        ws = one_w;
        nws = 1;
    }
    int dur_ms = o.smoke ? 1200 : 2500;
    int64_t warm = (o.smoke ? 300 : 500) * LS_NS_PER_MS;
    int64_t len = (o.smoke ? 500 : 1600) * LS_NS_PER_MS;
    int64_t ref_len = (o.smoke ? 400 : 1000) * LS_NS_PER_MS;

    /* the reference node: a redis-server started as the run starts its nodes */
    struct node_proc ref;
    memset(&ref, 0, sizeof(ref));
    struct ls_err err = {0};
    if (node_start(&ref, o.tmp, "reference", 0, &err) < 0) {
        fprintf(stderr, "bench_hammer: reference node: %s\n", err.msg);
        return 1;
    }
    char acq_sha[64], rel_sha[64];
    const char *load_acq[] = {"SCRIPT", "LOAD", RLUA_ACQUIRE_NX_PX};
    const char *load_rel[] = {"SCRIPT", "LOAD", RLUA_COMPARE_DEL};
    if (bench_redis(ref.port, load_acq, 3, acq_sha, sizeof(acq_sha)) < 0 ||
        bench_redis(ref.port, load_rel, 3, rel_sha, sizeof(rel_sha)) < 0) {
        fprintf(stderr, "bench_hammer: SCRIPT LOAD on the reference node failed\n");
        node_stop(&ref);
        return 1;
    }

    struct json *sec = json_new_obj();
    json_obj_set_str(sec, "method",
                     "lock node commands/s = delta of INFO commandstats (evalsha+eval) over a "
                     "steady window of each run; reference = redis-benchmark, W connections, the "
                     "same EVALSHA commands (acquire script, release script), same window method, "
                     "combined for each run's acquire/release mix; grants/s and attempts/s from "
                     "result.json");
    struct json *rows = json_obj_set(sec, "runs", json_new_arr());
    struct json *refs = json_obj_set(sec, "reference", json_new_arr());
    struct json *targets = json_obj_set(sec, "targets", json_new_arr());
    struct json *scratch = json_new_arr();
    int reps = o.smoke ? 1 : 3;
    json_obj_set_int(sec, "repetitions", reps);
    int failures = 0;

    fprintf(stderr, "hammer (commands/s served by the lock node; ref = redis-benchmark, same "
            "connections and commands)\n");
    fprintf(stderr, "  %3s %3s  %9s  %9s %5s  %9s %5s  %9s %5s  %9s %5s  %9s\n", "W", "R",
            "ref", "direct", "x ref", "+store", "x ref", "proxy", "x dir", "proxy+st", "x dir",
            "grants/s");
    for (int i = 0; i < nws; i++) {
        int w = ws[i];
        int rs[2] = {1, w};
        int nr = w == 1 || o.smoke ? 1 : 2;
        if (o.smoke)
            rs[0] = w;
        for (int k = 0; k < nr; k++) {
            int r = rs[k];
            /* reference: acquire and release commands, this W and R */
            char *acq[] = {"EVALSHA", acq_sha, "2",
                           r > 1 ? "lockstorm:r__rand_int__" : "lockstorm:r0",
                           r > 1 ? "lockstorm:fence:r__rand_int__" : "lockstorm:fence:r0",
                           "w000.00000000001", TTL_MS, "1"};
            char *rel[] = {"EVALSHA", rel_sha, "1",
                           r > 1 ? "lockstorm:r__rand_int__" : "lockstorm:r0",
                           "w000.00000000001"};
            /* best of `reps` interleaved repetitions on both sides: on a shared
             * machine noise only ever slows a side down */
            double r_acq = -1, r_rel = -1;
            double cmds[2][2] = {{0, 0}, {0, 0}}, refmix[2][2] = {{0, 0}, {0, 0}}, gps = 0;
            struct window best[2][2];
            struct json *bestrow[2][2] = {{NULL, NULL}, {NULL, NULL}};
            memset(best, 0, sizeof(best));
            for (int rep = 0; rep < reps; rep++) {
                double a1 = run_reference(&o, ref.port, w, r, acq, 8, warm, ref_len);
                double a2 = run_reference(&o, ref.port, w, r, rel, 5, warm, ref_len);
                r_acq = a1 > r_acq ? a1 : r_acq;
                r_rel = a2 > r_rel ? a2 : r_rel;
                for (int proxy = 0; proxy < 2; proxy++)
                    for (int store = 0; store < 2; store++) {
                        struct config cfg = {w, r, proxy, store};
                        struct window win;
                        struct json *row = run_lockstorm(&o, &cfg, dur_ms, warm, len, &win, scratch);
                        if (!row) {
                            failures++;
                            continue;
                        }
                        if (!bestrow[proxy][store] || win.cmds_per_s > best[proxy][store].cmds_per_s) {
                            best[proxy][store] = win;
                            bestrow[proxy][store] = row;
                        }
                    }
            }
            struct json *rf = json_arr_push(refs, json_new_obj());
            json_obj_set_int(rf, "connections", w);
            json_obj_set_int(rf, "resources", r);
            json_obj_set_num(rf, "acquire_per_s", r_acq);
            json_obj_set_num(rf, "release_per_s", r_rel);
            if (r_acq <= 0 || r_rel <= 0) {
                fprintf(stderr, "bench_hammer: redis-benchmark failed (is redis-tools installed? "
                        "see %s/redis-benchmark.log)\n", o.tmp);
                failures++;
                continue;
            }
            for (int proxy = 0; proxy < 2; proxy++)
                for (int store = 0; store < 2; store++) {
                    struct json *row = bestrow[proxy][store];
                    if (!row)
                        continue;
                    const struct window *win = &best[proxy][store];
                    double a = win->acquires, g = win->releases;
                    double mix = (a + g) > 0 ? (a + g) / (a / r_acq + g / r_rel) : 0;
                    cmds[proxy][store] = win->cmds_per_s;
                    refmix[proxy][store] = mix;
                    struct json *keep = json_arr_push(rows, json_clone(row));
                    json_obj_set_num(keep, "reference_commands_per_s", mix);
                    json_obj_set_num(keep, "x_reference", ratio(win->cmds_per_s, mix));
                    if (!proxy && !store)
                        gps = json_get_num(row, "grants_per_s", 0);
                }
            /* scratch holds every repetition's row; only the best are kept */
            json_free(scratch);
            scratch = json_new_arr();
            char name[160];
            snprintf(name, sizeof(name), "hammer W=%d R=%d direct, store off: commands/s x "
                     "redis-benchmark", w, r);
            bench_target(targets, name, ratio(cmds[0][0], refmix[0][0]), ">=", 0.9, "x");
            snprintf(name, sizeof(name), "hammer W=%d R=%d proxy (idle) x direct, store off", w, r);
            bench_target(targets, name, ratio(cmds[1][0], cmds[0][0]), ">=", 0.8, "x");
            fprintf(stderr, "  %3d %3d  %9.0f  %9.0f %5.2f  %9.0f %5.2f  %9.0f %5.2f  %9.0f %5.2f  "
                    "%9.0f\n", w, r, refmix[0][0], cmds[0][0], ratio(cmds[0][0], refmix[0][0]),
                    cmds[0][1], ratio(cmds[0][1], refmix[0][1]), cmds[1][0],
                    ratio(cmds[1][0], cmds[0][0]), cmds[1][1], ratio(cmds[1][1], cmds[0][1]), gps);
        }
    }
    fprintf(stderr, "  (direct/proxy: without/with the fault proxy; +store: protected-resource ops "
            "on, the default; x ref for +store compares with the same mix)\n");
    node_stop(&ref);
    json_free(scratch);
    bench_print(sec);
    json_free(sec);
    bench_cleanup(&o);
    return failures ? 1 : 0;
}
