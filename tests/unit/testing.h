/*
 * testing.h: a tiny test framework. CHECK records a failure and goes on;
 * REQUIRE returns from the test. Each test binary ends with the line
 * "N passed, N failed" and exits non-zero on any failure.
 */
#ifndef LS_TESTING_H
#define LS_TESTING_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

extern int t_passed, t_failed;
extern const char *t_current;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            t_passed++;                                                              \
        } else {                                                                     \
            t_failed++;                                                              \
            fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, t_current, #cond); \
        }                                                                            \
    } while (0)

#define CHECKF(cond, ...)                                                            \
    do {                                                                             \
        if (cond) {                                                                  \
            t_passed++;                                                              \
        } else {                                                                     \
            t_failed++;                                                              \
            fprintf(stderr, "FAIL %s:%d: %s: %s: ", __FILE__, __LINE__, t_current, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
        }                                                                            \
    } while (0)

#define REQUIRE(cond)                                                                \
    do {                                                                             \
        if (cond) { /* evaluated once: cond may have side effects */                  \
            t_passed++;                                                              \
        } else {                                                                     \
            t_failed++;                                                              \
            fprintf(stderr, "FAIL %s:%d: %s: %s (required)\n", __FILE__, __LINE__,    \
                    t_current, #cond);                                               \
            return;                                                                  \
        }                                                                            \
    } while (0)

#define CHECK_STR(a, b) CHECKF(strcmp((a), (b)) == 0, "'%s' != '%s'", (a), (b))
#define CHECK_INT(a, b) CHECKF((long long)(a) == (long long)(b), "%lld != %lld", (long long)(a), (long long)(b))

#define RUN(fn)                      \
    do {                             \
        t_current = #fn;             \
        fn();                        \
    } while (0)

/* Print the closing line and return the exit status for main(). */
int t_finish(void);

/* A fresh temporary directory (mkdtemp under $TMPDIR or /tmp); removed
 * recursively by t_rmdir. Returns a malloc'd path. */
char *t_tmpdir(void);
void t_rmdir(const char *path);

/* The environment variable name as an unsigned decimal; dflt when it is
 * unset, empty or not all digits. */
uint64_t t_env_u64(const char *name, uint64_t dflt);

/* How many descriptors this process has open (entries of /proc/self/fd,
 * counted without opening more than the directory); -1 when unknown. */
int t_open_fds(void);

/* Write text to DIR/h.jsonl and load it as a JSONL history into h (zeroed
 * first); the loader's message goes to stderr. 0, or -1. */
struct history;
int t_load_jsonl(const char *dir, const char *text, struct history *h);

#endif
