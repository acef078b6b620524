/*
 * proc.h: child processes. Every child is started by fork+exec with an argv
 * array (never a shell), dies with the harness (PR_SET_PDEATHSIG), is
 * tracked by pid, and is stopped and reaped by pid. Nothing here ever
 * signals a process it did not start.
 */
#ifndef LS_PROC_H
#define LS_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

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
 * NULL-terminated; nothing of the harness's own environment is passed):
 * how redis-server nodes are started (backends/cluster.c). */
pid_t proc_spawn_envp(char *const argv[], char *const envp[], const char *log_path,
                      struct ls_err *err);

/* Called first in any forked child that runs harness code (workers): new
 * process group, die with the parent, default signal dispositions and an
 * empty signal mask. */
void proc_child_setup(pid_t parent);

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
