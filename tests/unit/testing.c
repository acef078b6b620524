/*
 * testing.c: see testing.h.
 */
#define _XOPEN_SOURCE 700
#include "tests/unit/testing.h"

#include "checkers/history.h"

#include <dirent.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

int t_passed, t_failed;
const char *t_current = "";

int t_finish(void)
{
    printf("%d passed, %d failed\n", t_passed, t_failed);
    return t_failed ? 1 : 0;
}

char *t_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/lstest-XXXXXX", base && *base ? base : "/tmp");
    char *p = mkdtemp(tmpl);
    if (!p) {
        perror("mkdtemp");
        exit(2);
    }
    return strdup(p);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

void t_rmdir(const char *path)
{
    if (path)
        nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int t_load_jsonl(const char *dir, const char *text, struct history *h)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/h.jsonl", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    if (fclose(f) != 0)
        return -1;
    struct ls_err err = {0, ""};
    memset(h, 0, sizeof(*h));
    int rc = history_load_jsonl(path, h, &err);
    if (rc)
        fprintf(stderr, "load: %s\n", err.msg);
    return rc;
}

int t_open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own descriptor */
}

uint64_t t_env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return dflt;
    unsigned long long v = strtoull(s, &end, 10);
    return *end ? dflt : (uint64_t)v;
}
