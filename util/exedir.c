/*
 * exedir.c: paths relative to the running binary (exedir.h), read from
 * /proc/self/exe so the answer does not depend on argv[0] or the cwd.
 */
#include "util/exedir.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int exe_relative(const char *const *rel, size_t nrel, int want_dir, char *out)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len <= 0)
        return 0;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    for (size_t i = 0; i < nrel; i++) {
        char cand[PATH_MAX + 64];
        struct stat st;
        snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
        int ok = want_dir ? stat(cand, &st) == 0 && S_ISDIR(st.st_mode)
                          : access(cand, R_OK) == 0;
        if (ok && realpath(cand, out))
            return 1;
    }
    return 0;
}
