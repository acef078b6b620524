/*
 * target.c: picking the holder or acquirer a fault acts on (target.h).
 * Reads only what the env says the workers are doing; no signal is sent
 * here.
 */
#include "faults/target.h"

#include <stdio.h>

#include "faults/env.h"
#include "model/workload.h"
#include "util/rng.h"
#include "util/timeutil.h"

#define MAX_CANDIDATES 1024

int fault_worker_alive(const struct fault_env *env, int i)
{
    return env->ops->worker_alive(env->ctx, i);
}

const char *fault_res_name(const struct fault_env *env, int res, char *buf, size_t n)
{
    const struct workload *w = env->ops->workload ? env->ops->workload(env->ctx) : NULL;
    if (w)
        return workload_resource_name(w, res, buf, n);
    snprintf(buf, n, "r%d", res);
    return buf;
}

int fault_busy_with(const struct fault_env *env, int i, int acquiring, int res, int64_t *since)
{
    int h = env->ops->worker_busy(env->ctx, i, acquiring, since);
    return h >= 0 && (res < 0 || h == res) ? h : -1;
}

int fault_wait_busy(const struct fault_env *env, int acquiring, int res, int64_t deadline)
{
    int cand[MAX_CANDIDATES];
    int nw = env->ops->nworkers(env->ctx);
    while (ls_now_ns() < deadline && !env->ops->interrupted(env->ctx)) {
        int n = 0;
        for (int i = 0; i < nw && n < MAX_CANDIDATES; i++)
            if (fault_worker_alive(env, i) && fault_busy_with(env, i, acquiring, res, NULL) >= 0)
                cand[n++] = i;
        if (n == 0) {
            env->ops->sleep(env->ctx, 100 * LS_NS_PER_US);
            continue;
        }
        int i = cand[rng_below(env->ops->rng(env->ctx), (uint64_t)n)];
        if (acquiring) {
            int64_t best;
            env->ops->worker_busy(env->ctx, i, 1, &best);
            for (int k = 0; k < n; k++) {
                int64_t s;
                env->ops->worker_busy(env->ctx, cand[k], 1, &s);
                if (s < best) {
                    i = cand[k];
                    best = s;
                }
            }
        }
        return i;
    }
    return -1;
}

int fault_random_worker(const struct fault_env *env, int max)
{
    int cand[MAX_CANDIDATES], n = 0;
    int nw = env->ops->nworkers(env->ctx);
    if (max > MAX_CANDIDATES)
        max = MAX_CANDIDATES;
    for (int k = 0; k < nw && n < max; k++)
        if (fault_worker_alive(env, k))
            cand[n++] = k;
    return n ? cand[rng_below(env->ops->rng(env->ctx), (uint64_t)n)] : -1;
}
