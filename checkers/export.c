/*
 * export.c: `lockstorm log export` (history.h): every event of a history as
 * one JSONL line (docs/checkers.md "JSONL histories"), in time order across workers: the
 * checkers' merged pass (pass.h) with one consumer that prints.
 */
#include <stdio.h>
#include <string.h>

#include "checkers/history.h"
#include "checkers/pass.h"
#include "model/jobs.h"
#include "util/strbuf.h"

static void export_rec(struct strbuf *sb, const struct history *h, int worker,
                       const struct ev_rec *r)
{
    sb_printf(sb, "{\"t\":%lld,\"w\":%d,\"type\":\"%s\"", (long long)r->t, worker,
              ev_type_name(r->type));
    if (r->type != EV_CRASH) {
        sb_puts(sb, ",\"res\":");
        const char *name = r->res < h->nres ? h->res_names[r->res] : "?";
        sb_json_str(sb, name, strlen(name));
    }
    switch (r->type) {
    case EV_ACQUIRE_INVOKE:
        sb_printf(sb, ",\"attempt\":%u", r->aux);
        break;
    case EV_ACQUIRE_OK:
    case EV_RENEW_OK:
        if (r->type == EV_ACQUIRE_OK) {
            sb_puts(sb, ",\"token\":");
            sb_json_str(sb, r->token, strnlen(r->token, EVLOG_TOKEN_LEN));
            if (r->flags & EVF_FENCE)
                sb_printf(sb, ",\"fence\":%llu", (unsigned long long)r->fence);
            else
                sb_puts(sb, ",\"fence\":null");
        }
        if (r->flags & EVF_NO_LEASE)
            sb_puts(sb, ",\"valid_until\":null");
        else
            sb_printf(sb, ",\"valid_until\":%lld", (long long)r->valid_until);
        if (r->type == EV_RENEW_OK && (r->flags & EVF_AUTO))
            sb_puts(sb, ",\"auto\":true"); /* the library renewed by itself */
        break;
    case EV_ACQUIRE_FAIL:
    case EV_ACQUIRE_UNKNOWN:
    case EV_RENEW_FAIL:
    case EV_RELEASE_FAIL:
        sb_printf(sb, ",\"err\":\"%s\"", ev_err_name((int)r->aux));
        break;
    case EV_STORE_READ:
    case EV_STORE_WRITE:
        if (r->flags & EVF_FENCE)
            sb_printf(sb, ",\"fence\":%llu", (unsigned long long)r->fence);
        sb_printf(sb, ",\"fenced\":%s,\"counter\":%lld,\"accepted\":%s,\"failed\":%s",
                  (r->flags & EVF_FENCED) ? "true" : "false", (long long)r->value,
                  (r->flags & EVF_ACCEPTED) ? "true" : "false",
                  (r->flags & EVF_FAILED) ? "true" : "false");
        break;
    case EV_JOB:
        sb_printf(sb, ",\"job\":%lld,\"step\":\"%s\"", (long long)r->value,
                  job_step_name((int)r->aux));
        break;
    default:
        break;
    }
    sb_puts(sb, "}\n");
}

struct export_st {
    const struct history *h;
    struct strbuf sb;
    FILE *out;
};

static void export_event(void *st, int wi, const struct ev_rec *r)
{
    struct export_st *x = st;
    export_rec(&x->sb, x->h, x->h->w[wi].id, r);
    if (x->sb.len > 60000) {
        fwrite(x->sb.buf, 1, x->sb.len, x->out);
        sb_reset(&x->sb);
    }
}

static const struct pass_ops export_ops = {"export", 0, export_event, NULL, NULL, 0};

void history_export_jsonl(struct history *h, FILE *out)
{
    history_verify(h); /* every record checked before any is printed */
    struct export_st x = {h, STRBUF_INIT, out};
    struct pass_consumer c = {&export_ops, &x, 0};
    pass_run(h, &c, 1); /* cannot fail: nothing is unverified now */
    if (x.sb.len)
        fwrite(x.sb.buf, 1, x.sb.len, out);
    sb_free(&x.sb);
}
