/*
 * target.c: picking the holder or acquirer a fault acts on (target.h).
 * Reads only the workers' shared-memory state; no signal is sent here.
 */
#include "faults/target.h"

#include <stdatomic.h>

#include "harness/run.h"
#include "util/rng.h"
#include "util/timeutil.h"

#define MAX_CANDIDATES 1024

int fault_worker_alive(const struct run *r, int i)
{
    return r->workers && r->workers[i].pid > 0 && !r->workers[i].exited;
}

int fault_busy_with(const struct run *r, int i, int acquiring, int res, int64_t *since)
{
    const struct shm_worker *sw = &r->shm->w[i];
    int h = acquiring ? atomic_load(&sw->acquiring) : atomic_load(&sw->holding);
    if (since)
        *since = acquiring ? atomic_load(&sw->acquire_since) : atomic_load(&sw->hold_since);
    return h >= 0 && (res < 0 || h == res) ? h : -1;
}

int fault_wait_busy(struct run *r, int acquiring, int res, int64_t deadline)
{
    int cand[MAX_CANDIDATES];
    while (ls_now_ns() < deadline && !run_interrupted(r)) {
        int n = 0;
        for (int i = 0; i < r->nworkers && n < MAX_CANDIDATES; i++)
            if (fault_worker_alive(r, i) && fault_busy_with(r, i, acquiring, res, NULL) >= 0)
                cand[n++] = i;
        if (n == 0) {
            run_sleep(r, 100 * LS_NS_PER_US);
            continue;
        }
        int i = cand[rng_below(&r->fault_rng, (uint64_t)n)];
        if (acquiring)
            for (int k = 0; k < n; k++)
                if (atomic_load(&r->shm->w[cand[k]].acquire_since) <
                    atomic_load(&r->shm->w[i].acquire_since))
                    i = cand[k];
        return i;
    }
    return -1;
}
