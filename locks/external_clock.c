/*
 * external_clock.c: the client clock watcher of an external lock (see
 * external_clock.h). One per worker; the adapter's shim reads the same
 * control file, the watcher only takes snapshots of it (it never counts as
 * a reader: the shim's acknowledgement stays the adapter's). A probe line
 * says what the runtime showed against what the file says it should show,
 * so a fault that did not reach the runtime reads "not moved", never
 * "applied"; an adapter without the `clock` extension reads "unverified".
 */
#include "locks/external_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/clockctl.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

struct extclock {
    struct ls_clockctl *ctl;        /* mapped (owned) */
    char preload[PATH_MAX + 16];    /* LD_PRELOAD=<shim> */
    char file[4200];                /* LOCKSTORM_CLOCK_FILE=<clock file> */
    char *env[3];
    char out_path[4096];
    pthread_mutex_t mu;             /* one probe at a time; the fields below */
    int probed;                     /* a probe was made */
    uint64_t probed_gen;            /* the generation it was made for */
    uint64_t probed_starts;         /* the adapter's starts then */
};

int extclock_open(struct extclock **out, const char *clock_file, const char *out_path,
                  struct ls_err *err)
{
    *out = NULL;
    struct extclock *x = calloc(1, sizeof(*x));
    if (!x)
        return ls_err_set(err, LS_ENOMEM, "external: out of memory");
    char shim[PATH_MAX];
    int rc = clockctl_shim_path(shim, sizeof(shim), err);
    if (rc == 0)
        rc = clockctl_map(clock_file, &x->ctl, err);
    if (rc < 0) {
        free(x);
        return rc;
    }
    snprintf(x->preload, sizeof(x->preload), "LD_PRELOAD=%s", shim);
    snprintf(x->file, sizeof(x->file), "%s=%s", LS_CLOCKCTL_ENV, clock_file);
    snprintf(x->out_path, sizeof(x->out_path), "%s", out_path ? out_path : "");
    x->env[0] = x->preload;
    x->env[1] = x->file;
    x->env[2] = NULL;
    pthread_mutex_init(&x->mu, NULL);
    *out = x;
    return 0;
}

char *const *extclock_env(const struct extclock *x)
{
    return x ? x->env : NULL;
}

void extclock_close(struct extclock *x)
{
    if (!x)
        return;
    clockctl_unmap(x->ctl);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

/* Append line o to the probe file in one write (lines of two epochs of a
 * worker never interleave); best effort: the run goes on without it. */
static void append_line(const struct extclock *x, struct json *o)
{
    if (!x->out_path[0])
        return;
    struct strbuf sb = STRBUF_INIT;
    json_write(&sb, o, -1);
    sb_putc(&sb, '\n');
    int fd = open(x->out_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        (void)!write(fd, sb.buf, sb.len);
        close(fd);
    }
    sb_free(&sb);
}

/* Contract: probe a for generation gen of x's file and describe it in o:
 * expected_offset_ms (the file's shift at the probe's true midpoint),
 * observed_offset_ms (wall_ms minus that midpoint), rtt_ms, result
 * ("verified": within rtt/2 + EXTCLOCK_TOLERANCE_MS of a shift larger than
 * that; "indistinguishable": within it of a shift no larger, which a
 * runtime the fault did not reach would show too; "not moved"; "no
 * answer"; "unverified": no `clock` extension) and why. Returns 0, or -1
 * when the file changed during the probe (nothing to record: probe again). */
static int probe(struct extclock *x, struct adapter *a, uint64_t gen, struct json *o)
{
    char why[300];
    int64_t pid = 0;
    struct adapter_clock ck;
    int rc = adapter_clock(a, EXTCLOCK_PROBE_TIMEOUT_NS, &ck, why, sizeof(why));
    uint64_t acked = clockctl_acked(x->ctl, &pid);
    struct ls_clockstate st;
    ls_clockctl_snapshot(x->ctl, &st);
    if (st.gen != gen)
        return -1;
    int64_t mid = ck.real_before + (ck.real_after - ck.real_before) / 2;
    if (rc != ADAPTER_REPLY)
        mid = ls_realtime_ns();
    double expected = (double)(ls_clockstate_apply(&st, mid) - mid) / 1e6;
    json_obj_set_int(o, "gen", (int64_t)gen);
    json_obj_set_num(o, "real_ms", (double)mid / 1e6);
    json_obj_set_int(o, "pid", a->pid);
    json_obj_set_num(o, "expected_offset_ms", expected);
    json_obj_set_bool(o, "shim_acked", acked >= gen && pid == (int64_t)a->pid);
    if (!(a->caps & APROTO_CAP_CLOCK)) {
        json_obj_set_str(o, "result", "unverified");
        json_obj_set_str(o, "why", "the adapter does not implement the clock extension (its "
                                   "caps lack 'clock'): its runtime's clock is not checked; "
                                   "shim_acked says whether the shim in it read the change");
        return 0;
    }
    if (rc != ADAPTER_REPLY) {
        json_obj_set_str(o, "result", "no answer");
        json_obj_set_str(o, "why", why);
        return 0;
    }
    double rtt = (double)(ck.real_after - ck.real_before) / 1e6;
    double observed = ck.wall_ms - (double)mid / 1e6;
    json_obj_set_num(o, "observed_offset_ms", observed);
    json_obj_set_num(o, "rtt_ms", rtt);
    if (ck.has_mono)
        json_obj_set_num(o, "mono_ms", ck.mono_ms);
    double band = rtt / 2 + EXTCLOCK_TOLERANCE_MS;
    int ok = fabs(observed - expected) <= band;
    if (ok && fabs(expected) <= band) {
        /* a probe that could not have failed: an unshifted clock passes too */
        char w[200];
        snprintf(w, sizeof(w), "the shift (%.3f ms) is within the probe's error (%.3f ms): an "
                               "unshifted clock would read the same",
                 expected, band);
        json_obj_set_str(o, "result", "indistinguishable");
        json_obj_set_str(o, "why", w);
        return 0;
    }
    json_obj_set_str(o, "result", ok ? "verified" : "not moved");
    json_obj_set_str(o, "why", ok ? "the runtime's wall clock shows the shifted clock"
                                  : "the runtime's wall clock is not the shifted clock: the "
                                    "fault did not reach it (not preloaded, or a runtime that "
                                    "reads the clock without libc)");
    return 0;
}

void extclock_poll(struct extclock *x, struct adapter *a)
{
    if (!x || !adapter_alive(a))
        return;
    uint64_t gen = __atomic_load_n(&x->ctl->gen, __ATOMIC_ACQUIRE);
    struct adapter_stats st;
    adapter_get_stats(a, &st);
    if (pthread_mutex_trylock(&x->mu) != 0)
        return; /* the other thread is probing */
    if (x->probed && x->probed_gen == gen && x->probed_starts == st.starts) {
        pthread_mutex_unlock(&x->mu);
        return;
    }
    struct json *o = json_new_obj();
    json_obj_set_str(o, "adapter", a->name);
    if (probe(x, a, gen, o) == 0) {
        append_line(x, o);
        x->probed = 1;
        x->probed_gen = gen;
        x->probed_starts = st.starts;
    }
    json_free(o);
    pthread_mutex_unlock(&x->mu);
}
