/*
 * err.c: first-error-wins error recording and the code tables.
 */
#include "util/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int ls_err_vset(struct ls_err *e, int code, const char *fmt, va_list ap)
{
    int saved = errno;
    if (e && e->code == 0) {
        e->code = code;
        vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    }
    errno = saved;
    return code;
}

int ls_err_set(struct ls_err *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ls_err_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

int ls_err_errno(struct ls_err *e, int code, int errnum, const char *fmt, ...)
{
    int saved = errno;
    if (e && e->code == 0) {
        va_list ap;
        va_start(ap, fmt);
        ls_err_vset(e, code, fmt, ap);
        va_end(ap);
        size_t n = strlen(e->msg);
        snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(errnum));
    }
    errno = saved;
    return code;
}

void ls_err_clear(struct ls_err *e)
{
    if (e) {
        e->code = 0;
        e->msg[0] = '\0';
    }
}

const char *ls_strerror(int code)
{
    switch (code) {
#define LS_ERR_TEXT(name, value, text, exitc) case value: return text;
        LS_ERRORS(LS_ERR_TEXT)
#undef LS_ERR_TEXT
    }
    return "unknown error";
}

int ls_exit_code(int code)
{
    switch (code) {
#define LS_ERR_EXIT(name, value, text, exitc) case value: return exitc;
        LS_ERRORS(LS_ERR_EXIT)
#undef LS_ERR_EXIT
    }
    return 3;
}
