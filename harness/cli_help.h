/*
 * cli_help.h: the one table of lockstorm's commands and options, and what
 * is printed from it: `lockstorm --help`, `lockstorm help COMMAND` (and
 * `COMMAND --help`), the man page (docs/lockstorm.1), the bash completion
 * script (contrib/lockstorm.bash-completion) and `lockstorm --version`.
 * Generated files are kept in sync by tests/e2e/test_cli.sh. It parses
 * no command's arguments: harness/main.c does.
 */
#ifndef LS_CLI_HELP_H
#define LS_CLI_HELP_H

#include <stdarg.h>
#include <stdio.h>

/* The overview: every command's synopsis and summary, the exit codes. */
void cli_usage(FILE *out);

/* One command's help: synopsis, description, options, exit codes.
 * Returns 0, or 2 (with a message on err) when cmd is not a command. */
int cli_help_command(const char *cmd, FILE *out, FILE *err);

/* 1 when cmd is in the table. */
int cli_is_command(const char *cmd);

/* 1 when a subcommand's arguments ask for its help (--help or -h; an
 * argument after `--` or after --set does not count). */
int cli_wants_help(int argc, char **argv);

/* `lockstorm help [COMMAND | --man | --bash-completion]`: prints to out,
 * errors to err. Returns the exit status (0, or 2 for usage errors). */
int cli_help_main(int argc, char **argv, FILE *out, FILE *err);

/* `lockstorm --version [--json]` / `lockstorm version [--json]`: the
 * version, the build (type, compiler, sanitizers) and the library
 * versions (hiredis compiled in, libyaml at run time); --json prints the
 * same as one versioned JSON object. Returns the exit status. */
int cli_version(int argc, char **argv, FILE *out, FILE *err);

/* Contract: a usage error on stderr, one line: "lockstorm: ", fmt with ap,
 * then tail (e.g. "; see 'lockstorm --help'") and a newline. Returns 2, the
 * exit code of bad input, for the caller's wrapper to return. */
int cli_usage_errorv(const char *tail, const char *fmt, va_list ap);

#endif
