/*
 * stress.h: `lockstorm stress WORKLOAD` (docs/stress.md): runs one workload
 * over consecutive seeds, each an ordinary `lockstorm run` child into its
 * own run directory, until a run fails (or shows a named violation class),
 * then shrinks the failing workload QuickCheck-style (shorter, fewer
 * workers, resources and faults) while the class still appears, and writes
 * the smallest workload that reproduced it (reduced.yaml) with its evidence
 * and stress.json (every run, every reduction step).
 */
#ifndef LS_STRESS_H
#define LS_STRESS_H

#include <stddef.h>

#include "harness/sweep.h"
#include "util/json.h"

/* The failure classes `--until` accepts (harness/stress_class.c): the
 * violation classes of the checkers' counts (lock_broken, stale_holder,
 * ...), the names of the checkers with a checks.NAME verdict (mutex,
 * fencing, ...: that checker said invalid), and "fail" (the verdict).
 * Contract: 1 when name is one of them. */
int stress_class_valid(const char *name);
/* Contract: the result.json path of a count class ("lock_broken" ->
 * "checks.mutex.by_class.lock_broken"), NULL for a checker name, "fail"
 * or an unknown name. */
const char *stress_class_path(const char *name);
/* Contract: every class name, comma-separated, into buf (for the usage
 * error of a bad --until). */
void stress_class_list(char *buf, size_t n);
/* Contract: how often class name shows in the result document res: the
 * count at its result path, 1 for a checker whose verdict is invalid (or
 * "fail" and a FAIL verdict), 0 when absent. */
long long stress_class_count(const struct json *res, const char *name);
/* Contract: a new JSON object {class: count} of every count class with a
 * count above 0 in res, then each checker that said invalid as {name: 1};
 * caller frees. */
struct json *stress_classes_of(const struct json *res);
/* Contract: the class of what failed in res, NULL when none applies.
 * Without expectations: the first count class in the table's order of
 * severity (lock_broken first) above 0 whose checker said invalid, else
 * the first checker that said invalid. With expectations: the same among
 * the failed ones only (a failed expectation on a count class's path with
 * the count above 0, or on a path under checks.<checker> whose checker
 * said invalid); a count an expectation allowed is not a class. Static
 * storage. */
const char *stress_primary_class(const struct json *res);
/* Contract: the fewest workers that can show class name (2 for a class of
 * two parties, e.g. lock_broken; 1 otherwise). */
int stress_class_min_workers(const char *name);

/* `lockstorm stress WORKLOAD [--seeds N | --time T] [--until CLASS] ...`:
 * argv after "stress". Returns the exit status main() returns: 1 a run
 * failed (reduced or not), 0 no run failed and every run was judged, 2 bad
 * input (nothing started), 3 a run could not run, 4 some runs could not be
 * judged and none failed, 128 + N on signal N (children stopped by pid,
 * stress.json written). */
int stress_command(int argc, char **argv, sweep_resolver resolve);

#endif
