/*
 * checkutil.h: small helpers the checkers share (warnings in the result
 * fragment, unit conversion, resource names). Not a checker itself.
 */
#ifndef LS_CHECKUTIL_H
#define LS_CHECKUTIL_H

#include <stdint.h>

#include "checkers/history.h"
#include "util/json.h"

/* Append one warning line to res["warnings"] (created when missing). */
void check_warn(struct json *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Resource r's name, "?" when out of range. Borrowed from h. */
const char *check_res_name(const struct history *h, int r);

static inline double ns_ms(int64_t ns)
{
    return (double)ns / 1e6;
}

#endif
