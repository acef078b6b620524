/*
 * stress_class.c: the failure classes of `lockstorm stress --until CLASS`
 * (docs/stress.md "Classes") and how each is read from a run's result.json:
 * a table of count classes (a documented result path whose count above 0
 * means the class appeared), the checkers of the registry that write a
 * checks.NAME verdict (the class appeared when it says "invalid"), and
 * "fail" (the run's verdict). It reads result documents; it runs nothing.
 */
#include "harness/stress.h"

#include <stdio.h>
#include <string.h>

#include "checkers/checker.h"

struct count_class {
    const char *name;
    const char *path;   /* in result.json (model/resultpath.c documents it) */
    int min_workers;    /* the fewest workers that can show it */
};

/* In order of severity: the first one present names a failing run's class
 * when --until is not given (stress_primary_class). */
static const struct count_class count_classes[] = {
    {"lock_broken", "checks.mutex.by_class.lock_broken", 2},
    {"fenced_lost_updates", "checks.fencing.fenced_lost_updates", 2},
    {"fence_regressions", "checks.fencing.fence_regressions", 2},
    {"renewed_after_loss", "checks.mutex.renewed_after_loss", 2},
    {"duplicates", "checks.jobs.duplicates", 2},
    {"extra_effects", "checks.jobs.extra_effects", 2},
    {"stale_holder", "checks.mutex.by_class.stale_holder", 2},
    {"plain_lost_updates", "checks.fencing.plain_lost_updates", 2},
    {"missed", "checks.jobs.missed", 1},
    {"stuck_resources", "checks.liveness.stuck_resources", 1},
    {"crashes_without_next_grant", "checks.liveness.crashes_without_next_grant", 1},
};
#define NCOUNT ((int)(sizeof(count_classes) / sizeof(count_classes[0])))

/* Contract: 1 when checker c writes a "checks.<its name>" section (so its
 * verdict can be read there). */
static int has_section(const struct checker_ops *c)
{
    char want[80];
    snprintf(want, sizeof(want), "checks.%s", c->name);
    size_t n = strlen(want);
    for (const char *s = strstr(c->sections, want); s; s = strstr(s + 1, want))
        if ((s == c->sections || s[-1] == ' ') && (s[n] == '\0' || s[n] == ','))
            return 1;
    return 0;
}

static const struct count_class *find_count(const char *name)
{
    for (int i = 0; name && i < NCOUNT; i++)
        if (strcmp(count_classes[i].name, name) == 0)
            return &count_classes[i];
    return NULL;
}

static const struct checker_ops *find_checker(const char *name)
{
    const struct checker_ops *c = name ? checker_find(name) : NULL;
    return c && has_section(c) ? c : NULL;
}

int stress_class_valid(const char *name)
{
    return name && (strcmp(name, "fail") == 0 || find_count(name) || find_checker(name));
}

const char *stress_class_path(const char *name)
{
    const struct count_class *cc = find_count(name);
    return cc ? cc->path : NULL;
}

void stress_class_list(char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < NCOUNT && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", count_classes[i].name);
    int nc = 0;
    const struct checker_ops *const *all = checker_all(&nc);
    for (int i = 0; i < nc && len < n; i++)
        if (has_section(all[i]))
            len += (size_t)snprintf(buf + len, n - len, ", %s", all[i]->name);
    if (len < n)
        snprintf(buf + len, n - len, ", fail");
}

/* Contract: 1 when checks.<name>.verdict in res is "invalid". */
static int checker_invalid(const struct json *res, const char *name)
{
    const struct json *c = json_obj_get(json_obj_get(res, "checks"), name);
    return c && strcmp(json_get_str(c, "verdict", ""), "invalid") == 0;
}

long long stress_class_count(const struct json *res, const char *name)
{
    if (!res || !name)
        return 0;
    if (strcmp(name, "fail") == 0)
        return strcmp(json_get_str(res, "verdict", ""), "fail") == 0;
    const struct count_class *cc = find_count(name);
    if (cc) {
        const struct json *v = json_path(res, cc->path);
        if (!v || v->type != JSON_NUM)
            return 0;
        return v->is_int ? (long long)v->i : (long long)v->d;
    }
    return find_checker(name) && checker_invalid(res, name);
}

struct json *stress_classes_of(const struct json *res)
{
    struct json *o = json_new_obj();
    for (int i = 0; i < NCOUNT; i++) {
        long long c = stress_class_count(res, count_classes[i].name);
        if (c > 0)
            json_obj_set_int(o, count_classes[i].name, c);
    }
    int nc = 0;
    const struct checker_ops *const *all = checker_all(&nc);
    for (int i = 0; i < nc; i++)
        if (has_section(all[i]) && checker_invalid(res, all[i]->name))
            json_obj_set_int(o, all[i]->name, 1);
    return o;
}

/* Contract: 1 when path is checks.<name> or under it. */
static int under_checker(const char *path, const char *name)
{
    size_t n = strlen(name);
    return strncmp(path, "checks.", 7) == 0 && strncmp(path + 7, name, n) == 0 &&
           (path[7 + n] == '\0' || path[7 + n] == '.');
}

/* Contract: 1 when the count class cc is what failed in res: with
 * expectations, a failed one reads its path; without, its checker said
 * invalid. */
static int count_failed(const struct json *res, const struct json *ex, const struct count_class *cc)
{
    if (stress_class_count(res, cc->name) <= 0)
        return 0;
    for (size_t i = 0; ex && i < ex->n; i++) {
        const struct json *ok = json_obj_get(ex->kids[i], "ok");
        if (!(ok && ok->type == JSON_BOOL && ok->i) &&
            strcmp(json_get_str(ex->kids[i], "path", ""), cc->path) == 0)
            return 1;
    }
    if (ex)
        return 0;
    char name[64];
    const char *dot = strchr(cc->path + 7, '.');
    snprintf(name, sizeof(name), "%.*s", (int)(dot ? dot - (cc->path + 7) : 0), cc->path + 7);
    return checker_invalid(res, name);
}

/* Contract: 1 when checker c is what failed in res: it said invalid and,
 * with expectations, a failed one reads a path under checks.<its name>
 * that is not a count class's (those are count_failed's: one whose count
 * is 0 failed for want of it, which no class names). */
static int checker_failed(const struct json *res, const struct json *ex,
                          const struct checker_ops *c)
{
    if (!has_section(c) || !checker_invalid(res, c->name))
        return 0;
    for (size_t i = 0; ex && i < ex->n; i++) {
        const struct json *ok = json_obj_get(ex->kids[i], "ok");
        const char *path = json_get_str(ex->kids[i], "path", "");
        int counted = 0;
        for (int k = 0; k < NCOUNT && !counted; k++)
            counted = strcmp(count_classes[k].path, path) == 0;
        if (!(ok && ok->type == JSON_BOOL && ok->i) && !counted && under_checker(path, c->name))
            return 1;
    }
    return !ex;
}

const char *stress_primary_class(const struct json *res)
{
    const struct json *ex = json_obj_get(res, "expectations");
    if (ex && (ex->type != JSON_ARR || ex->n == 0))
        ex = NULL; /* no expectations: the checkers decided */
    for (int i = 0; i < NCOUNT; i++)
        if (count_failed(res, ex, &count_classes[i]))
            return count_classes[i].name;
    int nc = 0;
    const struct checker_ops *const *all = checker_all(&nc);
    for (int i = 0; i < nc; i++)
        if (checker_failed(res, ex, all[i]))
            return all[i]->name;
    return NULL;
}

int stress_class_min_workers(const char *name)
{
    const struct count_class *cc = find_count(name);
    if (cc)
        return cc->min_workers;
    if (name && (strcmp(name, "mutex") == 0 || strcmp(name, "fencing") == 0 ||
                 strcmp(name, "jobs") == 0))
        return 2;
    return 1;
}
