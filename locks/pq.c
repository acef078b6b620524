/*
 * pq.c: libpq loaded at the first connection (see pq.h).
 */
#define PQ_NO_MACROS
#include "locks/pq.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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
static char load_error[200];

/* The names libpq's runtime package installs (Debian: libpq5); the bare
 * name is the development link, for a build against a libpq elsewhere.
 * LS_LIBPQ=PATH in the environment loads that file instead. */
static const char *const sonames[] = {"libpq.so.5", "libpq.so"};

static void load(void)
{
    void *lib = NULL;
    char first[160] = "";
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
#define PQ_SYM(f)                                                                               \
    *(void **)(&a.f) = dlsym(lib, #f);                                                          \
    if (!a.f) {                                                                                 \
        snprintf(load_error, sizeof(load_error), "libpq has no %s: a libpq older than "         \
                 "lockstorm needs (9.3); install a current libpq5", #f);                        \
        return;                                                                                 \
    }
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
