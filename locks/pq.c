/*
 * pq.c: libpq loaded at the first connection (see pq.h).
 */
#define PQ_NO_MACROS
#include "locks/pq.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void finish_none(PGconn *c)
{
    (void)c;
}

static void clear_none(PGresult *r)
{
    (void)r;
}

struct pq_api pq_api = {.PQclear = clear_none, .PQfinish = finish_none};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[512];

/* The names libpq's runtime package installs (Debian: libpq5); the bare
 * name is the development link, for a build against a libpq elsewhere.
 * LS_LIBPQ=PATH in the environment loads that file instead. */
static const char *const sonames[] = {"libpq.so.5", "libpq.so"};

static void load(void)
{
    void *lib = NULL;
    char first[112] = ""; /* short: the install hint after it must fit a caller's 256 bytes */
    const char *env = getenv("LS_LIBPQ"); /* a libpq of the user's choice, alone */
    size_t nnames = env && *env ? 1 : sizeof(sonames) / sizeof(sonames[0]);
    for (size_t i = 0; !lib && i < nnames; i++) {
        lib = dlopen(env && *env ? env : sonames[i], RTLD_NOW | RTLD_LOCAL);
        const char *e = lib ? NULL : dlerror();
        if (!lib && i == 0)
            snprintf(first, sizeof(first), "%s", e ? e : "not found");
    }
    if (!lib) {
        snprintf(load_error, sizeof(load_error), "cannot load libpq (%s); install the "
                 "PostgreSQL client library (Debian: apt-get install libpq5)", first);
        return;
    }
    struct pq_api a;
    void *sym;
#define PQ_SYM(f)                                                                               \
    sym = dlsym(lib, #f);                                                                       \
    if (!sym) {                                                                                 \
        snprintf(load_error, sizeof(load_error), "%s has no %s: not libpq, or one too old; "    \
                 "install a current libpq5", env && *env ? env : "libpq", #f);                  \
        return;                                                                                 \
    }                                                                                           \
    memcpy(&a.f, &sym, sizeof(sym)); /* POSIX: a dlsym pointer may be a function's */
    PQ_FUNCS(PQ_SYM)
#undef PQ_SYM
    pq_api = a; /* all or nothing: a partial libpq leaves the stubs */
    load_error[0] = '\0';
}

int pq_load(char *why, size_t n)
{
    pthread_once(&once, load);
    if (!load_error[0])
        return 0;
    if (why && n)
        snprintf(why, n, "%s", load_error);
    return -1;
}
