/*
 * adapter_test.h: `lockstorm adapter-test -- COMMAND [ARGS...]`: checks an
 * external lock adapter against docs/protocol.md on a scratch cluster
 * (harness/adapter_test.c). Kept apart from main.c so the CLI stays a
 * dispatcher.
 */
#ifndef LS_ADAPTER_TEST_H
#define LS_ADAPTER_TEST_H

/* argv: the arguments after "adapter-test". Returns the exit status: 0 all
 * checks passed, 1 some failed, 2 usage, 3 environment (no redis-server). */
int adapter_test_main(int argc, char **argv);

#endif
