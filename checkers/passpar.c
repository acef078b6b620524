/*
 * passpar.c: the merged pass on several threads (pass.h pass_run_jobs;
 * docs/checkers.md "The pass on several cores"). The work is split, never
 * the record stream: each producer merges a subset of the workers (its
 * own tree of losers), checks their deferred records and faults their
 * pages in, and writes its merged order, each record copied, into a
 * bounded ring of chunks; each consumer thread merges the producers'
 * streams again on (time, worker index), which gives exactly pass_run's
 * order, and calls only its groups' consumers. Every thread may be both.
 */
#include "checkers/pass.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"
#include "checkers/pass_int.h"

/* The declared grouping: consumers that share state are in one group,
 * which one thread calls in the consumers' order. weight: the group's
 * share of the pass's time in per mille (the profile in
 * docs/performance.md), to spread the groups over the threads. */
#define GROUP_NAMES 4
static const struct pass_group {
    const char *names[GROUP_NAMES];
    int weight;
} groups[] = {
    /* series pairs the grants, enters and exits the mutex checker pairs
     * (and will read its pairing: the fused pass): one thread */
    {{"mutex", "series"}, 80},
    {{"stats"}, 50},
    {{"coverage", "windows"}, 30},
    {{"liveness", "fencing"}, 30},
};
#define NGROUPS ((int)(sizeof(groups) / sizeof(groups[0])))

int pass_group_listed(const char *name)
{
    for (int g = 0; g < NGROUPS; g++)
        for (int k = 0; k < GROUP_NAMES && groups[g].names[k]; k++)
            if (name && strcmp(groups[g].names[k], name) == 0)
                return 1;
    return 0;
}

int pass_group_of(const char *name)
{
    for (int g = 0; g < NGROUPS; g++)
        for (int k = 0; k < GROUP_NAMES && groups[g].names[k]; k++)
            if (name && strcmp(groups[g].names[k], name) == 0)
                return g;
    return 0;
}

/* A chunk: CHUNK entries of one producer's merged order. 2048 records
 * (about 100 us of work) make the locking per chunk negligible; RING
 * chunks per producer bound the memory (650 KB each). */
#define CHUNK 2048
#define RING 4
/* More producers than this gain nothing (their merges get too short). */
#define PRODUCERS_MAX 32

/* A head in a tree of losers: merge key, worker index (the order), leaf. */
struct pcur {
    int64_t t;
    int32_t wi;
    int32_t leaf;
};

/* (time, worker index) order, as pass.c's before(). */
static inline int pbefore(const struct pcur *a, const struct pcur *b)
{
    return (a->t < b->t) | ((a->t == b->t) & (a->wi < b->wi));
}

/* Contract: build a tree of losers over the m leaves win[m..2m): node[k]
 * the loser of match k; returns the winner. win is scratch (2m). */
static struct pcur tree_build(struct pcur *win, struct pcur *node, int m)
{
    for (int k = m - 1; k >= 1; k--) {
        int a_first = pbefore(&win[2 * k], &win[2 * k + 1]);
        win[k] = win[2 * k + !a_first];
        node[k] = win[2 * k + a_first];
    }
    return win[1];
}

/* Contract: leaf nx.leaf's new head nx replayed to the root; the winner. */
static inline struct pcur tree_replay(struct pcur *node, int m, struct pcur nx)
{
    for (int k = (m + nx.leaf) / 2; k >= 1; k /= 2) {
        struct pcur l = node[k];
        int swap = pbefore(&l, &nx);
        node[k] = swap ? nx : l;
        nx = swap ? l : nx;
    }
    return nx;
}

enum { K_REC = 0, K_REC_END = 1, K_END = 2 }; /* record; record, then its worker ends; end */

struct chunk {
    int n;
    int last;                 /* the producer's stream ends with this chunk */
    int64_t key[CHUNK];       /* merge key (key_of(t)) */
    int32_t wi[CHUNK];
    uint8_t kind[CHUNK];
    struct ev_rec rec[CHUNK]; /* a copy (K_END: unused): the pages go at once */
};

/* One producer: its workers' tree of losers, as pass_run's. */
struct producer {
    int nw, m;                /* workers, leaves (a power of two >= nw) */
    int *wis;                 /* its workers' indices, ascending (owned) */
    struct pcur *node;        /* losers node[1..m) (owned) */
    struct wpos *pos;         /* by leaf (owned) */
    struct pcur top;
    struct chunk *ring;       /* RING chunks (owned) */
    long produced;            /* chunks published: under par.mu */
    int finished;             /* wrote its last chunk (producer thread only) */
};

/* One consumer's event function and state: the dispatch table's entry. */
struct target {
    void (*event)(void *st, int wi, const struct ev_rec *r);
    void *st;
};

/* One consumer thread: its consumers (in c's order), its merge of the
 * producers' streams (a tree of losers whose leaves are the producers). */
struct consumer {
    int n;
    struct pass_consumer *c;  /* owned array */
    struct target *tg;        /* by record type: 32 x n (owned) */
    int ntg[32];
    long *consumed;           /* by producer: chunks done with (under par.mu) */
    long *ci;                 /* by producer: the chunk being read (this thread's) */
    long *seen;               /* by producer: its chunks published, as last read */
    int *pi;                  /* by producer: the entry in it */
    int *at_end;              /* by producer: its stream is over */
    struct pcur *node;        /* losers (owned); m leaves */
    struct pcur *heads;       /* the first heads, before the tree is built */
    int m, loaded, built, need, wait_j, finished;
    struct pcur top;
};

struct par {
    struct history *h;
    int reload_failed;
    pthread_mutex_t mu;       /* produced, consumed, abort */
    pthread_cond_t cv;
    int abort;                /* a deferred record was bad: everyone stops */
    pthread_mutex_t cut_mu;   /* history_cut writes the history's evidence */
    int J, G, T;
    struct producer *p;
    struct consumer *cs;
};

/* A thread's roles: producer t if t < J, consumer thread t if t < G. */
struct thr {
    struct par *par;
    int roles[PASS_JOBS_MAX];
    int nroles;
};

/* ---- producers ---- */

static void producer_init(struct par *x, struct producer *p)
{
    struct history *h = x->h;
    p->m = 1;
    while (p->m < p->nw)
        p->m *= 2;
    p->node = xmalloc((size_t)p->m * sizeof(*p->node));
    p->pos = xcalloc((size_t)p->m, sizeof(*p->pos));
    p->ring = xmalloc((size_t)RING * sizeof(*p->ring));
    struct pcur *win = xmalloc((size_t)(2 * p->m) * sizeof(*win));
    for (int i = 0; i < p->m; i++) {
        win[p->m + i] = (struct pcur){INT64_MAX, i < p->nw ? p->wis[i] : INT32_MAX, i};
        if (i < p->nw) {
            const struct hist_worker *w = &h->w[p->wis[i]];
            enter_run(w, &p->pos[i], 0); /* not empty: the caller chose it so */
            history_willneed(w, 0, 2 * DROP_EVERY);
            p->pos[i].prev_t = INT64_MIN;
            win[p->m + i].t = key_of(p->pos[i].ev[0].t);
        }
    }
    p->top = tree_build(win, p->node, p->m);
    free(win);
}

/* Contract: fill chunk c with p's next entries, pass_run's loop over p's
 * workers. Returns 0, or -1 when a deferred record was bad (the pass
 * fails; c is not to be published). */
static int produce(struct par *x, struct producer *p, struct chunk *c)
{
    struct history *h = x->h;
    c->n = 0;
    c->last = 0;
    while (c->n < CHUNK && p->top.t != INT64_MAX) {
        int wi = p->top.wi, li = p->top.leaf;
        const struct hist_worker *w = &h->w[wi];
        struct wpos *ps = &p->pos[li];
        size_t pn = ps->p++;
        const struct ev_rec *r = &ps->ev[ps->i];
        if (ps->i + PREFETCH_AHEAD < ps->n)
            __builtin_prefetch(&ps->ev[ps->i + PREFETCH_AHEAD]);
        int bad = ps->unverified && !rec_ok(h, r, ps->i, ps->prev_t);
        if (bad && !x->reload_failed)
            return -1;
        int e = c->n++;
        c->key[e] = p->top.t;
        c->wi[e] = wi;
        c->kind[e] = K_REC;
        if (!bad) {
            c->rec[e] = *r;
            if (pn + 1 - ps->dropped >= DROP_EVERY) {
                history_drop(w, ps->dropped, pn + 1);
                ps->dropped = pn + 1;
                history_willneed(w, pn + 1 + DROP_EVERY, pn + 1 + 2 * DROP_EVERY);
            }
        } else { /* cut there, as pass_run does */
            pthread_mutex_lock(&x->cut_mu);
            history_cut(h, wi, pn);
            pthread_mutex_unlock(&x->cut_mu);
            c->kind[e] = K_END;
        }
        ps->prev_t = r->t;
        struct pcur nx = {INT64_MAX, wi, li};
        if (!bad && pn + 1 < w->n && (++ps->i < ps->n || next_run(w, ps, pn))) {
            nx.t = key_of(ps->ev[ps->i].t);
        } else {
            if (!bad)
                c->kind[e] = K_REC_END;
            history_drop(w, ps->dropped, w->n);
        }
        p->top = tree_replay(p->node, p->m, nx);
    }
    c->last = p->top.t == INT64_MAX;
    return 0;
}

/* Contract: may producer j write its next chunk (every consumer thread
 * is done with the one it replaces)? Under x->mu. */
static int room(const struct par *x, int j)
{
    long produced = x->p[j].produced;
    for (int g = 0; g < x->G; g++)
        if (produced - x->cs[g].consumed[j] >= RING)
            return 0;
    return 1;
}

/* Contract: producer j's step when there is room: one chunk written and
 * published. Returns 1 when it did something, 0 when it waits. */
static int producer_step(struct par *x, int j)
{
    struct producer *p = &x->p[j];
    pthread_mutex_lock(&x->mu);
    int ok = room(x, j);
    long slot = p->produced;
    pthread_mutex_unlock(&x->mu);
    if (!ok)
        return 0;
    struct chunk *c = &p->ring[slot % RING];
    int rc = produce(x, p, c);
    pthread_mutex_lock(&x->mu);
    if (rc < 0)
        x->abort = 1;
    else
        p->produced++;
    pthread_cond_broadcast(&x->cv);
    pthread_mutex_unlock(&x->mu);
    if (rc < 0 || c->last)
        p->finished = 1;
    return 1;
}

/* ---- consumers ---- */

static void cworker_end(const struct consumer *s, int wi)
{
    for (int k = 0; k < s->n; k++)
        if (s->c[k].ops->worker_end)
            s->c[k].ops->worker_end(s->c[k].st, wi);
}

/* Contract: stream j's head for s: its next entry's (key, worker), or
 * INT64_MAX when the stream is over; chunks read through are given back.
 * Returns 1, or 0 when the chunk it needs is not written yet
 * (s->wait_j = j). */
static int head(struct par *x, struct consumer *s, int j, struct pcur *hd)
{
    struct producer *p = &x->p[j];
    for (;;) {
        if (s->at_end[j]) {
            *hd = (struct pcur){INT64_MAX, INT32_MAX, j};
            return 1;
        }
        if (s->ci[j] >= s->seen[j]) { /* ask again only then: a lock per chunk, not per entry */
            pthread_mutex_lock(&x->mu);
            s->seen[j] = p->produced;
            pthread_mutex_unlock(&x->mu);
        }
        if (s->ci[j] >= s->seen[j]) {
            s->wait_j = j;
            return 0;
        }
        const struct chunk *c = &p->ring[s->ci[j] % RING];
        if (s->pi[j] < c->n) {
            *hd = (struct pcur){c->key[s->pi[j]], c->wi[s->pi[j]], j};
            return 1;
        }
        int last = c->last; /* read through: give it back */
        pthread_mutex_lock(&x->mu);
        s->consumed[j] = ++s->ci[j];
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        s->pi[j] = 0;
        s->at_end[j] = last;
    }
}

/* Contract: consumer thread s's step: up to budget entries delivered to
 * its consumers, in the streams' merged order, which is pass_run's: each
 * stream is in (key, worker) order and no two share a worker. After the
 * last, the consumers' end calls and s->finished. Returns 1 when it did
 * something, 0 when it waits for a chunk. */
static int consumer_step(struct par *x, struct consumer *s, int budget)
{
    int did = 0;
    if (!s->built) {
        for (; s->loaded < x->J; s->loaded++, did = 1)
            if (!head(x, s, s->loaded, &s->heads[s->m + s->loaded]))
                return did;
        for (int i = x->J; i < s->m; i++)
            s->heads[s->m + i] = (struct pcur){INT64_MAX, INT32_MAX, i};
        s->top = tree_build(s->heads, s->node, s->m);
        s->built = 1;
    }
    for (int done = 0; done < budget; done++) {
        if (s->need >= 0) {
            struct pcur hd;
            if (!head(x, s, s->need, &hd))
                return did;
            s->need = -1;
            s->top = tree_replay(s->node, s->m, hd);
        }
        if (s->top.t == INT64_MAX) {
            for (int k = 0; k < s->n; k++)
                if (s->c[k].ops->end)
                    s->c[k].ops->end(s->c[k].st);
            s->finished = 1;
            return 1;
        }
        int j = s->top.leaf;
        const struct chunk *c = &x->p[j].ring[s->ci[j] % RING];
        int e = s->pi[j]++;
        if (c->kind[e] != K_END) {
            const struct ev_rec *r = &c->rec[e];
            const struct target *d = &s->tg[(r->type & 31) * s->n];
            for (int k = 0, nk = s->ntg[r->type & 31]; k < nk; k++)
                d[k].event(d[k].st, c->wi[e], r);
        }
        if (c->kind[e] != K_REC)
            cworker_end(s, c->wi[e]);
        s->need = j;
        did = 1;
    }
    return did;
}

/* ---- threads ---- */

/* Contract: can role t go on? Under x->mu. */
static int ready(const struct par *x, int t)
{
    if (t < x->J && !x->p[t].finished && room(x, t))
        return 1;
    if (t < x->G && !x->cs[t].finished) {
        const struct consumer *s = &x->cs[t];
        return s->ci[s->wait_j] < x->p[s->wait_j].produced;
    }
    return 0;
}

static void *thread_main(void *arg)
{
    struct thr *th = arg;
    struct par *x = th->par;
    for (;;) {
        int live = 0, did = 0;
        for (int k = 0; k < th->nroles; k++) {
            int t = th->roles[k];
            if (t < x->J && !x->p[t].finished) {
                live = 1;
                did |= producer_step(x, t);
            }
            if (t < x->G && !x->cs[t].finished) {
                live = 1;
                did |= consumer_step(x, &x->cs[t], CHUNK);
            }
        }
        pthread_mutex_lock(&x->mu);
        if (live && !did) { /* every role waits for another thread */
            int any = 0;
            while (!x->abort && !any) {
                for (int k = 0; k < th->nroles && !any; k++)
                    any = ready(x, th->roles[k]);
                if (!any)
                    pthread_cond_wait(&x->cv, &x->mu);
            }
        }
        int stop = x->abort || !live;
        pthread_mutex_unlock(&x->mu);
        if (stop)
            break;
    }
    return NULL;
}

static void worker_done(const struct pass_consumer *c, int n, int wi)
{
    for (int k = 0; k < n; k++)
        if (c[k].ops->worker_end)
            c[k].ops->worker_end(c[k].st, wi);
}

/* Contract: spread the groups present among c over G consumer threads:
 * *thread_of[g] for each group g of the table, by weight, the heaviest
 * first to the least loaded thread. Returns the number of groups present. */
static int spread(const struct pass_consumer *c, int n, int G, int *thread_of)
{
    int present[NGROUPS] = {0}, np = 0, load[PASS_JOBS_MAX] = {0};
    for (int k = 0; k < n; k++)
        present[pass_group_of(c[k].ops->name)] = 1;
    int order[NGROUPS];
    for (int g = 0; g < NGROUPS; g++)
        order[g] = g;
    for (int a = 1; a < NGROUPS; a++) /* by weight, heaviest first; ties in table order */
        for (int b = a; b > 0 && groups[order[b]].weight > groups[order[b - 1]].weight; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    for (int i = 0; i < NGROUPS; i++) {
        int g = order[i];
        thread_of[g] = -1;
        if (!present[g] || G <= 0)
            continue;
        int best = 0;
        for (int t = 1; t < G; t++)
            if (load[t] < load[best])
                best = t;
        thread_of[g] = best;
        load[best] += groups[g].weight;
        np++;
    }
    return np;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

int pass_run_jobs(struct history *h, const struct pass_consumer *c, int n, int jobs)
{
    int nw = h->nworkers;
    if (jobs > PASS_JOBS_MAX)
        jobs = PASS_JOBS_MAX;
    if (jobs <= 1 || nw <= 0 || n <= 0)
        return pass_run(h, c, n);
    int *live = xcalloc((size_t)nw, sizeof(*live)), nlive = 0;
    for (int i = 0; i < nw; i++) {
        struct wpos tmp;
        memset(&tmp, 0, sizeof(tmp));
        live[i] = h->w[i].n && enter_run(&h->w[i], &tmp, 0);
        nlive += live[i];
    }
    int thread_of[NGROUPS];
    int npresent = spread(c, n, 1, thread_of);
    struct par x;
    memset(&x, 0, sizeof(x));
    x.J = imin(imin(jobs, nlive), PRODUCERS_MAX);
    x.G = imin(jobs, npresent);
    x.T = x.J > x.G ? x.J : x.G;
    if (x.T <= 1 || x.J < 1) {
        free(live);
        return pass_run(h, c, n);
    }
    spread(c, n, x.G, thread_of);
    x.h = h;
    x.reload_failed = h->memo && h->memo->reload_failed;
    pthread_mutex_init(&x.mu, NULL);
    pthread_cond_init(&x.cv, NULL);
    pthread_mutex_init(&x.cut_mu, NULL);
    /* the workers without records end first, in index order (pass_run) */
    for (int i = 0; i < nw; i++)
        if (!live[i])
            worker_done(c, n, i);
    /* producers: the live workers dealt round, each subset ascending */
    x.p = xcalloc((size_t)x.J, sizeof(*x.p));
    for (int j = 0; j < x.J; j++)
        x.p[j].wis = xmalloc((size_t)(nlive / x.J + 1) * sizeof(int));
    for (int i = 0, k = 0; i < nw; i++)
        if (live[i]) {
            struct producer *p = &x.p[k++ % x.J];
            p->wis[p->nw++] = i;
        }
    for (int j = 0; j < x.J; j++)
        producer_init(&x, &x.p[j]);
    /* consumer threads: their groups' consumers, in c's order */
    x.cs = xcalloc((size_t)x.G, sizeof(*x.cs));
    for (int g = 0; g < x.G; g++) {
        struct consumer *s = &x.cs[g];
        s->c = xcalloc((size_t)n, sizeof(*s->c));
        for (int k = 0; k < n; k++)
            if (thread_of[pass_group_of(c[k].ops->name)] == g)
                s->c[s->n++] = c[k];
        s->tg = xmalloc((size_t)(32 * (s->n ? s->n : 1)) * sizeof(*s->tg));
        for (int t = 0; t < 32; t++)
            for (int k = 0; k < s->n; k++)
                if (!s->c[k].ops->types || (s->c[k].ops->types & (1u << t)))
                    s->tg[t * s->n + s->ntg[t]++] =
                        (struct target){s->c[k].ops->event, s->c[k].st};
        s->consumed = xcalloc((size_t)x.J, sizeof(long));
        s->ci = xcalloc((size_t)x.J, sizeof(long));
        s->seen = xcalloc((size_t)x.J, sizeof(long));
        s->pi = xcalloc((size_t)x.J, sizeof(int));
        s->at_end = xcalloc((size_t)x.J, sizeof(int));
        s->m = 1;
        while (s->m < x.J)
            s->m *= 2;
        s->node = xmalloc((size_t)s->m * sizeof(*s->node));
        s->heads = xmalloc((size_t)(2 * s->m) * sizeof(*s->heads));
        s->need = -1;
    }
    /* threads: role t on thread t; a thread that cannot start leaves its
     * role to this one (every role on one thread still works: the roles
     * take turns) */
    struct thr *th = xcalloc((size_t)x.T, sizeof(*th));
    pthread_t *tid = xcalloc((size_t)x.T, sizeof(*tid));
    int *started = xcalloc((size_t)x.T, sizeof(*started));
    th[0].par = &x;
    th[0].roles[th[0].nroles++] = 0;
    for (int t = 1; t < x.T; t++) {
        th[t].par = &x;
        th[t].roles[th[t].nroles++] = t;
        started[t] = pthread_create(&tid[t], NULL, thread_main, &th[t]) == 0;
        if (!started[t])
            th[0].roles[th[0].nroles++] = t;
    }
    thread_main(&th[0]);
    for (int t = 1; t < x.T; t++)
        if (started[t])
            pthread_join(tid[t], NULL);
    int rc = x.abort ? -1 : 0;
    if (rc == 0) {
        history_mark_verified(h);
        history_after_pass(h);
    }
    for (int j = 0; j < x.J; j++) {
        free(x.p[j].wis);
        free(x.p[j].node);
        free(x.p[j].pos);
        free(x.p[j].ring);
    }
    for (int g = 0; g < x.G; g++) {
        struct consumer *s = &x.cs[g];
        free(s->c);
        free(s->tg);
        free(s->consumed);
        free(s->ci);
        free(s->seen);
        free(s->pi);
        free(s->at_end);
        free(s->node);
        free(s->heads);
    }
    free(x.p);
    free(x.cs);
    free(th);
    free(tid);
    free(started);
    free(live);
    pthread_mutex_destroy(&x.mu);
    pthread_cond_destroy(&x.cv);
    pthread_mutex_destroy(&x.cut_mu);
    return rc;
}
