/*
 * adapter_init.h: `lockstorm adapter init node|python DIR`: a working
 * adapter skeleton on this checkout's SDK, around a sample lock, with a
 * workload that runs it (docs/adapters.md "Quick start: your own lock").
 */
#ifndef LS_ADAPTER_INIT_H
#define LS_ADAPTER_INIT_H

/* `lockstorm adapter init LANG DIR`; argv are the arguments after
 * "adapter". Returns the exit status: 0 written (the next commands
 * printed), 2 usage error or DIR not empty (nothing written), 3 the SDK
 * not found or a file that cannot be written. */
int adapter_cli_main(int argc, char **argv);

#endif
