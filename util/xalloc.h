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
/* Contract: xcalloc's memory on whole cache lines of its own (aligned to
 * XALLOC_LINE, its size rounded up to one): for the state of a checker
 * that the pass may feed on another thread than its neighbours' (two
 * threads writing one line slow both: a checker's state next to another's
 * made the two-thread check of 10^7 events 10% slower, docs/performance.md
 * "False sharing"). Freed with free. For a few KB, not for anything
 * whose untouched pages should cost nothing (it writes every byte: the
 * stats checker's 151 KB of histograms made a 10,000-event check 24%
 * slower); calloc maps those apart anyway. */
#define XALLOC_LINE 64
void *xcalloc_lines(size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A large buffer that is written once and read at once (the checkers'
 * read buffers): one anonymous mapping, aligned on 2 MiB, whose whole 2 MiB
 * pages are given to the kernel's huge pages (MADV_HUGEPAGE) when it
 * allows them. Fresh memory is faulted in a page at a time: 1,024 faults
 * for 4 MiB, about 30 ms on a virtual machine whose faults are dear (the
 * two-vCPU guest of docs/performance.md), 2 with huge pages. n > 0. */
struct xbig {
    void *map;
    size_t len;
};
void *xbig_alloc(struct xbig *b, size_t n);
/* Contract: unmap b (zeroed: a second call, or one on a zeroed b, does nothing). */
void xbig_free(struct xbig *b);

/* Never returns. */
void xalloc_die(void) __attribute__((noreturn));

#endif
