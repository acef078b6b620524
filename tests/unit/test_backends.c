/*
 * test_backends.c: the topology registry (backends/backend.h): every table
 * is complete and of the current version, its name loads through
 * cluster.topology to that very table (the loader's choices and the
 * registry agree, in the same order as enum topology), an unknown name is
 * refused, and the capabilities the loader and the harness branch on are
 * the ones each topology had before the tables (node control, replicas,
 * Redis nodes, someone else's addresses), copied into workload.cluster.caps
 * for the layers that do not see backends/.
 */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "harness/workload.h"
#include "testing.h"

static struct workload *load(const char *yaml)
{
    struct workload *w = NULL;
    struct ls_err err = {0};
    if (workload_load_string("t.yaml", yaml, NULL, 0, &w, NULL, &err) != 0)
        return NULL;
    return w;
}

static void test_tables(void)
{
    const struct backend_ops *const *all = backend_all();
    REQUIRE(all != NULL);
    int n = 0;
    for (; all[n]; n++) {
        const struct backend_ops *be = all[n];
        CHECKF(be->version == BACKEND_OPS_VERSION, "%s", be->name);
        CHECKF(be->name && be->name[0] && be->help && be->help[0], "%d", n);
        CHECKF(be->start && be->stop && be->dump_storage, "%s", be->name);
        CHECKF(be->store && be->store->open && be->store->close && be->store->read &&
                   be->store->write, "%s", be->name);
        CHECKF(backend_find(be->name) == be, "%s", be->name);
    }
    CHECK_INT(n, 4);
    CHECK(backend_find("nope") == NULL);
    CHECK(backend_find(NULL) == NULL);
}

/* Each topology, as the smallest workload that loads with it. */
static const struct {
    const char *name;
    int topology; /* enum topology */
    unsigned caps;
    const char *yaml;
} cases[] = {
    {"independent", TOPO_INDEPENDENT, BACKEND_CAP_NODE_CONTROL | BACKEND_CAP_REDIS,
     "duration: 5s\ncluster: {topology: independent}\n"},
    {"replicated", TOPO_REPLICATED,
     BACKEND_CAP_NODE_CONTROL | BACKEND_CAP_REPLICAS | BACKEND_CAP_REDIS,
     "duration: 5s\ncluster: {topology: replicated, replicas: 2}\n"},
    {"external", TOPO_EXTERNAL, BACKEND_CAP_REDIS | BACKEND_CAP_ADDRESSES,
     "duration: 5s\ncluster: {topology: external, addresses: [\"n1:7001\"]}\n"},
    {"postgres", TOPO_POSTGRES, BACKEND_CAP_NODE_CONTROL,
     "duration: 5s\ncluster: {topology: postgres}\nlock: {impl: pg-advisory}\n"},
};

static void test_loaded(void)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct workload *w = load(cases[i].yaml);
        CHECKF(w != NULL, "%s", cases[i].name);
        if (!w)
            continue;
        CHECKF(w->cluster.backend == backend_find(cases[i].name), "%s", cases[i].name);
        CHECKF(w->cluster.backend == backend_all()[cases[i].topology], "%s", cases[i].name);
        CHECK_INT(w->cluster.topology, cases[i].topology);
        CHECKF(w->cluster.caps == w->cluster.backend->caps, "%s", cases[i].name);
        CHECKF(w->cluster.backend->caps == cases[i].caps, "%s: caps %#x", cases[i].name,
               w->cluster.backend->caps);
        workload_free(w);
    }
    /* the default */
    struct workload *w = load("duration: 5s\n");
    REQUIRE(w != NULL);
    CHECK(w->cluster.backend == backend_find("independent"));
    workload_free(w);
    CHECK(load("duration: 5s\ncluster: {topology: nope}\n") == NULL);
}

int main(void)
{
    RUN(test_tables);
    RUN(test_loaded);
    return t_finish();
}
