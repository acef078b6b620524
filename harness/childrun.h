/*
 * childrun.h: what the commands that run the lockstorm binary itself as
 * children (sweep, stress, matrix) and `run` share: creating an output
 * directory and asking whether it is empty, the stop signals they take
 * synchronously, the path of this binary, and why a child failed, read
 * from its log. Plain helpers over the file system and signal masks; no
 * state is kept here.
 */
#ifndef LS_CHILDRUN_H
#define LS_CHILDRUN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json;

/* Contract: creates path and its missing parents (parents 0755, path
 * itself mode). Returns 0, -EEXIST when path already existed, or another
 * negative errno (-ENAMETOOLONG past PATH_MAX). */
int childrun_mkdirs(const char *path, mode_t mode);

/* Contract: 1 when path is a directory with no entries, else 0 (also when
 * it cannot be opened). */
int childrun_dir_is_empty(const char *path);

/* Contract: *sigs becomes the set of stop signals the commands take
 * synchronously: SIGINT, SIGTERM, SIGHUP. The caller blocks or waits. */
void childrun_stop_signals(sigset_t *sigs);

/* Contract: the path of the running lockstorm binary into buf (n bytes,
 * NUL-terminated); "/proc/self/exe" when it cannot be read. */
void childrun_self(char *buf, size_t n);

/* Contract: why a child failed, in its words: the last line of the log at
 * path that holds "error:", else its last non-empty line (trailing CR/LF
 * dropped, cut to n - 1 bytes) into buf; "" when there is none or the log
 * cannot be read. */
void childrun_log_reason(const char *path, char *buf, size_t n);

/* Contract: sets "started_at" (UTC of real0, CLOCK_REALTIME ns), "ended_at"
 * (now) and "duration_s" (seconds since t0, CLOCK_MONOTONIC ns) on the
 * object p, in that order: the times of a stress or sweep report. */
void childrun_json_times(struct json *p, int64_t real0, int64_t t0);

#endif
