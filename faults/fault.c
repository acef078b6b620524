/*
 * fault.c: the registry of fault kinds (static array, looked up by name).
 */
#include "faults/fault.h"

#include <string.h>

extern const struct fault_ops fault_pause;
extern const struct fault_ops fault_kill;
extern const struct fault_ops fault_stop;
extern const struct fault_ops fault_stall;
extern const struct fault_ops fault_latency;
extern const struct fault_ops fault_partition;
extern const struct fault_ops fault_bandwidth;
extern const struct fault_ops fault_slicer;
extern const struct fault_ops fault_command;
extern const struct fault_ops fault_clock;
extern const struct fault_ops fault_failover;
extern const struct fault_ops fault_loop_stall;

static const struct fault_ops *const registry[] = {
    &fault_pause,
    &fault_kill,
    &fault_stop,
    &fault_stall,
    &fault_latency,
    &fault_partition,
    &fault_bandwidth,
    &fault_slicer,
    &fault_command,
    &fault_clock,
    &fault_failover,
    &fault_loop_stall,
    NULL,
};

const struct fault_ops *fault_find(const char *name)
{
    for (int i = 0; registry[i]; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

const struct fault_ops *const *fault_all(void)
{
    return registry;
}

void fault_names(char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; registry[i] && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s%s", i ? ", " : "", registry[i]->name);
}

static const char *const target_names[] = {"holder", "worker:N", "random-worker", "all-workers",
                                           "node:N", "acquirer", "links", "primary"};

void fault_print_list(FILE *out)
{
    for (int i = 0; registry[i]; i++) {
        const struct fault_ops *f = registry[i];
        fprintf(out, "%-12s %s\n", f->name, f->help);
        fprintf(out, "%-12s targets:", "");
        for (int t = 0; t < (int)(sizeof(target_names) / sizeof(target_names[0])); t++)
            if (f->targets & (1u << t))
                fprintf(out, " %s", target_names[t]);
        fputc('\n', out);
        for (const struct opt_def *o = f->options; o && o->name; o++)
            fprintf(out, "%-12s %s (default %s): %s\n", "", o->name, o->def ? o->def : "-",
                    o->help);
    }
}
