/*
 * bench_summary.c: the short table bench/run.sh prints at the end: every
 * target of every section of bench/results.json with its figure and
 * whether it is met. Not a benchmark itself; it only reads the file.
 */
#include <stdio.h>
#include <string.h>

#include "bench/common.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_summary RESULTS.json\n");
        return 2;
    }
    struct json *r = bench_read_json(argv[1]);
    const struct json *secs = r ? json_obj_get(r, "sections") : NULL;
    if (!secs || secs->type != JSON_OBJ) {
        fprintf(stderr, "bench_summary: %s: not a lockstorm-bench results file\n", argv[1]);
        json_free(r);
        return 1;
    }
    int met = 0, total = 0, unmeasured = 0;
    const struct json *smoke = json_obj_get(r, "smoke");
    printf("%-78s %12s %14s  %s\n", "target", "figure", "target", "");
    for (size_t i = 0; i < secs->n; i++) {
        const struct json *t = json_obj_get(secs->kids[i], "targets");
        for (size_t k = 0; t && t->type == JSON_ARR && k < t->n; k++) {
            const struct json *x = t->kids[k];
            const struct json *ok = json_obj_get(x, "met");
            int m = ok && ok->type == JSON_BOOL && ok->i;
            const struct json *v = json_obj_get(x, "value");
            int measured = v && v->type == JSON_NUM;
            char fig[32], want[48];
            if (measured)
                snprintf(fig, sizeof(fig), "%.3g %s", v->d, json_get_str(x, "unit", ""));
            else
                snprintf(fig, sizeof(fig), "-");
            snprintf(want, sizeof(want), "%s %.3g", json_get_str(x, "op", "?"),
                     json_get_num(x, "target", 0));
            printf("%-78.78s %12s %14s  %s\n", json_get_str(x, "name", "?"), fig, want,
                   m ? "met" : measured ? "NOT MET" : "NOT MEASURED");
            met += m;
            unmeasured += !measured;
            total++;
        }
    }
    printf("%d of %d targets met", met, total);
    if (unmeasured)
        printf(", %d not measured", unmeasured);
    printf("%s\n",
           smoke && smoke->type == JSON_BOOL && smoke->i ? " (smoke run: sizes too small to judge)"
                                                         : "");
    json_free(r);
    return 0;
}
