/*
 * iptables.h: the iptables rules of the failover fault's `cut: iptables`
 * (backends/replset.c through harness/replset_host.c): DROP rules in the OUTPUT
 * chain, each tagged with the comment "lockstorm:<harness pid>", so that a
 * run removes exactly its own rules and the next run can find the rules of
 * a harness that died (its pid no longer alive). iptables is always run
 * as `iptables -w ...` from an argv array, never through a shell.
 */
#ifndef LS_IPTABLES_H
#define LS_IPTABLES_H

#include <stdio.h>
#include <sys/types.h>

#include "util/err.h"

#define IPT_TAG "lockstorm:"
#define IPT_COMMENT_MAX 32

/* 0 when `cut: iptables` can work here (running as root, an iptables
 * command on PATH or in /usr/sbin, /sbin); else -1 with why set to what
 * is missing and what to do. No process is started. */
int ipt_usable(char *why, size_t n);

/* The comment of harness pid's rules: "lockstorm:<pid>". */
void ipt_comment(pid_t harness, char *buf, size_t n);

/* Add (add = 1) or delete (add = 0) the two DROP rules that cut the TCP
 * traffic between source address src (a replica's bind-source-addr) and
 * 127.0.0.1:port (the primary): src -> port and port -> src. 0 or
 * negative with err set. */
int ipt_cut_pair(int add, const char *comment, const char *src, int port, struct ls_err *err);

/* Delete every OUTPUT rule whose comment is exactly comment (bounded:
 * at most 256 rules). Returns how many were deleted, or negative with err. */
int ipt_remove_tagged(const char *comment, struct ls_err *err);

/* Delete every OUTPUT rule tagged lockstorm:<pid> whose pid is not alive
 * (a harness that died before its reaper could act), saying so on say
 * (one warning line per dead pid). Never touches other rules. Returns how
 * many were deleted, or negative with err. */
int ipt_remove_stale(FILE *say, struct ls_err *err);

#endif
