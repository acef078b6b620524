/*
 * timeutil.h: clocks, durations and sleeping. Every timestamp lockstorm
 * records is CLOCK_MONOTONIC nanoseconds (one clock for every process on the
 * host, docs/checkers.md "Why the check is sound on one host"); wall time is only for display.
 */
#ifndef LS_TIMEUTIL_H
#define LS_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

#define LS_NS_PER_US 1000LL
#define LS_NS_PER_MS 1000000LL
#define LS_NS_PER_S 1000000000LL

int64_t ls_now_ns(void);       /* CLOCK_MONOTONIC */
int64_t ls_realtime_ns(void);  /* CLOCK_REALTIME */

/* The one grammar of numbers in workloads, --set and expectations
 * (docs/workload-reference.md "Numbers and durations"):
 *   number   = ["-"] digits ["." digits] [("e" | "E") ["+" | "-"] digits]
 * with flags LS_NUM_NO_SIGN (no "-") and LS_NUM_NO_EXP (no exponent). No
 * "+", no leading dot or white space, no hex, no inf or nan. Scans the
 * longest number at the start of s: returns the number of bytes it takes
 * (0 when s does not start with one) and its value in *v. */
#define LS_NUM_NO_SIGN 0x1
#define LS_NUM_NO_EXP 0x2
size_t ls_scan_number(const char *s, int flags, double *v);

/* Parse "250ms", "1.5s", "2m", "100us", "10ns", or "0" into nanoseconds:
 * digits ["." digits] unit (ls_scan_number without sign or exponent), or a
 * bare 0; a bare number other than 0 is refused (units are required).
 * Returns 0, or -1 with a reason in why (static text). Range: 0 .. 1e18 ns. */
int ls_parse_duration(const char *s, int64_t *ns, const char **why);
/* Format ns as the shortest exact unit form: "300ms", "1.5s", "0". */
void ls_format_duration(int64_t ns, char *buf, size_t n);

/* Sleep for ns (restarting after signals). */
void ls_sleep_ns(int64_t ns);
/* Sleep until the monotonic time deadline (absolute). */
void ls_sleep_until(int64_t mono_ns);

/* Format realtime ns as UTC "2026-11-22T05:31:22Z" (compact = "20261122T053122Z"). */
void ls_format_utc(int64_t real_ns, int compact, char *buf, size_t n);

#endif
