/*
 * cli_init.h: `lockstorm init`: write a commented starter workload for a
 * scenario (correct-lock, the default; stolen-lock, failover, redlock-clock,
 * ttl-sweep, adapter).
 * Every starter is loaded by the real loader before it is written; one
 * that does not load in this build (its feature is missing) is refused
 * with the reason and nothing is written.
 */
#ifndef LS_CLI_INIT_H
#define LS_CLI_INIT_H

/* NULL-terminated scenario names, in the order `init --list` shows them. */
const char *const *cli_init_scenarios(void);

/* The starter text of scenario name, with bundled paths filled in and
 * its header naming file (NULL or "-": NAME.yaml) as its own (caller
 * frees), or NULL for an unknown name. */
char *cli_init_text(const char *name, const char *file);

/* `lockstorm init [--scenario NAME] [--force] [FILE]` / `init --list`;
 * argv are the arguments after "init". Returns the exit status: 0
 * written, 2 usage error, an unknown scenario, a scenario that does not
 * load in this build, or FILE exists without --force; 3 FILE cannot be
 * written. */
int cli_init_main(int argc, char **argv);

#endif
