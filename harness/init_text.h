/*
 * init_text.h: the pieces of starter-workload text that `lockstorm init`
 * (harness/cli_init.c, correct-lock) and `lockstorm adapter init`
 * (harness/adapter_init.c, workload.yaml) write alike: the same run length
 * and cluster, the same lease and retry, the same contending workers under
 * holder pauses and the same gate. String literals only, to be pasted
 * between a starter's own lines; what differs (the lock) stays in each file.
 */
#ifndef LS_INIT_TEXT_H
#define LS_INIT_TEXT_H

/* seed, a 4 s run on one independent redis-server, up to "lock:" */
#define INIT_TEXT_RUN_4S                                                                       \
    "seed: 7                     # every random choice derives from it: same seed, same run\n" \
    "duration: 4s                # how long the workers run\n"                                 \
    "\n"                                                                                       \
    "cluster:\n"                                                                               \
    "  topology: independent     # lockstorm starts its own redis-server on a free loopback "  \
    "port\n"                                                                                   \
    "  nodes: 1\n"                                                                             \
    "\n"                                                                                       \
    "lock:\n"

/* the lease and the retry policy, inside lock: */
#define INIT_TEXT_TTL_RETRY                                                                    \
    "  ttl: 200ms                # the lease asked for with each grant\n"                      \
    "  retry: {attempts: 100, delay: 5ms, jitter: 5ms}   # per hold, before giving up\n"

/* six workers on one lock, the holder paused past its TTL each second, and
 * the gate's first line: never granted twice */
#define INIT_TEXT_PAUSED_HOLDERS                                                               \
    "\n"                                                                                       \
    "workers:\n"                                                                               \
    "  count: 6                  # processes contending for the lock\n"                        \
    "  resources: 1              # one lock name: every worker wants the same lock\n"          \
    "  hold: {dist: uniform, min: 30ms, max: 80ms}   # critical-section length\n"              \
    "  think: 2ms                # pause between a release and the next acquire\n"             \
    "\n"                                                                                       \
    "faults:                     # `lockstorm list faults`\n"                                  \
    "  # pause whoever holds the lock at that instant, for longer than the TTL\n"              \
    "  - {kind: pause, target: holder, at: 500ms, duration: 400ms, every: 1s}\n"               \
    "\n"                                                                                       \
    "expect:                     # the CI gate: exit 0 exactly when every line holds\n"        \
    "  checks.mutex.by_class.lock_broken: 0         # never granted twice\n"

/* the gate's last line: the lock was exercised */
#define INIT_TEXT_GRANTS_GATE                                                                  \
    "  counts.grants: \">= 50\"                       # and the lock was really exercised\n"

#endif
