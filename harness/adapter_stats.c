/*
 * adapter_stats.c: result.json's `adapter` section (see adapter_stats.h):
 * {name, version, protocol, caps, command, processes, starts, restarts,
 *  restart_failures, exits, requests, timeouts, late_replies,
 *  protocol_errors, protocol_error_samples, lost_events, log_events,
 *  expired_grants, renewed_events, stalls, renewed_stamps_ignored, record_events,
 *  record_stamps_ignored, record_bad_events, record_sequence_errors,
 *  per_worker: [...]}. Reads only the run directory, so
 * `lockstorm check` on a copied directory gives the same section.
 */
#include "harness/adapter_stats.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strbuf.h"

static const char *const counters[] = {"starts",          "restarts",     "restart_failures",
                                       "exits",           "requests",     "timeouts",
                                       "late_replies",    "protocol_errors", "lost_events",
                                       "log_events",      "expired_grants", "renewed_events",
                                       "stalls",          "renewed_stamps_ignored",
                                       /* record mode (locks/record.c) */
                                       "record_events",   "record_stamps_ignored",
                                       "record_unstamped",
                                       "record_bad_events", "record_sequence_errors", NULL};

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct json *read_json(const char *path)
{
    struct json *j = NULL;
    char why[128];
    if (json_load_file(path, &j, why, sizeof(why)) < 0 || j->type != JSON_OBJ) {
        json_free(j);
        j = NULL;
    }
    return j;
}

struct json *adapter_stats_load(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/adapters", dir);
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    char *names[4096];
    int nn = 0;
    struct dirent *de;
    while ((de = readdir(d)) && nn < 4096) {
        size_t l = strlen(de->d_name);
        if (strncmp(de->d_name, "worker-", 7) == 0 && l > 5 && !strcmp(de->d_name + l - 5, ".json"))
            names[nn++] = strdup(de->d_name);
    }
    closedir(d);
    if (nn == 0)
        return NULL;
    qsort(names, (size_t)nn, sizeof(names[0]), cmp_name);
    struct json *sec = json_new_obj();
    struct json *per = json_new_arr();
    struct json *samples = json_new_arr();
    struct json *warn = json_new_arr();
    int64_t sums[32] = {0}; /* one per counters[] entry */
    int first = 1;
    for (int i = 0; i < nn; i++) {
        snprintf(path, sizeof(path), "%s/adapters/%s", dir, names[i]);
        struct json *j = read_json(path);
        if (!j) {
            char w[512];
            snprintf(w, sizeof(w), "adapters/%s: not a readable JSON object", names[i]);
            json_arr_push(warn, json_new_str(w));
            free(names[i]);
            continue;
        }
        if (first) { /* the hello of the first adapter names the library */
            json_obj_set_str(sec, "name", json_get_str(j, "name", ""));
            json_obj_set_str(sec, "version", json_get_str(j, "version", ""));
            json_obj_set_int(sec, "protocol", json_get_int(j, "protocol", 0));
            const struct json *caps = json_obj_get(j, "caps");
            json_obj_set(sec, "caps", caps ? json_clone(caps) : json_new_arr());
            const struct json *cmd = json_obj_get(j, "command");
            json_obj_set(sec, "command", cmd ? json_clone(cmd) : json_new_arr());
            first = 0;
        }
        struct json *w = json_arr_push(per, json_new_obj());
        json_obj_set_int(w, "worker", json_get_int(j, "worker", -1));
        json_obj_set_int(w, "epoch", json_get_int(j, "epoch", 0));
        json_obj_set_bool(w, "started", json_get_int(j, "started", 0) != 0);
        for (int k = 0; counters[k]; k++) {
            int64_t v = json_get_int(j, counters[k], 0);
            sums[k] += v;
            json_obj_set_int(w, counters[k], v);
        }
        const struct json *sm = json_obj_get(j, "protocol_error_samples");
        for (size_t k = 0; sm && sm->type == JSON_ARR && k < sm->n && samples->n < 5; k++)
            if (sm->kids[k]->type == JSON_STR) {
                char s[400];
                snprintf(s, sizeof(s), "worker %lld: %s", (long long)json_get_int(j, "worker", -1),
                         sm->kids[k]->s);
                json_arr_push(samples, json_new_str(s));
            }
        json_free(j);
        free(names[i]);
    }
    if (first) { /* no file was readable */
        json_obj_set(sec, "name", json_new_null());
        json_obj_set(sec, "caps", json_new_arr());
    }
    json_obj_set_int(sec, "processes", (int64_t)per->n);
    for (int k = 0; counters[k]; k++)
        json_obj_set_int(sec, counters[k], sums[k]);
    /* record mode timed by reads: the order of two workers' steps is
     * then only as good as each worker's pipe delay */
    int64_t by_read = json_get_int(sec, "record_stamps_ignored", 0) +
                      json_get_int(sec, "record_unstamped", 0);
    if (by_read > 0) {
        char w[400];
        snprintf(w, sizeof(w),
                 "record mode: %lld events timed when the worker read them (no usable "
                 "host_mono_ms): steps of different workers may be ordered by pipe delay, so an "
                 "overlap of a millisecond or less may be an artefact of the timing",
                 (long long)by_read);
        json_arr_push(warn, json_new_str(w));
    }
    json_obj_set(sec, "protocol_error_samples", samples);
    json_obj_set(sec, "warnings", warn);
    json_obj_set(sec, "per_worker", per);
    return sec;
}
