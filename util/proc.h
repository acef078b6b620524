/*
 * proc.h: child processes. Every program lockstorm runs is started here
 * (proc_spawn_opts: fork+exec of an argv array, never a shell), every child
 * running lockstorm's own code is forked here (proc_fork); by default each
 * dies with the harness (PR_SET_PDEATHSIG), is tracked by pid, and is
 * stopped and reaped by pid; every wait status is worded here. Nothing
 * here signals a process the caller did not start, directly or through
 * what it started (proc_kill_tagged: the run's tag, never a name).
 */
#ifndef LS_PROC_H
#define LS_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

/* How proc_spawn_opts starts a program. Zeroed: argv[0] looked up in PATH,
 * the harness's environment, stdio on /dev/null, a process group of its
 * own, PR_SET_PDEATHSIG(SIGKILL), default signal dispositions, an empty
 * signal mask, the harness's working directory and credentials. */
struct spawn_opts {
    const char *path;       /* the program's file (exec without PATH lookup), or NULL */
    char *const *env_add;   /* "KEY=value" added to the harness's environment, or NULL */
    char *const *envp;      /* exactly this environment (and the run's tag), or NULL */
    int use_fds;            /* 1: the child's 0, 1, 2 are fd_in, fd_out, fd_err (borrowed;
                               -1: /dev/null); 0: all three on /dev/null */
    int fd_in, fd_out, fd_err;
    const char *cwd;        /* chdir there first, or NULL */
    unsigned flags;         /* PROC_* below */
    /* runs in the child after the redirections, before the change of user
     * (async-signal-safe calls only); a negative return fails the start
     * with errno. NULL: none. */
    int (*child_hook)(void *arg);
    void *hook_arg;
    int drop;               /* 1: setgroups(0), setgid(gid), setuid(uid) before exec (the
                               death signal is set after it: a change of credentials clears it) */
    uid_t uid;
    gid_t gid;
    const char *what;       /* names the program in errors ("adapter"), or NULL */
    const char *as_user;    /* added to an exec error (" as USER"), or NULL */
};
#define PROC_SAME_GROUP 1u    /* stay in the caller's process group */
#define PROC_NO_DEATHSIG 2u   /* no PR_SET_PDEATHSIG (it must outlive the caller) */
#define PROC_KEEP_SIGNALS 4u  /* keep the caller's dispositions (the mask is emptied still) */
#define PROC_EXEC_EXIT 8u     /* a failed exec is the child's exit 127, not an error here */

/* The one fork+exec of lockstorm: start argv (argv[0] is also what errors
 * name) as o says (NULL: all defaults), with _exit(127) after a failed
 * exec, never through a shell. A failed exec (or chdir, hook, change of
 * user) is reported by the child through a CLOEXEC pipe and returned here
 * as LS_EENV, "[WHAT: ]cannot run PROG[ as USER]", the child reaped
 * (unless PROC_EXEC_EXIT). Returns the pid (> 0) or a negative code. */
pid_t proc_spawn_opts(char *const argv[], const struct spawn_opts *o, struct ls_err *err);

/* Start argv[0] (looked up in PATH) with stdout/stderr appended to log_path
 * (NULL: /dev/null), stdin from /dev/null, in a new process group of its
 * own, with PR_SET_PDEATHSIG(SIGKILL). A failed exec is reported by the
 * child through a CLOEXEC pipe, so a missing program is an error here, not
 * an exit code later. Returns the pid (> 0) or a negative code. */
pid_t proc_spawn(char *const argv[], const char *log_path, struct ls_err *err);
/* proc_spawn with env_add ("KEY=value" strings, NULL-terminated) added to
 * the harness's environment (replacing the same keys) for this child only:
 * how a lock node gets the clock shim (LD_PRELOAD). */
pid_t proc_spawn_env(char *const argv[], char *const env_add[], const char *log_path,
                     struct ls_err *err);
/* proc_spawn with exactly the environment envp ("KEY=value" strings,
 * NULL-terminated; nothing of the harness's own environment is passed but
 * the run's tag, PROC_RUN_TAG, when the harness has it): how redis-server
 * nodes are started (backends/cluster.c). */
pid_t proc_spawn_envp(char *const argv[], char *const envp[], const char *log_path,
                      struct ls_err *err);

/* The environment variable every process of a run inherits: its value is
 * the run's id (run.json "run_id"), so what the run started can be found
 * in /proc/PID/environ whatever it did to its group or session. */
#define PROC_RUN_TAG "LOCKSTORM_RUN"

/* Wait status as text: "exited N" or "killed by signal N (name)" (the
 * words of run.json's "exit" fields; "wait status N" for a stopped or
 * continued process, which no caller waits for); buf gets at most n bytes.
 * Returns buf. The one formatter of wait statuses in lockstorm. */
char *proc_status_text(int status, char *buf, size_t n);

/* SIGKILL, by pid, every live process but the caller whose initial
 * environment (/proc/PID/environ) holds the exact entry tag_entry
 * ("LOCKSTORM_RUN=<id>"), and, with children, every process whose parent
 * is the caller (orphans reparented to a child subreaper); reaps those
 * that are the caller's children. Scans again until a scan finds nothing
 * (at most timeout_ns): a process forking as it is killed is caught on a
 * later round. Processes of another user (unreadable environ) are never
 * touched. Returns the number of distinct processes killed (one killed
 * on a round and still dying on the next counts once). */
int proc_kill_tagged(const char *tag_entry, int children, int64_t timeout_ns);

/* How many live processes but the caller (zombies not counted) have the
 * exact entry tag_entry in their initial environment, as proc_kill_tagged
 * tells them; -1 when /proc cannot be read. */
int proc_tagged_alive(const char *tag_entry);

/* Reap, by pid (waitpid WNOHANG), every zombie child of the caller that it
 * did not start through proc_fork or proc_spawn_opts: the orphans a child
 * subreaper adopts (an adapter's short-lived helpers), which would hold
 * their pids until the end of the run. A child started here is never
 * reaped (its owner waits for its status). Scans /proc: call it at most
 * every ~250 ms. Returns how many were reaped. */
int proc_reap_adopted(void);

/* A run's containment (docs/reliability.md "Nothing escapes the run"):
 * the caller puts LOCKSTORM_RUN=<id> into its environment, which every
 * process it starts inherits, and becomes their child subreaper; at the
 * end it kills by pid what still carries the tag or was reparented to it,
 * and puts both back as they were. */
struct proc_id;
struct proc_contain {
    char tag[128];        /* "LOCKSTORM_RUN=<id>"; "" while not contained */
    char *prev;           /* the variable's previous value (owned), or NULL */
    int prev_subreaper;   /* PR_GET_CHILD_SUBREAPER before */
    int tagged;           /* the tag is in the environment */
    int begun;            /* between begin and end */
    struct proc_id *before; /* the caller's children at begin, by pid and start time:
                               not the run's, never swept; owned */
    size_t nbefore;
};
/* Contract: contain what the caller starts from now on under id (hex).
 * Returns what holds: "subreaper+environ", "environ" (the kernel refused
 * the subreaper) or "groups" (the environment could not be set: only the
 * process groups hold). Always pair with proc_contain_end. */
const char *proc_contain_begin(struct proc_contain *c, const char *id);
/* Contract: SIGKILL by pid what carries c's tag or is the caller's child
 * (proc_kill_tagged, bounded by timeout_ns), but not the caller's children
 * from before begin (a wrapper's `sleep 300 & exec lockstorm ...`: same
 * pid and start time); returns how many distinct processes. 0 when c is
 * not tagged. Call once everything the caller stops on purpose
 * has been stopped. */
int proc_contain_sweep(struct proc_contain *c, int64_t timeout_ns);
/* Contract: the environment and the subreaper setting as before begin.
 * Idempotent. */
void proc_contain_end(struct proc_contain *c);

/* 1 when process group pgid has no member left, 0 while it has. Members
 * that are the caller's dead children are reaped first: a child subreaper
 * (PR_SET_CHILD_SUBREAPER) adopts the orphans of a group it watches, and
 * their zombies would keep the group alive. Call it once the group's
 * leader, if the caller's child, has been reaped (its status is not
 * wanted here). */
int proc_group_gone(pid_t pgid);
/* 1 when process group pgid has a live member (not a zombie), 0 when it
 * has none (a group of zombies, or gone). Scans /proc. */
int proc_group_live(pid_t pgid);

/* Called first in any forked child that runs harness code (workers): new
 * process group, die with the parent, default signal dispositions and an
 * empty signal mask. proc_fork does it. */
void proc_child_setup(pid_t parent);

/* The one fork without exec, for a child that runs lockstorm's own code
 * (workers, the checker pass, the proxy, the reapers): a process group of
 * its own (set on both sides: whichever runs first) and, by default,
 * proc_child_setup (death signal, default dispositions, empty mask).
 * PROC_NO_DEATHSIG: neither the death signal nor any change to signals
 * (a reaper, which must outlive the caller and blocks signals itself).
 * Returns 0 in the child, the pid in the parent, or -1 with errno set (the
 * caller words the error). */
pid_t proc_fork(unsigned flags);

/* Wait for pid to exit for at most timeout_ns. Returns 1 if it was reaped
 * (status stored when non-NULL), 0 if still running, negative on error. */
int proc_wait(pid_t pid, int64_t timeout_ns, int *status);

/* Stop pid: SIGCONT (in case it is paused), sig (0: none, the caller
 * already sent it), wait up to grace_ns, then SIGKILL and reap. Returns 0
 * once reaped. Accepts pid <= 0 (no-op). */
int proc_stop(pid_t pid, int sig, int64_t grace_ns);

/* Process state letter from /proc/PID/stat ('R', 'S', 'T', ...), or 0 when
 * the process is gone. With all_threads, returns 'T' only if every thread
 * is stopped (otherwise the first non-T state found). */
char proc_state(pid_t pid, int all_threads);

/* Poll until proc_state(pid) == want or timeout. Returns 0 on success,
 * LS_ETIMEOUT otherwise. */
int proc_wait_state(pid_t pid, char want, int all_threads, int64_t timeout_ns);

#endif
