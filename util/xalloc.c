/*
 * xalloc.c: see xalloc.h.
 */
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

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

void *xcalloc_lines(size_t n, size_t size)
{
    if (size && n > (SIZE_MAX - (XALLOC_LINE - 1)) / size)
        xalloc_die();
    size_t bytes = n * size;
    bytes = bytes ? (bytes + XALLOC_LINE - 1) / XALLOC_LINE * XALLOC_LINE : XALLOC_LINE;
    void *p = aligned_alloc(XALLOC_LINE, bytes);
    if (!p)
        xalloc_die();
    return memset(p, 0, bytes);
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

#define XBIG_HUGE ((size_t)2 << 20)

void *xbig_alloc(struct xbig *b, size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t need = (n + pg - 1) / pg * pg;
    size_t len = need + XBIG_HUGE; /* room to align */
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        xalloc_die();
    char *base = (char *)(((uintptr_t)m + XBIG_HUGE - 1) / XBIG_HUGE * XBIG_HUGE);
    /* keep exactly [base, base + need): the kernel puts a huge page only on
     * a whole aligned 2 MiB inside a mapping, so a tail smaller than that
     * stays in small pages (a touched byte of a huge page zeroes all 2 MiB)
     * whether THP is "always" or "madvise" */
    if (base > (char *)m)
        munmap(m, (size_t)(base - (char *)m));
    if ((char *)m + len > base + need)
        munmap(base + need, (size_t)((char *)m + len - (base + need)));
    b->map = base;
    b->len = need;
#ifdef MADV_HUGEPAGE
    if (need >= XBIG_HUGE) /* refused (THP off): small pages, as malloc would give */
        madvise(base, need / XBIG_HUGE * XBIG_HUGE, MADV_HUGEPAGE);
#endif
    return base;
}

void xbig_free(struct xbig *b)
{
    if (b->map)
        munmap(b->map, b->len);
    b->map = NULL;
    b->len = 0;
}
