/*
 * err.h: lockstorm's error values. Functions return 0 or a negative code from
 * LS_ERRORS; long-lived objects carry a struct ls_err that keeps the FIRST
 * error set on it (curl's rule: the first message says what went wrong, later
 * ones are usually fallout). Messages are one lower-case line naming the step
 * and the object. Only main() turns codes into exit statuses.
 */
#ifndef LS_ERR_H
#define LS_ERR_H

#include <stdarg.h>

/* X(name, value, text, exit_code) */
#define LS_ERRORS(X)                                                \
    X(LS_OK, 0, "ok", 0)                                            \
    X(LS_EUSAGE, -1, "usage error", 2)                              \
    X(LS_EWORKLOAD, -2, "workload error", 2)                        \
    X(LS_EENV, -3, "environment error", 3)                          \
    X(LS_EIO, -4, "i/o error", 3)                                   \
    X(LS_ENOMEM, -5, "out of memory", 3)                            \
    X(LS_EPROTO, -6, "protocol error", 3)                           \
    X(LS_ETIMEOUT, -7, "timed out", 3)                              \
    X(LS_ECORRUPT, -8, "corrupt data", 4)                           \
    X(LS_EINTR, -9, "interrupted", 1)                               \
    X(LS_EINPUT, -10, "bad input", 2)

enum ls_errcode {
#define LS_ERR_ENUM(name, value, text, exitc) name = value,
    LS_ERRORS(LS_ERR_ENUM)
#undef LS_ERR_ENUM
};

struct ls_err {
    int code;       /* 0 while no error has been set */
    char msg[1024]; /* one line, no trailing newline */
};

/* Record an error on e unless one is already recorded; returns code either
 * way so callers can write `return ls_err_set(err, LS_EIO, "...")`. e may be
 * NULL. errno is preserved. */
int ls_err_set(struct ls_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int ls_err_vset(struct ls_err *e, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
/* Same, appending ": strerror(errnum)". */
int ls_err_errno(struct ls_err *e, int code, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ls_err_clear(struct ls_err *e);

const char *ls_strerror(int code);
/* Exit status for an error code (docs/result-format.md "Verdict": 2 usage, 3 environment, ...). */
int ls_exit_code(int code);

#endif
