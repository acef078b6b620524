/*
 * progress.c: the progress line (see progress.h). The rate is grants per
 * second over the last whole second, not the average since the start, so a
 * fault that stalls the lock shows at once. Counters are summed over the
 * workers' shm slots; each slot is written by its worker only.
 */
#include "harness/progress.h"

#include <string.h>
#include <unistd.h>

#include "util/timeutil.h"

#define LIVE_EVERY (250 * LS_NS_PER_MS)
#define PLAIN_EVERY LS_NS_PER_S

int progress_parse(const char *s, int *mode)
{
    if (!s)
        return -1;
    if (strcmp(s, "auto") == 0)
        *mode = PROGRESS_AUTO;
    else if (strcmp(s, "plain") == 0)
        *mode = PROGRESS_PLAIN;
    else if (strcmp(s, "off") == 0 || strcmp(s, "none") == 0)
        *mode = PROGRESS_OFF;
    else
        return -1;
    return 0;
}

void progress_init(struct progress *p, int mode, int quiet, int64_t total_ns, FILE *out)
{
    memset(p, 0, sizeof(*p));
    p->out = out;
    p->total_ns = total_ns;
    p->last_print = -PLAIN_EVERY;
    if (quiet || mode == PROGRESS_OFF || !out)
        p->style = 0;
    else if (mode == PROGRESS_PLAIN)
        p->style = 2;
    else
        p->style = isatty(fileno(out)) ? 1 : 0;
}

void progress_tick(struct progress *p, const struct shm *shm, int64_t elapsed_ns,
                   int faults_active, int final)
{
    if (!p->style)
        return;
    if (p->style == 2 && !final && elapsed_ns - p->last_print < PLAIN_EVERY)
        return;
    if (p->style == 1 && !final && p->drawn && elapsed_ns - p->last_print < LIVE_EVERY)
        return;
    uint64_t grants = 0, busy = 0, unknown = 0, attempts = 0;
    for (int i = 0; shm && i < shm->nworkers; i++) {
        grants += atomic_load(&shm->w[i].grants);
        busy += atomic_load(&shm->w[i].busy);
        unknown += atomic_load(&shm->w[i].unknown);
        attempts += atomic_load(&shm->w[i].attempts);
    }
    if (elapsed_ns - p->win_t >= LS_NS_PER_S) {
        p->rate = (double)(grants - p->win_grants) * 1e9 / (double)(elapsed_ns - p->win_t);
        p->win_t = elapsed_ns;
        p->win_grants = grants;
    } else if (p->win_t == 0 && elapsed_ns > 0) {
        p->rate = (double)grants * 1e9 / (double)elapsed_ns; /* the first second */
    }
    double el = (double)elapsed_ns / 1e9, tot = (double)p->total_ns / 1e9;
    if (p->style == 1) {
        fprintf(p->out, "\r\033[K[%6.1fs/%.1fs] grants %llu (%.0f/s)  busy %llu  unknown %llu"
                        "  attempts %llu  faults active %d%s",
                el, tot, (unsigned long long)grants, p->rate, (unsigned long long)busy,
                (unsigned long long)unknown, (unsigned long long)attempts, faults_active,
                final ? "\n" : "");
    } else {
        fprintf(p->out, "lockstorm: progress %.1fs/%.1fs grants=%llu rate=%.0f/s busy=%llu "
                        "unknown=%llu attempts=%llu faults_active=%d%s\n",
                el, tot, (unsigned long long)grants, p->rate, (unsigned long long)busy,
                (unsigned long long)unknown, (unsigned long long)attempts, faults_active,
                final ? " (done)" : "");
    }
    fflush(p->out);
    p->drawn = !final;
    p->last_print = elapsed_ns;
}
