/*
 * reaper.h: the run's last word on its workers' process groups. An
 * adapter's own children (a grandchild of the harness: a library's helper
 * process, a shell an adapter runs) have no death signal; they are in the
 * worker's process group, which outlives the worker while they live. The
 * reaper is a small process forked before the workers, in its own process
 * group, without a death signal: it waits for the harness to close its
 * pipe -- at the end of the teardown, or by dying, SIGKILL included (the
 * kernel closes it then) -- and SIGKILLs every worker's process group (the
 * pgids the workers wrote into shm, every epoch's latest). When the pipe
 * closed without the harness's orderly goodbye (the harness died), it
 * then SIGKILLs, by pid, every process whose environment carries the run's
 * tag (LOCKSTORM_RUN=<run id>, util/proc.h), whatever it did to its group
 * or session, and exits. The harness watches it (reaper_died) and starts a
 * new one if it dies.
 * A rules reaper (reaper_rules_start) is the same for the run's iptables
 * rules (util/iptables.h): it deletes the rules tagged with the run's
 * comment once the harness closes its pipe or dies; after a death, again
 * until nothing carrying the run's tag is left to add one.
 */
#ifndef LS_REAPER_H
#define LS_REAPER_H

#include <sys/types.h>

#include "util/err.h"

struct shm;

struct reaper {
    pid_t pid;    /* 0: not started */
    int fd;       /* write end of its pipe (close-on-exec); meaningful while pid > 0 */
};

/* Fork the reaper over shm's workers (shm borrowed: the child has its own
 * mapping of it) and the processes tagged with run_id (hex, copied; NULL or
 * "": groups only). Returns 0 with rp filled, or LS_EENV with err set. */
int reaper_start(struct reaper *rp, struct shm *shm, const char *run_id, struct ls_err *err);
/* 1 when the reaper has died (reaped now: status stored when non-NULL, rp
 * zeroed, its pipe closed), 0 while it lives or when none was started. */
int reaper_died(struct reaper *rp, int *status);
/* Fork a rules reaper for the iptables rules tagged comment (copied):
 * once the pipe closes or its parent is gone (it checks every 100 ms, so a
 * pipe end inherited by a forked worker cannot hold it back), it deletes
 * them (util/iptables.h) and exits. When the harness died (no goodbye) an
 * iptables call of it may still be committing a rule: the reaper deletes
 * again at growing intervals until two deletions in a row began after no
 * process carrying the run's tag (PROC_RUN_TAG in the caller's environment
 * now) was seen, for 10 s at most (the whole 10 s when there is no tag). Stopped with reaper_stop. 0
 * with rp filled, or LS_EENV with err set. */
int reaper_rules_start(struct reaper *rp, const char *comment, struct ls_err *err);
/* Let it act now (after the workers stopped): say goodbye (the harness is
 * alive: groups only), close the pipe, wait up to
 * 2 s for it to exit (then SIGKILL it) and reap it. Accepts a zeroed rp
 * (does nothing) and is idempotent. */
void reaper_stop(struct reaper *rp);

#endif
