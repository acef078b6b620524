/*
 * clockctl.c: the harness's side of the clock control files (clockctl.h):
 * create, map, change under the sequence lock, read the readers'
 * acknowledgement, name the files, find the LD_PRELOAD shim. It never
 * changes a clock of its own process.
 */
#include "util/clockctl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/exedir.h"

int clockctl_create(const char *path, struct ls_err *err)
{
    struct ls_clockctl c;
    memset(&c, 0, sizeof(c));
    c.magic = LS_CLOCKCTL_MAGIC;
    c.version = LS_CLOCKCTL_VERSION;
    double one = 1.0;
    memcpy(&c.rate_bits, &one, sizeof(one));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return ls_err_errno(err, LS_EIO, errno, "clock control file %s: create", path);
    ssize_t w = write(fd, &c, sizeof(c));
    int e = errno;
    close(fd);
    if (w != (ssize_t)sizeof(c))
        return ls_err_errno(err, LS_EIO, w < 0 ? e : EIO, "clock control file %s: write", path);
    return 0;
}

int clockctl_map(const char *path, struct ls_clockctl **out, struct ls_err *err)
{
    *out = NULL;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return ls_err_errno(err, LS_EIO, errno, "clock control file %s: open", path);
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(struct ls_clockctl)) {
        close(fd);
        return ls_err_set(err, LS_EIO, "clock control file %s: too short", path);
    }
    void *p = mmap(NULL, sizeof(struct ls_clockctl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return ls_err_errno(err, LS_EIO, e, "clock control file %s: mmap", path);
    struct ls_clockctl *c = p;
    if (c->magic != LS_CLOCKCTL_MAGIC || c->version != LS_CLOCKCTL_VERSION) {
        munmap(p, sizeof(*c));
        return ls_err_set(err, LS_EIO, "clock control file %s: not a version %u control file",
                          path, LS_CLOCKCTL_VERSION);
    }
    *out = c;
    return 0;
}

void clockctl_unmap(struct ls_clockctl *c)
{
    if (c)
        munmap(c, sizeof(*c));
}

/* Contract: replace c's state with st under the sequence lock (one writer:
 * the harness). Returns the new generation. */
static uint64_t write_state(struct ls_clockctl *c, int64_t base_real, int64_t base_shifted,
                            double rate)
{
    uint64_t s = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&c->seq, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uint64_t rb;
    memcpy(&rb, &rate, sizeof(rb));
    uint64_t gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&c->base_real, base_real, __ATOMIC_RELAXED);
    __atomic_store_n(&c->base_shifted, base_shifted, __ATOMIC_RELAXED);
    __atomic_store_n(&c->rate_bits, rb, __ATOMIC_RELAXED);
    __atomic_store_n(&c->gen, gen, __ATOMIC_RELAXED);
    __atomic_store_n(&c->seq, s + 2, __ATOMIC_RELEASE);
    return gen;
}

uint64_t clockctl_jump(struct ls_clockctl *c, int64_t now, int64_t jump_ns)
{
    struct ls_clockstate st;
    ls_clockctl_snapshot(c, &st);
    return write_state(c, now, ls_clockstate_apply(&st, now) + jump_ns, st.rate);
}

uint64_t clockctl_set_rate(struct ls_clockctl *c, int64_t now, double rate)
{
    struct ls_clockstate st;
    ls_clockctl_snapshot(c, &st);
    return write_state(c, now, ls_clockstate_apply(&st, now), rate);
}

uint64_t clockctl_reset(struct ls_clockctl *c)
{
    return write_state(c, 0, 0, 1.0);
}

uint64_t clockctl_acked(const struct ls_clockctl *c, int64_t *pid)
{
    uint64_t g = __atomic_load_n(&c->ack_gen, __ATOMIC_ACQUIRE);
    if (pid)
        *pid = __atomic_load_n(&c->ack_pid, __ATOMIC_RELAXED);
    return g;
}

void clockctl_node_path(char *buf, size_t n, const char *rundir, int node)
{
    snprintf(buf, n, "%s/nodes/node-%d.clock", rundir, node);
}

void clockctl_worker_path(char *buf, size_t n, const char *rundir, int worker)
{
    snprintf(buf, n, "%s/clocks/worker-%03d.clock", rundir, worker);
}

int clockctl_shim_path(char *buf, size_t n, struct ls_err *err)
{
    if (n < PATH_MAX)
        return ls_err_set(err, LS_EENV, "clock shim: path buffer too small");
    const char *env = getenv(LS_CLOCKSHIM_ENV);
    if (env && *env) {
        if (access(env, R_OK) != 0)
            return ls_err_errno(err, LS_EENV, errno, "clock shim $%s=%s", LS_CLOCKSHIM_ENV, env);
        if (!realpath(env, buf))
            return ls_err_errno(err, LS_EENV, errno, "clock shim %s", env);
        return 0;
    }
    static const char *const rel[] = {"/" LS_CLOCKSHIM_NAME,
                                      "/../lib/lockstorm/" LS_CLOCKSHIM_NAME};
    if (exe_relative(rel, sizeof(rel) / sizeof(rel[0]), 0, buf))
        return 0;
    return ls_err_set(err, LS_EENV,
                      "clock faults need the clock shim %s (built with lockstorm, next to the "
                      "binary); not found: build the lsclock target or set $%s",
                      LS_CLOCKSHIM_NAME, LS_CLOCKSHIM_ENV);
}
