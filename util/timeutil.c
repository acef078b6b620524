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

static size_t digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9')
        n++;
    return n;
}

size_t ls_scan_number(const char *s, int flags, double *v)
{
    size_t i = 0, d;
    if (!s)
        return 0;
    if (s[i] == '-' && !(flags & LS_NUM_NO_SIGN))
        i++;
    if ((d = digits(s + i)) == 0)
        return 0;
    i += d;
    if (s[i] == '.') {
        if ((d = digits(s + i + 1)) == 0)
            return 0; /* "1." is no number */
        i += 1 + d;
    }
    if ((s[i] == 'e' || s[i] == 'E') && !(flags & LS_NUM_NO_EXP)) {
        size_t j = i + 1;
        if (s[j] == '+' || s[j] == '-')
            j++;
        if ((d = digits(s + j)) > 0)
            i = j + d;
    }
    /* strtod reads exactly the text scanned (the C locale's decimal point:
     * lockstorm never calls setlocale) */
    char buf[64];
    if (i >= sizeof(buf))
        return 0;
    memcpy(buf, s, i);
    buf[i] = '\0';
    errno = 0;
    double x = strtod(buf, NULL);
    if (errno == ERANGE && !isfinite(x))
        return 0;
    *v = x;
    return i;
}

int ls_parse_duration(const char *s, int64_t *ns, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!s || !*s) {
        *why = "empty duration";
        return -1;
    }
    double v;
    size_t len = ls_scan_number(s, LS_NUM_NO_SIGN | LS_NUM_NO_EXP, &v);
    if (len == 0) {
        *why = s[0] == '-' ? "negative duration"
                           : "not a duration (write e.g. 300ms, 1.5s, 2m)";
        return -1;
    }
    const char *end = s + len;
    if ((*end == 'e' || *end == 'E') && (end[1] == '-' || end[1] == '+' ||
                                         (end[1] >= '0' && end[1] <= '9'))) {
        *why = "a duration has no exponent (write 10s, not 1e1s)";
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
