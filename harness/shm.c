/*
 * shm.c: see shm.h.
 */
#include "harness/shm.h"

#include <stddef.h>
#include <sys/mman.h>

static size_t shm_size(int n)
{
    return sizeof(struct shm) + (size_t)n * sizeof(struct shm_worker);
}

struct shm *shm_create(int nworkers)
{
    void *p = mmap(NULL, shm_size(nworkers), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    struct shm *s = p;
    s->nworkers = nworkers;
    for (int i = 0; i < nworkers; i++)
    {
        atomic_store(&s->w[i].holding, -1);
        atomic_store(&s->w[i].acquiring, -1);
    }
    return s;
}

void shm_destroy(struct shm *s)
{
    if (s)
        munmap(s, shm_size(s->nworkers));
}
