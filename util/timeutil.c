/*
 * timeutil.c: see timeutil.h.
 */
#include "util/timeutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t ls_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * LS_NS_PER_S + ts.tv_nsec;
}

int64_t ls_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * LS_NS_PER_S + ts.tv_nsec;
}

static const struct {
    const char *suffix;
    int64_t mult;
} units[] = {
    {"ns", 1}, {"us", LS_NS_PER_US}, {"ms", LS_NS_PER_MS}, {"s", LS_NS_PER_S},
    {"m", 60 * LS_NS_PER_S}, {"h", 3600 * LS_NS_PER_S},
};

int ls_parse_duration(const char *s, int64_t *ns, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!s || !*s) {
        *why = "empty duration";
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v)) {
        *why = "not a duration (write e.g. 300ms, 1.5s, 2m)";
        return -1;
    }
    if (v < 0) {
        *why = "negative duration";
        return -1;
    }
    int64_t mult = 0;
    if (*end == '\0') {
        if (v != 0) {
            *why = "duration needs a unit (ns, us, ms, s, m, h)";
            return -1;
        }
        *ns = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(end, units[i].suffix) == 0)
            mult = units[i].mult;
    if (!mult) {
        *why = "unknown duration unit (use ns, us, ms, s, m, h)";
        return -1;
    }
    double r = v * (double)mult;
    if (r > 1e18) {
        *why = "duration too large";
        return -1;
    }
    *ns = (int64_t)llround(r);
    return 0;
}

void ls_format_duration(int64_t ns, char *buf, size_t n)
{
    if (ns == 0) {
        snprintf(buf, n, "0");
        return;
    }
    static const struct {
        const char *suffix;
        int64_t mult;
    } fu[] = {{"h", 3600 * LS_NS_PER_S}, {"m", 60 * LS_NS_PER_S}, {"s", LS_NS_PER_S},
              {"ms", LS_NS_PER_MS}, {"us", LS_NS_PER_US}, {"ns", 1}};
    /* exact integer in the largest unit */
    for (size_t i = 0; i < sizeof(fu) / sizeof(fu[0]); i++) {
        if (ns % fu[i].mult == 0) {
            snprintf(buf, n, "%lld%s", (long long)(ns / fu[i].mult), fu[i].suffix);
            return;
        }
    }
    snprintf(buf, n, "%lldns", (long long)ns);
}

void ls_sleep_ns(int64_t ns)
{
    if (ns <= 0)
        return;
    ls_sleep_until(ls_now_ns() + ns);
}

void ls_sleep_until(int64_t mono_ns)
{
    struct timespec ts = {(time_t)(mono_ns / LS_NS_PER_S), (long)(mono_ns % LS_NS_PER_S)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

void ls_format_utc(int64_t real_ns, int compact, char *buf, size_t n)
{
    time_t t = (time_t)(real_ns / LS_NS_PER_S);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, compact ? "%Y%m%dT%H%M%SZ" : "%Y-%m-%dT%H:%M:%SZ", &tm);
}
