/*
 * bench_report.c: benchmark 6, report generation. Generates a synthetic
 * run directory of 10^7 events (bench/histgen.h) and times, each as its own
 * process, `lockstorm check DIR --format json` (load + checkers + result.json)
 * and `lockstorm report DIR` (the same plus every report: text, JUnit,
 * gnuplot .dat/.gp/.svg charts, HTML). Report generation = the difference.
 * Judged on CPU time (wall time too is reported). Target: <= 5 s to write
 * every chart and the HTML for 10^7 events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/common.h"
#include "bench/histgen.h"
#include "util/timeutil.h"

int main(int argc, char **argv)
{
    static const char *const extra[] = {"--events", NULL};
    const char *val[1];
    struct bench_opts o;
    if (bench_parse(argc, argv, &o, extra, val) < 0 || bench_tmp(&o) < 0)
        return 2;
    int64_t n = o.smoke ? 200000 : 10000000;
    if (val[0] && bench_count("--events", val[0], 1000, 1e10, &n) < 0)
        return 2;
    char dir[600], log[700];
    snprintf(dir, sizeof(dir), "%s/report-run", o.tmp);
    snprintf(log, sizeof(log), "%s/report.log", o.tmp);
    struct histgen_opts go = {.events = n, .resources = 16, .violate_every = 1000, .rundir = dir};
    struct histgen_result g;
    if (histgen(&go, &g) < 0)
        return 1;
    json_free(g.expected);

    char *check[] = {(char *)o.lockstorm, "check", dir, "--format", "json", NULL};
    char *report[] = {(char *)o.lockstorm, "report", dir, NULL};
    /* best of 2 each, alternating. The figure is CPU time (user + system of
     * the process and of the gnuplot children it waited for): on a shared
     * machine wall time also counts everybody else's turns on the CPUs. */
    struct bench_usage uc, ur;
    struct bench_usage bc = {.wall_s = 1e30, .cpu_s = 1e30}, br = bc;
    for (int k = 0; k < (o.smoke ? 1 : 2); k++) {
        if (bench_run_usage(check, log, &uc) < 0 || bench_run_usage(report, log, &ur) < 0)
            return 1;
        if (uc.cpu_s < bc.cpu_s)
            bc = uc;
        if (ur.cpu_s < br.cpu_s)
            br = ur;
    }
    struct stat st;
    char svg[700], html[700];
    snprintf(svg, sizeof(svg), "%s/timeline.svg", dir);
    snprintf(html, sizeof(html), "%s/report.html", dir);
    int have_svg = stat(svg, &st) == 0, have_html = stat(html, &st) == 0;
    double reports = br.cpu_s - bc.cpu_s;

    struct json *sec = json_new_obj();
    json_obj_set_str(sec, "method",
                     "synthetic run directory; best of 2, CPU time (user+system, gnuplot children "
                     "included): `lockstorm report DIR` (every format) minus `lockstorm check DIR "
                     "--format json` (load + checkers)");
    json_obj_set_int(sec, "events", g.events);
    json_obj_set_num(sec, "check_json_cpu_s", bc.cpu_s);
    json_obj_set_num(sec, "check_json_wall_s", bc.wall_s);
    json_obj_set_num(sec, "report_all_cpu_s", br.cpu_s);
    json_obj_set_num(sec, "report_all_wall_s", br.wall_s);
    json_obj_set_num(sec, "reports_only_cpu_s", reports);
    json_obj_set_num(sec, "reports_only_wall_s", br.wall_s - bc.wall_s);
    json_obj_set_bool(sec, "charts_written", have_svg);
    json_obj_set_bool(sec, "html_written", have_html);
    json_obj_set_int(sec, "report_exit", br.exit);
    struct json *t = json_obj_set(sec, "targets", json_new_arr());
    char name[96];
    snprintf(name, sizeof(name), "report generation (charts + HTML), %lld events",
             (long long)g.events);
    bench_target(t, name, reports, "<=", 5, "s");
    bench_print(sec);
    fprintf(stderr, "reports: %lld events: check %.2f s CPU (%.2f wall), report (all formats) %.2f s "
            "CPU (%.2f wall) -> charts + HTML %.2f s CPU%s%s\n", (long long)g.events, bc.cpu_s,
            bc.wall_s, br.cpu_s, br.wall_s, reports,
            have_svg ? "" : " (no .svg: gnuplot missing?)", have_html ? "" : " (no report.html)");
    json_free(sec);
    bench_cleanup(&o);
    return (bc.exit > 1 && bc.exit != 4) || (br.exit > 1 && br.exit != 4) || !have_html ? 1 : 0;
}
