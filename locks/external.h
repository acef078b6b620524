/*
 * external.h: the `external` lock implementation's options (external.c):
 * an adapter process per worker speaking docs/protocol.md. The command
 * and the adapter mapping are stored inline (fixed, documented sizes), so
 * the options struct needs no destructor beyond the options machinery's.
 */
#ifndef LS_EXTERNAL_H
#define LS_EXTERNAL_H

#include <stdint.h>

#include "locks/lock.h"

#define EXTERNAL_MAX_ARGS 64
#define EXTERNAL_COMMAND_MAX 4096   /* bytes of all argv strings, NULs included */
#define EXTERNAL_ADAPTER_MAX 4096   /* bytes of the adapter mapping as compact JSON */
#define RES_NAME_MAX LOCK_KEY_MAX   /* lock_key: "lockstorm:r<N>" by default */

struct external_options {
    char command[EXTERNAL_COMMAND_MAX]; /* argc strings, each NUL-terminated, back to back */
    int argc;
    char adapter[EXTERNAL_ADAPTER_MAX]; /* hello.options: a JSON object text */
    int64_t request_timeout;            /* ns */
    int64_t max_restarts;
};

extern const struct lock_ops lock_external;
/* The option hooks of `command` (an argv list) and of the mapping handed to
 * the adapter (any other OPT_CUSTOM key: it fills `adapter`), for an
 * options struct that begins with struct external_options (locks/record.c). */
extern const struct opt_hooks external_option_hooks;

/* Shared with the `record` lock (locks/record.c): the worker's process
 * argv, its files under the run directory and its stats file. */
struct adapter;
struct adapter_stats;
struct json;

/* Contract: argv[0..argc) point into o->command (borrowed), argv[argc] is
 * NULL; argv has EXTERNAL_MAX_ARGS + 1 slots. */
void external_argv(const struct external_options *o, char **argv);

/* Contract: with cfg->rundir, creates <rundir>/adapters and fills the
 * worker's paths there (worker-NNN.stderr, worker-NNN.log,
 * worker-NNN[.eE].json), each buffer n bytes; without a run directory
 * they are left as they are. Errors are "WHO: create DIR". */
int external_paths(const struct lock_config *cfg, const char *who, char *stderr_path,
                   char *log_path, char *stats_path, size_t n, struct ls_err *err);

/* Contract: the opening of adapters/worker-NNN[.eE].json (a new object the
 * caller owns): worker, epoch, the hello (name, version, protocol, caps as
 * the names of the bits of caps) and command (argv, NULL-terminated). */
struct json *external_stats_open(const struct adapter *ad, int worker, uint32_t epoch,
                                 unsigned caps, char *const *argv);

/* Contract: adds started, starts, restarts, restart_failures, exits (as
 * given), requests, timeouts, late_replies, protocol_errors,
 * protocol_error_samples, lost_events, log_events and renewed_events to o;
 * returns the samples array (owned by o) for the caller's own samples. */
struct json *external_stats_counters(struct json *o, const struct adapter *ad,
                                     const struct adapter_stats *st, int started,
                                     int64_t restarts, int64_t restart_failures, int64_t exits);

/* Contract: adds stderr and log (relative to the run directory when they
 * lie under adapters/), writes o and a newline to stats_path (best
 * effort: the run goes on without it) and frees o. */
void external_stats_close(struct json *o, const char *stderr_path, const char *log_path,
                          const char *stats_path);

#endif
