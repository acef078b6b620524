/*
 * clockctl.h: the clock control file of a clock fault (faults/clock.c). One
 * small mmap'd file per clock (nodes/node-N.clock for a lock node,
 * clocks/worker-N.clock for a worker's client clock) says how that clock's
 * CLOCK_REALTIME differs from the true one: shifted(t) = base_shifted +
 * (t - base_real) * rate. The harness writes it (one writer: the harness
 * process, under a sequence lock); readers are the LD_PRELOAD shim inside a
 * redis-server (faults/shim/clockshim.c) and a lock whose elapsed-time check
 * uses the realtime clock (redlock clock: realtime). The reader is inline
 * here because the shim links nothing of lockstorm. The harness's own
 * clocks are never shifted.
 */
#ifndef LS_CLOCKCTL_H
#define LS_CLOCKCTL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LS_CLOCKCTL_MAGIC 0x6c73636bu /* "lsck" */
#define LS_CLOCKCTL_VERSION 1u
#define LS_CLOCKCTL_ENV "LOCKSTORM_CLOCK_FILE" /* the shim's control file */
#define LS_CLOCKSHIM_ENV "LOCKSTORM_CLOCK_SHIM" /* overrides where the shim is looked for */
#define LS_CLOCKSHIM_NAME "liblsclock.so"

/* The file's layout (64 bytes). Every field is read and written with
 * __atomic builtins: writer and readers are different processes. */
struct ls_clockctl {
    uint32_t magic;
    uint32_t version;
    uint64_t seq;           /* sequence lock: odd while the harness writes */
    int64_t base_real;      /* true CLOCK_REALTIME ns where the current rate began */
    int64_t base_shifted;   /* the shifted clock at base_real */
    uint64_t rate_bits;     /* double: shifted ns per true ns (1 = no drift) */
    uint64_t gen;           /* bumped by every write */
    uint64_t ack_gen;       /* written by readers: the last gen one of them applied */
    int64_t ack_pid;        /* ... and which process that was */
};

/* One consistent copy of the state. */
struct ls_clockstate {
    int64_t base_real, base_shifted;
    double rate;
    uint64_t gen;
};

/* Contract: a consistent snapshot of c (retries while the writer is inside
 * its write; after 10000 tries, e.g. a harness that died mid-write, returns
 * 0 with st the identity). Returns 1 on a consistent read. */
static inline int ls_clockctl_snapshot(const struct ls_clockctl *c, struct ls_clockstate *st)
{
    for (int tries = 0; tries < 10000; tries++) {
        uint64_t s1 = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1u)
            continue;
        int64_t br = __atomic_load_n(&c->base_real, __ATOMIC_RELAXED);
        int64_t bs = __atomic_load_n(&c->base_shifted, __ATOMIC_RELAXED);
        uint64_t rb = __atomic_load_n(&c->rate_bits, __ATOMIC_RELAXED);
        uint64_t g = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&c->seq, __ATOMIC_RELAXED) != s1)
            continue;
        st->base_real = br;
        st->base_shifted = bs;
        memcpy(&st->rate, &rb, sizeof(st->rate));
        st->gen = g;
        return 1;
    }
    st->base_real = st->base_shifted = 0;
    st->rate = 1.0;
    st->gen = 0;
    return 0;
}

/* The shifted time of true realtime ns real under st. */
static inline int64_t ls_clockstate_apply(const struct ls_clockstate *st, int64_t real)
{
    if (st->rate == 1.0)
        return st->base_shifted + (real - st->base_real);
    return st->base_shifted + (int64_t)((double)(real - st->base_real) * st->rate);
}

/* Contract: the shifted time of true realtime ns real under c's current
 * state; records (ack_gen, ack_pid = pid) the first time this reader sees
 * a new generation, so the harness can tell the change was applied.
 * c must be mapped writable. */
static inline int64_t ls_clockctl_read(struct ls_clockctl *c, int64_t real, int64_t pid)
{
    struct ls_clockstate st;
    ls_clockctl_snapshot(c, &st);
    if (__atomic_load_n(&c->ack_gen, __ATOMIC_RELAXED) != st.gen ||
        __atomic_load_n(&c->ack_pid, __ATOMIC_RELAXED) != pid) {
        __atomic_store_n(&c->ack_pid, pid, __ATOMIC_RELAXED);
        __atomic_store_n(&c->ack_gen, st.gen, __ATOMIC_RELEASE);
    }
    return ls_clockstate_apply(&st, real);
}

/* ---- the harness side (util/clockctl.c) ---- */

struct ls_err;

/* Create (or truncate) path holding the true clock (no shift). Returns 0
 * or a negative code with err set. */
int clockctl_create(const char *path, struct ls_err *err);
/* Map path read-write. *out is unmapped with clockctl_unmap. Returns 0 or
 * a negative code with err set (missing file, wrong magic or version). */
int clockctl_map(const char *path, struct ls_clockctl **out, struct ls_err *err);
void clockctl_unmap(struct ls_clockctl *c);

/* The writer's changes, each at true realtime now (the harness's clock):
 * jump adds jump_ns to the shifted clock; rate keeps the shifted clock
 * continuous at now and lets it run at rate from there; reset makes it the
 * true clock again. Each bumps gen; returns the new gen. */
uint64_t clockctl_jump(struct ls_clockctl *c, int64_t now, int64_t jump_ns);
uint64_t clockctl_set_rate(struct ls_clockctl *c, int64_t now, double rate);
uint64_t clockctl_reset(struct ls_clockctl *c);

/* The last generation a reader applied, and its pid (0 if none yet). */
uint64_t clockctl_acked(const struct ls_clockctl *c, int64_t *pid);

/* Paths of the control files of lock node `node` and of worker `worker`
 * in run directory rundir. */
void clockctl_node_path(char *buf, size_t n, const char *rundir, int node);
void clockctl_worker_path(char *buf, size_t n, const char *rundir, int worker);

/* Find the shim: $LOCKSTORM_CLOCK_SHIM, else liblsclock.so next to the
 * running binary, else ../lib/lockstorm/ of it. buf holds n >= PATH_MAX
 * bytes. Returns 0 with the absolute path in buf, or LS_EENV with err set. */
int clockctl_shim_path(char *buf, size_t n, struct ls_err *err);

#endif
