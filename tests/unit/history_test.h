/*
 * history_test.h: what test_history.c (loading histories: JSONL, run
 * directories, a restarted worker's epochs) and test_history_deferred.c
 * (closed logs whose records the pass checks: damaged, cut, shortened,
 * read short) share: writing files, event logs (a worker's hold, an
 * epoch's records, a killed writer's) and run directories, and reading a
 * check's result.
 */
#ifndef LS_HISTORY_TEST_H
#define LS_HISTORY_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkers/check.h"
#include "model/evlog.h"
#include "util/json.h"

static inline int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static inline int64_t geti(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    if (!v || (v->type != JSON_NUM && v->type != JSON_BOOL))
        return -999999;
    return v->is_int || v->type == JSON_BOOL ? v->i : (int64_t)llround(v->d);
}

static inline const char *gets_(const struct json *r, const char *path)
{
    const struct json *v = json_path(r, path);
    return v && v->type == JSON_STR ? v->s : "(none)";
}

static inline int has_warning(const struct json *r, const char *needle)
{
    const struct json *w = json_obj_get(r, "warnings");
    for (size_t i = 0; w && w->type == JSON_ARR && i < w->n; i++)
        if (w->kids[i]->type == JSON_STR && strstr(w->kids[i]->s, needle))
            return 1;
    return 0;
}

static inline int mkdirs(const char *dir)
{
    char p[8192];
    snprintf(p, sizeof(p), "%s/events", dir);
    if (mkdir(dir, 0755) != 0 || mkdir(p, 0755) != 0)
        return -1;
    return 0;
}

/* `lockstorm log export` of h into the file at path. */
static inline int export_to(struct history *h, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    history_export_jsonl(h, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* A run directory with events/ and a run.json that ended at end_ns. */
static inline int make_rundir(const char *dir, const char *end_ns)
{
    char path[8192], text[256];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    snprintf(text, sizeof(text), "{\"format\":\"lockstorm-run\",\"version\":1,\"end_ns\":%s,"
             "\"interrupted\":false,\"leftover_keys\":[]}\n", end_ns);
    return mkdirs(dir) == 0 && write_file(path, text) == 0 ? 0 : -1;
}

static inline struct ev_rec rec(int64_t t_ms, int type, int res)
{
    struct ev_rec r;
    memset(&r, 0, sizeof(r));
    r.t = t_ms * 1000000;
    r.type = (uint8_t)type;
    r.res = (uint16_t)res;
    return r;
}

/* A worker that gets killed writes from a child that dies: returns 1 in
 * the parent once the child ended (*rc 0 when it wrote its records, -1
 * otherwise), 0 in the child, which writes and _exits. */
static inline int dying_writer(int *rc)
{
    pid_t pid = fork();
    if (pid == 0)
        return 0;
    int status;
    *rc = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0 ? 0 : -1;
    return 1;
}

/* Worker log with one grant+hold of res (lease until vu ms); closed or
 * left open (killed: the caller appends a crash record). */
static inline int write_worker(const char *dir, int id, int res, int64_t inv, int64_t ok,
                               int64_t vu, int64_t enter, int64_t exit_, int close_it)
{
    char path[8192];
    snprintf(path, sizeof(path), "%s/events/worker-%03d.bin", dir, id);
    int rc;
    if (!close_it && dying_writer(&rc))
        return rc;
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, 0, 0, 0, &err) != 0) {
        if (!close_it)
            _exit(1);
        return -1;
    }
    struct ev_rec r = rec(inv, EV_ACQUIRE_INVOKE, res);
    r.aux = 1;
    evlog_append(w, &r);
    r = rec(ok, EV_ACQUIRE_OK, res);
    r.valid_until = vu * 1000000;
    r.flags = EVF_FENCE;
    r.fence = (uint64_t)id + 1;
    snprintf(r.token, sizeof(r.token), "tok-%d", id);
    evlog_append(w, &r);
    r = rec(enter, EV_ENTER, res);
    evlog_append(w, &r);
    r = rec(enter + 1, EV_STORE_READ, res);
    r.flags = EVF_ACCEPTED;
    evlog_append(w, &r);
    if (!close_it)
        _exit(0); /* killed before exit: the log stays open */
    r = rec(exit_ - 1, EV_STORE_WRITE, res);
    r.flags = EVF_ACCEPTED;
    r.value = 1;
    evlog_append(w, &r);
    r = rec(exit_, EV_EXIT, res);
    evlog_append(w, &r);
    r = rec(exit_ + 1, EV_RELEASE_INVOKE, res);
    evlog_append(w, &r);
    r = rec(exit_ + 2, EV_RELEASE_OK, res);
    evlog_append(w, &r);
    return evlog_close(w, &err);
}

/* Log of worker id's epoch: the records at times t[0..n) (ms) of types
 * ty[0..n), resource 0, one grant; closed, or left open by a writer that
 * dies (a killed worker). */
static inline int write_epoch_log(const char *dir, int id, uint32_t epoch, const int64_t *t,
                                  const int *ty, int n, int close_it)
{
    char path[8192];
    evlog_path(path, sizeof(path), dir, id, epoch);
    int rc;
    if (!close_it && dying_writer(&rc))
        return rc;
    struct evlog_writer *w;
    struct ls_err err = {0, ""};
    if (evlog_open(&w, path, (uint32_t)id, epoch, 0, 0, &err) != 0) {
        if (!close_it)
            _exit(1);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        struct ev_rec r = rec(t[i], ty[i], 0);
        if (ty[i] == EV_ACQUIRE_OK) {
            r.valid_until = (t[i] + 100) * 1000000;
            snprintf(r.token, sizeof(r.token), "w%d.e%u", id, epoch);
        }
        evlog_append(w, &r);
    }
    if (!close_it)
        _exit(0);
    return evlog_close(w, &err);
}

#endif
