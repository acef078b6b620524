/*
 * checker.c: the registry of checkers (checker.h): one line per checker, in
 * the order check_run finishes them within a phase (which is also the order
 * of their sections in result.json).
 */
#include "checkers/checker.h"

#include <string.h>

#define ENTRY(nm, sec, ph, pl, pa, ru) \
    {CHECKER_OPS_VERSION, nm, sec, pl, ph, pa, ru}

static const struct checker_ops mutex_ops =
    ENTRY("mutex", "checks.mutex, violations, incidents", CHECKER_JUDGE, 1, &mutex_checker, NULL);
static const struct checker_ops fencing_ops =
    ENTRY("fencing", "checks.fencing", CHECKER_JUDGE, 1, &fencing_checker, NULL);
static const struct checker_ops liveness_ops =
    ENTRY("liveness", "checks.liveness", CHECKER_JUDGE, 1, &liveness_checker, NULL);
static const struct checker_ops stats_ops =
    ENTRY("stats", "checks.stats, counts, latency, throughput, per_worker", CHECKER_JUDGE, 1,
          &stats_checker, NULL);
static const struct checker_ops jobs_ops =
    ENTRY("jobs", "checks.jobs", CHECKER_JUDGE, 0, NULL, check_jobs);
static const struct checker_ops commands_ops =
    ENTRY("commands", "checks.commands", CHECKER_JUDGE, 0, NULL, check_commands);
static const struct checker_ops windows_ops =
    ENTRY("windows", "fault_windows, phases", CHECKER_AFTER_STORIES, 0, &windows_checker, NULL);
static const struct checker_ops coverage_ops =
    ENTRY("coverage", "coverage, faults[].bit", CHECKER_AFTER_STORIES, 0, &coverage_checker,
          NULL);

static const struct checker_ops *const registry[] = {
    &mutex_ops, &fencing_ops, &liveness_ops, &stats_ops, &jobs_ops, &commands_ops, &windows_ops, &coverage_ops,
};
#define NREG ((int)(sizeof(registry) / sizeof(registry[0])))

const struct checker_ops *const *checker_all(int *n)
{
    *n = NREG;
    return registry;
}

const struct checker_ops *checker_find(const char *name)
{
    for (int i = 0; name && i < NREG; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}
