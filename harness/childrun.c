/*
 * childrun.c: the helpers of harness/childrun.h, shared by `run`, `sweep`,
 * `stress` and the compare matrix: output directories, the stop-signal set,
 * this binary's path, and a failed child's reason from its log.
 */
#include "harness/childrun.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/json.h"
#include "util/timeutil.h"

int childrun_mkdirs(const char *path, mode_t mode)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    return mkdir(tmp, mode) < 0 ? -errno : 0;
}

int childrun_dir_is_empty(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *de;
    int empty = 1;
    while (empty && (de = readdir(d)))
        empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
    closedir(d);
    return empty;
}

void childrun_stop_signals(sigset_t *sigs)
{
    sigemptyset(sigs);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGTERM);
    sigaddset(sigs, SIGHUP);
}

void childrun_self(char *buf, size_t n)
{
    ssize_t len = n > 1 ? readlink("/proc/self/exe", buf, n - 1) : -1;
    if (len > 0)
        buf[len] = '\0';
    else
        snprintf(buf, n, "/proc/self/exe");
}

void childrun_log_reason(const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    char line[1024];
    int have_error = 0;
    while (fgets(line, sizeof(line), f)) {
        size_t l = strlen(line);
        while (l && (line[l - 1] == '\n' || line[l - 1] == '\r'))
            line[--l] = '\0';
        int is_error = strstr(line, "error:") != NULL;
        if (l && (is_error || !have_error))
            snprintf(buf, n, "%s", line);
        have_error |= is_error;
    }
    fclose(f);
}

void childrun_json_times(struct json *p, int64_t real0, int64_t t0)
{
    char ts[64];
    ls_format_utc(real0, 0, ts, sizeof(ts));
    json_obj_set_str(p, "started_at", ts);
    ls_format_utc(ls_realtime_ns(), 0, ts, sizeof(ts));
    json_obj_set_str(p, "ended_at", ts);
    json_obj_set_num(p, "duration_s", (double)(ls_now_ns() - t0) / 1e9);
}
