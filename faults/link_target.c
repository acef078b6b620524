/*
 * link_target.c: a link target resolved to links at fault start, and its
 * short name (link_target.h). The keys themselves are loaded and echoed by
 * the workload loader (links.c in the harness).
 */
#include "faults/link_target.h"

#include <stdio.h>
#include <string.h>

static const char *const nodes_words[] = {"all", "list", "minority", "majority"};

const char *link_nodes_word(int nodes_sel)
{
    return nodes_words[nodes_sel & 3];
}

static int has_bit(const uint64_t *bits, int i)
{
    return (bits[i / 64] >> (i % 64)) & 1;
}

/* "0,1,2" (or "0,1,2..." when it does not fit in n). */
static void bits_short(char *buf, size_t n, const uint64_t *bits, int limit)
{
    size_t j = 0;
    buf[0] = '\0';
    for (int i = 0; i < limit; i++) {
        if (!has_bit(bits, i))
            continue;
        int w = snprintf(buf + j, n - j, "%s%d", j ? "," : "", i);
        if (w < 0 || (size_t)w >= n - j) {
            if (n >= 4)
                snprintf(buf + (j < n - 4 ? j : n - 4), 4, "...");
            return;
        }
        j += (size_t)w;
    }
}

void link_target_name(const struct link_target *lt, char *buf, size_t n)
{
    char ws[24], ns[24];
    if (lt->isolating) {
        snprintf(buf, n, "isolate:node:%d", lt->isolate_node);
        return;
    }
    if (lt->ngroups) {
        snprintf(buf, n, "split:%d", lt->ngroups);
        return;
    }
    if (lt->some_workers) {
        char b[20];
        bits_short(b, sizeof(b), lt->grid.workers, LINK_MAX_WORKERS);
        snprintf(ws, sizeof(ws), "w%s", b);
    } else {
        snprintf(ws, sizeof(ws), "all");
    }
    if (lt->nodes_sel == LINK_NODES_LIST) {
        uint64_t bits[1] = {lt->grid.nodes};
        char b[20];
        bits_short(b, sizeof(b), bits, 32);
        snprintf(ns, sizeof(ns), "n%s", b);
    } else {
        snprintf(ns, sizeof(ns), "%s", nodes_words[lt->nodes_sel & 3]);
    }
    snprintf(buf, n, "links:%s/%s", ws, ns);
}

/* k distinct nodes of 0..nnodes-1 drawn from rng (partial Fisher-Yates). */
static uint32_t draw_nodes(int nnodes, int k, struct rng *rng)
{
    int idx[32];
    for (int i = 0; i < nnodes; i++)
        idx[i] = i;
    uint32_t mask = 0;
    for (int i = 0; i < k && i < nnodes; i++) {
        int j = i + (int)rng_below(rng, (uint64_t)(nnodes - i));
        int t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
        mask |= 1u << idx[i];
    }
    return mask;
}

static int mark(uint8_t *sel, int nworkers, int nnodes, const uint64_t *workers, int all_workers,
                uint32_t nodes, uint32_t *used)
{
    int count = 0;
    for (int w = 0; w < nworkers && w < LINK_MAX_WORKERS; w++) {
        if (!all_workers && !has_bit(workers, w))
            continue;
        for (int n = 0; n < nnodes; n++) {
            if (!(nodes & (1u << n)))
                continue;
            if (!sel[(size_t)w * (size_t)nnodes + (size_t)n])
                count++;
            sel[(size_t)w * (size_t)nnodes + (size_t)n] = 1;
            *used |= 1u << n;
        }
    }
    return count;
}

int link_target_resolve(const struct link_target *lt, int nworkers, int nnodes, struct rng *rng,
                        uint8_t *sel, uint32_t *nodes_used)
{
    uint32_t used = 0;
    if (nnodes < 1 || nworkers < 1)
        return 0;
    memset(sel, 0, (size_t)nworkers * (size_t)nnodes);
    if (nnodes > 32)
        return 0; /* cluster.nodes is at most 15 */
    uint32_t all = nnodes >= 32 ? 0xffffffffu : (1u << nnodes) - 1;
    int count = 0;
    if (lt->isolating) {
        count = mark(sel, nworkers, nnodes, NULL, 1, (1u << lt->isolate_node) & all, &used);
    } else if (lt->ngroups) {
        for (int i = 0; i < lt->ngroups; i++)
            count += mark(sel, nworkers, nnodes, lt->groups[i].workers, 0,
                          lt->groups[i].nodes & all, &used);
    } else {
        uint32_t nodes = all;
        if (lt->nodes_sel == LINK_NODES_LIST)
            nodes = lt->grid.nodes & all;
        else if (lt->nodes_sel == LINK_NODES_MINORITY)
            nodes = draw_nodes(nnodes, (nnodes - 1) / 2, rng);
        else if (lt->nodes_sel == LINK_NODES_MAJORITY)
            nodes = draw_nodes(nnodes, nnodes / 2 + 1, rng);
        count = mark(sel, nworkers, nnodes, lt->grid.workers, !lt->some_workers, nodes, &used);
    }
    if (nodes_used)
        *nodes_used = used;
    return count;
}
