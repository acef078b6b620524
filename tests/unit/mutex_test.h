/*
 * mutex_test.h: what test_mutex.c (hand-picked histories) and
 * test_mutex_oracle.c (random histories against a brute-force oracle)
 * share: the mutex checker run alone, and reading its result.
 */
#ifndef LS_MUTEX_TEST_H
#define LS_MUTEX_TEST_H

#include <math.h>
#include <stdint.h>

#include "checkers/check.h"
#include "util/json.h"

#define MS 1000000LL

/* The mutex checker alone on h: a fresh result fragment (caller frees). */
static inline struct json *judge(struct history *h, int cap, int64_t near_miss, int max_viol)
{
    struct check_params p;
    check_params_from(h, &p);
    p.capacity = cap;
    p.near_miss = near_miss;
    p.max_violations = max_viol;
    struct json *r = json_new_obj();
    check_mutex(h, &p, r);
    return r;
}

static inline int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v)
        return -999999;
    if (v->type == JSON_BOOL)
        return v->i;
    if (v->type != JSON_NUM)
        return -888888;
    return v->is_int ? v->i : (int64_t)llround(v->d);
}

/* A time in ms in the result, back in ns (exact for these magnitudes). */
static inline int64_t get_ns(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_NUM ? llround(v->d * 1e6) : -999999;
}

static inline const char *gets_(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "(none)";
}

static inline size_t len_of(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && (v->type == JSON_ARR || v->type == JSON_OBJ) ? v->n : (size_t)-1;
}

#endif
