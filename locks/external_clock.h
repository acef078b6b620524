/*
 * external_clock.h: an external lock's adapter under client clock faults
 * (docs/faults.md "Workers: the client clock"). The adapter process runs
 * with the LD_PRELOAD clock shim reading its worker's client clock file;
 * the watcher here notices each change a clock fault writes into that file
 * (its generation) and probes the adapter with the `clock` extension
 * (docs/protocol.md), appending what the adapter's runtime showed to
 * adapters/worker-NNN.clock.jsonl, which the clock fault quotes on its
 * start and end lines (faults/clock.c). Used by external.c only.
 */
#ifndef LS_EXTERNAL_CLOCK_H
#define LS_EXTERNAL_CLOCK_H

#include <stdint.h>

#include "locks/adapter.h"
#include "util/err.h"

#define EXTCLOCK_POLL_NS (20LL * 1000 * 1000)      /* how often a hold looks at the file */
#define EXTCLOCK_PROBE_TIMEOUT_NS (500LL * 1000 * 1000)
#define EXTCLOCK_TOLERANCE_MS 2.0                  /* Date.now() has whole milliseconds */

struct extclock;

/* Contract: map clock_file (a client clock control file, util/clockctl.h)
 * and find the shim; the probes go to out_path (appended). *out is freed
 * with extclock_close. Returns 0, or a negative code with err set (no
 * shim: LS_EENV, saying where it was looked for). */
int extclock_open(struct extclock **out, const char *clock_file, const char *out_path,
                  struct ls_err *err);
/* The adapter's environment additions: LD_PRELOAD=<shim> and
 * LOCKSTORM_CLOCK_FILE=<clock_file>, NULL-terminated; owned by x. */
char *const *extclock_env(const struct extclock *x);
/* Contract: when the clock file's generation changed since the last probe
 * (or the adapter was started again since), probe adapter a once and
 * append one line to out_path; otherwise return at once. Safe from two
 * threads (one probes, the other skips). Accepts x NULL. */
void extclock_poll(struct extclock *x, struct adapter *a);
void extclock_close(struct extclock *x);

#endif
