/*
 * leftover.h: noticing processes of earlier runs that are still alive.
 * Every run records its processes in run.json (harness, workers with every
 * epoch, nodes, storage, proxy) with state "running" until its teardown
 * ends. A run whose run.json still says "running" but whose harness is gone
 * died without a teardown; any recorded pid that is still alive AND whose
 * /proc/PID/cmdline is what that run started (redis-server on the recorded
 * port, or `lockstorm run`) AND that started within the run's lifetime is
 * reported. Nothing here ever signals a process: it only reads /proc and
 * run.json files, and says what it found.
 */
#ifndef LS_LEFTOVER_H
#define LS_LEFTOVER_H

#include <stdio.h>

/* Report (one line each on say, "lockstorm: warning: ...") the live
 * processes of the run in rundir when that run did not finish. When its
 * harness is alive the run is still in progress: one line says so instead
 * (unless quiet_if_running). Returns the number of leftover processes
 * found, 0 when none (or rundir has no readable run.json). */
int leftover_check_dir(const char *rundir, int quiet_if_running, FILE *say);

/* Same for every run directory directly under parent (runs/, or the parent
 * of `--out DIR`), at most LEFTOVER_MAX_DIRS of them; runs in progress are
 * not mentioned. Returns the number of leftover processes found. */
#define LEFTOVER_MAX_DIRS 1000
int leftover_check_siblings(const char *parent, FILE *say);

#endif
