/*
 * histload.h: history.c's reading helpers and the readers split out of it
 * (checkers/histfaults.c: faults.jsonl); not for checkers.
 */
#ifndef LS_HISTLOAD_H
#define LS_HISTLOAD_H

#include <stddef.h>
#include <sys/resource.h>

#include "checkers/history.h"

/* Contract: how many logs may keep a descriptor open for the checkers'
 * pass to read them with pread (pass_int.h "wpos", evlog_file has_fd):
 * half the open-file limit lim (NULL: the process's now), at most 4096; 0
 * with LS_CHECK_READ=map (every log is then read through its mapping, as
 * before pread: bench/ compares the two). */
int hist_fd_budget(const struct rlimit *lim);

/* A fault window with no end line yet (closed at the run end). */
#define NO_END INT64_MIN

/* What a line of a run directory's JSONL file is read for. */
struct line_ctx {
    struct history *h;
    const char *file;       /* its name, for warnings */
};

/* Contract: read the whole file at path into a new NUL-terminated buffer
 * (*buf, caller frees). Returns 0 or -errno; -EINVAL when path is not a
 * regular file. */
int hist_read_all(const char *path, char **buf, size_t *len);

/* Contract: the error code of a failed read (hist_read_all's -errno):
 * input the user named that is not there or not a file is LS_EINPUT (exit
 * 2), a file that exists but cannot be read LS_EIO (exit 3). */
int hist_read_code(int rc);

/* strerror for hist_read_all's codes ("not a regular file" for -EINVAL). */
const char *hist_read_error(int rc);

/* Contract: call fn(line, len, lineno, arg) for each non-blank line of
 * buf[0..n). Stops and returns the first non-zero value fn returns. */
int hist_each_line(const char *buf, size_t n,
                   int (*fn)(const char *line, size_t len, size_t lineno, void *arg), void *arg);

/* Contract: read dir's faults.jsonl into h->faults (after the events: a
 * window with no end line ends at h->end). Missing or unreadable: a
 * warning and a gap. */
void hist_load_faults(struct history *h, const char *dir);

/* Tests: when set, called by the JSONL loader with the history's
 * descriptor once the file is mapped, before a line is read (a file cut
 * short then faults as it is read: histjsonl.c map_lines). */
extern void (*jl_mapped_hook)(int fd);

#endif
