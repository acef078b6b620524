/*
 * checkschema.c: the descriptions of today's checkers' result sections
 * (docs/result-format.md "checks"): what the summary line of summary.txt
 * and the JUnit message of each show. The text is fixed by the golden
 * files (tests/unit/golden): change a row here and they change with it.
 * Data only; reports/text.c and reports/junit.c read it.
 */
#include "model/checkschema.h"

#include <string.h>

#include "util/json.h"

#define END {NULL, NULL, CF_NONE, NULL, 0, NULL}

/* mutex: the overlaps by class, near misses, holds and the capacity; the
 * renewals after loss and the losses by class (results since leases as
 * they stood: older ones lack them and show nothing for them). */
static const struct checkfield mutex_text[] = {
    {" violations=", "violations", CF_VAL, NULL, 0, NULL},
    {" (stale-holder=", "by_class.stale_holder", CF_VAL, NULL, 0, NULL},
    {" lock-broken=", "by_class.lock_broken", CF_VAL, ")", 0, NULL},
    {" near_misses=", "near_misses", CF_VAL, NULL, 0, NULL},
    {" holds=", "holds", CF_VAL, NULL, 0, NULL},
    {" capacity=", "capacity", CF_VAL, NULL, 0, NULL},
    {" renewed-after-loss=", "renewed_after_loss", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" lost (lease-left=", "losses_by_class.lost_with_lease_left", CF_VAL, NULL, CF_IF_PRESENT,
     "losses_by_class"},
    {" expired=", "losses_by_class.expired", CF_VAL, ")", CF_IF_PRESENT, "losses_by_class"},
    END,
};

static const struct checkfield mutex_junit[] = {
    {": violations=", "violations", CF_VAL, NULL, 0, NULL},
    {" (stale-holder=", "by_class.stale_holder", CF_VAL, NULL, 0, NULL},
    {" lock-broken=", "by_class.lock_broken", CF_VAL, NULL, 0, NULL},
    {") near_misses=", "near_misses", CF_VAL, NULL, 0, NULL},
    {" incidents=", "incidents", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" (stale-holder=", "incidents_by_class.stale_holder", CF_VAL, NULL, CF_IF_PRESENT,
     "incidents"},
    {" lock-broken=", "incidents_by_class.lock_broken", CF_VAL, ")", CF_IF_PRESENT, "incidents"},
    {" renewed_after_loss=", "renewed_after_loss", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" lost_with_lease_left=", "losses_by_class.lost_with_lease_left", CF_VAL, NULL,
     CF_IF_PRESENT, "losses_by_class"},
    {" lost_expired=", "losses_by_class.expired", CF_VAL, NULL, CF_IF_PRESENT, "losses_by_class"},
    END,
};

/* fencing: lost updates of plain and fenced writes. Without the storage's
 * final values (not available) only fence regressions mean anything; when
 * fences are not offered only the plain side exists. */
static const struct checkfield fencing_text[] = {
    {" fence_regressions=", "fence_regressions", CF_VAL, NULL,
     CF_UNAVAILABLE | CF_OFFERED | CF_IF_PRESENT, NULL},
    {" fences not offered;", NULL, CF_NONE, NULL, CF_AVAILABLE | CF_NOT_OFFERED, NULL},
    {" plain_lost=", "plain_lost_updates", CF_VAL, NULL, CF_AVAILABLE, NULL},
    {" fenced_lost=", "fenced_lost_updates", CF_VAL, NULL, CF_AVAILABLE | CF_OFFERED, NULL},
    {" stale_rejected=", "stale_ops_rejected", CF_VAL, NULL, CF_AVAILABLE | CF_OFFERED, NULL},
    {" fence_regressions=", "fence_regressions", CF_VAL, NULL, CF_AVAILABLE | CF_OFFERED, NULL},
    {" plain_writes=", "plain_accepted_writes", CF_VAL, NULL, CF_AVAILABLE, NULL},
    {" fenced_writes=", "fenced_accepted_writes", CF_VAL, NULL, CF_AVAILABLE | CF_OFFERED, NULL},
    END,
};

static const struct checkfield fencing_junit[] = {
    {": offered=", "offered", CF_VAL, NULL, 0, NULL},
    {" plain_lost_updates=", "plain_lost_updates", CF_VAL, NULL, 0, NULL},
    {" fenced_lost_updates=", "fenced_lost_updates", CF_VAL, NULL, 0, NULL},
    {" stale_ops_rejected=", "stale_ops_rejected", CF_VAL, NULL, 0, NULL},
    {" fence_regressions=", "fence_regressions", CF_VAL, NULL, 0, NULL},
    END,
};

/* liveness: stalls, the longest waits by what they waited behind (when
 * the section has them), crashes without a next grant, outcome shares and
 * the fairness of grants over workers. */
static const struct checkfield liveness_text[] = {
    {" longest_stall=", "longest_stall_ms", CF_MS, NULL, 0, NULL},
    {" (", "longest_stall_resource", CF_STR, ")", CF_IF_STRING, NULL},
    {" unserved_wait=", "longest_unserved_wait_ms", CF_MS, NULL, CF_IF_PRESENT, NULL},
    {" (free=", "waits.free.longest_ms", CF_MS, NULL, CF_IF_PRESENT, "waits"},
    {" expired=", "waits.expired.longest_ms", CF_MS, NULL, CF_IF_PRESENT, "waits"},
    {" held=", "waits.held.longest_ms", CF_MS, ")", CF_IF_PRESENT, "waits"},
    {" crash_to_next_grant=", "crash_to_next_grant_ms", CF_MS, NULL, 0, NULL},
    {" stuck=", "stuck_resources", CF_VAL, NULL, 0, NULL},
    {" busy=", "busy_share", CF_PCT, NULL, 0, NULL},
    {" failed=", "failed_share", CF_PCT, NULL, 0, NULL},
    {" unknown=", "unknown_share", CF_PCT, NULL, 0, NULL},
    {" grants/worker=", "fairness.min_grants", CF_VAL, NULL, 0, NULL},
    {"..", "fairness.max_grants", CF_VAL, NULL, 0, NULL},
    {" ratio=", "fairness.ratio", CF_VAL, NULL, 0, NULL},
    END,
};

static const struct checkfield liveness_junit[] = {
    {": longest_stall_ms=", "longest_stall_ms", CF_VAL, NULL, 0, NULL},
    {" longest_unserved_wait_ms=", "longest_unserved_wait_ms", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" crash_to_next_grant_ms=", "crash_to_next_grant_ms", CF_VAL, NULL, 0, NULL},
    {" stuck_resources=", "stuck_resources", CF_VAL, NULL, 0, NULL},
    END,
};

/* jobs: exactly once, in the storage's own record. */
static const struct checkfield jobs_text[] = {
    {" layers=", "layers", CF_STR, NULL, 0, NULL},
    {" jobs=", "jobs", CF_VAL, NULL, 0, NULL},
    {" duplicates=", "duplicates", CF_VAL, NULL, 0, NULL},
    {" extra_effects=", "extra_effects", CF_VAL, NULL, 0, NULL},
    {" missed=", "missed", CF_VAL, NULL, 0, NULL},
    {" refused=", "refused", CF_VAL, NULL, 0, NULL},
    END,
};

/* commands: the lock nodes' command load (INFO commandstats over the run). */
static const struct checkfield commands_text[] = {
    {" per_grant=", "per_grant", CF_VAL, NULL, 0, NULL},
    {" (at least ", "per_grant_at_least", CF_VAL, ")", CF_IF_PRESENT, NULL},
    {" max=", "max_per_grant", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" lock_commands=", "lock_commands", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" other=", "other_commands", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" grants=", "grants", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" per_s=", "per_s", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" busiest_node_per_s=", "busiest_node_per_s", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    END,
};

static const struct checkfield commands_junit[] = {
    {": per_grant=", "per_grant", CF_VAL, NULL, 0, NULL},
    {" per_grant_at_least=", "per_grant_at_least", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" max_per_grant=", "max_per_grant", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" lock_commands=", "lock_commands", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" grants=", "grants", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    {" per_s=", "per_s", CF_VAL, NULL, CF_IF_PRESENT, NULL},
    END,
};

const struct checkschema checkschemas[] = {
    {"mutex", "mutual exclusion", CS_OVERLAPS, NULL, NULL, NULL, mutex_text, mutex_junit},
    {"fencing", "fencing tokens", 0, "offered", "available", "plain_lost_updates", fencing_text,
     fencing_junit},
    {"liveness", "liveness and fairness", CS_STARVATION, NULL, NULL, NULL, liveness_text,
     liveness_junit},
    {"stats", "statistics", 0, NULL, NULL, NULL, NULL, NULL},
    {"jobs", "jobs done exactly once", 0, NULL, NULL, NULL, jobs_text, NULL},
    {"commands", "command load per grant", 0, NULL, NULL, NULL, commands_text, commands_junit},
};

const int ncheckschemas = (int)(sizeof(checkschemas) / sizeof(checkschemas[0]));

/* Contract (checkschema.h): linear search of checkschemas by name. */
const struct checkschema *checkschema_find(const char *name)
{
    for (int i = 0; name && i < ncheckschemas; i++)
        if (strcmp(checkschemas[i].name, name) == 0)
            return &checkschemas[i];
    return NULL;
}

/* Is checker section c's flag member (a bool) false? NULL member: no. */
static int member_false(const struct json *c, const char *member)
{
    const struct json *v = member ? json_obj_get(c, member) : NULL;
    return v && v->type == JSON_BOOL && !v->i;
}

/* Contract: are the counters of section c available as its description
 * says (the bool cs->available, else cs->available_else present)? A
 * description naming neither: yes. */
static int section_available(const struct checkschema *cs, const struct json *c)
{
    if (!cs->available && !cs->available_else)
        return 1;
    const struct json *a = cs->available ? json_obj_get(c, cs->available) : NULL;
    if (a && a->type == JSON_BOOL)
        return a->i != 0;
    return cs->available_else && json_obj_get(c, cs->available_else) != NULL;
}

/* Contract (checkschema.h): does item f hold its conditions for c? */
int checkfield_shown(const struct checkschema *cs, const struct checkfield *f,
                     const struct json *c)
{
    int not_offered = member_false(c, cs->offered);
    int avail = section_available(cs, c);
    if (((f->when & CF_OFFERED) && not_offered) || ((f->when & CF_NOT_OFFERED) && !not_offered))
        return 0;
    if (((f->when & CF_AVAILABLE) && !avail) || ((f->when & CF_UNAVAILABLE) && avail))
        return 0;
    if ((f->when & CF_IF_PRESENT) && !json_path(c, f->gate ? f->gate : f->path))
        return 0;
    if (f->when & CF_IF_STRING) {
        const struct json *v = f->path ? json_path(c, f->path) : NULL;
        if (!v || v->type != JSON_STR)
            return 0;
    }
    return 1;
}
