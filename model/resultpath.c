/*
 * resultpath.c: the table of documented numeric and boolean result.json
 * paths (docs/result-format.md) an expectation may name, and the check of
 * a path against it. Data about the result model, read by the workload
 * loader (expect: keys) and by nothing that builds or renders a result.
 */
#include "model/resultpath.h"

#include <string.h>

/* Each row names alternative prefixes and alternative last parts, '|'
 * separated; a path is documented when it is "<prefix>.<field>" for some
 * pair (or "<field>" when the prefix is empty). "#" stands for an array
 * index. Only numeric and boolean members are listed: an expectation
 * compares numbers. Keep in step with docs/result-format.md. */
struct path_row {
    const char *prefixes;
    const char *fields;
};

static const struct path_row path_table[] = {
    {"", "version|seed|duration_s|interrupted"},
    {"evidence", "complete"},
    {"evidence.logs", "expected|found|missing|foreign|damaged"},
    {"counts",
     "attempts|grants|busy|failed|unknown|releases|release_not_owner|release_failed|"
     "renewals|renew_failed|lost|crashes|expired_grants|store_ops|events"},
    {"latency.acquire|latency.acquire_wait|latency.acquire_failed|latency.release|latency.renew",
     "count|p50_ms|p90_ms|p99_ms|p999_ms|max_ms|mean_ms"},
    {"throughput", "grants_per_s|attempts_per_s"},
    {"checks.mutex", "valid|violations|near_misses|capacity|holds"},
    {"checks.mutex.by_class", "stale_holder|lock_broken"},
    {"checks.mutex", "incidents"},
    {"checks.mutex.incidents_by_class", "stale_holder|lock_broken"},
    {"checks.mutex", "renewed_after_loss|renewed_after_loss_holds|losses|losses_unmatched"},
    {"checks.mutex.losses_by_class", "lost_with_lease_left|expired"},
    {"checks.fencing",
     "valid|offered|available|plain_lost_updates|fenced_lost_updates|stale_ops_rejected|"
     "fence_regressions|plain_accepted_writes|fenced_accepted_writes"},
    {"checks.fencing.per_resource.#",
     "plain_final|plain_accepted|plain_lost|fenced_final|fenced_accepted|fenced_lost|rejected"},
    {"checks.fencing.regressions.#",
     "worker|fence|invoke_ms|acquired_ms|earlier_worker|earlier_fence|earlier_acquired_ms"},
    {"checks.liveness",
     "valid|longest_stall_ms|crash_to_next_grant_ms|holder_crashes|crashes_without_next_grant|"
     "stuck_resources|busy_share|failed_share|unknown_share|stuck_after_ms"},
    {"checks.liveness.fairness", "min_grants|max_grants|ratio"},
    {"checks.liveness", "longest_unserved_wait_ms"},
    {"checks.liveness.waits.free|checks.liveness.waits.expired|checks.liveness.waits.held",
     "total_ms|longest_ms"},
    {"checks.stats", "valid"},
    {"checks.jobs",
     "valid|available|announced|jobs|done|duplicates|extra_effects|missed|claimed_not_done|"
     "effects|refused"},
    {"checks.commands",
     "valid|measured|per_grant|per_grant_at_least|max_per_grant|grants|lock_commands|"
     "other_commands|nodes|window_s|per_s|busiest_node_per_s"},
    {"checks.commands.per_node.#",
     "node|measured|reset|lock_commands|other_commands|per_grant|per_grant_at_least|per_s"},
    {"checks.jobs.steps", "gave_up|skip_done|claimed|effect|refused|aborted|error"},
    {"violations.#", "overlap_start_ms|overlap_ms"},
    {"violations.#.holders.#",
     "worker|fence|acquired_ms|valid_until_ms|valid_until_at_grant_ms|enter_ms|exit_ms"},
    {"faults.#", "id|worker|node|start_ms|end_ms|skipped|bit|late_ms"},
    {"faults.#.adapter_clock", "verified|not_moved|unverified|no_answer|pending|indistinguishable"},
    {"faults.#.requests",
     "matched|delayed|dropped|replies_dropped|answered|oversized|connections_unfollowed|"
     "connections_lost"},
    {"coverage", "holds|grants|contended_acquires|grant_floor|expected_grants|enough_activity"},
    {"coverage.faults", "occurrences|bit|not_bit|undecided|late|max_late_ms"},
    {"fault_windows.#",
     "id|start_ms|end_ms|duration_ms|attempts|grants|busy|failed|unknown|violations|"
     "acquire_p50_ms|acquire_p99_ms|grants_per_s"},
    {"phases.no_fault|phases.fault|phases.before_faults|phases.quiet_tail",
     "duration_ms|attempts|grants|busy|failed|unknown|violations|acquire_p50_ms|acquire_p99_ms|"
     "grants_per_s"},
    {"phases.quiet_tail", "start_ms"},
    {"per_worker.#", "worker|attempts|grants|busy|failed|unknown|events|complete|torn_bytes"},
    {"adapter|adapter.per_worker.#",
     "starts|restarts|restart_failures|exits|requests|timeouts|late_replies|protocol_errors|"
     "lost_events|log_events|expired_grants|renewed_events|stalls"},
    {"adapter", "protocol|processes"},
    {"adapter.per_worker.#", "worker|epoch|started"},
};

/* Is s[0..n) one of the '|' separated alternatives in alts? */
static int alt_match(const char *alts, const char *s, size_t n)
{
    const char *a = alts;
    for (;;) {
        const char *bar = strchr(a, '|');
        size_t len = bar ? (size_t)(bar - a) : strlen(a);
        if (len == n && memcmp(a, s, n) == 0)
            return 1;
        if (!bar)
            return 0;
        a = bar + 1;
    }
}

/* Rewrite path into out in dotted form with every all-digit segment
 * replaced by "#" ("violations[0].overlap_ms" -> "violations.#.overlap_ms").
 * Returns 0, or -1 for an empty segment, stray bracket or overlong path. */
static int normalize_path(const char *path, char *out, size_t outlen)
{
    size_t o = 0;
    const char *p = path;
    if (!*p)
        return -1;
    while (*p) {
        const char *seg = p;
        size_t n;
        int bracket = 0;
        if (*p == '[') {
            bracket = 1;
            seg = ++p;
            while (*p && *p != ']')
                p++;
            if (*p != ']')
                return -1;
            n = (size_t)(p - seg);
            p++;
        } else {
            while (*p && *p != '.' && *p != '[' && *p != ']')
                p++;
            if (*p == ']')
                return -1;
            n = (size_t)(p - seg);
        }
        if (n == 0)
            return -1;
        int digits = 1;
        for (size_t i = 0; i < n; i++)
            if (seg[i] < '0' || seg[i] > '9')
                digits = 0;
        if (bracket && !digits)
            return -1;
        if (*p == '.') {
            p++;
            if (!*p)
                return -1; /* trailing dot */
        }
        size_t need = (o ? 1 : 0) + (digits ? 1 : n);
        if (o + need + 1 > outlen)
            return -1;
        if (o)
            out[o++] = '.';
        if (digits) {
            out[o++] = '#';
        } else {
            memcpy(out + o, seg, n);
            o += n;
        }
    }
    out[o] = '\0';
    return 0;
}

/* Contract: 1 when path names a documented numeric or boolean member of
 * result.json (path_table; indexes as ".N" or "[N]"), else 0. Used by the
 * workload loader to refuse an expectation on an unknown path. */
int result_path_valid(const char *path)
{
    char norm[512];
    if (!path || normalize_path(path, norm, sizeof(norm)) < 0)
        return 0;
    size_t len = strlen(norm);
    for (size_t r = 0; r < sizeof(path_table) / sizeof(path_table[0]); r++) {
        const struct path_row *row = &path_table[r];
        if (!row->prefixes[0]) {
            if (alt_match(row->fields, norm, len))
                return 1;
            continue;
        }
        const char *dot = strrchr(norm, '.');
        if (!dot)
            continue;
        if (alt_match(row->prefixes, norm, (size_t)(dot - norm)) &&
            alt_match(row->fields, dot + 1, len - (size_t)(dot - norm) - 1))
            return 1;
    }
    return 0;
}
