/*
 * xalloc.c: see xalloc.h.
 */
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xalloc_die(void)
{
    fputs("lockstorm: fatal: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        xalloc_die();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        xalloc_die();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        xalloc_die();
    return p;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p)
        xalloc_die();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s ? s : "", n);
    if (!p)
        xalloc_die();
    return p;
}
