/*
 * clockshim.c: liblsclock.so, the LD_PRELOAD library of clock faults
 * (faults/clock.c). Preloaded into a lock node's redis-server and, under
 * client clock faults, into an external lock's adapter processes (and into
 * nothing else), it shifts what the process sees of CLOCK_REALTIME through
 * clock_gettime, gettimeofday and time, as the control file named by
 * $LOCKSTORM_CLOCK_FILE says (util/clockctl.h). CLOCK_MONOTONIC and every
 * other clock pass through untouched. Built apart from lscore and linked
 * with nothing of it. It allocates nothing and takes no lock, so it is safe
 * during start-up, in signal handlers and in any thread; the only state is
 * the mapping made once by the constructor (an LD_PRELOAD shim has nowhere
 * else to keep it). Without the variable, or with an unusable file, it
 * shifts nothing and says why on stderr (the node's log).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "util/clockctl.h"

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime; /* set once by the constructor */
static struct ls_clockctl *ctl;             /* set once by the constructor */
static int64_t self_pid;

/* Before the constructor ran (a call from another library's constructor)
 * the kernel is asked directly. */
static int true_clock(clockid_t clk, struct timespec *ts)
{
    clock_gettime_fn f = __atomic_load_n(&real_clock_gettime, __ATOMIC_ACQUIRE);
    if (f)
        return f(clk, ts);
    return (int)syscall(SYS_clock_gettime, clk, ts);
}

static void say(const char *what, const char *path)
{
    char msg[600];
    int n = snprintf(msg, sizeof(msg), "lockstorm clock shim: %s %s: no clock shift\n", what,
                     path ? path : "");
    if (n > 0) {
        ssize_t w = write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
        (void)w;
    }
}

__attribute__((constructor)) static void shim_init(void)
{
    void *f = dlsym(RTLD_NEXT, "clock_gettime");
    __atomic_store_n(&real_clock_gettime, (clock_gettime_fn)f, __ATOMIC_RELEASE);
    self_pid = (int64_t)getpid();
    const char *path = getenv(LS_CLOCKCTL_ENV);
    if (!path || !*path) {
        say("$" LS_CLOCKCTL_ENV " is not set;", NULL);
        return;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        say("cannot open", path);
        return;
    }
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= (off_t)sizeof(struct ls_clockctl))
        p = mmap(NULL, sizeof(struct ls_clockctl), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        say("cannot map", path);
        return;
    }
    struct ls_clockctl *c = p;
    if (c->magic != LS_CLOCKCTL_MAGIC || c->version != LS_CLOCKCTL_VERSION) {
        munmap(p, sizeof(*c));
        say("not a clock control file:", path);
        return;
    }
    __atomic_store_n(&ctl, c, __ATOMIC_RELEASE);
    struct timespec ts;
    true_clock(CLOCK_REALTIME, &ts);
    ls_clockctl_read(c, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec, self_pid); /* attach */
}

static int shifted(clockid_t clk)
{
    return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_REALTIME_ALARM;
}

/* The shifted realtime now, in ns. */
static int64_t shifted_now(clockid_t clk, int *rc)
{
    struct timespec ts;
    *rc = true_clock(clk, &ts);
    int64_t t = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    struct ls_clockctl *c = __atomic_load_n(&ctl, __ATOMIC_ACQUIRE);
    return c && *rc == 0 ? ls_clockctl_read(c, t, self_pid) : t;
}

/* Floor division of ns into seconds, so that times before the epoch (a
 * very large backward shift) still have 0 <= ns part < 1e9. */
static void split_ns(int64_t t, int64_t *sec, int64_t *ns)
{
    *sec = t / 1000000000LL;
    *ns = t % 1000000000LL;
    if (*ns < 0) {
        *ns += 1000000000LL;
        *sec -= 1;
    }
}

int clock_gettime(clockid_t clk, struct timespec *tp)
{
    if (!shifted(clk))
        return true_clock(clk, tp);
    int rc;
    int64_t t = shifted_now(clk, &rc);
    if (rc != 0)
        return rc;
    int64_t s, ns;
    split_ns(t, &s, &ns);
    tp->tv_sec = (time_t)s;
    tp->tv_nsec = (long)ns;
    return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void)tz; /* obsolete; Linux leaves it alone when NULL and so do we */
    int rc;
    int64_t t = shifted_now(CLOCK_REALTIME, &rc);
    if (rc != 0)
        return rc;
    int64_t s, ns;
    split_ns(t, &s, &ns);
    tv->tv_sec = (time_t)s;
    tv->tv_usec = (suseconds_t)(ns / 1000);
    return 0;
}

time_t time(time_t *out)
{
    int rc;
    int64_t t = shifted_now(CLOCK_REALTIME, &rc);
    int64_t s, ns;
    split_ns(t, &s, &ns);
    time_t v = rc == 0 ? (time_t)s : (time_t)-1;
    if (out)
        *out = v;
    return v;
}
