/*
 * proxy_cmd.c: the proxy's command rules (proxy.h proxy_cmd_set), the part
 * of the proxy process that reads RESP. Only a connection on a link that a
 * command rule covers is parsed (struct pcmd); every other byte takes
 * proxy.c's idle path untouched. Requests are framed as they arrive
 * (faults/resp.h); the bytes of an unfinished request stay in the to-node
 * buffer, unsent (at most PROXY_CMD_BOUND; a larger request passes
 * unparsed and is counted). Each complete request is matched against the
 * rules, then forwarded (maybe later: delay), dropped, or answered with an
 * error here. A queue per connection remembers, in request order, what
 * each reply owed to the client is: the node's (forwarded), the node's but
 * dropped, or the proxy's error, so replies stay matched to requests under
 * pipelining. After a dropped request or reply the client would take the
 * next reply for the lost one, so the stream ends there: the rest of that
 * read is dropped and the connection is reset at the client's next bytes
 * (or when the rule is lifted).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "faults/proxy_loop.h"
#include "faults/resp.h"

#define MAX_ENTRIES 65536 /* replies owed that are not plain forwards, per connection */
#define LOG_CAP 20

enum { E_FWD, E_DROP, E_ANSWER };

/* One reply the client is owed; consecutive forwards share an entry. */
struct pent {
    int kind;
    uint32_t n;          /* E_FWD: how many */
    char *text;          /* E_ANSWER: the whole reply (owned) */
    size_t len;
    int slot;            /* E_DROP: the rule's slot, and its epoch then (-1: none) */
    uint32_t epoch;
};

struct pcmd {
    struct resp_req req;
    struct resp_reply rep;
    int oversized;       /* the request being read passed the bound: its bytes go unparsed */
    int req_off;         /* requests pass unparsed (stream not followed, or rules lifted) */
    int rep_off;         /* replies pass unparsed */
    int rep_mid;         /* inside a reply */
    int lost;            /* a request or reply was dropped: the next request resets */
    struct pent *q;      /* ring of replies owed, oldest first */
    size_t qcap, qhead, qn;
    size_t specials;     /* entries in q that are not E_FWD */
};

static int logged;

static struct pent *q_at(struct pcmd *p, size_t i)
{
    return &p->q[(p->qhead + i) % p->qcap];
}

/* Append a reply owed. Returns 0 or -1 (out of memory or too many). */
static int q_push(struct pcmd *p, int kind, const char *text, size_t len)
{
    if (kind == E_FWD && p->qn > 0 && q_at(p, p->qn - 1)->kind == E_FWD &&
        q_at(p, p->qn - 1)->n < UINT32_MAX) {
        q_at(p, p->qn - 1)->n++;
        return 0;
    }
    if (kind != E_FWD && p->specials >= MAX_ENTRIES)
        return -1;
    if (p->qn == p->qcap) {
        size_t ncap = p->qcap ? p->qcap * 2 : 8;
        struct pent *nq = malloc(ncap * sizeof(*nq));
        if (!nq)
            return -1;
        for (size_t i = 0; i < p->qn; i++)
            nq[i] = *q_at(p, i);
        free(p->q);
        p->q = nq;
        p->qcap = ncap;
        p->qhead = 0;
    }
    struct pent e = {kind, 1, NULL, len, -1, 0};
    if (kind == E_ANSWER) {
        e.text = malloc(len);
        if (!e.text)
            return -1;
        memcpy(e.text, text, len);
    }
    *q_at(p, p->qn) = e;
    p->qn++;
    p->specials += kind != E_FWD;
    return 0;
}

static void q_pop(struct pcmd *p)
{
    struct pent *e = q_at(p, 0);
    if (e->kind == E_FWD && --e->n > 0)
        return;
    p->specials -= e->kind != E_FWD;
    free(e->text);
    p->qhead = (p->qhead + 1) % p->qcap;
    p->qn--;
}

/* A drop-reply entry leaves: its reply was removed (done) or never will be.
 * Counted as acted only when removed, and only while the slot still holds
 * the rule that matched (a slot reused since has a new epoch). */
static void drop_settle(struct pstate *st, const struct pent *e, int done)
{
    if (e->kind != E_DROP || e->slot < 0 || st->cmd_epoch[e->slot] != e->epoch)
        return;
    if (st->cmd_pending[e->slot] > 0)
        st->cmd_pending[e->slot]--;
    if (done)
        atomic_fetch_add_explicit(&st->shm->cmd[e->slot].acted, 1, memory_order_relaxed);
}

void pcmd_free(struct pstate *st, struct pconn *c)
{
    struct pcmd *p = c->cmd;
    if (!p)
        return;
    while (p->qn) {
        drop_settle(st, q_at(p, 0), 0);
        q_pop(p);
    }
    free(p->q);
    free(p);
    c->cmd = NULL;
}

/* Make room for len more bytes after the direction's tail. */
static int reserve(struct pdir *d, size_t end)
{
    if (end <= d->cap)
        return 0;
    size_t ncap = d->cap * 2 > end ? d->cap * 2 : end;
    char *nb = realloc(d->buf, ncap);
    if (!nb)
        return -1;
    d->buf = nb;
    d->cap = ncap;
    return 0;
}

/* Queue the first len held request bytes, released at rel (never before
 * what precedes them). */
static int push_req(struct pstate *st, struct pconn *c, size_t len, int64_t rel, int64_t t)
{
    struct pdir *d = &c->d[PROXY_TO_NODE];
    if (len == 0)
        return 0;
    if (rel < d->last_release)
        rel = d->last_release;
    d->last_release = rel;
    d->unpushed -= len;
    if (push_chunk(d, len, rel, t) < 0) {
        plog(st, "link %d: out of memory queueing a request; connection closed", c->link);
        conn_kill(st, c, 1);
        return -1;
    }
    return 0;
}

#define ADD(field, n) atomic_fetch_add_explicit((field), (n), memory_order_relaxed)

/* The stream cannot be followed (why): requests pass unparsed from here;
 * replies too once no answer or drop is owed. */
static void unfollow(struct pstate *st, struct pconn *c, const char *why)
{
    struct pcmd *p = c->cmd;
    if (!p->req_off)
        ADD(&st->stats[c->link].cmd_unfollowed, 1);
    p->req_off = 1;
    if (!p->specials)
        p->rep_off = 1;
    if (logged++ < LOG_CAP)
        plog(st, "link %d: command rules no longer follow this connection: %s", c->link, why);
}

/* The first rule (by slot) in mask that req matches, counted; its action
 * or -1 (no rule, or past its limit). */
static int match(struct pstate *st, const struct resp_req *req, uint32_t mask, int *slot)
{
    for (int s = 0; s < PROXY_MAX_CMD_RULES; s++) {
        if (!(mask & (1u << s)))
            continue;
        const struct proxy_cmd_rule *r = &st->cmd[s];
        if (strcmp(r->command, req->name) != 0)
            continue;
        if (r->sha[0] && (req->argc < 2 || strncasecmp(req->arg[0], r->sha, strlen(r->sha)) != 0))
            continue;
        if (r->key[0]) {
            size_t len = 0;
            int cut = 0;
            const char *k = resp_req_first_key(req, &len, &cut);
            if (!k || cut || !resp_glob(r->key, k, len))
                continue;
        }
        struct proxy_cmd_shm *cs = &st->shm->cmd[s];
        atomic_fetch_add_explicit(&cs->matched, 1, memory_order_relaxed);
        uint64_t acted = atomic_load_explicit(&cs->acted, memory_order_relaxed);
        if (r->limit > 0 && acted + st->cmd_pending[s] >= (uint64_t)r->limit)
            return -1;
        if (r->action == PROXY_CMD_DROP_REPLY)
            st->cmd_pending[s]++; /* acted once the reply is removed (drop_settle) */
        else
            atomic_fetch_add_explicit(&cs->acted, 1, memory_order_relaxed);
        *slot = s;
        return r->action;
    }
    return -1;
}

/* Commands after which replies no longer answer requests one to one. */
static int stops_following(const struct resp_req *req)
{
    static const char *const names[] = {"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR",
                                        "SYNC", "PSYNC", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(req->name, names[i]) == 0)
            return 1;
    if (strcmp(req->name, "HELLO") == 0 && req->argc >= 2 && strcmp(req->arg[0], "2") != 0)
        return 1; /* RESP3 from here on */
    if (strcmp(req->name, "CLIENT") == 0 && req->argc >= 2 && strcasecmp(req->arg[0], "REPLY") == 0)
        return 1;
    return 0;
}

/* Send the proxy's answers that are next in line (nothing of the node's
 * owed before them, the reply stream at a boundary), appended to the
 * from-node direction under that direction's rule, as a node's reply read
 * now would be: its delay and jitter here, rate / slice / gap at the write. */
static void emit_answers(struct pstate *st, struct pconn *c, int64_t t)
{
    struct pcmd *p = c->cmd;
    struct pdir *d = &c->d[PROXY_FROM_NODE];
    const struct proxy_rule *r = rule_of(st, c, PROXY_FROM_NODE);
    int64_t at = t;
    if (r->delay_ns > 0 || r->jitter_ns > 0)
        at = t + r->delay_ns + (r->jitter_ns > 0 ? rng_range(&st->rng, 0, r->jitter_ns) : 0);
    int any = 0;
    while (!p->rep_mid && p->qn && q_at(p, 0)->kind == E_ANSWER) {
        struct pent *e = q_at(p, 0);
        if (reserve(d, d->tail + e->len) < 0) {
            conn_kill(st, c, 1);
            return;
        }
        memcpy(d->buf + d->tail, e->text, e->len);
        d->tail += e->len;
        int64_t rel = at < d->last_release ? d->last_release : at;
        d->last_release = rel;
        if (push_chunk(d, e->len, rel, t) < 0) {
            conn_kill(st, c, 1);
            return;
        }
        q_pop(p);
        any = 1;
    }
    if (any)
        dir_flush(st, c, PROXY_FROM_NODE, t);
}

/* The connection lost a request or a reply: the rest of what the client
 * sent is dropped (from byte `from` of the buffer on). */
static void lose_rest(struct pstate *st, struct pconn *c, size_t from)
{
    struct pdir *d = &c->d[PROXY_TO_NODE];
    if (d->tail > from) {
        ADD(&st->stats[c->link].dropped[PROXY_TO_NODE], d->tail - from);
        d->unpushed -= d->tail - from;
        d->tail = from;
    }
    c->cmd->lost = 1;
}

static struct pcmd *pcmd_new(void)
{
    struct pcmd *p = calloc(1, sizeof(*p));
    if (p) {
        resp_req_reset(&p->req);
        resp_reply_reset(&p->rep);
    }
    return p;
}

void pcmd_to_node(struct pstate *st, struct pconn *c, size_t n, int64_t t, int64_t rel)
{
    struct pdir *d = &c->d[PROXY_TO_NODE];
    uint32_t mask = rule_of(st, c, PROXY_TO_NODE)->cmd_mask;
    /* Follow a connection from its first byte only: one that already talked
     * may have requests in flight (pipelining) whose replies nothing here
     * could pair; pcmd_apply resets those when a rule comes to cover them. */
    if (!c->cmd && mask && !c->talked)
        c->cmd = pcmd_new();
    struct pcmd *p = c->cmd;
    d->tail += n;
    d->unpushed += n;
    if (p && p->lost) {
        ADD(&st->stats[c->link].cmd_lost, 1);
        ADD(&st->stats[c->link].resets, 1);
        ADD(&st->stats[c->link].dropped[PROXY_TO_NODE], n);
        conn_kill(st, c, 1);
        return;
    }
    if (!p || p->req_off) {
        if (push_req(st, c, d->unpushed, rel, t) == 0)
            dir_flush(st, c, PROXY_TO_NODE, t);
        return;
    }
    size_t start = d->tail - d->unpushed; /* first byte of the request being read */
    size_t pos = d->tail - n;             /* first byte the parser has not seen */
    while (pos < d->tail && !c->dead) {
        size_t used = 0;
        int rc = resp_req_feed(&p->req, d->buf + pos, d->tail - pos, &used);
        pos += used;
        if (rc == RESP_BAD) {
            unfollow(st, c, "a request is not RESP2");
            break;
        }
        if (rc == RESP_MORE) {
            if (!p->oversized && p->req.bytes > PROXY_CMD_BOUND) {
                p->oversized = 1;
                ADD(&st->stats[c->link].cmd_oversized, 1);
            }
            if (p->oversized && push_req(st, c, pos - start, rel, t) == 0)
                start = pos;
            break;
        }
        size_t len = pos - start;
        int slot = -1;
        int act = !p->oversized && p->req.argc > 0 && mask ? match(st, &p->req, mask, &slot) : -1;
        int rc2 = 0;
        switch (act) {
        case PROXY_CMD_DELAY:
            rc2 = push_req(st, c, len, rel + st->cmd[slot].delay_ns, t);
            rc2 = rc2 ? rc2 : q_push(p, E_FWD, NULL, 0);
            break;
        case PROXY_CMD_DROP:
            lose_rest(st, c, start);
            pos = d->tail;
            break;
        case PROXY_CMD_DROP_REPLY:
            rc2 = push_req(st, c, len, rel, t);
            rc2 = rc2 ? rc2 : q_push(p, E_DROP, NULL, 0);
            if (rc2 == 0) {
                q_at(p, p->qn - 1)->slot = slot;
                q_at(p, p->qn - 1)->epoch = st->cmd_epoch[slot];
            } else if (st->cmd_pending[slot] > 0) {
                st->cmd_pending[slot]--;
            }
            lose_rest(st, c, pos);
            break;
        case PROXY_CMD_ERROR: {
            char text[PROXY_CMD_REPLY_MAX + 4];
            int tl = snprintf(text, sizeof(text), "-%s\r\n", st->cmd[slot].reply);
            memmove(d->buf + start, d->buf + pos, d->tail - pos);
            d->tail -= len;
            d->unpushed -= len;
            pos = start;
            rc2 = q_push(p, E_ANSWER, text, (size_t)tl);
            if (rc2 == 0)
                emit_answers(st, c, t);
            break;
        }
        default:
            rc2 = push_req(st, c, len, rel, t);
            if (rc2 == 0 && p->req.argc > 0)
                rc2 = q_push(p, E_FWD, NULL, 0);
            break;
        }
        if (c->dead)
            return;
        if (rc2 < 0) {
            plog(st, "link %d: out of memory (or %d replies owed) under a command rule; "
                     "connection reset", c->link, MAX_ENTRIES);
            conn_kill(st, c, 1);
            return;
        }
        int off = !p->oversized && stops_following(&p->req);
        if (off)
            unfollow(st, c, p->req.name);
        resp_req_reset(&p->req);
        p->oversized = 0;
        start = pos;
        if (off || p->lost)
            break;
    }
    if (c->dead)
        return;
    if (p->req_off && push_req(st, c, d->unpushed, rel, t) < 0)
        return;
    dir_flush(st, c, PROXY_TO_NODE, t);
}

void pcmd_from_node(struct pstate *st, struct pconn *c, size_t n, int64_t t, int64_t rel)
{
    struct pcmd *p = c->cmd;
    struct pdir *d = &c->d[PROXY_FROM_NODE];
    size_t s0 = d->tail, pos = s0, end = s0 + n;
    while (!p->rep_off) {
        while (!p->rep_mid && p->qn && q_at(p, 0)->kind == E_ANSWER) {
            struct pent *e = q_at(p, 0);
            if (reserve(d, end + e->len) < 0) {
                conn_kill(st, c, 1);
                return;
            }
            memmove(d->buf + pos + e->len, d->buf + pos, end - pos);
            memcpy(d->buf + pos, e->text, e->len);
            pos += e->len;
            end += e->len;
            q_pop(p);
        }
        if (pos >= end)
            break;
        size_t used = 0;
        int rc = resp_reply_feed(&p->rep, d->buf + pos, end - pos, &used);
        if (rc == RESP_BAD) {
            if (p->specials) {
                if (logged++ < LOG_CAP)
                    plog(st, "link %d: a reply is not RESP2 while the proxy owes the client "
                             "answers; connection reset", c->link);
                ADD(&st->stats[c->link].cmd_unfollowed, 1);
                ADD(&st->stats[c->link].resets, 1);
                conn_kill(st, c, 1);
                return;
            }
            unfollow(st, c, "a reply is not RESP2"); /* no specials: replies pass too */
            struct pdir *q = &c->d[PROXY_TO_NODE];
            if (push_req(st, c, q->unpushed, t, t) < 0)
                return;
            dir_flush(st, c, PROXY_TO_NODE, t); /* what was held for parsing goes now */
            if (c->dead)
                return;
            break;
        }
        if (p->qn && q_at(p, 0)->kind == E_DROP) {
            memmove(d->buf + pos, d->buf + pos + used, end - pos - used);
            end -= used;
            ADD(&st->stats[c->link].dropped[PROXY_FROM_NODE], used);
        } else {
            pos += used;
        }
        p->rep_mid = rc == RESP_MORE;
        if (rc == RESP_DONE) {
            resp_reply_reset(&p->rep);
            if (p->qn) {
                drop_settle(st, q_at(p, 0), 1);
                q_pop(p);
            }
        }
    }
    size_t m = end - s0;
    if (m > 0) {
        d->tail += m;
        if (rel < d->last_release)
            rel = d->last_release;
        d->last_release = rel;
        if (push_chunk(d, m, rel, t) < 0) {
            plog(st, "link %d: out of memory queueing a reply; connection closed", c->link);
            conn_kill(st, c, 1);
            return;
        }
    }
    if (p->req_off && !p->specials)
        p->rep_off = 1;
    dir_flush(st, c, PROXY_FROM_NODE, t);
    if (!c->dead && p->rep_off && !rule_of(st, c, PROXY_TO_NODE)->cmd_mask)
        pcmd_free(st, c);
}

int pcmd_apply(struct pstate *st, struct pconn *c, int64_t t)
{
    struct pcmd *p = c->cmd;
    int covered = rule_of(st, c, PROXY_TO_NODE)->cmd_mask != 0;
    if (!p) {
        if (!covered || !c->talked)
            return 0;
        ADD(&st->stats[c->link].cmd_taken, 1);
        conn_kill(st, c, 1);
        return 1;
    }
    if (covered)
        return 0;
    if (p->lost) {
        ADD(&st->stats[c->link].cmd_lost, 1);
        conn_kill(st, c, 1);
        return 1;
    }
    if (push_req(st, c, c->d[PROXY_TO_NODE].unpushed, t, t) < 0)
        return 0;
    p->req_off = 1;
    if (!p->specials)
        pcmd_free(st, c);
    return 0;
}

void pcmd_eof(struct pstate *st, struct pconn *c, int64_t t)
{
    struct pdir *d = &c->d[PROXY_TO_NODE];
    if (d->unpushed && push_req(st, c, d->unpushed, t, t) == 0)
        dir_flush(st, c, PROXY_TO_NODE, t);
}

void pcmd_read_rules(struct pstate *st)
{
    for (int k = 0; k < PROXY_MAX_CMD_RULES; k++) {
        int was_empty = st->cmd[k].command[0] == '\0';
        uint64_t w[PROXY_CMD_WORDS];
        for (size_t j = 0; j < PROXY_CMD_WORDS; j++)
            w[j] = atomic_load_explicit(&st->shm->cmd[k].words[j], memory_order_relaxed);
        memcpy(&st->cmd[k], w, sizeof(st->cmd[k]));
        st->cmd[k].command[PROXY_CMD_NAME_MAX] = '\0';
        st->cmd[k].sha[PROXY_CMD_SHA_MAX] = '\0';
        st->cmd[k].key[PROXY_CMD_KEY_MAX] = '\0';
        st->cmd[k].reply[PROXY_CMD_REPLY_MAX] = '\0';
        if (was_empty && st->cmd[k].command[0]) {
            st->cmd_epoch[k]++; /* a new rule in the slot: what the old one owed is not its */
            st->cmd_pending[k] = 0;
        }
    }
}
