/*
 * xalloc.h: allocation that cannot fail. lockstorm treats running out of
 * memory while building its own data (histories, result models, text) as
 * fatal: these print one line and abort, which keeps every caller free of
 * NULL checks. Code that must survive a failed allocation (the worker's hot
 * path, anything sized by user input before validation) uses malloc and
 * reports LS_ENOMEM instead.
 */
#ifndef LS_XALLOC_H
#define LS_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Never returns. */
void xalloc_die(void) __attribute__((noreturn));

#endif
