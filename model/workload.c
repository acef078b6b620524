/*
 * workload.c: the few questions about a loaded workload (model/workload.h)
 * that layers below harness/ ask: the lock's key prefix and the resource
 * names. The loader (harness/workload.c) fills the struct; nothing here
 * allocates.
 */
#include "model/workload.h"

#include <stdio.h>

const char *workload_key_prefix(const struct workload *w)
{
    return w->lock.key_prefix ? w->lock.key_prefix : WL_KEY_PREFIX;
}

const char *workload_resource_name(const struct workload *w, int64_t i, char *buf, size_t n)
{
    if (w->workers.resource_names && i >= 0 && i < w->workers.resources)
        return w->workers.resource_names[i];
    snprintf(buf, n, "r%lld", (long long)i);
    return buf;
}
