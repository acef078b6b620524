/*
 * mutex_int.h: what the mutex checker's two files share (checkers/mutex.c:
 * holds, their pairing and leases, the pass consumer; checkers/mutex_viol.c:
 * violations and incidents, pending until their holds have ended). Not
 * for other checkers.
 */
#ifndef LS_MUTEX_INT_H
#define LS_MUTEX_INT_H

#include <stdint.h>
#include <stdlib.h>

#include "checkers/check.h"
#include "checkers/pass.h"
#include "util/json.h"
#include "util/keyslots.h"
#include "util/sufcount.h"

#define LEASE_NEVER INT64_MAX

/* Hold flags. */
#define HF_FENCE 0x01    /* the grant carried a fence */
#define HF_CRASH 0x02    /* ended by the worker's crash record */
#define HF_OPEN 0x04     /* no exit and no crash: ended at the log's last record */
#define HF_NO_GRANT 0x08 /* enter without a preceding acquire_ok */

struct incident;
struct liveix;

/* A raise of a grant's lease: at time t, from the lease it had before. */
struct raise {
    int64_t t, before;
};

/* One hold, from its grant until nothing refers to it any more (its
 * worker's slot, the enter batch, its resource's active list, pending
 * violations, the incident it caused). Pooled: no allocation per hold. A
 * hold is the closed interval [enter, exit]; it overlaps another only on
 * an interval of positive length, so a hold of zero length (exit == enter)
 * overlaps nothing, though it counts as a hold. */
struct hold {
    int64_t enter, exit;
    int64_t acquired;           /* grant time (= enter without a grant) */
    int64_t lease;              /* L: lease end incl. renewals; LEASE_NEVER = no expiry */
    int64_t lease0;             /* the grant's own lease */
    int64_t end_t;              /* when it stopped being a live grant (gone set) */
    uint64_t id;                /* serial, from 1 */
    uint64_t join;              /* when it joined its resource's live grants (mutex_st.joins) */
    uint64_t gone_at;           /* mutex_st.joins when it was gone (gone set) */
    struct raise *raises;       /* its lease's raises at distinct times, in time order: those
                                   a later grant may still ask about (lease_at; owned) */
    int nraises, raises_cap;
    uint64_t fence;
    char token[EVLOG_TOKEN_LEN];
    int32_t worker;             /* worker id */
    uint16_t res;
    uint16_t flags;
    uint8_t entered, done;      /* entered; ended (exit, crash or end of log) */
    uint8_t batched;            /* in the enter batch, not yet in the active list */
    uint8_t gone;               /* no longer a live grant: ended, released, lost, replaced */
    uint8_t renewed_late;       /* it had a renewal after loss */
    uint8_t in_live;            /* in its resource's live list */
    int refs;
    int pending;                /* pending violations naming it */
    struct pviol **pv;          /* those of them made while it had not ended, in the order
                                   they were made (owned; NULL once it has ended) */
    int npv, pvcap;
    struct incident *inc;       /* the incident it causes, NULL none (yet) */
    uint64_t ser;               /* its serial among its resource's holds that were active
                                   (from 1, in the order they entered); 0: never active */
    struct hold *next_free;
};

struct slots {                  /* the grants one worker has and may be holding */
    struct hold **a;
    int n, cap;
    struct keyslots ix;         /* a's positions by resource once they were many
                                   (SLOTS_INDEXED_FROM), until a is empty again */
    struct hold *exited;        /* its last exited hold until a release outcome (a `lost`
                                 * may still come for it), referenced; NULL none */
};

/* Active holds in a heap by a key, the largest on top (the smaller tie
 * among equals), each entry referenced. An entry goes stale when its hold
 * ends or no longer has that key (its owner tells which: active_gmax,
 * active_lease_hi), and is dropped when it comes to the top; once the
 * entries are more than twice the active holds the heap is let go, made
 * again when next asked (ok 0): a history that never asks keeps none. */
struct hent {
    int64_t key;
    uint64_t tie;
    struct hold *x;
};

struct hheap {
    struct hent *a;
    int n, cap, ok;
};

struct rstate {
    struct hold **active;       /* holds entered and not ended, in entry order, and ndead
                                   that have ended since it was last closed up (done; an
                                   end searched and closed the gap: the square of the
                                   active holds when they never end) */
    int n, cap;                 /* in active, ended ones included */
    int ndead;
    int head;                   /* active[0, head) have all ended */
    int64_t last_exit;          /* latest exit of an ended hold (has_exit, below) */
    struct hold **live;         /* grants of the resource, entered or not, until gone and
                                 * time has moved past their end (referenced) */
    int nlive, live_cap;
    int live_gone;              /* of them gone (purged once they are half the list) */
    int has_exit;               /* last_exit set (here, and ix_off below, in what was
                                   padding: 192 bytes, as before the index) */
    int64_t purged_t;           /* the instant of the last purge */
    struct liveix *ix;          /* live by position, with grant instants, once the list was
                                   long (LIVE_INDEXED_FROM; owned; NULL none) */
    uint64_t ser;               /* the last serial given (hold.ser) */
    struct hheap gh;            /* its active holds that had a grant by grant time, the
                                   first entered (ser) among equals (active_gmax) */
    struct hheap lh;            /* its active holds by lease (active_lease_hi) */
    struct uviol **up;          /* its unlisted violations pending, in the order made (NULL:
                                   resolved since the array was last closed up; owned) */
    uint64_t *up_ser;           /* the serial of each (increasing: a hold's end is one of
                                   those from its own serial on) */
    int nup, up_cap, up_gone;
    int ix_off;                 /* instants went back in time: live never indexed again */
    struct sufcount uc;         /* each one's holds not ended yet (level 0), and that less
                                   capacity (level 1), lowered for all of them at once */
};

/* The violations with one cause: the earliest-entered hold still active
 * at each of their entries. Open while its cause is active (only then can
 * a violation join), done once its cause has ended and its violations are
 * resolved (they decide its class and end). */
struct incident {
    struct hold *cause;         /* referenced until done */
    struct json *obj;           /* its listed entry to fill, or NULL past the listed ones */
    int64_t n;                  /* its violations */
    int64_t start, end;         /* first overlap start, last overlap end (so far) */
    int pending;                /* its violations not resolved yet */
    int broken;                 /* one of them is lock-broken */
    int64_t *listed;            /* indexes of its listed violations (listed incidents) */
    int nlisted, listed_cap;
    uint8_t *faults;            /* per fault window: met by one of its overlaps (listed) */
};

struct pviol {                  /* a violation whose holds have not all ended */
    struct json *obj;           /* its listed entry to fill, or NULL past the listed ones */
    int64_t index;              /* its place in violations[], from 0 */
    struct incident *inc;       /* the incident it belongs to */
    int undone;                 /* holds not ended yet */
    int at;                     /* its place in mutex_st.pend */
    int valid;                  /* holds whose lease was valid at the latest grant */
    int n;                      /* holders: the active ones, then the entering one */
    int latest;                 /* the holder with the latest grant (the one judged) */
    int64_t *lag;               /* each holder's lease as it stood at the latest grant (n of
                                   them; that holder's own unused) */
    struct hold *hs[];
};

/* A violation past the listed ones whose holds have not all ended: what
 * its class and overlap need, and not its holders. (Kept as a pviol, a
 * violation among n active holds names all n, and n holds that never end
 * (a worker entering again without an exit) made n^2 entries: 5,000 such
 * holds took 536 MB.) Its holds are the resource's active holds when it
 * was made and the entering one, whose serial it keeps: a hold that ends
 * is one of the holds of every pending one made since it entered (serial
 * >= its own), and none of the others'. Its overlap ends at the
 * (capacity + 1)-th latest exit of its holds (resolve). Holds end in time
 * order (the pass feeds the records in time order, and a worker's log's
 * end at its last record's place), so that is the exit of the hold whose
 * end left capacity of them not ended; the count of each one's holds not
 * ended is kept for all of them at once in its resource's uc (a walk over
 * them at every end took the square of their number when holds never
 * end). */
struct uviol {
    struct incident *inc;
    int64_t ov_start;           /* its entry */
    int64_t ov_end;             /* with has_end: its overlap's end */
    uint64_t ser;               /* the entering hold's serial */
    int valid;                  /* holds whose lease was valid at the latest grant, counted
                                   up to capacity */
    int has_end;
};

struct mutex_st {
    const struct history *h;
    const struct check_params *p;
    int cap;
    struct slots *ws;
    int *kbuf, kcap;            /* slots_of's positions (owned) */
    struct rstate *rs;          /* indexed by the resource field, nrs of them: each */
    int nrs;                    /* resource entered has one (grown at its enter) */
    struct hold *free_list;
    struct hold **chunks;
    size_t nchunks;
    struct hold **batch;        /* entries at batch_t, judged once time moves on */
    int nbatch, batch_cap;
    int64_t batch_t;
    struct pviol **pend;
    int npend, pend_cap;
    int pend_gone;              /* resolved ones in pend (NULL) since it was last closed up */
    struct json *viol;          /* the listed violations (owned until finish) */
    struct json *incs;          /* the listed incidents (owned until finish) */
    int64_t nviol, near, stale, broken, holds;
    int64_t ninc, inc_stale, inc_broken;
    size_t no_grant, stray_exit, open;
    int64_t *exits;
    size_t exits_cap;
    uint64_t next_id;
    uint64_t joins;             /* grants joined a live list so far (hold.join, gone_at) */
    int64_t lost_left, lost_expired, lost_no_lease, lost_unmatched, ral, ral_holds;
    struct json *anom;          /* the listed anomalies (owned until finish) */
    int64_t nanom_listed[3];    /* per anomaly class: listed so far */
    struct hold_listener listen; /* told each hold as it ends; ended NULL: none */
};

/* Contract: a reference to x let go (back to the pool at the last). */
static inline void mutex_hold_unref(struct mutex_st *m, struct hold *x)
{
    if (--x->refs == 0) {
        free(x->raises);
        x->raises = NULL;
        free(x->pv);
        x->pv = NULL;
        x->next_free = m->free_list;
        m->free_list = x;
    }
}

/* mutex_viol.c */
/* Contract: a new incident caused by hold c (active, causing none yet),
 * listed when it is among the first max_violations. */
struct incident *mutex_incident_new(struct mutex_st *m, struct hold *c);
/* Contract: every hold of v has ended: classify it, fill its listed entry,
 * add it to its incident (done with it when it was the last), let go of
 * its holds and free v. */
void mutex_resolve(struct mutex_st *m, struct pviol *v);
/* Contract: every hold of u has ended: classify it, add it to its
 * incident, free it (its overlap's end: the exit that left capacity of its
 * holds not ended, or its start when none was heard). */
void mutex_resolve_unlisted(struct mutex_st *m, struct uviol *u);
/* Contract: a hold of resource res, serial ser, active until now, has
 * ended at exit: the unlisted pending violations it is one of hear of it
 * (the overlap's end of those it leaves with capacity holds not ended;
 * those it was the last hold of resolved). */
void mutex_unlisted_heard(struct mutex_st *m, int res, uint64_t ser, int64_t exit);
/* Contract: v pending: each of its holds not ended hears of it when it
 * ends. */
void mutex_push_pending(struct mutex_st *m, struct pviol *v);

/* mutex_live.c: a resource's live grants by grant instant (checkers/
 * liveix.h), made when a renewal asks and they are LIVE_INDEXED_FROM: a
 * renewal's question, which of them were made while its lease had run out,
 * and its lease's trim, which raises they may still ask about, answered by
 * binary searches instead of a walk over them all. The same answers. A
 * history without renewals never makes one. */
#ifndef LIVE_INDEXED_FROM
#define LIVE_INDEXED_FROM 256
#endif
/* Contract: H, just appended to r's live list (after a purge, maybe), in
 * r's index (r->ix set) too; the index let go when the purge moved the
 * positions (made again when a renewal next asks). */
void mutex_live_joined(struct rstate *r, const struct hold *H);
/* Contract: x (gone, in r's live list) gone in r's index too. */
void mutex_live_gone(struct rstate *r, const struct hold *x);
/* Contract: renewal_check's count *n of r's live grants made while x's
 * lease had run out, the first of them in the list (*first) and that
 * lease (*ran_out), through r's index (made if it has none and the list
 * is long); 0 when a walk answers. */
int mutex_live_lapsed(struct rstate *r, const struct hold *x, int64_t t, int *n,
                      const struct hold **first, int64_t *ran_out);
/* Contract: keep[i] set for each raise of x that a grant of r's live list
 * joined after x reads, through r's index (made if it has none and the
 * list is long); 0 when a walk answers (nothing set then). */
int mutex_live_marks(struct rstate *r, const struct hold *x, char *keep);

#endif
