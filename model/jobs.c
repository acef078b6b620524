/*
 * jobs.c: the duplicate-job workload's shared facts (see jobs.h): the
 * layers' names and echoes, the job stream's length, the step names.
 */
#include "model/jobs.h"

#include <stdio.h>
#include <string.h>

#include "model/workload.h"
#include "util/json.h"
#include "util/strbuf.h"

const struct jobs_layer jobs_layers[JOBS_NLAYERS] = {
    {"lock", JOB_LAYER_LOCK},
    {"idempotency", JOB_LAYER_IDEMPOTENCY},
    {"constraint", JOB_LAYER_CONSTRAINT},
};

const char *jobs_layers_text(unsigned layers, char *buf, size_t n)
{
    size_t j = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < JOBS_NLAYERS; k++) {
        if (!(layers & jobs_layers[k].bit))
            continue;
        int wr = snprintf(buf + j, n - j, "%s%s", j ? "+" : "", jobs_layers[k].name);
        if (wr < 0 || (size_t)wr >= n - j)
            break;
        j += (size_t)wr;
    }
    if (!j)
        snprintf(buf, n, "none");
    return buf;
}

void jobs_layers_yaml(unsigned layers, struct strbuf *sb)
{
    sb_puts(sb, " [");
    int first = 1;
    for (size_t k = 0; k < JOBS_NLAYERS; k++) {
        if (!(layers & jobs_layers[k].bit))
            continue;
        sb_printf(sb, "%s%s", first ? "" : ", ", jobs_layers[k].name);
        first = 0;
    }
    sb_puts(sb, "]\n");
}

struct json *jobs_layers_json(unsigned layers)
{
    struct json *arr = json_new_arr();
    for (size_t k = 0; k < JOBS_NLAYERS; k++)
        if (layers & jobs_layers[k].bit)
            json_arr_push(arr, json_new_str(jobs_layers[k].name));
    return arr;
}

int64_t jobs_total(const struct workload *w)
{
    int64_t iv = w->workers.jobs.interval > 0 ? w->workers.jobs.interval : 1;
    int64_t n = (w->duration + iv - 1) / iv; /* k * iv < duration */
    if (w->workers.jobs.count > 0 && w->workers.jobs.count < n)
        n = w->workers.jobs.count;
    return n;
}

static const char *const step_names[] = {
#define JOBS_NAME(name, val, text) [val] = text,
    JOB_STEPS(JOBS_NAME)
#undef JOBS_NAME
};
#define NSTEPS ((int)(sizeof(step_names) / sizeof(step_names[0])))

const char *job_step_name(int step)
{
    return step > 0 && step < NSTEPS && step_names[step] ? step_names[step] : "?";
}

int job_step_from_name(const char *name)
{
    for (int i = 1; i < NSTEPS; i++)
        if (step_names[i] && strcmp(step_names[i], name) == 0)
            return i;
    return 0;
}
