/*
 * test_sufcount.c: util/sufcount.c against a plain array of counters on
 * random sequences of its operations (new counters, suffixes lowered,
 * counters taken at either level, closing up), with small and large
 * values; and the shape it is for: many counters all lowered together,
 * done in n log n.
 */
#include "util/sufcount.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"
#include "util/rng.h"
#include "util/xalloc.h"

struct model {
    int n;
    int32_t v[2][4096];
    int taken[2][4096];
};

static void test_random(void)
{
    struct rng g;
    rng_seed(&g, t_env_u64("LS_TEST_SEED", 17), 0);
    int bad = 0;
    for (int round = 0; round < 300 && !bad; round++) {
        struct sufcount c;
        sufcount_init(&c);
        static struct model M;
        memset(&M, 0, sizeof(M));
        int vmax = round % 3 == 0 ? 3 : round % 3 == 1 ? 20 : 1000;
        int steps = 50 + (int)rng_below(&g, 3000);
        for (int st = 0; st < steps && !bad; st++) {
            int op = (int)rng_below(&g, 10);
            if (op < 3 && M.n < 4096) {
                int32_t a = 1 + (int32_t)rng_below(&g, (uint64_t)vmax);
                int32_t b = 1 + (int32_t)rng_below(&g, (uint64_t)vmax);
                int i = sufcount_push(&c, a, b);
                bad |= i != M.n;
                M.v[0][M.n] = a;
                M.v[1][M.n] = b;
                M.taken[0][M.n] = M.taken[1][M.n] = 0;
                M.n++;
            } else if (op < 7) {
                int from = M.n ? (int)rng_below(&g, (uint64_t)M.n + 1) : 0;
                sufcount_lower(&c, from);
                for (int i = from; i < M.n; i++)
                    M.v[0][i]--, M.v[1][i]--;
            } else if (op < 9) {
                int lv = (int)rng_below(&g, 2), max = 1 + (int)rng_below(&g, 8);
                int out[8], want[8], nw = 0;
                for (int i = 0; i < M.n && nw < max; i++)
                    if (!M.taken[lv][i] && M.v[lv][i] <= 0)
                        want[nw++] = i;
                int got = sufcount_take(&c, lv, out, max);
                bad |= got != nw || (nw && memcmp(out, want, (size_t)nw * sizeof(int)) != 0);
                for (int k = 0; k < nw; k++)
                    M.taken[lv][want[k]] = 1;
            } else {
                sufcount_close_up(&c);
                int kept = 0;
                for (int i = 0; i < M.n; i++)
                    if (!M.taken[0][i]) {
                        for (int lv = 0; lv < 2; lv++) {
                            M.v[lv][kept] = M.v[lv][i];
                            M.taken[lv][kept] = M.taken[lv][i];
                        }
                        kept++;
                    }
                M.n = kept;
                bad |= c.n != M.n;
            }
        }
        /* at the end every counter not taken is found once lowered enough */
        for (int lv = 0; lv < 2 && !bad; lv++) {
            int lowest = 0;
            for (int i = 0; i < M.n; i++)
                if (M.v[lv][i] > lowest)
                    lowest = M.v[lv][i];
            for (int k = 0; k < lowest; k++)
                sufcount_lower(&c, 0);
            for (int i = 0; i < M.n; i++)
                M.v[0][i] -= lowest, M.v[1][i] -= lowest;
            int want = 0;
            for (int i = 0; i < M.n; i++)
                want += !M.taken[lv][i];
            int *out = xmalloc(((size_t)M.n + 1) * sizeof(int));
            int got = sufcount_take(&c, lv, out, M.n + 1);
            bad |= got != want;
            for (int i = 0; i < M.n; i++)
                M.taken[lv][i] = 1;
            free(out);
        }
        CHECKF(!bad, "round %d (vmax %d)", round, vmax);
        sufcount_free(&c);
    }
}

static void test_many(void)
{
    /* 200,000 counters, the k-th made with k + 1 (and 1 at level 1), then
     * all of them lowered together 200,000 times: each lowering takes the
     * next counter at level 0, in order. A walk over every counter per
     * lowering would take 2 * 10^10 steps; this takes milliseconds. */
    int n = 200000;
    struct sufcount c;
    sufcount_init(&c);
    int *out = xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        sufcount_push(&c, i + 1, 1);
    int ok = 1, first = 0;
    for (int k = 0; k < n && ok; k++) {
        sufcount_lower(&c, 0);
        if (k == 0)
            ok &= sufcount_take(&c, 1, out, n) == n;
        ok &= sufcount_take(&c, 0, out, n) == 1 && out[0] == first;
        if (k % 1000 == 999) { /* closed up: the counters left move to the front */
            sufcount_close_up(&c);
            first = 0;
            ok &= c.n == n - k - 1;
        } else {
            first++;
        }
    }
    CHECKF(ok && c.n == 0, "n %d left %d", n, c.n);
    free(out);
    sufcount_free(&c);
}

int main(void)
{
    RUN(test_random);
    RUN(test_many);
    return t_finish();
}
