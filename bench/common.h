/*
 * common.h: what the benchmark programs of bench/ share: finding the
 * lockstorm binary, running it (fork+exec by pid, bounded), reading the
 * JSON files it writes, sampling a redis-server's INFO commandstats, and
 * the "targets" every section reports. Each benchmark prints one JSON
 * object (its section of bench/results.json) on stdout and a short table
 * on stderr. Not a test framework: nothing here asserts a timing.
 */
#ifndef LS_BENCH_COMMON_H
#define LS_BENCH_COMMON_H

#include <stdint.h>
#include <sys/types.h>

#include "util/json.h"

/* Command-line options every benchmark takes. */
struct bench_opts {
    int smoke;              /* --smoke: tiny sizes, short runs (ctest) */
    const char *lockstorm;  /* --lockstorm PATH, else $LS_BINARY, else "lockstorm" */
    const char *tmp;        /* --tmp DIR: scratch space (created), else a mkdtemp under
                               $TMPDIR or /tmp */
    int keep;               /* --keep: leave the scratch directory */
    int made_tmp;           /* tmp was made by bench_tmp (removed by bench_cleanup) */
    char tmpbuf[256];       /* storage of a made tmp */
    int seq;                /* numbers the scratch directories of one program */
};

/* Parse the common options; unknown options are an error (returns -1 after
 * a usage line on stderr). Extra options a program takes itself are given
 * in extra[] (names with their leading dashes, each taking one value) and
 * stored in extra_val[] (NULL when absent). */
int bench_parse(int argc, char **argv, struct bench_opts *o, const char *const *extra,
                const char **extra_val);
/* A count given on the command line ("1e7", "250000", "10"): a number in
 * [min, max] with nothing after it, stored in *out. 0, or -1 after a
 * message naming the option on stderr. */
int bench_count(const char *opt, const char *s, double min, double max, int64_t *out);
/* Make o->tmp exist (when not given: made in $TMPDIR, or /tmp, and
 * removed when the program exits, however it ends, unless --keep);
 * returns 0 or -1. */
int bench_tmp(struct bench_opts *o);
/* Remove o->tmp unless --keep (only a directory bench_tmp made). */
void bench_cleanup(const struct bench_opts *o);

/* Run argv to completion (at most timeout_ns; killed by pid after), stdout
 * and stderr appended to log (NULL: /dev/null). Returns the exit status
 * (0..255), 128 + signal when killed, or -1 when it could not start. */
int bench_run(char *const argv[], const char *log, int64_t timeout_ns);
/* Start argv in the background (own process group); the pid, or -1. */
pid_t bench_start(char *const argv[], const char *log);
/* Wait for a bench_start child for at most timeout_ns; killed and reaped
 * after. Returns what bench_run returns. */
int bench_finish(pid_t pid, int64_t timeout_ns);

/* The JSON document in path (caller frees), or NULL. */
struct json *bench_read_json(const char *path);
/* Write text to path; 0 or -1. */
int bench_write_file(const char *path, const char *text);

/* One redis-server's INFO commandstats: calls per command name. */
#define BENCH_MAX_CMDS 64
struct cmdstats {
    int n;
    char name[BENCH_MAX_CMDS][32];
    uint64_t calls[BENCH_MAX_CMDS];
    int64_t t;              /* CLOCK_MONOTONIC ns when sampled */
};
/* Sample 127.0.0.1:port (a new connection each time). 0 or -1. */
int bench_cmdstats(int port, struct cmdstats *out);
/* Calls of name in s (0 when absent). */
uint64_t bench_calls(const struct cmdstats *s, const char *name);
/* Calls of every command in s. */
uint64_t bench_calls_all(const struct cmdstats *s);
/* Run one command (words, no quoting) on 127.0.0.1:port; its reply as a
 * string into buf (status, bulk, integer in decimal). 0 or -1. */
int bench_redis(int port, const char *const *argv, int argc, char *buf, size_t n);

/* Targets: each section lists {name, value, op, target, met, unit, note}. */
struct json *bench_target(struct json *targets, const char *name, double value, const char *op,
                          double target, const char *unit);
/* A target the run could not measure (its rows failed or were not asked
 * for): value and met are null and `note` says why; never met by default. */
struct json *bench_target_unmeasured(struct json *targets, const char *name, const char *op,
                                     double target, const char *unit, const char *why);

/* Median of v[0..n) (sorts v). */
double bench_median(double *v, int n);
/* What one child process cost: wall and CPU (user + system) seconds, the
 * system part, peak RSS, major page faults (pages read from the disk: a
 * "page cache warm" run has none), exit status as bench_run returns it. */
struct bench_usage {
    double wall_s, cpu_s, sys_s;
    long rss_kib, majflt;
    int exit;
};
/* Run argv to completion (no time bound: the callers run bounded work),
 * its cost into u. Returns 0, or -1 when it could not start. */
int bench_run_usage(char *const argv[], const char *log, struct bench_usage *u);

/* Print the section document on stdout (indented). */
void bench_print(const struct json *section);

#endif
