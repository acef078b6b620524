/*
 * record.c: the `record` lock implementation (record mode): each worker
 * runs the user's own program (their job handler calling their lock
 * library), which locks by itself in its own loop and reports every step
 * as a `record` event (docs/protocol.md, extension `record`). The worker
 * turns the events into its event log (harness/worker.c record_loop), so
 * the checkers judge the user's real code path under faults.
 *
 * Here: the process (locks/adapter.c: spawn in the worker's process group,
 * handshake with the hello's `record` object, stderr, bye/SIGTERM/SIGKILL),
 * start/stop, the restart of a program that exits during the run, the
 * time of each event (its host_mono_ms stamp when it lies between the
 * previous event's time and the read, else the read), resource names,
 * the program's sequence (counted when broken) and the counters in
 * adapters/worker-NNN[.eE].json. Not here: tokens and the event log (the
 * worker's).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "locks/adapter.h"
#include "locks/external.h"
#include "locks/lock.h"
#include "locks/record.h"
#include "model/options.h"
#include "util/json.h"
#include "util/strbuf.h"
#include "util/timeutil.h"

#define REC_RESTART_BACKOFF_NS (1000LL * 1000 * 1000)
#define REC_STATS_EVERY_NS (250LL * 1000 * 1000) /* counters rewritten while events come */

/* ---- options ---- */

#define ROFF(m) offsetof(struct record_options, m)
#define XOFF(m) (offsetof(struct record_options, x) + offsetof(struct external_options, m))

static const struct opt_def rec_tab[] = {
    {"command", OPT_CUSTOM, XOFF(command), NULL, 0, 0, NULL, NULL,
     "the program's argv, a list run without a shell (PATH lookup for the first item), e.g. "
     "[node, worker.js, --lockstorm]; an item that is a relative path to a file next to the "
     "workload file is resolved there, otherwise it stays relative to the directory lockstorm "
     "runs in (as external's command)"},
    {"program", OPT_CUSTOM, XOFF(adapter), "{}", 0, 0, NULL, NULL,
     "mapping handed to the program untouched (hello.options): its own settings"},
    {"hello_timeout", OPT_DURATION, ROFF(hello_timeout), "10s", 1e8, 120e9, NULL, NULL,
     "how long the program may take to answer the hello (it may connect first)"},
    {"stop_grace", OPT_DURATION, ROFF(stop_grace), "2s", 0, 60e9, NULL, NULL,
     "after the deadline's stop, how long the worker waits for the program's `stopped` (its "
     "current iteration ends) before it is shut down like an adapter"},
    {"max_restarts", OPT_INT, XOFF(max_restarts), "20", 0, 10000, NULL, NULL,
     "restarts of a program that exited during the run (per worker); past it the worker "
     "records nothing more"},
    {NULL, 0, 0, NULL, 0, 0, NULL, NULL, NULL},
};

static int rec_validate(const struct lock_config *cfg, char *why, size_t n)
{
    const struct record_options *o = cfg->options;
    if (!o || o->x.argc < 1) {
        snprintf(why, n, "command: required (the program's argv)");
        return -1;
    }
    return 0;
}

/* ---- state ---- */

/* The program's own sequence: acquire -> acquired|busy|acquire_failed ->
 * enter -> exit -> release -> released|release_failed. */
enum { PH_IDLE, PH_ACQUIRING, PH_GRANTED, PH_HELD, PH_EXITED, PH_RELEASING };

struct rec {
    struct adapter ad;
    const struct record_options *opt;
    char *argv[EXTERNAL_MAX_ARGS + 1];  /* into opt->x.command */
    char stderr_path[2100], log_path[2100], stats_path[2100];
    char *record_json;                  /* the hello's "record" object (owned) */
    char (*keys)[LOCK_KEY_MAX];         /* resource i's key (lock_key), resources of them */
    int worker;
    uint32_t epoch;
    int resources;
    int started, running, stop_sent;    /* handshake passed; start sent; stop sent */
    int no_ttl;                         /* the first hello listed no `ttl`: no lease */
    int64_t restarts, restart_failures, next_restart;
    int64_t prev_ns;                    /* the last event's time (CLOCK_MONOTONIC) */
    int phase;
    int64_t stamps_ignored, bad_events, sequence_errors, expected_ends;
    int64_t unstamped;                  /* events that carried no host_mono_ms */
    char samples[3][256];               /* the first bad or out-of-sequence events */
    int nsamples;
    int64_t last_write;                 /* CLOCK_MONOTONIC of the last stats write */
};

/* Contract: write adapters/worker-NNN[.eE].json: the hello and every
 * counter (harness/adapter_stats.c sums them into result.json's
 * `adapter`), with external's keys and the record_* ones. */
static void write_stats(struct rec *r)
{
    if (!r->stats_path[0])
        return;
    struct adapter_stats st;
    adapter_get_stats(&r->ad, &st);
    struct json *o = external_stats_open(&r->ad, r->worker, r->epoch, r->ad.caps, r->argv);
    json_obj_set_str(o, "mode", "record");
    /* a program that ends after stop has not exited unexpectedly */
    int64_t exits = (int64_t)st.exits - r->expected_ends;
    struct json *sm = external_stats_counters(o, &r->ad, &st, r->started, r->restarts,
                                              r->restart_failures, exits > 0 ? exits : 0);
    for (int i = 0; i < r->nsamples; i++)
        json_arr_push(sm, json_new_str(r->samples[i]));
    json_obj_set_int(o, "record_events", (int64_t)st.record_events);
    json_obj_set_int(o, "record_stamps_ignored", r->stamps_ignored);
    json_obj_set_int(o, "record_unstamped", r->unstamped);
    json_obj_set_int(o, "record_bad_events", r->bad_events);
    json_obj_set_int(o, "record_sequence_errors", r->sequence_errors);
    external_stats_close(o, r->stderr_path, r->log_path, r->stats_path);
    r->last_write = ls_now_ns();
}

/* Contract: keep a sample of a bad or out-of-sequence event (the first 3). */
__attribute__((format(printf, 2, 3))) static void sample(struct rec *r, const char *fmt, ...)
{
    if (r->nsamples >= 3)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->samples[r->nsamples++], sizeof(r->samples[0]), fmt, ap);
    va_end(ap);
}

/* The index of the resource whose key (as the hello listed it) is s, else
 * -1. At most RECORD_MAX_RES keys: a linear search. */
static int res_index(const struct rec *r, const char *s)
{
    for (int i = 0; s && i < r->resources; i++)
        if (strcmp(r->keys[i], s) == 0)
            return i;
    return -1;
}

static const char *const what_names[] = {"?", "acquire", "acquired", "busy", "acquire_failed",
                                         "enter", "exit", "release", "released",
                                         "release_failed", "stopped", "lost", "renewed", "gone"};

/* Contract: is event what in sequence after the program's phase? Moves the
 * phase on as the event says either way (one sequential actor: the next
 * event is judged from what this one claims); counts the breaks. */
static void sequence(struct rec *r, int what)
{
    static const int from[] = {
        [LREC_ACQUIRE] = 1 << PH_IDLE,
        [LREC_ACQUIRED] = 1 << PH_ACQUIRING,
        [LREC_BUSY] = 1 << PH_ACQUIRING,
        [LREC_ACQUIRE_FAILED] = 1 << PH_ACQUIRING,
        [LREC_ENTER] = 1 << PH_GRANTED,
        [LREC_EXIT] = 1 << PH_HELD,
        [LREC_RELEASE] = (1 << PH_EXITED) | (1 << PH_GRANTED),
        [LREC_RELEASED] = 1 << PH_RELEASING,
        [LREC_RELEASE_FAILED] = 1 << PH_RELEASING,
    };
    static const int to[] = {
        [LREC_ACQUIRE] = PH_ACQUIRING,   [LREC_ACQUIRED] = PH_GRANTED,
        [LREC_BUSY] = PH_IDLE,           [LREC_ACQUIRE_FAILED] = PH_IDLE,
        [LREC_ENTER] = PH_HELD,          [LREC_EXIT] = PH_EXITED,
        [LREC_RELEASE] = PH_RELEASING,   [LREC_RELEASED] = PH_IDLE,
        [LREC_RELEASE_FAILED] = PH_IDLE,
    };
    static const char *const phase_names[] = {"idle", "acquiring", "granted",
                                              "in its critical section", "after exit",
                                              "releasing"};
    if (what < LREC_ACQUIRE || what > LREC_RELEASE_FAILED)
        return;
    if (!(from[what] & (1 << r->phase))) {
        r->sequence_errors++;
        sample(r, "record event '%s' out of sequence (the program was %s)", what_names[what],
               phase_names[r->phase]);
    }
    r->phase = to[what];
}

/* Contract: the time of an event read at read_ns with stamp written_ns
 * (0: none): the stamp when it lies between the previous event's time and
 * the read, else the read (a stamp refused is counted). Never before the
 * previous event's time. */
static int64_t event_time(struct rec *r, int64_t written_ns, int64_t read_ns)
{
    int64_t at = read_ns;
    if (!written_ns)
        r->unstamped++;
    if (written_ns && written_ns >= r->prev_ns && written_ns <= read_ns)
        at = written_ns;
    else if (written_ns)
        r->stamps_ignored++;
    if (at < r->prev_ns)
        at = r->prev_ns;
    r->prev_ns = at;
    return at;
}

/* Contract: an event from the adapter as *out. Returns 1, or 0 when it
 * names no resource of the run (counted as a bad event, sampled). */
static int convert(struct rec *r, const struct amsg *ev, struct lock_rec *out)
{
    memset(out, 0, sizeof(*out));
    out->res = -1;
    out->what = ev->kind == AMSG_LOST ? LREC_LOST : ev->kind == AMSG_RENEWED ? LREC_RENEWED
                                                                               : ev->rec_what;
    if (ev->res) {
        out->res = res_index(r, ev->res);
        if (out->res < 0) {
            r->bad_events++;
            char q[80];
            sample(r, "record event '%s' names resource '%s', not one of the hello's",
                   what_names[out->what], aproto_quote(ev->res, strlen(ev->res), 60, q, sizeof(q)));
            return 0;
        }
    }
    if (ev->token) {
        out->has_token = 1;
        snprintf(out->token, sizeof(out->token), "%s", ev->token);
    }
    out->has_validity = ev->has_validity;
    out->no_lease = r->no_ttl;
    out->validity_ns = ev->validity_ns;
    out->has_fence = ev->has_fence;
    out->fence = ev->fence;
    out->released = ev->released;
    out->unknown = ev->unknown;
    out->err_kind = ev->rec_err_kind;
    out->at_ns = event_time(r, ev->written_ns, ev->read_ns);
    sequence(r, out->what);
    return 1;
}

/* Contract: after an unexpected end, start the program again and send it
 * start (the primary, within max_restarts, at most once a second). */
static void maybe_restart(struct rec *r)
{
    if (!r->running || r->stop_sent || adapter_alive(&r->ad))
        return;
    if (r->restarts >= r->opt->x.max_restarts || ls_now_ns() < r->next_restart)
        return;
    r->restarts++;
    /* the first restart is at once (next_restart starts at 0), each next
     * one a second after the one before, whether it worked or not */
    r->next_restart = ls_now_ns() + REC_RESTART_BACKOFF_NS;
    struct ls_err err = {0};
    if (adapter_restart(&r->ad, &err) < 0 || adapter_record_op(&r->ad, LOCK_REC_START) < 0)
        r->restart_failures++;
    r->phase = PH_IDLE;
    write_stats(r);
}

/* ---- ops ---- */

static int rec_init(struct lock *lk, const struct lock_config *cfg, struct ls_err *err)
{
    if (cfg->primary)
        return ls_err_set(err, LS_EUSAGE, "record: a program has no second instance "
                                          "(lock.renew is not available in record mode)");
    const struct record_options *o = cfg->options;
    char why[128];
    if (!o || rec_validate(cfg, why, sizeof(why)) < 0)
        return ls_err_set(err, LS_EUSAGE, "record: %s", o ? why : "no options");
    struct rec *r = calloc(1, sizeof(*r));
    if (!r)
        return ls_err_set(err, LS_ENOMEM, "record: out of memory");
    lk->ctx = r;
    r->opt = o;
    r->worker = cfg->worker;
    r->epoch = cfg->epoch;
    r->resources = cfg->resources > 0 ? cfg->resources : 1;
    external_argv(&o->x, r->argv);
    /* the resources by their keys (lock_key: lock.key_prefix and the
     * names of workers.resources), as an adapter gets them in `res` */
    if (r->resources > RECORD_MAX_RES)
        return ls_err_set(err, LS_EUSAGE, "record: workers.resources %d is too many for the "
                                          "hello (at most %d)", r->resources, RECORD_MAX_RES);
    r->keys = calloc((size_t)r->resources, sizeof(*r->keys));
    if (!r->keys)
        return ls_err_set(err, LS_ENOMEM, "record: out of memory");
    struct strbuf sb = STRBUF_INIT;
    sb_puts(&sb, "{\"res\":[");
    for (int i = 0; i < r->resources; i++) {
        size_t kn = lock_key(cfg, i, 0, r->keys[i], sizeof(r->keys[i]));
        if (i)
            sb_putc(&sb, ',');
        sb_json_str(&sb, r->keys[i], kn);
    }
    sb_printf(&sb, "],\"ttl_ms\":%lld,\"duration_ms\":%lld}",
              (long long)((cfg->ttl_ns + LS_NS_PER_MS - 1) / LS_NS_PER_MS),
              (long long)(cfg->duration_ns / LS_NS_PER_MS));
    r->record_json = strdup(sb_cstr(&sb));
    sb_free(&sb);
    if (!r->record_json)
        return ls_err_set(err, LS_ENOMEM, "record: out of memory");
    int prc = external_paths(cfg, "record", r->stderr_path, r->log_path, r->stats_path,
                             sizeof(r->stats_path), err);
    if (prc < 0)
        return prc;
    struct adapter_config ac = {
        .argv = r->argv,
        .stderr_path = r->stderr_path[0] ? r->stderr_path : NULL,
        .log_path = r->log_path[0] ? r->log_path : NULL,
        .worker = cfg->worker,
        .nodes = cfg->nodes,
        .nnodes = cfg->nnodes,
        .options_json = o->x.adapter,
        .hello_timeout_ns = o->hello_timeout,
        .record_json = r->record_json,
    };
    int rc = adapter_start(&r->ad, &ac, err);
    if (rc == 0) {
        r->started = 1;
        /* kept from the first hello: a restart's handshake zeroes ad.caps
         * until it answers, and events queued meanwhile still need it */
        r->no_ttl = !(r->ad.caps & APROTO_CAP_TTL);
    }
    write_stats(r);
    return rc;
}

static void rec_destroy(struct lock *lk)
{
    struct rec *r = lk->ctx;
    if (!r)
        return;
    adapter_close(&r->ad);
    write_stats(r);
    free(r->record_json);
    free(r->keys);
    free(r);
    lk->ctx = NULL;
}

static int rec_ctl(struct lock *lk, int ctl, char *why, size_t n)
{
    struct rec *r = lk->ctx;
    if (ctl == LOCK_REC_START) {
        r->running = 1;
        r->prev_ns = ls_now_ns();
    } else {
        r->stop_sent = 1;
    }
    if (adapter_record_op(&r->ad, ctl) < 0) {
        snprintf(why, n, "the program is not running (%s)",
                 r->ad.exit_text[0] ? r->ad.exit_text : "gone");
        return -1;
    }
    return 0;
}

static int rec_next(struct lock *lk, int64_t until_ns, struct lock_rec *out)
{
    struct rec *r = lk->ctx;
    for (;;) {
        maybe_restart(r);
        struct amsg ev;
        int64_t until = until_ns;
        if (!adapter_alive(&r->ad) && r->running && !r->stop_sent &&
            r->restarts < r->opt->x.max_restarts && r->next_restart < until)
            until = r->next_restart > ls_now_ns() ? r->next_restart : until;
        int w = adapter_wait_record(&r->ad, until, &ev);
        if (w == 0) {
            if (until < until_ns && ls_now_ns() < until_ns)
                continue; /* time to try the restart */
            return 0;
        }
        if (w == 2) { /* its end: expected after stop, else it is restarted */
            memset(out, 0, sizeof(*out));
            out->res = -1;
            out->at_ns = event_time(r, 0, ls_now_ns());
            if (r->stop_sent) {
                r->expected_ends++;
                out->what = LREC_STOPPED;
            } else {
                out->what = LREC_GONE;
                r->phase = PH_IDLE; /* restarted by maybe_restart, paced there */
            }
            write_stats(r);
            return 1;
        }
        int ok = convert(r, &ev, out);
        amsg_free(&ev);
        if (ls_now_ns() - r->last_write >= REC_STATS_EVERY_NS)
            write_stats(r); /* a worker killed by a fault leaves its counters */
        if (ok)
            return 1;
    }
}

const struct lock_ops lock_record = {
    .version = LOCK_OPS_VERSION,
    .name = "record",
    .model = "record mode: your own program (its job handler calling its lock library) runs "
             "as the worker and reports acquire/enter/exit/release (docs/protocol.md "
             "\"record\"); the checkers judge what it did",
    .caps = LOCK_CAP_TTL | LOCK_CAP_FENCING,
    .options = rec_tab,
    .options_size = sizeof(struct record_options),
    .init = rec_init,
    .destroy = rec_destroy,
    .validate = rec_validate,
    .option_hooks = &external_option_hooks,
    .record_ctl = rec_ctl,
    .record_next = rec_next,
};
