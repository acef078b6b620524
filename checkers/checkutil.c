/*
 * checkutil.c: see checkutil.h.
 */
#include "checkers/checkutil.h"

#include <stdarg.h>
#include <stdio.h>

void check_warn(struct json *res, const char *fmt, ...)
{
    struct json *w = json_obj_get(res, "warnings");
    if (!w)
        w = json_obj_set(res, "warnings", json_new_arr());
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    json_arr_push(w, json_new_str(buf));
}

const char *check_res_name(const struct history *h, int r)
{
    return h->res_names && r >= 0 && r < h->nres ? h->res_names[r] : "?";
}
