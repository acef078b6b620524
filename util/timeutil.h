/*
 * timeutil.h: clocks, durations and sleeping. Every timestamp lockstorm
 * records is CLOCK_MONOTONIC nanoseconds (one clock for every process on the
 * host, DESIGN.md "Clocks"); wall time is only for display.
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

/* Parse "250ms", "1.5s", "2m", "100us", "10ns", or "0" into nanoseconds.
 * A bare number other than 0 is refused (units are required). Returns 0, or
 * -1 with a reason in why (static text). Range: 0 .. 1e18 ns. */
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
