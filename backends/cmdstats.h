/*
 * cmdstats.h: the command load on the lock nodes (docs/checkers.md
 * "commands"). The harness samples every Redis lock node's INFO
 * commandstats (and its run_id, which changes when the node restarts and
 * its counters start again from zero) when the load phase starts and when
 * it ends, and writes both samples to the run directory as commands.json;
 * checkers/commands.c turns them into commands per type, per grant and per
 * second. Here: the parsing of INFO's text, the sampling, the document.
 * The storage node is never sampled: it is no lock node.
 */
#ifndef LS_BACKENDS_CMDSTATS_H
#define LS_BACKENDS_CMDSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "backends/cluster.h"

struct json;
struct workload;

#define CMDSTATS_FORMAT "lockstorm-commands"
#define CMDSTATS_VERSION 1

/* Contract: parse the text of INFO (any sections) into calls, an object
 * the caller owns: one member per "cmdstat_NAME:calls=N,..." line, NAME as
 * written (lower case, "script|load" for a subcommand) -> N. *run_id (when
 * not NULL, n >= 41) gets the "run_id:" line's value, "" when absent.
 * Lines it does not know are skipped. Returns the number of cmdstat lines
 * read. */
int cmdstats_parse(const char *text, size_t len, struct json *calls, char *run_id, size_t n);

/* Contract: one sample of every lock node of c (INFO server, then INFO
 * commandstats, on a fresh connection with a timeout of timeout_ns each):
 * a new array (caller frees), entry i for node i: {"ok":true,
 * "run_id":"...", "calls":{...}} or {"ok":false, "error":"why"}. Never
 * NULL. Each sample costs the node two INFO calls (and an AUTH when it has
 * a password), counted in the next sample. */
struct json *cmdstats_sample(const struct cluster *c, int64_t timeout_ns);

/* Contract: the commands.json document (caller frees) of a run whose lock
 * nodes are c, sampled at start (t_start_ms, run time) and at end
 * (t_end_ms); start and end are cmdstats_sample arrays, taken (freed
 * here; either may be NULL: not taken). When why is not NULL the load was
 * not measured at all (the nodes are not Redis servers): the document says
 * so ("measured": false, "why") and carries no sample. */
struct json *cmdstats_document(const struct cluster *c, struct json *start, struct json *end,
                               double t_start_ms, double t_end_ms, const char *why);

#endif
