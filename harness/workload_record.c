/*
 * workload_record.c: the cross-key rules of lock.impl record (locks/record.c),
 * run by the loader once every key is loaded. In record mode the user's
 * program runs its own loop, so what lockstorm's worker loop would do
 * (jobs, a stall of an adapter's event loop, a shifted client clock through
 * an adapter's shim) is not available: each is refused at its position, and
 * nothing starts.
 */
#include "harness/workload_record.h"

#include <string.h>

#include "faults/clock.h"
#include "faults/fault.h"
#include "locks/lock.h"
#include "locks/record.h"
#include "model/yamltree.h"

/* The node to blame: root.section.key, else root.section, else root. */
static const struct ynode *at_key(const struct ynode *root, const char *section, const char *key)
{
    const struct ynode *s = ymap_get(root, section);
    const struct ynode *k = s ? ymap_get(s, key) : NULL;
    return k ? k : s ? s : root;
}

void workload_record_check(const struct workload *w, const struct ynode *root, struct ydiag *dg)
{
    if (!w->lock.ops || !w->lock.ops->record_next)
        return;
    if (w->workers.resources > RECORD_MAX_RES)
        ydiag_at(dg, at_key(root, "workers", "resources"),
                 "workers.resources: %lld resources; lock.impl record lists them in its hello, at "
                 "most %d; use fewer", (long long)w->workers.resources, RECORD_MAX_RES);
    if (w->workers.mode == WMODE_JOBS)
        ydiag_at(dg, at_key(root, "workers", "mode"),
                 "workers.mode: jobs is not available with lock.impl record (the program runs "
                 "its own loop); use workers.mode: locks");
    for (int i = 0; i < w->nfaults; i++) {
        const struct fault_spec *fs = &w->faults[i];
        if (fs->ops && strcmp(fs->ops->name, "loop_stall") == 0)
            ydiag_pos(dg, fs->line, fs->col,
                      "faults[%d]: kind loop_stall is not available with lock.impl record (the "
                      "record extension has no stall); use pause on target holder", i);
    }
    for (int k = 0; w->nemesis.enabled && k < w->nemesis.nkinds; k++)
        if (w->nemesis.kinds[k].ops && strcmp(w->nemesis.kinds[k].ops->name, "loop_stall") == 0)
            ydiag_at(dg, at_key(root, "nemesis", "kinds"),
                     "nemesis.kinds: loop_stall is not available with lock.impl record (the "
                     "record extension has no stall); leave it out");
    if (clockfault_client(w))
        ydiag_at(dg, at_key(root, "lock", "impl"),
                 "lock.impl: record does not run the program under the client clock shim yet; "
                 "client clock faults need lock.impl external");
}
