/*
 * coverage.c: did the run test anything? (docs/checkers.md "Coverage").
 * Per fault occurrence whether it bit: an affected worker was in a hold or
 * had a lock command in flight during the window (link faults: a command
 * only, unless they reset connections), by the rules below; per run the holds, grants and contended
 * acquires, and the activity floor (grant_floor) a run must reach for its
 * verdict to count. Pure measurement like windows.c: it judges nothing,
 * harness/verdict.c turns "nothing bit" and "too little activity" into an
 * unknown verdict. A consumer of the merged pass (pass.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkers/check.h"
#include "checkers/checkutil.h"
#include "checkers/pass.h"
#include "model/jobs.h"
#include "model/rundir.h"
#include "model/workload.h"
#include "util/hist.h"
#include "util/rng.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#define NONE INT64_MIN

/* How a fault occurrence can bite (docs/checkers.md "Coverage"). */
enum cov_class {
    COV_WORKER, /* on worker processes: a hold or a lock command of one of them */
    COV_NODE,   /* on a lock node: any hold (the key is on the nodes) or lock command */
    COV_LINK,   /* on proxy links: a lock command of a worker whose links are cut */
    COV_RESET,  /* on proxy links, resetting connections: a hold or a lock command
                 * (a session-scoped lock goes with its connection) */
    COV_SELF,   /* the kind said at its end whether it bit ("bit" on its end line:
                 * kind command, whether its rule acted on a request) */
};

struct cov_worker {
    int64_t hold_from;  /* enter of the open hold, NONE */
    int hold_res;
    int64_t cmd_from;   /* invoke of the open lock command, NONE */
    int64_t job_from;   /* jobs mode: the claimed job being processed since, NONE */
    int cmd_type;       /* its record type */
    int contended;      /* the open acquire met the resource held at capacity */
};

struct cov_fault {
    int cls;                /* enum cov_class */
    unsigned char *aff;     /* per worker index: affected; NULL = every worker */
    int bit;                /* -1 undecided (not injected), 0, 1 */
    char why[160];
};

struct cov_st {
    const struct history *h;
    const struct check_params *p;
    struct cov_worker *w;
    int *held;              /* open holds per resource (16-bit index) */
    struct cov_fault *f;    /* per fault index */
    int *order;             /* injected fault indices by start */
    int norder, next;
    int *live;              /* started, not yet bit, not over for any open interval */
    int nlive;
    int64_t now;
    unsigned since_retire;
    int64_t holds, grants, contended;
    struct hist grant_lat;  /* invoke -> acquire_ok of the granting tries */
};

static const char *cmd_name(int type)
{
    switch (type) {
    case EV_ACQUIRE_INVOKE: return "an acquire";
    case EV_RELEASE_INVOKE: return "a release";
    case EV_RENEW_INVOKE: return "a renew";
    default: return "a command";
    }
}

/* Contract: the worker index of worker id, -1 when the history has none. */
static int worker_index(const struct history *h, int64_t id)
{
    for (int i = 0; i < h->nworkers; i++)
        if (h->w[i].id == id)
            return i;
    return -1;
}

/* Contract: classify fault f and mark the workers it affects (s->f[i]). A
 * link fault names its links as [worker, node] pairs (capped: when fewer
 * are listed than links_count, every worker counts as affected). */
static void classify(struct cov_st *s, int i)
{
    const struct history *h = s->h;
    const struct fault_window *fw = &h->faults[i];
    struct cov_fault *c = &s->f[i];
    const struct json *self = json_obj_get(fw->record, "bit");
    if (self && self->type == JSON_BOOL) {
        c->cls = COV_SELF;
        c->bit = self->i ? 1 : 0;
        snprintf(c->why, sizeof(c->why), "%s", json_get_str(fw->record, "bit_why", ""));
        return;
    }
    const struct json *links = json_obj_get(fw->record, "links");
    size_t nw = (size_t)(h->nworkers ? h->nworkers : 1);
    if (links && links->type == JSON_ARR) {
        c->cls = json_get_int(fw->record, "connections_reset", 0) > 0 ? COV_RESET : COV_LINK;
        int64_t count = json_get_int(fw->record, "links_count", (int64_t)links->n);
        if (count > (int64_t)links->n)
            return; /* not all listed: every worker */
        c->aff = xcalloc(nw, 1);
        for (size_t k = 0; k < links->n; k++) {
            const struct json *pair = links->kids[k];
            if (pair->type != JSON_ARR || pair->n < 1 || pair->kids[0]->type != JSON_NUM)
                continue;
            int wi = worker_index(h, pair->kids[0]->i);
            if (wi >= 0)
                c->aff[wi] = 1;
        }
        return;
    }
    if (strncmp(fw->target, "node", 4) == 0 || strcmp(fw->target, "primary") == 0 ||
        (fw->worker < 0 && fw->node >= 0)) {
        c->cls = COV_NODE;
        return;
    }
    c->cls = COV_WORKER;
    if (strcmp(fw->target, "all-workers") == 0 || fw->worker < 0)
        return;
    c->aff = xcalloc(nw, 1);
    int wi = worker_index(h, fw->worker);
    if (wi >= 0)
        c->aff[wi] = 1;
}

/* Contract: the open interval [from, to] of worker wi (a hold when hold,
 * else a lock command of type cmd) ended: every live fault it touches
 * that could bite through it has bit. */
static inline void interval_done(struct cov_st *s, int wi, int64_t from, int64_t to, int hold,
                                 int cmd)
{
    const struct history *h = s->h;
    for (int k = 0; k < s->nlive; k++) {
        int i = s->live[k];
        const struct fault_window *fw = &h->faults[i];
        struct cov_fault *c = &s->f[i];
        if (c->bit == 1 || from >= fw->end || to < fw->start)
            continue;
        if ((c->aff && !c->aff[wi]) || (hold && c->cls == COV_LINK))
            continue;
        c->bit = 1;
        if (hold)
            snprintf(c->why, sizeof(c->why), "worker %d was in a hold during the window",
                     h->w[wi].id);
        else
            snprintf(c->why, sizeof(c->why), "worker %d had %s in flight during the window",
                     h->w[wi].id, cmd_name(cmd));
    }
}

/* Contract: the live faults that have bit, or that no open interval (each
 * started at or after the earliest open one, or now) can reach, leave. */
static void retire(struct cov_st *s)
{
    int64_t low = s->now;
    for (int i = 0; i < s->h->nworkers; i++) {
        if (s->w[i].hold_from != NONE && s->w[i].hold_from < low)
            low = s->w[i].hold_from;
        if (s->w[i].cmd_from != NONE && s->w[i].cmd_from < low)
            low = s->w[i].cmd_from;
        if (s->w[i].job_from != NONE && s->w[i].job_from < low)
            low = s->w[i].job_from;
    }
    int kept = 0;
    for (int k = 0; k < s->nlive; k++) {
        int i = s->live[k];
        if (s->f[i].bit != 1 && s->h->faults[i].end > low)
            s->live[kept++] = i;
    }
    s->nlive = kept;
}

static void close_open(struct cov_st *s, int wi, int64_t t)
{
    struct cov_worker *w = &s->w[wi];
    if (w->hold_from != NONE) {
        interval_done(s, wi, w->hold_from, t, 1, 0);
        if (s->held[w->hold_res] > 0)
            s->held[w->hold_res]--;
    }
    if (w->cmd_from != NONE)
        interval_done(s, wi, w->cmd_from, t, 0, w->cmd_type);
    if (w->job_from != NONE)
        interval_done(s, wi, w->job_from, t, 1, 0);
    w->hold_from = w->cmd_from = w->job_from = NONE;
    w->contended = 0;
}

static void cov_event(void *st, int wi, const struct ev_rec *r)
{
    struct cov_st *s = st;
    struct cov_worker *w = &s->w[wi];
    s->now = r->t;
    while (s->next < s->norder && s->h->faults[s->order[s->next]].start <= r->t)
        s->live[s->nlive++] = s->order[s->next++];
    if (++s->since_retire >= 1024) {
        s->since_retire = 0;
        retire(s);
    }
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
    case EV_RELEASE_INVOKE:
    case EV_RENEW_INVOKE:
        if (w->cmd_from != NONE) /* the previous one ended without an outcome */
            interval_done(s, wi, w->cmd_from, r->t, 0, w->cmd_type);
        w->cmd_from = r->t;
        w->cmd_type = r->type;
        w->contended = r->type == EV_ACQUIRE_INVOKE && s->held[r->res] >= s->p->capacity;
        return;
    case EV_ACQUIRE_OK:
        s->grants++;
        if (w->cmd_from != NONE && w->cmd_type == EV_ACQUIRE_INVOKE)
            hist_add(&s->grant_lat, r->t - w->cmd_from);
        /* fall through */
    case EV_ACQUIRE_BUSY:
    case EV_ACQUIRE_FAIL:
    case EV_ACQUIRE_UNKNOWN:
        if (r->type == EV_ACQUIRE_BUSY || w->contended)
            s->contended++;
        /* fall through */
    case EV_RELEASE_OK:
    case EV_RELEASE_NOT_OWNER:
    case EV_RELEASE_FAIL:
    case EV_RENEW_OK:
    case EV_RENEW_FAIL:
        /* a renewal the library reports having made by itself (EVF_AUTO)
         * answers no command of this worker's: an open interval stays open */
        if (r->type == EV_RENEW_OK && (r->flags & EVF_AUTO))
            return;
        if (w->cmd_from != NONE)
            interval_done(s, wi, w->cmd_from, r->t, 0, w->cmd_type);
        w->cmd_from = NONE;
        w->contended = 0;
        return;
    case EV_ENTER:
        s->holds++;
        if (w->hold_from != NONE && s->held[w->hold_res] > 0)
            s->held[w->hold_res]--;
        w->hold_from = r->t;
        w->hold_res = r->res;
        s->held[r->res]++;
        return;
    case EV_EXIT:
        if (w->hold_from != NONE) {
            interval_done(s, wi, w->hold_from, r->t, 1, 0);
            if (s->held[w->hold_res] > 0)
                s->held[w->hold_res]--;
        }
        w->hold_from = NONE;
        return;
    case EV_CRASH:
        close_open(s, wi, r->t);
        return;
    case EV_JOB:
        /* jobs mode: processing a claimed job is a hold (without the lock
         * layer there is no enter/exit, yet a pause of a "holder" catches
         * the worker mid-job): from claimed to its effect or abort */
        if (r->aux == JOBS_CLAIMED) {
            w->job_from = r->t;
        } else if (w->job_from != NONE && r->aux != JOBS_GAVE_UP) {
            interval_done(s, wi, w->job_from, r->t, 1, 0);
            w->job_from = NONE;
        }
        return;
    default:
        return;
    }
}

static void cov_worker_end(void *st, int wi)
{
    struct cov_st *s = st;
    /* what is still open at the end of its log lasted to the run's end */
    int64_t end = s->h->end > s->now ? s->h->end : s->now;
    struct cov_worker *w = &s->w[wi];
    if (w->hold_from == NONE && w->cmd_from == NONE && w->job_from == NONE)
        return;
    /* the faults that start before the run's end may meet it: candidates
     * early (the overlap itself is checked exactly) */
    while (s->next < s->norder && s->h->faults[s->order[s->next]].start <= end)
        s->live[s->nlive++] = s->order[s->next++];
    close_open(s, wi, end);
}

static int cmp_start(const void *a, const void *b, void *ctx)
{
    const struct history *h = ctx;
    int64_t x = h->faults[*(const int *)a].start, y = h->faults[*(const int *)b].start;
    return (x > y) - (x < y);
}

static void *cov_init(const struct history *h, const struct check_params *p, struct json *res)
{
    (void)res;
    struct cov_st *s = xcalloc_lines(1, sizeof(*s));
    s->h = h;
    s->p = p;
    s->w = xcalloc_lines((size_t)(h->nworkers ? h->nworkers : 1), sizeof(*s->w));
    for (int i = 0; i < h->nworkers; i++)
        s->w[i].hold_from = s->w[i].cmd_from = s->w[i].job_from = NONE;
    s->held = xcalloc(65536, sizeof(*s->held)); /* untouched pages cost nothing */
    hist_init(&s->grant_lat);
    size_t nf = (size_t)(h->nfaults ? h->nfaults : 1);
    s->f = xcalloc_lines(nf, sizeof(*s->f));
    s->order = xmalloc(nf * sizeof(*s->order));
    s->live = xcalloc_lines(nf, sizeof(*s->live));
    for (int i = 0; i < h->nfaults; i++) {
        if (h->faults[i].skipped) {
            s->f[i].bit = -1;
            continue;
        }
        classify(s, i);
        if (s->f[i].cls != COV_SELF) /* decided already: no event changes it */
            s->order[s->norder++] = i;
    }
    if (s->norder > 1)
        qsort_r(s->order, (size_t)s->norder, sizeof(*s->order), cmp_start, (void *)h);
    return s;
}

/* The mean of a hold/think distribution, ns. */
static double dist_mean(const struct dist *d)
{
    double m;
    switch (d->kind) {
    case DIST_FIXED: return (double)d->value;
    case DIST_UNIFORM: return ((double)d->min + (double)d->max) / 2.0;
    case DIST_EXPONENTIAL:
        m = (double)d->mean;
        if (d->max > 0 && m > 0)
            m *= 1.0 - exp(-(double)d->max / m); /* E[min(X, max)] */
        return m;
    case DIST_LOGNORMAL:
        m = (double)d->value * exp(d->sigma * d->sigma / 2.0);
        return d->max > 0 && m > (double)d->max ? (double)d->max : m;
    }
    return 0;
}

int64_t check_grant_floor(const struct workload *w, int capacity, double grant_ns,
                          double release_ns, double *expected)
{
    if (expected)
        *expected = 0;
    if (!w)
        return 1;
    if (w->workers.mode == WMODE_JOBS)
        return (w->workers.jobs.layers & JOB_LAYER_LOCK) ? 1 : 0;
    double hold = dist_mean(&w->workers.hold), think = dist_mean(&w->workers.think);
    double cycle = hold + think + fmax(grant_ns + release_ns, COV_CMD_MIN_NS);
    double by_workers = (double)w->workers.count / cycle;
    double by_lock = (double)w->workers.resources * (double)(capacity > 0 ? capacity : 1) /
                     fmax(hold + grant_ns, 1e6);
    double e = (double)w->duration * fmin(by_workers, by_lock);
    if (expected)
        *expected = e;
    double f = floor(e / COV_FLOOR_DIVISOR);
    return f >= 1 ? (f < 1e15 ? (int64_t)f : (int64_t)1e15) : 1;
}

/* Contract: the lateness bound of fault f (ns): max(100 ms, 10% of its
 * planned duration). */
static int64_t late_bound(const struct fault_window *f)
{
    const struct json *pr = json_obj_get(f->record, "params");
    double dur_ms = json_get_num(pr, "duration_ms", 0);
    int64_t tenth = (int64_t)(dur_ms * 1e5); /* 10% of it, ns */
    return tenth > COV_LATE_MIN_NS ? tenth : COV_LATE_MIN_NS;
}

static int cov_finish(void *st, struct json *res)
{
    struct cov_st *s = st;
    const struct history *h = s->h;
    struct json *faults = json_obj_get(res, "faults");
    int64_t nbit = 0, nnot = 0, nund = 0, nlate = 0;
    int64_t max_late = 0;
    for (int i = 0; i < h->nfaults; i++) {
        const struct fault_window *fw = &h->faults[i];
        struct cov_fault *c = &s->f[i];
        const char *reason = json_get_str(fw->record, "reason", NULL);
        if (c->bit == -1) {
            nund++;
            snprintf(c->why, sizeof(c->why), "not injected: %s",
                     reason ? reason : "nothing to act on");
        } else if (c->bit == 1) {
            nbit++;
        } else if (c->cls == COV_SELF) {
            nnot++;
        } else {
            nnot++;
            snprintf(c->why, sizeof(c->why), "%s",
                     c->cls == COV_LINK
                         ? "no lock command of a worker on its links was in flight during the window"
                     : c->cls == COV_RESET
                         ? "no worker whose connections were reset was in a hold or had a lock "
                           "command in flight during the window"
                     : c->cls == COV_NODE
                         ? "no worker held a lock or had a lock command in flight during the window"
                         : "no affected worker was in a hold or had a lock command in flight "
                           "during the window");
        }
        double late_ms = json_get_num(fw->record, "late_ms", 0);
        int64_t late = late_ms > 0 ? (int64_t)(late_ms * 1e6) : 0;
        if (late > max_late)
            max_late = late;
        if (late > late_bound(fw))
            nlate++;
        struct json *o = faults && faults->type == JSON_ARR && (size_t)i < faults->n
                             ? faults->kids[i] : NULL;
        if (o && o->type == JSON_OBJ) {
            json_obj_set(o, "bit", c->bit < 0 ? json_new_null() : json_new_bool(c->bit));
            json_obj_set_str(o, "bit_reason", c->why);
            json_obj_set_num(o, "late_ms", ns_ms(late));
        }
        free(c->aff);
    }
    const struct workload *w = h->meta ? &h->meta->w : NULL;
    /* the run's own command times: a lock whose granting acquire takes
     * long (Redlock over many nodes, an adapter, a deliberate gap) cycles
     * slower, and keeps its resource for that time too */
    double grant_ns = s->grant_lat.count ? (double)hist_quantile(&s->grant_lat, 0.5) : 0;
    double release_ns = json_get_num(json_path(res, "latency.release"), "p50_ms", 0) * 1e6;
    double expected = 0;
    int64_t floor_g = check_grant_floor(w, s->p->capacity, grant_ns, release_ns, &expected);
    struct json *cov = json_obj_set(res, "coverage", json_new_obj());
    json_obj_set_int(cov, "holds", s->holds);
    json_obj_set_int(cov, "grants", s->grants);
    json_obj_set_int(cov, "contended_acquires", s->contended);
    json_obj_set_int(cov, "grant_floor", floor_g);
    json_obj_set_num(cov, "expected_grants", floor(expected));
    json_obj_set_bool(cov, "enough_activity", s->grants >= floor_g);
    struct json *fo = json_obj_set(cov, "faults", json_new_obj());
    json_obj_set_int(fo, "occurrences", h->nfaults);
    json_obj_set_int(fo, "bit", nbit);
    json_obj_set_int(fo, "not_bit", nnot);
    json_obj_set_int(fo, "undecided", nund);
    json_obj_set_int(fo, "late", nlate);
    json_obj_set_num(fo, "max_late_ms", ns_ms(max_late));

    if (nbit > 0 && nbit < h->nfaults)
        check_warn(res, "coverage: %lld of %d fault occurrences bit", (long long)nbit,
                   h->nfaults);
    if (nlate > 0)
        check_warn(res, "faults: %lld of %d occurrences started late (more than max(100 ms, "
                   "10%% of their duration)), the latest by %.0f ms: the harness was stalled",
                   (long long)nlate, h->nfaults, ns_ms(max_late));
    free(s->w);
    free(s->held);
    free(s->f);
    free(s->order);
    free(s->live);
    free(s);
    return VERDICT_VALID;
}

const struct checker_def coverage_checker = {
    {"coverage",
     PASS_TYPE(EV_ACQUIRE_INVOKE) | PASS_TYPE(EV_ACQUIRE_OK) | PASS_TYPE(EV_ACQUIRE_BUSY) |
         PASS_TYPE(EV_ACQUIRE_FAIL) | PASS_TYPE(EV_ACQUIRE_UNKNOWN) | PASS_TYPE(EV_ENTER) |
         PASS_TYPE(EV_EXIT) | PASS_TYPE(EV_RENEW_INVOKE) | PASS_TYPE(EV_RENEW_OK) |
         PASS_TYPE(EV_RENEW_FAIL) | PASS_TYPE(EV_RELEASE_INVOKE) | PASS_TYPE(EV_RELEASE_OK) |
         PASS_TYPE(EV_RELEASE_NOT_OWNER) | PASS_TYPE(EV_RELEASE_FAIL) | PASS_TYPE(EV_CRASH) |
         PASS_TYPE(EV_JOB),
     cov_event, cov_worker_end, NULL, 40},
    cov_init, cov_finish, NULL};

int check_coverage(struct history *h, const struct check_params *p, struct json *res)
{
    return checker_run_one(&coverage_checker, h, p, res);
}
